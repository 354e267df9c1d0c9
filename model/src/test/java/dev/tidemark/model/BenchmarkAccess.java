package dev.tidemark.model;

import ai.djl.inference.Predictor;
import ai.djl.translate.TranslateException;
import dev.tidemark.transforms.values.Decision;
import java.util.List;

/**
 * Package-private scoring internals for the benchmark in {@code dev.tidemark.model.bench}: one
 * model session (as one ScoreFeatures DoFn instance holds) and a bare DJL predictor on it.
 */
public final class BenchmarkAccess implements AutoCloseable {
  private final ModelSession session;
  private final SharedModels.Lease lease;
  private final Predictor<FeatureBatch, float[]> predictor;

  private BenchmarkAccess(ModelSession session, SharedModels.Lease lease) {
    this.session = session;
    this.lease = lease;
    this.predictor = lease.model().newPredictor();
  }

  public static BenchmarkAccess open(String modelUri, ModelEngine engine) {
    ScoringConfig config = ScoreFeatures.of(modelUri, engine).config();
    return new BenchmarkAccess(ModelSession.open(config), SharedModels.acquire(config));
  }

  /** The transform's per-batch work: decisions in, scored decisions (or dead letters) out. */
  public Object score(List<Decision> decisions) {
    return session.score(decisions);
  }

  /** The bare DJL call on a row-major batch. */
  public float[] predictRaw(float[] values, int rows, int columns) throws TranslateException {
    return predictor.predict(new FeatureBatch(values, rows, columns));
  }

  @Override
  public void close() {
    predictor.close();
    lease.close();
    session.close();
  }
}
