package dev.tidemark.model.bench;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import dev.tidemark.model.BenchmarkAccess;
import dev.tidemark.model.DefaultModel;
import dev.tidemark.model.ModelEngine;
import dev.tidemark.model.TestModels;
import dev.tidemark.transforms.values.Decision;
import java.nio.FloatBuffer;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import ml.dmlc.xgboost4j.java.Booster;
import ml.dmlc.xgboost4j.java.DMatrix;
import ml.dmlc.xgboost4j.java.XGBoost;

/**
 * Throughput of the scoring step (not a test; run it by hand, see docs/benchmarks.md): rows per
 * second at batch sizes 1, 64 and 256 for both engines, in one JVM and on the same rows, of
 *
 * <ul>
 *   <li>{@code raw}: the engine's own Java API (xgboost4j {@code DMatrix} + {@code
 *       Booster.predict}; ONNX Runtime {@code OnnxTensor} + {@code OrtSession.run}) on float rows;
 *   <li>{@code raw + decisions}: the same raw call plus the per-row work any scoring step does
 *       around it (each decision's feature vector in, a scored decision out);
 *   <li>{@code djl}: a DJL predictor on the same float rows (the engine call ScoreFeatures makes);
 *   <li>{@code transform}: ScoreFeatures' per-batch work: decisions to vectors, checks, the DJL
 *       call, scored decisions.
 * </ul>
 *
 * <p>Each measurement: warm-up, then {@link #REPEATS} timed passes over the rows; the median is
 * reported. Single thread, {@code OMP_NUM_THREADS=1}, ONNX Runtime with one intra-op thread.
 *
 * <p>Usage: {@code ScoringBenchmark [modelDirectory] [rows] [--pipeline]}; the model directory
 * defaults to {@value DefaultModel#REPO_DIRECTORY} (run from the repository root).
 */
public final class ScoringBenchmark {
  static final int REPEATS = 7;
  static final int[] BATCH_SIZES = {1, 64, 256};
  static final long WARMUP_NANOS = 2_000_000_000L;

  /** Where every pass leaves its last result, so the JIT cannot drop the work. */
  static volatile Object sink;

  private ScoringBenchmark() {}

  /** One timed workload: scores all rows in batches of the given size. */
  @FunctionalInterface
  interface Pass {
    void run(int batchSize) throws Exception;
  }

  /** One raw engine call on {@code n} row-major rows; returns one score per row. */
  @FunctionalInterface
  interface BatchCall {
    float[] predict(float[] values, int n) throws Exception;
  }

  /** The raw call on the precomputed float rows. */
  static Pass raw(BatchCall call, float[][] vectors) {
    int rows = vectors.length;
    return batch -> {
      for (int from = 0; from < rows; from += batch) {
        int n = Math.min(batch, rows - from);
        sink = call.predict(flatten(vectors, from, n), n);
      }
    };
  }

  /**
   * The raw call plus the per-row work any scoring step must do around it: the feature vector of
   * each decision in, a scored decision out.
   */
  static Pass rawWithDecisions(BatchCall call, List<Decision> decisions) {
    int rows = decisions.size();
    Decision.ModelRef model = new Decision.ModelRef("bench", "1", "raw");
    return batch -> {
      for (int from = 0; from < rows; from += batch) {
        int n = Math.min(batch, rows - from);
        float[] values = new float[n * 5];
        for (int i = 0; i < n; i++) {
          System.arraycopy(decisions.get(from + i).features().toVector(), 0, values, i * 5, 5);
        }
        float[] scores = call.predict(values, n);
        org.joda.time.Instant now = org.joda.time.Instant.now();
        Decision[] out = new Decision[n];
        for (int i = 0; i < n; i++) {
          out[i] =
              decisions
                  .get(from + i)
                  .withScore(scores[i], scores[i] >= 0.5 ? "review" : "allow", model, now);
        }
      }
    };
  }

