package dev.tidemark.pipelines;

import dev.tidemark.model.ModelEngine;
import dev.tidemark.model.ScoreFeatures;
import dev.tidemark.pipelines.io.ReplayLabels;
import dev.tidemark.pipelines.io.Sinks;
import dev.tidemark.pipelines.io.Sources;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.transforms.BoundDeadLetters;
import dev.tidemark.transforms.ComputeFeatures;
import dev.tidemark.transforms.DeduplicateEvents;
import dev.tidemark.transforms.ParseCloudEvents;
import dev.tidemark.transforms.values.RawRecord;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;

/**
 * The Tidemark job as its options describe it: the configured source ({@link Sources}), {@link
 * ScoreCloudEvents} configured from the options, what the run learns about its decisions (labels,
 * drift: {@link WatchDecisions}) and the configured sinks ({@link Sinks}). Running it, checking
 * options against a runner and everything around a run live in {@code
 * dev.tidemark.pipelines.launch}; this class refers to no runner.
 */
public final class TidemarkPipeline {
  private TidemarkPipeline() {}

  /**
   * Adds the whole job to {@code pipeline}: {@code source} when it is not null (tests and the
   * reference hand in a {@code TestStream}), else the configured source; the transform; the sinks.
   */
  public static Outputs build(
      Pipeline pipeline,
      TidemarkOptions options,
      @Nullable PTransform<PBegin, PCollection<RawRecord>> source) {
    PCollection<RawRecord> raw =
        source == null ? Sources.read(pipeline, options) : pipeline.apply("ReadReplay", source);
    return buildFrom(raw, options);
  }

  /**
   * Adds the job after its source to {@code raw}'s pipeline: the transform, what the run learns
   * about its decisions (labels, drift) and the sinks.
   */
  public static Outputs buildFrom(PCollection<RawRecord> raw, TidemarkOptions options) {
    PCollection<RawRecord> events = raw;
    PCollection<RawRecord> labels = null;
    if (Sources.labelsInReplay(options)) {
      PCollectionTuple split = raw.apply("ReplayLabels", ReplayLabels.split());
      events = split.get(ReplayLabels.EVENTS);
      labels = split.get(ReplayLabels.LABELS);
    }
    Outputs outputs = expand(events, options);
    Sinks.write(
        outputs, WatchDecisions.apply(raw.getPipeline(), outputs, labels, options), options);
    return outputs;
  }

  /** Applies {@link ScoreCloudEvents}, configured from {@code options}, to {@code raw}. */
  public static Outputs expand(PCollection<RawRecord> raw, TidemarkOptions options) {
    return raw.apply("ScoreCloudEvents", transform(options));
  }

  /** {@link ScoreCloudEvents} with every step configured from {@code options}. */
  public static ScoreCloudEvents transform(TidemarkOptions options) {
    return ScoreCloudEvents.create()
        .withParsing(parser(options))
        .withDeduplication(deduplicator(options))
        .withFeatures(windowedFeatures(options))
        .withScoring(scorer(options))
        .withDeadLetterBound(deadLetterBound(options));
  }

  /**
   * The parsing step configured from {@code options}: the run's spec's events and event time, with
   * the options' event types, currency, size limit and future skew (their defaults are the spec's).
   */
  public static ParseCloudEvents parser(TidemarkOptions options) {
    Set<String> types =
        Arrays.stream(options.getEventTypes().split(","))
            .map(String::trim)
            .filter(t -> !t.isEmpty())
            .collect(Collectors.toCollection(LinkedHashSet::new));
    PipelineSpec spec = RunSpecs.of(options);
    ParseCloudEvents parser =
        ParseCloudEvents.create()
            .withEvents(spec.events())
            .withEventTime(spec.clocks().eventTime())
            .withAllowedTypes(types)
            .withMaxEventBytes(options.getMaxEventBytes())
            .withMaxFutureSkew(Durations.parse("maxFutureSkew", options.getMaxFutureSkew()));
    // Null when the spec's events have no one-currency field (events other than payments).
    String currency = options.getCurrency();
    return currency == null ? parser : parser.withCurrency(currency);
  }

