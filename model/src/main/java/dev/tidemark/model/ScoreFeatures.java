package dev.tidemark.model;

import com.google.auto.value.AutoValue;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.DeadLetterReason;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Features;
import java.util.Objects;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.transforms.GroupIntoBatches;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithFailures;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.TupleTagList;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;

/**
 * Scores unscored {@link Decision}s with a model through DJL (XGBoost or ONNX Runtime): Beam Java's
 * missing {@code RunInference}, for Tidemark's features.
 *
 * <p>Semantics: every input decision ends in exactly one place. {@link
 * WithFailures.Result#output()} has it scored: {@code score} in [0, 1], decision {@code review}
 * when {@code score >= threshold} else {@code allow}, {@code model} = the sidecar's name and
 * version and the engine, {@code decisionTime} = when its batch was scored; it keeps its window and
 * timestamp. {@link WithFailures.Result#failures()} has a {@link DeadLetter} ({@link
 * DeadLetterReason#SCORING_FAILED}, step {@value ModelSession#STEP}, origin = the decision id,
 * payload = the features as JSON) for each row that cannot be scored: a NaN or infinite feature, or
 * an engine error on that row (when a batch fails, its rows are retried one by one, so only the bad
 * rows fail). A model that cannot be used fails the pipeline instead: at construction for a local
 * or {@code classpath:} model (missing file or sidecar, bad sidecar, wrong engine, feature order
 * other than {@link Features#NAMES}), and at worker start-up ({@code @Setup}) for everything else
 * (remote files, a corrupt model file, a model that cannot score a row of {@code [1, 5]} float32).
 *
 * <p>Model lifecycle: the model is loaded once per worker JVM, in {@code @Setup}, into a
 * reference-counted holder keyed by URI that every DoFn instance of the JVM shares; each instance
 * has its own DJL predictor (predictors are not thread-safe) and releases the model in
 * {@code @Teardown}; the last release closes it. Nothing model-related is serialised with the
 * transform: it carries only the URI, engine, name, version, threshold and batch size. URIs: local
 * paths, {@code file:}, {@code classpath:} and any scheme of Beam's {@code FileSystems} (e.g.
 * {@code gs://}, copied to a local temporary file at setup). Every model needs a sidecar {@code
 * <model uri>.json} ({@link ModelMetadata}).
 *
 * <p>Batching: {@link Batching#BUNDLE} (default) buffers rows within a bundle (with their
 * timestamp, window and pane), scores them when they hold {@link #withBatchSize batchSize} distinct
 * rows (the rows the engine call gets; a repeated row is not sent again, so it does not count, and
 * a batch ends at {@value ScoreFeaturesFn#MAX_DECISIONS_PER_ROW} times {@code batchSize} decisions,
 * and at {@value #MAX_BATCH_SIZE} unless the batch size is larger), and scores the rest at the end
 * of the bundle. No shuffle, no state, no added latency beyond the bundle (which a runner commits
 * as a unit anyway). Outputs of a full batch are emitted at once, each with its own input's
 * timestamp, window and pane; the last, partial batch of a bundle is emitted at finish bundle,
 * where Beam cannot keep the pane (those outputs carry {@code PaneInfo.NO_FIRING}; the decision's
 * own {@code pane} fields are unchanged). {@link Batching#GROUP_INTO_BATCHES} uses Beam's {@code
 * GroupIntoBatches} on a sharded constant key with {@link #withMaxBufferingDelay max buffering
 * delay}: full batches even when bundles are tiny, at the cost of a shuffle, per-key-and-window
 * state and up to the delay in latency; its batches count decisions, repeated rows included;
 * batches never span windows, so when a window holds fewer rows than the batch size the batches
 * stay small. Bundle batching is the default: it needs neither a shuffle nor state, so it is faster
 * (docs/benchmarks.md compares the two), it fills batches across windows, and it keeps the scoring
 * step a plain ParDo that fuses with its neighbours. Scores do not depend on how rows were batched
 * (tested for batch sizes 1, 7 and 64 with a partial last batch, against each engine's own API).
 *
 * <p>Metrics, named like Beam Python's RunInference (namespace {@value ScoringMetrics#NAMESPACE}):
 * counters {@code num_inferences}, {@code failed_batches_counter}, {@code num_failed_inferences};
 * distributions {@code inference_request_batch_size}, {@code inference_batch_latency_micro_secs},
 * {@code load_model_latency_milli_secs}, {@code model_byte_size}; and {@code num_repeated_rows}:
 * rows equal to an earlier row of their batch are not sent to the engine and take its answer.
 *
 * <pre>{@code
 * WithFailures.Result<PCollection<Decision>, DeadLetter> scored =
 *     decisions.apply("ScoreFeatures",
 *         ScoreFeatures.of("gs://my-bucket/models/fraud.ubj") // engine: the sidecar's
 *             .withModelName("fraud").withModelVersion("7")
 *             .withThreshold(0.5)
 *             .withBatchSize(256));
 * scored.output();   // scored decisions
 * scored.failures(); // rows that could not be scored
 * }</pre>
 */
