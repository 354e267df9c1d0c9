package dev.tidemark.model;

import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.values.KV;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves a scoring DoFn instance to the model a {@link WatchModels} side input names. The new model
 * is opened before the old one is released, so a model shared with another instance is not closed
 * and reloaded. A model that cannot be opened here is refused: the old one keeps scoring, {@value
 * ScoringMetrics#MODEL_REFUSED} counts it, a log line says why, and it is not tried again by this
 * instance. Without an old model (the first model of the job) the failure fails the bundle, as a
 * model that cannot load at start-up does.
 */
final class ModelSwitch {
  private static final Logger LOG = LoggerFactory.getLogger(ModelSwitch.class);

  private final ScoringConfig config;
  private final @Nullable ScoringConfig shadowConfig;
  private final Counter refused =
      Metrics.counter(ScoringMetrics.NAMESPACE, ScoringMetrics.MODEL_REFUSED);
  private final Counter swaps =
      Metrics.counter(ScoringMetrics.NAMESPACE, ScoringMetrics.MODEL_SWAPS);
  private @Nullable String refusedUri;

  ModelSwitch(ScoringConfig config, @Nullable ScoringConfig shadowConfig) {
    this.config = config;
    this.shadowConfig = shadowConfig;
  }

  /** The model URI of the latest element of a watch's pane: the one with the greatest tick. */
  static @Nullable String newest(Iterable<KV<Long, String>> models) {
    KV<Long, String> newest = null;
    for (KV<Long, String> model : models) {
      if (newest == null
          || model.getKey() > newest.getKey()
          || (model.getKey().equals(newest.getKey())
              && model.getValue().compareTo(newest.getValue()) > 0)) {
        newest = model;
      }
    }
    return newest == null ? null : newest.getValue();
  }

  /** Whether {@code wanted} is a model to move to from {@code current}. */
  boolean shouldTry(@Nullable ModelSession current, @Nullable String wanted) {
    return wanted != null
        && !wanted.equals(refusedUri)
        && (current == null || !wanted.equals(current.modelUri()));
  }

  /** The session of {@code wanted}, or {@code current} when {@code wanted} cannot be used. */
  ModelSession switchTo(@Nullable ModelSession current, String wanted) {
    ModelSession next;
    try {
      next = ModelSession.open(config.withModelUri(wanted), shadowConfig);
    } catch (RuntimeException e) {
      if (current == null) {
        throw e;
      }
      refusedUri = wanted;
      refused.inc();
      LOG.warn(
          "model {} refused, {} keeps scoring: {}", wanted, current.modelRef(), e.getMessage());
      return current;
    }
    if (current != null) {
      LOG.info("scoring moves from {} to {} ({})", current.modelRef(), next.modelRef(), wanted);
      current.close();
      swaps.inc();
    }
    next.reportLoadMetricsOnce();
    return next;
  }
}
