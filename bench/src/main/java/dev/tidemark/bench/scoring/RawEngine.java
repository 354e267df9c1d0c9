package dev.tidemark.bench.scoring;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import dev.tidemark.model.DefaultModel;
import dev.tidemark.model.ModelEngine;
import java.io.IOException;
import java.io.InputStream;
import java.nio.FloatBuffer;
import java.util.Map;
import ml.dmlc.xgboost4j.java.Booster;
import ml.dmlc.xgboost4j.java.DMatrix;
import ml.dmlc.xgboost4j.java.XGBoost;
import ml.dmlc.xgboost4j.java.XGBoostError;

/**
 * A shipped model scored through its engine's own Java API, without DJL or Tidemark: xgboost4j's
 * {@code DMatrix} and {@code Booster.predict}, or ONNX Runtime's {@code OnnxTensor} and {@code
 * OrtSession.run} with one intra-op thread. Not thread-safe.
 */
abstract class RawEngine implements AutoCloseable {
  /** Scores {@code rows} row-major rows of {@code columns} values; one score per row. */
  abstract float[] predict(float[] values, int rows, int columns) throws Exception;

  @Override
  public abstract void close();

  /** The shipped model of {@code engine}, loaded from the model jar. */
  static RawEngine open(ModelEngine engine) throws Exception {
    return engine == ModelEngine.XGBOOST
        ? new Xgboost(resource(DefaultModel.XGBOOST_FILE))
        : new Onnx(resource(DefaultModel.ONNX_FILE));
  }

  /** The shipped model file's bytes ({@code /models/} in the model jar). */
  static byte[] resource(String file) throws IOException {
    try (InputStream in = DefaultModel.class.getResourceAsStream("/models/" + file)) {
      if (in == null) {
        throw new IOException("/models/" + file + " is not on the class path");
      }
      return in.readAllBytes();
    }
  }

  private static final class Xgboost extends RawEngine {
    private final Booster booster;

    Xgboost(byte[] model) throws XGBoostError, IOException {
      this.booster = XGBoost.loadModel(model);
    }

    @Override
    float[] predict(float[] values, int rows, int columns) throws XGBoostError {
      DMatrix matrix = new DMatrix(values, rows, columns, Float.NaN);
      try {
        float[][] predictions = booster.predict(matrix);
        float[] scores = new float[rows];
        for (int i = 0; i < rows; i++) {
          scores[i] = predictions[i][0];
        }
        return scores;
      } finally {
        matrix.dispose();
      }
    }

    @Override
    public void close() {
      booster.dispose();
    }
  }

  private static final class Onnx extends RawEngine {
    private final OrtEnvironment environment;
    private final OrtSession.SessionOptions options;
    private final OrtSession session;
    private final String input;

    Onnx(byte[] model) throws OrtException {
      // DJL's engine creates the JVM's ONNX Runtime environment: start it first, as Tidemark does.
      ai.djl.engine.Engine.getEngine("OnnxRuntime");
      this.environment = OrtEnvironment.getEnvironment();
      this.options = new OrtSession.SessionOptions();
      options.setIntraOpNumThreads(1);
      options.setInterOpNumThreads(1);
      this.session = environment.createSession(model, options);
      this.input = session.getInputNames().iterator().next();
    }

    @Override
    float[] predict(float[] values, int rows, int columns) throws OrtException {
      try (OnnxTensor tensor =
              OnnxTensor.createTensor(
                  environment, FloatBuffer.wrap(values), new long[] {rows, columns});
          OrtSession.Result result = session.run(Map.of(input, tensor))) {
        float[] scores = new float[rows];
        ((OnnxTensor) result.get(0)).getFloatBuffer().get(scores);
        return scores;
      }
    }

    @Override
    public void close() {
      try {
        session.close();
      } catch (OrtException e) {
        throw new IllegalStateException("cannot close the ONNX Runtime session", e);
      } finally {
        options.close();
      }
    }
  }
}
