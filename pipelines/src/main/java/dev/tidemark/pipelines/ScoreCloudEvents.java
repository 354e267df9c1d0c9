package dev.tidemark.pipelines;

import dev.tidemark.model.ModelEngine;
import dev.tidemark.model.ScoreFeatures;
import dev.tidemark.spec.FieldValues;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecException;
import dev.tidemark.transforms.AnnotateCorrections;
import dev.tidemark.transforms.AssembleDecisions;
import dev.tidemark.transforms.BoundDeadLetters;
import dev.tidemark.transforms.ComputeFeatures;
import dev.tidemark.transforms.DeduplicateEvents;
import dev.tidemark.transforms.MeasureDecisions;
import dev.tidemark.transforms.ParseCloudEvents;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Event;
import dev.tidemark.transforms.values.RawRecord;
import java.util.List;
import java.util.Objects;
import org.apache.beam.sdk.transforms.Combine.CombineFn;
import org.apache.beam.sdk.transforms.Flatten;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.WithFailures;
import org.apache.beam.sdk.transforms.windowing.DefaultTrigger;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionList;
import org.apache.beam.sdk.values.WindowingStrategy.AccumulationMode;
import org.joda.time.Duration;

/**
 * The Tidemark graph as one transform: raw CloudEvents records in, {@link Outputs} out (decisions,
 * dead letters, duplicates, too-late records, and the counters of the accounting identity).
 *
 * <p>Steps, each a transform of its own: {@link ParseCloudEvents} (bad records become dead letters
 * with a reason), {@link DeduplicateEvents} (first copy of each {@code source}+{@code id} within
 * the horizon passes), {@link ComputeFeatures} (per-account event-time windows with explicit
 * triggers, allowed lateness and too-late capture), {@link AssembleDecisions} and {@link
 * ScoreFeatures} (the model, loaded once per worker), then, with accumulating panes, {@link
 * AnnotateCorrections} (what each edition changes), and {@link MeasureDecisions}. Every failure
 * collection is flattened once into the dead-letter output and bounded there by {@link
 * BoundDeadLetters}. Each input record ends in exactly one place, which the counters prove: read =
 * valid + dead letters, valid = unique + duplicates, unique = windowed + too late.
 *
 * <p>It takes values, never pipeline options, and refers to no runner: apply it in any pipeline,
 * with any source of {@link RawRecord}s and any sinks.
 *
 * <pre>{@code
 * Outputs outputs = pipeline
 *     .apply("ReadEvents", mySource)                      // PCollection<RawRecord>
 *     .apply("ScoreCloudEvents", ScoreCloudEvents.create()
 *         .withFeatures(ComputeFeatures.of(Duration.standardMinutes(5), Duration.standardSeconds(30))
 *             .withAllowedLateness(Duration.standardHours(1)))
 *         .withScoring(ScoreFeatures.of("gs://bucket/models/fraud.ubj")));
 * outputs.decisions.apply("WriteDecisions", mySink);
 * }</pre>
 *
 * <p>Step names are fixed, because Dataflow's update and Flink's savepoints match steps by name.
 */
public final class ScoreCloudEvents extends PTransform<PCollection<RawRecord>, Outputs> {
  private final ParseCloudEvents parsing;
  private final DeduplicateEvents deduplication;
  private final ComputeFeatures features;
  private final ScoreFeatures scoring;
  private final BoundDeadLetters deadLetterBound;

  private ScoreCloudEvents(
      ParseCloudEvents parsing,
      DeduplicateEvents deduplication,
      ComputeFeatures features,
      ScoreFeatures scoring,
      BoundDeadLetters deadLetterBound) {
    this.parsing = parsing;
    this.deduplication = deduplication;
    this.features = features;
    this.scoring = scoring;
    this.deadLetterBound = deadLetterBound;
  }

  /**
   * Every step with its defaults: 5-minute windows every 30 seconds, a 24-hour dedup horizon, the
   * bundled XGBoost model.
   */
  public static ScoreCloudEvents create() {
    return new ScoreCloudEvents(
        ParseCloudEvents.create(),
        DeduplicateEvents.create(),
        ComputeFeatures.of(
            ComputeFeatures.DEFAULT_WINDOW_SIZE, ComputeFeatures.DEFAULT_WINDOW_PERIOD),
        ScoreFeatures.defaultModel(),
        BoundDeadLetters.create());
  }

  /**
   * Every step as {@code spec} declares it: the events it accepts and their fields (with their
   * dead-letter reasons), the future skew, the dedup horizon, the windows (size, period, early and
   * late firings, allowed lateness, accumulation), the features, the model and its threshold. The
   * {@code with…} methods then change a step for this use, as options do for a run; a {@code
   * custom} feature needs {@link #withFeatureFn}.
   *
   * @throws SpecException when the graph cannot follow the spec ({@link SpecSupport})
   */
  public static ScoreCloudEvents of(PipelineSpec spec) {
    SpecSupport.check(spec, "the spec '" + spec.name() + "'", true);
    ScoreFeatures scoring =
        ScoreFeatures.forModel(spec.model().uri())
            .withThreshold(spec.model().threshold())
            .withFeatureNames(spec.featureNames())
            .withLabels(spec.model().positiveLabel(), spec.model().negativeLabel());
    if (spec.model().engine() != null) {
      scoring = scoring.withEngine(ModelEngine.fromName(spec.model().engine()));
    }
    return create()
        .withParsing(
            ParseCloudEvents.create()
                .withEvents(spec.events())
                .withEventTime(spec.clocks().eventTime())
                .withMaxFutureSkew(joda(spec.clocks().maxFutureSkew())))
        .withDeduplication(DeduplicateEvents.create().withHorizon(joda(spec.identity().horizon())))
        .withFeatures(ComputeFeatures.of(spec.windows()).withFeatures(spec))
        .withScoring(scoring);
  }

