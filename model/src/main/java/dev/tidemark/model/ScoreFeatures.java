package dev.tidemark.model;

import com.google.auto.value.AutoValue;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.DeadLetterReason;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.DriftReference;
import dev.tidemark.transforms.values.DriftReferences;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.PaymentFeatures;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.GroupIntoBatches;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.View;
import org.apache.beam.sdk.transforms.WithFailures;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.apache.beam.sdk.values.PCollectionView;
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
 * other than {@link #featureNames()}), and at worker start-up ({@code @Setup}) for everything else
 * (remote files, a corrupt model file, a model that cannot score a row of its features in float32).
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
 * <p>Max batch wait: with bundle batching, a partial batch is also scored as soon as a row arrives
 * after the batch's first row has waited {@link #withMaxBatchWait the max batch wait} (default
 * {@link #DEFAULT_MAX_BATCH_WAIT}, processing time), so that in a stream slower than the batches a
 * decision need not wait for the end of its bundle. A DoFn without keyed state has no timer: the
 * end of the bundle still bounds the wait of a batch that no later row follows.
 *
 * <p>Models swapped without a restart: when {@code modelUri} names a directory (or ends in {@code
 * /}) or a glob pattern ({@code gs://bucket/models/*.ubj}), the transform watches it with {@link
 * WatchModels} every {@link #withModelWatchInterval watch interval} and scores with the newest
 * valid model (latest last-modified time, then greatest URI), given to the scoring DoFn as a side
 * input, as Beam Python's RunInference does with {@code WatchFilePattern}. A file without a
 * sidecar, with a bad sidecar or other features, or that its engine cannot load is refused: the
 * current model keeps scoring, {@value ScoringMetrics#MODEL_REFUSED} counts it and a WARN line says
 * why. Each DoFn instance moves to the new model between two batches (rows it buffered are scored
 * with the model they came to), so every decision's {@code model} is the version that scored it;
 * instances move at slightly different moments. Decisions wait until the watch has found a first
 * valid model; for a local directory the transform fails at construction if there is none. {@link
 * #withModelUpdates} takes the model choices from any PCollection instead.
 *
 * <p>Shadow scoring: {@link #withShadowModel} scores every row with a second model file too and
 * records its score, verdict and model as the decision's {@code shadow}; it never decides.
 *
 * <p>Metrics, named like Beam Python's RunInference (namespace {@value ScoringMetrics#NAMESPACE}):
 * counters {@code num_inferences}, {@code failed_batches_counter}, {@code num_failed_inferences};
 * distributions {@code inference_request_batch_size}, {@code inference_batch_latency_micro_secs},
 * {@code load_model_latency_milli_secs}, {@code model_byte_size}; and {@code num_repeated_rows}:
 * rows equal to an earlier row of their batch are not sent to the engine and take its answer. Per
 * model version ({@code <metric>/<name>:<version>}): {@code score_millionths} (a distribution),
 * {@code score_decile_0} to {@code score_decile_9}, and {@code decisions_<label>} for each of the
 * two labels ({@code decisions_review} and {@code decisions_allow} by default); the shadow model's
 * metrics carry the prefix {@code shadow_}. Watching: {@code model_refused}, {@code model_swaps}.
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
  public static final Duration DEFAULT_MAX_BATCH_WAIT = Duration.millis(5);

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

  /** With bundle batching: how long a partial batch waits for rows ({@link #withMaxBatchWait}). */
  abstract BatchWait batchWait();

  abstract ScoringConfig.FeatureVector featureVector();

  /** The features the decisions carry, in model input order; the model's sidecar must list them. */
  public abstract List<String> featureNames();

  /** The decision of a score at or above the threshold; {@code review} by default. */
  public abstract String positiveLabel();

  /** The decision of a score below the threshold; {@code allow} by default. */
  public abstract String negativeLabel();

  /** A second model that scores every row into {@link Decision#shadow()}; null: none. */
  public abstract @Nullable String shadowModelUri();

  /** How often a watched directory or pattern is listed. */
  public abstract Duration modelWatchInterval();

  /** Whether a directory or pattern is watched (true) or read once, at the start (false). */
  public abstract boolean watchModels();

  /** Model URIs to move to ({@link #withModelUpdates}); null: watch the pattern, if it is one. */
  abstract @Nullable PCollection<KV<Long, String>> modelUpdates();

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

    abstract Builder setBatchWait(BatchWait batchWait);

    abstract Builder setFeatureVector(ScoringConfig.FeatureVector featureVector);

    abstract Builder setFeatureNames(List<String> names);

    abstract Builder setPositiveLabel(String label);

    abstract Builder setNegativeLabel(String label);

    abstract Builder setShadowModelUri(@Nullable String uri);

    abstract Builder setModelWatchInterval(Duration interval);

    abstract Builder setWatchModels(boolean watch);

    abstract Builder setModelUpdates(@Nullable PCollection<KV<Long, String>> updates);

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
        .setBatchWait(BatchWait.of(DEFAULT_MAX_BATCH_WAIT))
        .setFeatureVector(new ScoringConfig.DefaultFeatureVector())
        .setFeatureNames(PaymentFeatures.SCHEMA.names())
        .setPositiveLabel(ModelSession.REVIEW)
        .setNegativeLabel(ModelSession.ALLOW)
        .setModelWatchInterval(WatchModels.DEFAULT_INTERVAL)
        .setWatchModels(true)
        .build();
  }

  /**
   * {@link #of(String)}, and the sidecar must name {@code engine} ({@link #withEngine}): for
   * callers that want a model of the wrong engine to fail rather than score.
   */
  public static ScoreFeatures of(String modelUri, ModelEngine engine) {
    return of(modelUri).withEngine(engine);
  }

  /** The word that names the shipped default model where a model URI is expected. */
  public static final String DEFAULT_MODEL = "default";

  /**
   * {@link #defaultModel()} for {@value #DEFAULT_MODEL}, else {@link #of(String)}: how a spec's
   * {@code model.uri} and {@code --modelUri} name a model.
   */
  public static ScoreFeatures forModel(String modelUri) {
    return DEFAULT_MODEL.equals(modelUri) ? defaultModel() : of(modelUri);
  }

  /** Scores with the shipped default model ({@link DefaultModel#XGBOOST_URI}). */
  public static ScoreFeatures defaultModel() {
    return of(DefaultModel.XGBOOST_URI)
        .withModelName(DefaultModel.XGBOOST_NAME)
        .withModelVersion(DefaultModel.XGBOOST_VERSION);
  }

  /**
   * The features the decisions carry, in model input order (a spec's features; by default the
   * bundled payments spec's): the model's sidecar must list exactly these, or the model is refused.
   */
  public ScoreFeatures withFeatureNames(List<String> names) {
    if (names == null || names.isEmpty()) {
      throw new IllegalArgumentException("the feature names must list at least one feature");
    }
    return toBuilder().setFeatureNames(List.copyOf(names)).build();
  }

  /**
   * The decisions a score gets: {@code atOrAbove} at or above the threshold, {@code below} under it
   * (a spec's {@code model.labels}).
   */
  public ScoreFeatures withLabels(String atOrAbove, String below) {
    if (atOrAbove == null || below == null || atOrAbove.isEmpty() || atOrAbove.equals(below)) {
      throw new IllegalArgumentException(
          "the labels must be two different non-empty strings, got '"
              + atOrAbove
              + "' and '"
              + below
              + "'");
    }
    return toBuilder().setPositiveLabel(atOrAbove).setNegativeLabel(below).build();
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

  /**
   * With {@link Batching#BUNDLE}: a partial batch is scored when a row arrives after the batch's
   * first row has waited {@code wait} (processing time), besides when it is full and at the end of
   * its bundle; null: no wait, a partial batch waits for the end of its bundle. Latency against
   * engine calls: docs/benchmarks.md measures both. Scores do not depend on it.
   */
  public ScoreFeatures withMaxBatchWait(@Nullable Duration wait) {
    if (wait != null && wait.getMillis() <= 0) {
      throw new IllegalArgumentException(
          "max batch wait must be a positive duration such as PT0.005S, or none, got "
              + wait
              + "; set it with withMaxBatchWait(...)");
    }
    return toBuilder().setBatchWait(BatchWait.of(wait)).build();
  }

  /** The max batch wait ({@link #withMaxBatchWait}); null: none. */
  public @Nullable Duration maxBatchWait() {
    return batchWait().maxWait();
  }

  /** The same batch wait on another clock; for tests that must make batches wait. */
  ScoreFeatures withBatchWaitClock(BatchWait.Clock clock) {
    return toBuilder().setBatchWait(batchWait().withClock(clock)).build();
  }

  /** How rows are batched; see the class documentation. */
  public ScoreFeatures withBatching(Batching batching) {
    Objects.requireNonNull(batching, "batching must be BUNDLE or GROUP_INTO_BATCHES");
    return toBuilder().setBatching(batching).build();
  }

  /**
   * Also scores every row with the model at {@code uri} (a model file, as for {@link #of}) and
   * records its score, verdict (against the same threshold) and model as the decision's {@link
   * Decision#shadow() shadow}. The shadow never decides and never fails a row: a row it cannot
   * score has no shadow (counted in {@code shadow_num_failed_inferences}). Its metrics carry the
   * prefix {@value ScoringMetrics#SHADOW_PREFIX}.
   */
  public ScoreFeatures withShadowModel(String uri) {
    checkUri(uri);
    if (ModelDirectory.isWatched(uri)) {
      throw new IllegalArgumentException(
          "the shadow model must be one model file, not a directory or pattern: " + uri);
    }
    return toBuilder().setShadowModelUri(uri).build();
  }

  /**
   * How often a watched directory or pattern ({@code modelUri} naming a directory, ending in {@code
   * /}, or holding a glob character) is listed for a newer model; default one minute.
   */
  public ScoreFeatures withModelWatchInterval(Duration interval) {
    if (interval == null || interval.getMillis() <= 0) {
      throw new IllegalArgumentException(
          "the model watch interval must be a positive duration such as PT1M, got "
              + interval
              + "; set it with withModelWatchInterval(...)");
    }
    return toBuilder().setModelWatchInterval(interval).build();
  }

  /**
   * A directory or pattern is read once, at the start, and its newest valid model scores the whole
   * run: for finite inputs (a replay, a backfill), where a watch's endless ticks would keep the job
   * from ending. A bounded input is always read this way.
   */
  public ScoreFeatures withoutModelWatch() {
    return toBuilder().setWatchModels(false).build();
  }

  /**
   * Scores with the model these elements name instead of watching {@code modelUri} itself: {@code
   * KV(order, model URI)}, in the global window, as {@link WatchModels} emits them (Beam Python's
   * {@code model_metadata_pcoll}). Of a pane's elements the one with the greatest order wins.
   * Decisions wait until the first element arrives.
   */
  public ScoreFeatures withModelUpdates(PCollection<KV<Long, String>> updates) {
    Objects.requireNonNull(updates, "updates");
    return toBuilder().setModelUpdates(updates).build();
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
        featureVector(),
        featureNames(),
        positiveLabel(),
        negativeLabel());
  }

  @Override
  public WithFailures.Result<PCollection<Decision>, DeadLetter> expand(
      PCollection<Decision> decisions) {
    ScoringConfig config = config();
    boolean watched = ModelDirectory.isWatched(modelUri());
    if (watched) {
      if (modelName() != null || modelVersion() != null) {
        throw new IllegalArgumentException(
            "a watched model directory "
                + modelUri()
                + " takes whichever version is newest; do not pin it with withModelName(...) or"
                + " withModelVersion(...)");
      }
      checkWatchedNow(config);
    } else {
      checkCheaply(config);
    }
    ScoringConfig shadowConfig = null;
    if (shadowModelUri() != null) {
      shadowConfig =
          new ScoringConfig(
              shadowModelUri(),
              null,
              null,
              null,
              threshold(),
              batchSize(),
              featureVector(),
              featureNames(),
              positiveLabel(),
              negativeLabel());
      checkCheaply(shadowConfig);
    }
    PCollectionView<Iterable<KV<Long, String>>> models = null;
    if (watched || modelUpdates() != null) {
      PCollection<KV<Long, String>> updates = modelUpdates();
      if (updates == null) {
        WatchModels watch = WatchModels.forConfig(config, modelWatchInterval());
        updates =
            watchModels() && decisions.isBounded() == PCollection.IsBounded.UNBOUNDED
                ? decisions.getPipeline().apply("WatchModels", watch)
                : decisions
                    .getPipeline()
                    .apply("ListModelsOnce", Create.of(0L))
                    .apply("FindNewestModel", watch.onTicks());
      }
      models = updates.apply("LatestModel", View.asIterable());
    }
    List<PCollectionView<?>> sideInputs = models == null ? List.of() : List.of(models);
    TupleTag<Decision> scoredTag = scoredTag();
    TupleTag<DeadLetter> failuresTag = failuresTag();
    PCollectionTuple outputs;
    if (batching() == Batching.BUNDLE) {
      outputs =
          decisions.apply(
              "ScoreBatches",
              ParDo.of(
                      new ScoreFeaturesFn(
                          config, shadowConfig, models, scoredTag, failuresTag, batchWait()))
                  .withSideInputs(sideInputs)
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
                  ParDo.of(new ScoreBatchesFn(config, shadowConfig, models, scoredTag, failuresTag))
                      .withSideInputs(sideInputs)
                      .withOutputTags(scoredTag, TupleTagList.of(failuresTag)));
    }
    outputs.get(scoredTag).setCoder(Decision.DecisionCoder.of());
    outputs.get(failuresTag).setCoder(DeadLetter.DeadLetterCoder.of());
    return WithFailures.Result.of(outputs, scoredTag, failuresTag);
  }

  // Made in static methods: an anonymous class in expand() would capture this transform, and with
  // it the model updates' PCollection, into the DoFn.
  private static TupleTag<Decision> scoredTag() {
    return new TupleTag<Decision>() {};
  }

  private static TupleTag<DeadLetter> failuresTag() {
    return new TupleTag<DeadLetter>() {};
  }

  /**
   * The {@code featureNames} of the sidecar of {@code modelUri} ({@code default}: the shipped
   * model), read where it is cheap: a local or classpath model file. Null for a watched directory
   * or pattern and for a model on a remote filesystem, whose sidecars are read on the workers.
   *
   * @throws ModelLoadException when the model file or its sidecar is missing or not valid
   */
  public static @Nullable List<String> sidecarFeatureNames(String modelUri) {
    String uri = DEFAULT_MODEL.equals(modelUri) ? DefaultModel.XGBOOST_URI : checkUri(modelUri);
    if (ModelDirectory.isWatched(uri)) {
      return null;
    }
    byte[] sidecar = ModelLocation.readSidecarIfCheap(uri);
    return sidecar == null
        ? null
        : ModelMetadata.parse(sidecar, ModelLocation.sidecarUri(uri)).featureNames();
  }

  /**
   * The drift reference ({@link ModelMetadata#driftReference()}) of the model at {@code modelUri}
   * ({@code default}: the shipped model), by {@code name:version}, read where it is cheap: a local
   * or classpath model file. Empty for a watched directory or pattern and for a model on a remote
   * filesystem ({@link #driftReferencesOf} finds theirs on the workers).
   *
   * @throws ModelLoadException when the model file or its sidecar is missing or not valid
   */
  public static Map<String, DriftReference> driftReferences(String modelUri) {
    String uri = DEFAULT_MODEL.equals(modelUri) ? DefaultModel.XGBOOST_URI : checkUri(modelUri);
    if (ModelDirectory.isWatched(uri)) {
      return Map.of();
    }
    byte[] sidecar = ModelLocation.readSidecarIfCheap(uri);
    if (sidecar == null) {
      return Map.of();
    }
    ModelMetadata metadata = ModelMetadata.parse(sidecar, ModelLocation.sidecarUri(uri));
    return Map.of(metadata.name() + ":" + metadata.version(), metadata.driftReference());
  }

  /**
   * The drift references of the models at {@code modelUris} (a run's model and shadow model): read
   * now where cheap ({@link #driftReferences}), and for a watched directory or pattern or a model
   * on a remote filesystem, found on the workers in the sidecars there, once per version. A version
   * without a {@code scoreReference} in its sidecar gets no score test.
   *
   * @throws ModelLoadException when a local or classpath model or its sidecar is missing or not
   *     valid
   */
  public static DriftReferences driftReferencesOf(List<String> modelUris) {
    Map<String, DriftReference> known = new HashMap<>();
    List<SidecarDriftLookup> lookups = new ArrayList<>();
    for (String modelUri : modelUris) {
      String uri = DEFAULT_MODEL.equals(modelUri) ? DefaultModel.XGBOOST_URI : checkUri(modelUri);
      if (ModelDirectory.isWatched(uri)
          || ModelLocation.kind(uri) == ModelLocation.Kind.BEAM_FILESYSTEM) {
        lookups.add(new SidecarDriftLookup(uri));
      } else {
        known.putAll(driftReferences(modelUri));
      }
    }
    DriftReferences references = DriftReferences.of(known);
    for (SidecarDriftLookup lookup : lookups) {
      references = references.withLookup(lookup);
    }
    return references;
  }

  /** Fails at construction, on the launcher, for a model whose sidecar is cheap to read. */
  private static void checkCheaply(ScoringConfig config) {
    byte[] sidecar = ModelLocation.readSidecarIfCheap(config.modelUri);
    if (sidecar != null) {
      String where = ModelLocation.sidecarUri(config.modelUri);
      config.check(ModelMetadata.parse(sidecar, where), where);
    }
  }

  /** Fails at construction when a local watched directory holds no valid model yet. */
  private static void checkWatchedNow(ScoringConfig config) {
    if (ModelLocation.kind(config.modelUri) != ModelLocation.Kind.LOCAL) {
      return; // listed on the workers; decisions wait for the first valid model
    }
    ModelDirectory directory = new ModelDirectory(config);
    if (directory.newest() == null) {
      StringBuilder why = new StringBuilder();
      for (ModelDirectory.Refusal refusal : directory.refusals()) {
        why.append("; ").append(refusal.uri()).append(": ").append(refusal.reason());
      }
      throw new ModelLoadException(
          "no valid model in "
              + config.modelUri
              + " (each model file needs its sidecar <file>.json)"
              + (why.length() == 0 ? "; it holds no model file" : why.toString()));
    }
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
