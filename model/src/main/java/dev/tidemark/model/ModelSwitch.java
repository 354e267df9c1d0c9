package dev.tidemark.model;

import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.values.KV;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves a scoring DoFn instance to the model a {@link WatchModels} side input names ({@link
 * ModelIdentity}: a URI and the content the watch checked; the same URI with new content is another
 * model, and content other than the named one is refused). The new model is opened before the old
 * one is released, so a model shared with another instance is not closed and reloaded. A model that
 * cannot be opened here is refused: the old one keeps scoring, {@value
 * ScoringMetrics#MODEL_REFUSED} counts it, a log line says why, and it is tried again when a later
 * listing of the watch names it (a greater tick), so a transient read error does not pin this
 * worker to the old model. Without an old model (the first model of the job) the failure fails the
 * bundle, as a model that cannot load at start-up does.
 */
final class ModelSwitch {
  private static final Logger LOG = LoggerFactory.getLogger(ModelSwitch.class);

  private final ScoringConfig config;
  private final @Nullable ScoringConfig shadowConfig;
  private final Counter refused =
      Metrics.counter(ScoringMetrics.NAMESPACE, ScoringMetrics.MODEL_REFUSED);
  private final Counter swaps =
      Metrics.counter(ScoringMetrics.NAMESPACE, ScoringMetrics.MODEL_SWAPS);
  private @Nullable ModelIdentity refusedModel;
  private long refusedTick;

  ModelSwitch(ScoringConfig config, @Nullable ScoringConfig shadowConfig) {
    this.config = config;
    this.shadowConfig = shadowConfig;
  }

  /**
   * The latest element of a watch's pane, the one with the greatest tick: the tick of the listing
   * and the model URI it chose.
   */
  static @Nullable KV<Long, String> newest(Iterable<KV<Long, String>> models) {
    KV<Long, String> newest = null;
    for (KV<Long, String> model : models) {
      if (newest == null
          || model.getKey() > newest.getKey()
          || (model.getKey().equals(newest.getKey())
              && model.getValue().compareTo(newest.getValue()) > 0)) {
        newest = model;
      }
    }
    return newest;
  }

  /**
   * Whether the model a listing chose ({@code wanted}: tick and URI) is one to move to from {@code
   * current}: another model, not refused here at this listing or a later one.
   */
  boolean shouldTry(@Nullable ModelSession current, @Nullable KV<Long, String> wanted) {
    if (wanted == null) {
      return false;
    }
    ModelIdentity model = ModelIdentity.parse(wanted.getValue());
    if (current != null && model.equals(current.modelIdentity())) {
      return false;
    }
    return !(model.equals(refusedModel) && wanted.getKey() <= refusedTick);
  }

  /**
   * The session of the model a listing chose ({@code wanted}: tick and URI), or {@code current}
   * when it cannot be used.
   */
  ModelSession switchTo(@Nullable ModelSession current, KV<Long, String> listed) {
    ModelIdentity wanted = ModelIdentity.parse(listed.getValue());
    ModelSession next;
    try {
      next = ModelSession.open(config.withModel(wanted), shadowConfig);
    } catch (RuntimeException e) {
      if (current == null) {
        throw e;
      }
      refusedModel = wanted;
      refusedTick = listed.getKey();
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