  public static void main(String[] args) throws Exception {
    Path dir = Paths.get(args.length > 0 ? args[0] : DefaultModel.REPO_DIRECTORY);
    int rows = args.length > 1 ? Integer.parseInt(args[1]) : 16_384;
    Path xgbModel = dir.resolve(DefaultModel.XGBOOST_FILE);
    Path onnxModel = dir.resolve(DefaultModel.ONNX_FILE);
    List<Decision> decisions = TestModels.decisions(rows, 1234);
    float[][] vectors = TestModels.vectors(decisions);

    System.out.printf(
        Locale.ROOT,
        "%d rows, %d repeats (median), JVM %s, %d cores, OMP_NUM_THREADS=%s%n%n",
        rows,
        REPEATS,
        Runtime.version(),
        Runtime.getRuntime().availableProcessors(),
        System.getenv("OMP_NUM_THREADS"));
    System.out.println(
        "| engine | batch | raw rows/s | raw + decisions rows/s | DJL rows/s | transform rows/s"
            + " | transform/raw | transform/(raw + decisions) | transform vs batch 1 |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|");

    // XGBoost.
    Booster booster = XGBoost.loadModel(xgbModel.toString());
    BatchCall xgbCall =
        (values, n) -> {
          DMatrix matrix = new DMatrix(values, n, 5, Float.NaN);
          float[][] predictions = booster.predict(matrix);
          matrix.dispose();
          float[] scores = new float[n];
          for (int i = 0; i < n; i++) {
            scores[i] = predictions[i][0];
          }
          return scores;
        };
    report("XGBoost", xgbModel, ModelEngine.XGBOOST, xgbCall, decisions, vectors);
    booster.dispose();

    // ONNX Runtime.
    OrtEnvironment env = TestModels.ortEnvironment();
    OrtSession.SessionOptions options = new OrtSession.SessionOptions();
    options.setIntraOpNumThreads(1);
    options.setInterOpNumThreads(1);
    OrtSession session = env.createSession(onnxModel.toString(), options);
    String input = session.getInputNames().iterator().next();
    BatchCall ortCall =
        (values, n) -> {
          try (OnnxTensor tensor =
                  OnnxTensor.createTensor(env, FloatBuffer.wrap(values), new long[] {n, 5});
              OrtSession.Result result = session.run(Map.of(input, tensor))) {
            FloatBuffer out = ((OnnxTensor) result.get(0)).getFloatBuffer();
            float[] scores = new float[n];
            out.get(scores);
            return scores;
          }
        };
    report("OnnxRuntime", onnxModel, ModelEngine.ONNX_RUNTIME, ortCall, decisions, vectors);
    session.close();
    options.close();

    if (Arrays.asList(args).contains("--pipeline")) {
      PipelineBatchingBenchmark.run(xgbModel, ModelEngine.XGBOOST, 20_000);
    }
  }

  private static void report(
      String engine,
      Path model,
      ModelEngine modelEngine,
      BatchCall call,
      List<Decision> decisions,
      float[][] vectors)
      throws Exception {
    int rows = decisions.size();
    try (BenchmarkAccess access = BenchmarkAccess.open(model.toString(), modelEngine)) {
      Pass djl =
          batch -> {
            for (int from = 0; from < rows; from += batch) {
              int n = Math.min(batch, rows - from);
              sink = access.predictRaw(flatten(vectors, from, n), n, vectors[0].length);
            }
          };
      Pass transform =
          batch -> {
            for (int from = 0; from < rows; from += batch) {
              sink = access.score(decisions.subList(from, Math.min(rows, from + batch)));
            }
          };
      Pass raw = raw(call, vectors);
      Pass rawPlus = rawWithDecisions(call, decisions);
      double transformBatch1 = 0;
      for (int batch : BATCH_SIZES) {
        double rawRate = rate(raw, batch, rows);
        double rawPlusRate = rate(rawPlus, batch, rows);
        double djlRate = rate(djl, batch, rows);
        double transformRate = rate(transform, batch, rows);
        if (batch == 1) {
          transformBatch1 = transformRate;
        }
        System.out.printf(
            Locale.ROOT,
            "| %s | %d | %,.0f | %,.0f | %,.0f | %,.0f | %.2f | %.2f | %.1fx |%n",
            engine,
            batch,
            rawRate,
            rawPlusRate,
            djlRate,
            transformRate,
            transformRate / rawRate,
            transformRate / rawPlusRate,
            transformRate / transformBatch1);
      }
    }
  }

  /** Median rows per second over REPEATS passes after a warm-up. */
  static double rate(Pass pass, int batchSize, int rows) throws Exception {
    long warmupEnd = System.nanoTime() + WARMUP_NANOS;
    while (System.nanoTime() < warmupEnd) {
      pass.run(batchSize);
    }
    List<Double> rates = new ArrayList<>();
    for (int r = 0; r < REPEATS; r++) {
      long start = System.nanoTime();
      pass.run(batchSize);
      rates.add(rows / ((System.nanoTime() - start) / 1e9));
    }
    rates.sort(Double::compare);
    return rates.get(rates.size() / 2);
  }

  static float[] flatten(float[][] vectors, int from, int n) {
    int columns = vectors[0].length;
    float[] flat = new float[n * columns];
    for (int i = 0; i < n; i++) {
      System.arraycopy(vectors[from + i], 0, flat, i * columns, columns);
    }
    return flat;
  }
}