  static BoundDeadLetters deadLetterBound(TidemarkOptions options) {
    Integer maxBytes = options.getMaxDeadLetterPayloadBytes();
    if (maxBytes == null) {
      throw new IllegalArgumentException(
          "--maxDeadLetterPayloadBytes needs a number of bytes, such as 16384");
    }
    return BoundDeadLetters.create().withMaxPayloadBytes(maxBytes);
  }

  /** The scoring step configured from {@code options}. */
  public static ScoreFeatures scorer(TidemarkOptions options) {
    PipelineSpec spec = RunSpecs.of(options);
    ScoreFeatures scorer =
        ScoreFeatures.forModel(options.getModelUri())
            .withFeatureNames(spec.featureNames())
            .withLabels(spec.model().positiveLabel(), spec.model().negativeLabel());
    if (options.getModelEngine() != null && !options.getModelEngine().isEmpty()) {
      scorer = scorer.withEngine(ModelEngine.fromName(options.getModelEngine()));
    }
    if (options.getSource() == TidemarkOptions.SourceKind.replay
        || options.getSource() == TidemarkOptions.SourceKind.backfill) {
      // A finite input: a watch would tick for ever and keep the run from ending.
      scorer = scorer.withoutModelWatch();
    }
    String shadow = options.getShadowModelUri();
    if (shadow != null && !shadow.isBlank()) {
      scorer = scorer.withShadowModel(shadow.trim());
    }
    Duration watchInterval = Durations.parse("modelWatchInterval", options.getModelWatchInterval());
    if (watchInterval.getMillis() <= 0) {
      throw new IllegalArgumentException(
          "--modelWatchInterval="
              + options.getModelWatchInterval()
              + " must be a positive duration, such as PT1M");
    }
    return scorer
        .withModelWatchInterval(watchInterval)
        .withThreshold(options.getDecisionThreshold())
        .withBatchSize(options.getScoringBatchSize())
        .withMaxBatchWait(maxBatchWait(options.getScoringMaxBatchWait()));
  }

  private static @Nullable Duration maxBatchWait(String value) {
    if (value != null && "none".equalsIgnoreCase(value.trim())) {
      return null;
    }
    Duration wait = Durations.parse("scoringMaxBatchWait", value);
    if (wait.getMillis() <= 0) {
      throw new IllegalArgumentException(
          "--scoringMaxBatchWait="
              + value
              + " must be a positive duration such as PT0.005S, or none");
    }
    return wait;
  }

  static DeduplicateEvents deduplicator(TidemarkOptions options) {
    return DeduplicateEvents.create()
        .withHorizon(Durations.parse("dedupHorizon", options.getDedupHorizon()));
  }

  static ComputeFeatures windowedFeatures(TidemarkOptions options) {
    String early = options.getEarlyFiringDelay();
    PipelineSpec.Windows windows =
        new PipelineSpec.Windows(
            javaDuration("windowSize", options.getWindowSize()),
            javaDuration("windowPeriod", options.getWindowPeriod()),
            "none".equalsIgnoreCase(early.trim()) ? null : javaDuration("earlyFiringDelay", early),
            javaDuration("lateFiringDelay", options.getLateFiringDelay()),
            javaDuration("allowedLateness", options.getAllowedLateness()),
            options.getAccumulationMode() == TidemarkOptions.AccumulationKind.DISCARDING
                ? PipelineSpec.Accumulation.DISCARDING
                : PipelineSpec.Accumulation.ACCUMULATING);
    return ComputeFeatures.of(windows)
        .withFeatures(RunSpecs.of(options))
        .withGateShards(gateShardsOf(options))
        .withAggregation(options.getWindowAggregation());
  }

  private static java.time.Duration javaDuration(String flag, String value) {
    return java.time.Duration.ofMillis(Durations.parse(flag, value).getMillis());
  }

  /**
   * {@code --gateShards}: at least one (its default is the job's parallelism, {@link
   * WindowOptions}).
   */
  static int gateShardsOf(TidemarkOptions options) {
    Integer shards = options.getGateShards();
    if (shards == null || shards < 1) {
      throw new IllegalArgumentException(
          "--gateShards=" + shards + " must be at least 1 (default: the job's parallelism)");
    }
    return shards;
  }
}
