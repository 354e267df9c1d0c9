package dev.tidemark.model;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.PaymentFeatures;
import java.io.IOException;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import ml.dmlc.xgboost4j.java.Booster;
import ml.dmlc.xgboost4j.java.DMatrix;
import ml.dmlc.xgboost4j.java.XGBoost;
import org.joda.time.Duration;
import org.joda.time.Instant;

/** Small models and decisions for the scoring tests, and the raw engines' own predictions. */
public final class TestModels {
  public static final Instant BASE = Instant.parse("2026-01-01T00:00:00Z");
  public static final Duration WINDOW = Duration.standardMinutes(5);

  public static final String XGB_NAME = "test-xgb";
  public static final String ONNX_NAME = "test-logreg";
  public static final String VERSION = "3";

  /** Weights of the test logistic regression, on raw features. */
  public static final float[] ONNX_WEIGHTS = {0.35f, 0.0021f, 0.0043f, 0.18f, 0.9f};

  public static final float ONNX_BIAS = -4.2f;

  private TestModels() {}

  /** Random but plausible features: most rows legit-looking, some bursts. */
  public static Features features(SplittableRandom random, Instant time) {
    boolean burst = random.nextInt(5) == 0;
    long count = burst ? 6 + random.nextInt(15) : 1 + random.nextInt(4);
    long max =
        burst && random.nextBoolean()
            ? 50_000 + random.nextInt(150_000)
            : 100 + random.nextInt(9_000);
    long sum = max + random.nextInt(5_000) * (count - 1);
    long merchants = 1 + random.nextInt((int) count);
    long countries = 1 + (burst ? random.nextInt(2) : 0);
    return PaymentFeatures.of(count, sum, max, merchants, countries, time, time);
  }

  /** {@code n} unscored decisions, accounts {@code acct-0..}, in 5-minute windows. */
  public static List<Decision> decisions(int n, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    List<Decision> decisions = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Instant start = BASE.plus(WINDOW.multipliedBy(i % 4));
      Instant end = start.plus(WINDOW);
      Instant eventTime = end.minus(Duration.standardSeconds(1 + random.nextInt(200)));
      decisions.add(
          Decision.unscored(
              "acct-" + i,
              start,
              end,
              "ON_TIME",
              0,
              true,
              true,
              features(random, eventTime),
              end.plus(Duration.standardSeconds(2))));
    }
    return decisions;
  }

  public static float[][] vectors(List<Decision> decisions) {
    float[][] rows = new float[decisions.size()][];
    for (int i = 0; i < rows.length; i++) {
      rows[i] = decisions.get(i).features().toVector();
    }
    return rows;
  }

  /** Trains a small XGBoost booster and writes it with its sidecar into {@code dir}. */
  public static Path xgboost(Path dir) throws Exception {
    SplittableRandom random = new SplittableRandom(11);
    int n = 3000;
    float[] data = new float[n * 5];
    float[] labels = new float[n];
    for (int i = 0; i < n; i++) {
      float[] row = features(random, BASE).toVector();
      System.arraycopy(row, 0, data, i * 5, 5);
      labels[i] = (row[0] >= 8 || row[2] >= 500) && random.nextInt(10) != 0 ? 1f : 0f;
    }
    DMatrix train = new DMatrix(data, n, 5, Float.NaN);
    train.setLabel(labels);
    Map<String, Object> params = new HashMap<>();
    params.put("objective", "binary:logistic");
    params.put("max_depth", 3);
    params.put("eta", 0.3);
    params.put("nthread", 1);
    params.put("seed", 1);
    Booster booster = XGBoost.train(train, params, 30, Map.of(), null, null);
    Path model = dir.resolve("test-xgb.ubj");
    Files.write(model, booster.toByteArray("ubj"));
    booster.dispose();
    train.dispose();
    ModelMetadata.of(XGB_NAME, VERSION, ModelEngine.XGBOOST, PaymentFeatures.SCHEMA.names())
        .withModelSha256(LoadedModel.sha256(model))
        .writeTo(ModelMetadata.sidecarOf(model));
    return model;
  }

  /** Writes the test logistic regression as ONNX with its sidecar into {@code dir}. */
  public static Path onnx(Path dir) throws IOException {
    Path model = dir.resolve("test-logreg.onnx");
    Files.write(model, logistic().toOnnx(ONNX_NAME, "test model"));
    ModelMetadata.of(ONNX_NAME, VERSION, ModelEngine.ONNX_RUNTIME, PaymentFeatures.SCHEMA.names())
        .withInputOutput(OnnxLogisticRegression.INPUT, OnnxLogisticRegression.OUTPUT)
        .withModelSha256(LoadedModel.sha256(model))
        .writeTo(ModelMetadata.sidecarOf(model));
    return model;
  }

  public static OnnxLogisticRegression logistic() {
    return new OnnxLogisticRegression(ONNX_WEIGHTS, ONNX_BIAS);
  }

  /** XGBoost's own prediction: {@code Booster.predict} on a {@code DMatrix}. */
  public static float[] xgboostRaw(Path model, float[][] rows) throws Exception {
    Booster booster = XGBoost.loadModel(model.toString());
    float[] flat = flatten(rows);
    DMatrix matrix = new DMatrix(flat, rows.length, rows[0].length, Float.NaN);
    float[][] predictions = booster.predict(matrix);
    matrix.dispose();
    booster.dispose();
    float[] scores = new float[rows.length];
    for (int i = 0; i < scores.length; i++) {
      scores[i] = predictions[i][0];
    }
    return scores;
  }

  /** ONNX Runtime's own prediction: an {@code OrtSession} run on a {@code [N, 5]} tensor. */
  public static float[] onnxRaw(Path model, float[][] rows) throws Exception {
    OrtEnvironment env = ortEnvironment();
    try (OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
      options.setIntraOpNumThreads(1);
      options.setInterOpNumThreads(1);
      try (OrtSession session = env.createSession(model.toString(), options);
          OnnxTensor input =
              OnnxTensor.createTensor(
                  env, FloatBuffer.wrap(flatten(rows)), new long[] {rows.length, rows[0].length});
          OrtSession.Result result = session.run(Map.of(OnnxLogisticRegression.INPUT, input))) {
        float[][] out = (float[][]) result.get(0).getValue();
        float[] scores = new float[rows.length];
        for (int i = 0; i < scores.length; i++) {
          scores[i] = out[i][0];
        }
        return scores;
      }
    }
  }

  /**
   * The JVM's ONNX Runtime environment. DJL's engine must create it (with its thread options);
   * creating it first elsewhere makes DJL's OnnxRuntime engine fail to start.
   */
  public static OrtEnvironment ortEnvironment() {
    ai.djl.engine.Engine.getEngine("OnnxRuntime");
    return OrtEnvironment.getEnvironment();
  }

  public static float[] flatten(float[][] rows) {
    float[] flat = new float[rows.length * rows[0].length];
    for (int i = 0; i < rows.length; i++) {
      System.arraycopy(rows[i], 0, flat, i * rows[i].length, rows[i].length);
    }
    return flat;
  }

  /** Expected scores by decision id. */
  public static HashMap<String, Float> byDecisionId(List<Decision> decisions, float[] scores) {
    HashMap<String, Float> expected = new HashMap<>();
    for (int i = 0; i < scores.length; i++) {
      expected.put(decisions.get(i).decisionId(), scores[i]);
    }
    return expected;
  }
}