  private static Duration joda(java.time.Duration duration) {
    return Duration.millis(duration.toMillis());
  }

  ParseCloudEvents parsing() {
    return parsing;
  }

  DeduplicateEvents deduplication() {
    return deduplication;
  }

  ComputeFeatures features() {
    return features;
  }

  ScoreFeatures scoring() {
    return scoring;
  }

  /** How records are parsed and validated: accepted types, currency, size and skew bounds. */
  public ScoreCloudEvents withParsing(ParseCloudEvents parsing) {
    return new ScoreCloudEvents(
        Objects.requireNonNull(parsing, "parsing"),
        deduplication,
        features,
        scoring,
        deadLetterBound);
  }

  /** How duplicates are recognised: the dedup horizon. */
  public ScoreCloudEvents withDeduplication(DeduplicateEvents deduplication) {
    return new ScoreCloudEvents(
        parsing,
        Objects.requireNonNull(deduplication, "deduplication"),
        features,
        scoring,
        deadLetterBound);
  }

  /** The windows, triggers, allowed lateness and accumulation of the features. */
  public ScoreCloudEvents withFeatures(ComputeFeatures features) {
    return new ScoreCloudEvents(
        parsing,
        deduplication,
        Objects.requireNonNull(features, "features"),
        scoring,
        deadLetterBound);
  }

  /**
   * The feature {@code name} computed by {@code fn}, a combine of the caller's over each event's
   * field values, instead of the spec's aggregation (or for a feature the spec declares {@code
   * custom}); every other feature still comes from the spec ({@link
   * ComputeFeatures#withFeatureFn}).
   */
  public ScoreCloudEvents withFeatureFn(
      String name, CombineFn<FieldValues, ?, ? extends Number> fn) {
    return withFeatures(features.withFeatureFn(name, fn));
  }

  /** The model, its threshold and batching, and an optional shadow model. */
  public ScoreCloudEvents withScoring(ScoreFeatures scoring) {
    return new ScoreCloudEvents(
        parsing,
        deduplication,
        features,
        Objects.requireNonNull(scoring, "scoring"),
        deadLetterBound);
  }

  /** The largest payload a dead letter keeps. */
  public ScoreCloudEvents withDeadLetterBound(BoundDeadLetters deadLetterBound) {
    return new ScoreCloudEvents(
        parsing,
        deduplication,
        features,
        scoring,
        Objects.requireNonNull(deadLetterBound, "deadLetterBound"));
  }

  @Override
  public Outputs expand(PCollection<RawRecord> raw) {
    WithFailures.Result<PCollection<Event>, DeadLetter> parsed =
        raw.apply("ParseCloudEvents", parsing);
    DeduplicateEvents.Result deduped = parsed.output().apply("DeduplicateEvents", deduplication);
    ComputeFeatures.Result windowed = deduped.events().apply("ComputeFeatures", features);
    WithFailures.Result<PCollection<Decision>, DeadLetter> scored =
        windowed
            .features()
            .apply("AssembleDecisions", AssembleDecisions.create())
            .apply("ScoreFeatures", scoring);
    // With accumulating panes each edition says what it changes; a discarding pane is a delta,
    // whose verdict revises nothing (see AnnotateCorrections).
    PCollection<Decision> annotated =
        features.accumulationMode() == AccumulationMode.DISCARDING_FIRED_PANES
            ? scored.output()
            : scored.output().apply("AnnotateCorrections", AnnotateCorrections.create());
    PCollection<Decision> decisions =
        annotated.apply("MeasureDecisions", MeasureDecisions.create());
    // Every failure collection is flattened once into the one dead-letter output, and bounded
    // there, so that no dead letter from any step can outgrow what its sink can carry.
    PCollection<DeadLetter> deadLetters =
        PCollectionList.of(
                List.of(
                    parsed.failures(),
                    scored
                        .failures()
                        .apply(
                            "UnwindowScoringFailures",
                            Window.<DeadLetter>into(new GlobalWindows())
                                .triggering(DefaultTrigger.of())
                                .withAllowedLateness(Duration.ZERO)
                                .discardingFiredPanes())))
            .apply("CollectDeadLetters", Flatten.pCollections())
            .setCoder(DeadLetter.DeadLetterCoder.of())
            .apply("BoundDeadLetters", deadLetterBound);
    return new Outputs(decisions, deadLetters, deduped.duplicates(), windowed.tooLate());
  }
}
