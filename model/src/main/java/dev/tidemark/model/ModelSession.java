package dev.tidemark.model;

import ai.djl.inference.Predictor;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.DeadLetterReason;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Features;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.IntFunction;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;

/**
 * What one scoring DoFn instance holds between {@code @Setup} and {@code @Teardown}: a lease on the
 * JVM's shared model, its own DJL predictor (DJL predictors are not thread-safe; a DoFn instance
 * runs on one thread at a time) and the batch scorer, and optionally a session of a shadow model
 * that scores the same rows into {@link Decision.Shadow}. Not serialisable: built on the worker.
 */
final class ModelSession implements AutoCloseable {
  /** The step written in dead letters. */
  static final String STEP = "ScoreFeatures";

  static final String REVIEW = "review";
  static final String ALLOW = "allow";

  /** One batch's outcome, per input row: a scored decision, or (if null) a dead letter. */
  record Outcomes(Decision[] scored, DeadLetter @Nullable [] failures) {
    int size() {
      return scored.length;
    }

    @Nullable DeadLetter failure(int row) {
      return failures == null ? null : failures[row];
    }
  }

  private final ScoringConfig config;
  private final SharedModels.Lease lease;
  private final Predictor<FeatureBatch, float[]> predictor;
  private final BatchScorer scorer;
  private final int featureCount;
  private final Decision.ModelRef modelRef;
  private final ScoringMetrics metrics;
  private final ScoringMetrics.PerVersion perVersion;
  private final @Nullable ModelSession shadow;
  private boolean loadMetricsReported;

  private ModelSession(
      ScoringConfig config,
      SharedModels.Lease lease,
      ScoringMetrics metrics,
      @Nullable ModelSession shadow) {
    this.config = config;
    this.lease = lease;
    this.metrics = metrics;
    this.shadow = shadow;
    this.predictor = lease.model().newPredictor();
    ModelMetadata metadata = lease.model().metadata();
    this.scorer = new BatchScorer(predictor::predict, metadata.featureNames(), metrics);
    this.featureCount = metadata.featureNames().size();
    this.modelRef =
        new Decision.ModelRef(metadata.name(), metadata.version(), metadata.engine().djlName());
    this.perVersion =
        metrics
        .new PerVersion(
            metadata.name(), metadata.version(), config.positiveLabel, config.negativeLabel);
  }

  /** Acquires the shared model (loading it if this JVM has not) and a predictor. */
  static ModelSession open(ScoringConfig config) {
    return open(config, null);
  }

  /** {@link #open(ScoringConfig)}, with a shadow model when {@code shadowConfig} is not null. */
  static ModelSession open(ScoringConfig config, @Nullable ScoringConfig shadowConfig) {
    ModelSession shadow =
        shadowConfig == null
            ? null
            : openOne(shadowConfig, new ScoringMetrics(ScoringMetrics.SHADOW_PREFIX), null);
    try {
      return openOne(config, new ScoringMetrics(), shadow);
    } catch (RuntimeException e) {
      if (shadow != null) {
        shadow.close();
      }
      throw e;
    }
  }

  private static ModelSession openOne(
      ScoringConfig config, ScoringMetrics metrics, @Nullable ModelSession shadow) {
    SharedModels.Lease lease = SharedModels.acquire(config);
    try {
      return new ModelSession(config, lease, metrics, shadow);
    } catch (RuntimeException e) {
      lease.close();
      throw e;
    }
  }

  /** The URI of the model this session scores with. */
  String modelUri() {
    return config.modelUri;
  }

  /** The model this session scores with, as it was asked for: URI and, if fixed, content. */
  ModelIdentity modelIdentity() {
    return config.identity();
  }

  /**
   * Reports the load metrics once, from the instance whose setup loaded the model. Called from a
   * bundle method, where Beam metrics are attributed to the step ({@code @Setup} has no metrics
   * container).
   */
  void reportLoadMetricsOnce() {
    if (!loadMetricsReported && lease.loadedByThisLease()) {
      metrics.loadLatencyMillis.update(lease.model().loadMillis());
      metrics.modelByteSize.update(lease.model().byteSize());
    }
    loadMetricsReported = true;
    if (shadow != null) {
      shadow.reportLoadMetricsOnce();
    }
  }

  Decision.ModelRef modelRef() {
    return modelRef;
  }

  /** Scores {@code decisions} in one engine call (rows that fail are isolated), in order. */
  Outcomes score(List<Decision> decisions) {
    float[][] vectors = new float[decisions.size()][];
    for (int i = 0; i < vectors.length; i++) {
      vectors[i] = config.featureVector.apply(decisions.get(i));
    }
    return score(decisions.size(), decisions::get, i -> vectors[i], null);
  }

  /** Scores the decisions {@code batch} holds, from the rows it built and compared, in order. */
  Outcomes score(ScoreFeaturesFn.DistinctRows batch) {
    return score(batch.size(), batch::decision, batch::vector, batch.firstOf());
  }

  private Outcomes score(
      int rows,
      IntFunction<Decision> decisionOf,
      IntFunction<float[]> vectorOf,
      int @Nullable [] firstOf) {
    int columns = featureCount;
    BatchScorer.Result result = new BatchScorer.Result(rows);
    float[] values = new float[rows * columns];
    for (int i = 0; i < rows; i++) {
      float[] vector = vectorOf.apply(i);
      if (vector == null || vector.length != columns) {
        result.fail(i, scorer.wrongLength(vector), null);
      } else {
        System.arraycopy(vector, 0, values, i * columns, columns);
      }
    }
    scorer.score(values, rows, result, firstOf);
    Outcomes shadowed = shadow == null ? null : shadow.score(rows, decisionOf, vectorOf, firstOf);
    Instant decisionTime = Instant.now();
    Decision[] scored = new Decision[rows];
    DeadLetter[] failures = result.anyFailed() ? new DeadLetter[rows] : null;
    for (int i = 0; i < rows; i++) {
      Decision decision = decisionOf.apply(i);
      if (failures != null && result.failed(i)) {
        Throwable cause = result.cause(i);
        failures[i] =
            new DeadLetter(
                DeadLetterReason.SCORING_FAILED,
                result.error(i),
                STEP,
                decision.decisionId(),
                featuresJson(decision.features()).getBytes(StandardCharsets.UTF_8),
                cause == null ? null : cause.toString());
      } else {
        double score = result.scores[i];
        boolean review = score >= config.threshold;
        perVersion.record(score, review);
        scored[i] =
            decision.withScore(
                score,
                review ? config.positiveLabel : config.negativeLabel,
                modelRef,
                decisionTime);
        Decision second = shadowed == null ? null : shadowed.scored()[i];
        if (second != null) {
          scored[i] =
              scored[i].withShadow(
                  new Decision.Shadow(second.score(), second.label(), second.model()));
        }
      }
    }
    return new Outcomes(scored, failures);
  }

  /** The features object of a decision, as in the decisions output. */
  static String featuresJson(Features features) {
    return features.toJson();
  }

  @Override
  public void close() {
    try {
      predictor.close();
    } finally {
      lease.close();
      if (shadow != null) {
        shadow.close();
      }
    }
  }
}