@AutoValue
public abstract class ScoreFeatures
    extends PTransform<
        PCollection<Decision>, WithFailures.Result<PCollection<Decision>, DeadLetter>> {

  /** How rows are batched before the engine call. */
  public enum Batching {
    /** Within a bundle, in the DoFn (default): no shuffle, no state. */
    BUNDLE,
    /** With Beam's {@code GroupIntoBatches} on a sharded key: a shuffle and keyed state. */
    GROUP_INTO_BATCHES
  }

  public static final double DEFAULT_THRESHOLD = 0.5;
  public static final int DEFAULT_BATCH_SIZE = 256;
  public static final int MAX_BATCH_SIZE = 100_000;
  public static final Duration DEFAULT_MAX_BUFFERING_DELAY = Duration.standardSeconds(1);
  public static final Batching DEFAULT_BATCHING = Batching.BUNDLE;

  /** The model file: a local path, {@code file:}, {@code classpath:} or a Beam filesystem URI. */
  public abstract String modelUri();

  /**
   * The engine the model's sidecar must name, checked like the name and version; null (the
   * default): the engine the sidecar names.
   */
  public abstract @Nullable ModelEngine engine();

  /** The name the sidecar must have; null: whatever it says. */
  abstract @Nullable String modelName();

  /** The version the sidecar must have; null: whatever it says. */
  abstract @Nullable String modelVersion();

  public abstract double threshold();

  public abstract int batchSize();

  abstract Duration maxBufferingDelay();

  public abstract Batching batching();

  abstract ScoringConfig.FeatureVector featureVector();

  abstract Builder toBuilder();

  @AutoValue.Builder
  abstract static class Builder {
    abstract Builder setModelUri(String uri);

    abstract Builder setEngine(@Nullable ModelEngine engine);

    abstract Builder setModelName(@Nullable String name);

    abstract Builder setModelVersion(@Nullable String version);

    abstract Builder setThreshold(double threshold);

    abstract Builder setBatchSize(int batchSize);

    abstract Builder setMaxBufferingDelay(Duration delay);

    abstract Builder setBatching(Batching batching);

    abstract Builder setFeatureVector(ScoringConfig.FeatureVector featureVector);

    abstract ScoreFeatures build();
  }

  /**
   * Scores with the model at {@code modelUri} (a local path, {@code file:}, {@code classpath:} or a
   * Beam filesystem URI such as {@code gs://...}) on the engine its sidecar {@code modelUri +
   * ".json"} names.
   */
  public static ScoreFeatures of(String modelUri) {
    checkUri(modelUri);
    return new AutoValue_ScoreFeatures.Builder()
        .setModelUri(modelUri)
        .setThreshold(DEFAULT_THRESHOLD)
        .setBatchSize(DEFAULT_BATCH_SIZE)
        .setMaxBufferingDelay(DEFAULT_MAX_BUFFERING_DELAY)
        .setBatching(DEFAULT_BATCHING)
        .setFeatureVector(new ScoringConfig.DefaultFeatureVector())
        .build();
  }

  /**
   * {@link #of(String)}, and the sidecar must name {@code engine} ({@link #withEngine}): for
   * callers that want a model of the wrong engine to fail rather than score.
   */
  public static ScoreFeatures of(String modelUri, ModelEngine engine) {
    return of(modelUri).withEngine(engine);
  }

  /** Scores with the shipped default model ({@link DefaultModel#XGBOOST_URI}). */
  public static ScoreFeatures defaultModel() {
    return of(DefaultModel.XGBOOST_URI)
        .withModelName(DefaultModel.XGBOOST_NAME)
        .withModelVersion(DefaultModel.XGBOOST_VERSION);
  }

  /** Another model file (and its sidecar), with the same checks. */
  public ScoreFeatures withModelUri(String uri) {
    checkUri(uri);
    return toBuilder().setModelUri(uri).build();
  }

  /**
   * The engine the sidecar must name (unset: whatever it names); a model of another engine fails at
   * construction or set-up with a message saying so.
   */
  public ScoreFeatures withEngine(ModelEngine engine) {
    Objects.requireNonNull(engine, "engine must be XGBOOST or ONNX_RUNTIME");
    return toBuilder().setEngine(engine).build();
  }

  /** The model name the sidecar must have (unset: whatever it says). */
  public ScoreFeatures withModelName(String name) {
    checkText(name, "model name", "withModelName");
    return toBuilder().setModelName(name).build();
  }

  /** The model version the sidecar must have (unset: whatever it says). */
  public ScoreFeatures withModelVersion(String version) {
    checkText(version, "model version", "withModelVersion");
    return toBuilder().setModelVersion(version).build();
  }

  /** Scores at or above this are {@code review}, below {@code allow}; in [0, 1]. */
  public ScoreFeatures withThreshold(double threshold) {
    if (!(threshold >= 0 && threshold <= 1)) {
      throw new IllegalArgumentException(
          "threshold must be in [0, 1], got " + threshold + "; set it with withThreshold(...)");
    }
    return toBuilder().setThreshold(threshold).build();
  }

  /** Rows per engine call, at most; 1 turns batching off. */
  public ScoreFeatures withBatchSize(int batchSize) {
    if (batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
      throw new IllegalArgumentException(
          "batch size must be in [1, "
              + MAX_BATCH_SIZE
              + "], got "
              + batchSize
              + "; set it with withBatchSize(...)");
    }
    return toBuilder().setBatchSize(batchSize).build();
  }

  /**
   * With {@link Batching#GROUP_INTO_BATCHES}: the longest a row waits for its batch to fill
   * (processing time). Bundle batching needs none: a bundle ends when the runner ends it.
   */
  public ScoreFeatures withMaxBufferingDelay(Duration delay) {
    if (delay == null || delay.getMillis() <= 0) {
      throw new IllegalArgumentException(
          "max buffering delay must be a positive duration such as PT1S, got "
              + delay
              + "; set it with withMaxBufferingDelay(...)");
    }
    return toBuilder().setMaxBufferingDelay(delay).build();
  }

  /** How rows are batched; see the class documentation. */
  public ScoreFeatures withBatching(Batching batching) {
    Objects.requireNonNull(batching, "batching must be BUNDLE or GROUP_INTO_BATCHES");
    return toBuilder().setBatching(batching).build();
  }

  /** Replaces {@link Features#toVector()}; for tests that need rows the features cannot make. */
  ScoreFeatures withFeatureVector(ScoringConfig.FeatureVector featureVector) {
    Objects.requireNonNull(featureVector, "featureVector");
    return toBuilder().setFeatureVector(featureVector).build();
  }

  ScoringConfig config() {
    return new ScoringConfig(
        modelUri(),
        engine(),
        modelName(),
        modelVersion(),
        threshold(),
        batchSize(),
        featureVector());
  }

  @Override
  public WithFailures.Result<PCollection<Decision>, DeadLetter> expand(
      PCollection<Decision> decisions) {
    ScoringConfig config = config();
    // Fail at construction, on the launcher, for every model whose sidecar is cheap to read.
    byte[] sidecar = ModelLocation.readSidecarIfCheap(modelUri());
    if (sidecar != null) {
      String where = ModelLocation.sidecarUri(modelUri());
      config.check(ModelMetadata.parse(sidecar, where), where);
    }
    TupleTag<Decision> scoredTag = new TupleTag<Decision>() {};
    TupleTag<DeadLetter> failuresTag = new TupleTag<DeadLetter>() {};
    PCollectionTuple outputs;
    if (batching() == Batching.BUNDLE) {
      outputs =
          decisions.apply(
              "ScoreBatches",
              ParDo.of(new ScoreFeaturesFn(config, scoredTag, failuresTag))
                  .withOutputTags(scoredTag, TupleTagList.of(failuresTag)));
    } else {
      outputs =
          decisions
              .apply(
                  "KeyForBatching",
                  WithKeys.<Integer, Decision>of(0).withKeyType(TypeDescriptors.integers()))
              .setCoder(KvCoder.of(VarIntCoder.of(), Decision.DecisionCoder.of()))
              .apply(
                  "GroupIntoBatches",
                  GroupIntoBatches.<Integer, Decision>ofSize(batchSize())
                      .withMaxBufferingDuration(maxBufferingDelay())
                      .withShardedKey())
              .apply(
                  "ScoreBatches",
                  ParDo.of(new ScoreBatchesFn(config, scoredTag, failuresTag))
                      .withOutputTags(scoredTag, TupleTagList.of(failuresTag)));
    }
    outputs.get(scoredTag).setCoder(Decision.DecisionCoder.of());
    outputs.get(failuresTag).setCoder(DeadLetter.DeadLetterCoder.of());
    return WithFailures.Result.of(outputs, scoredTag, failuresTag);
  }

  private static String checkUri(String uri) {
    if (uri == null || uri.isBlank()) {
      throw new IllegalArgumentException(
          "model URI must be a path, file:, classpath: or gs:// URI of a model file, got '"
              + uri
              + "'");
    }
    return uri;
  }

  private static String checkText(String value, String what, String method) {
    if (value == null || value.isEmpty()) {
      throw new IllegalArgumentException(
          what + " must be a non-empty string; set it with " + method + "(...)");
    }
    return value;
  }
}
