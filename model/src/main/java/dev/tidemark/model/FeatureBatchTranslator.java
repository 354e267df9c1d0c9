package dev.tidemark.model;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.translate.NoBatchifyTranslator;
import ai.djl.translate.TranslatorContext;
import java.nio.FloatBuffer;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * DJL translator from one {@link FeatureBatch} (a {@code [N, features]} float32 tensor) to {@code
 * N} scores. No DJL batchifier: the caller already batched, and stacking per-row arrays would cost
 * a copy per row (and is not supported by the XGBoost engine's arrays).
 *
 * <p>Output: the sidecar's {@code output} (or the only output) of shape {@code [N]} or {@code [N,
 * 1]} (a probability per row), or {@code [N, 2]} (class probabilities, as sklearn exports them:
 * column 1, the positive class, is the score).
 */
final class FeatureBatchTranslator implements NoBatchifyTranslator<FeatureBatch, float[]> {
  private final @Nullable String inputName;
  private final @Nullable String outputName;

  FeatureBatchTranslator(@Nullable String inputName, @Nullable String outputName) {
    this.inputName = inputName;
    this.outputName = outputName;
  }

  @Override
  public NDList processInput(TranslatorContext ctx, FeatureBatch batch) {
    NDArray array =
        ctx.getNDManager()
            .create(
                FloatBuffer.wrap(batch.values()),
                new Shape(batch.rows(), batch.columns()),
                DataType.FLOAT32);
    if (inputName != null) {
      array.setName(inputName);
    }
    return new NDList(array);
  }

  @Override
  public float[] processOutput(TranslatorContext ctx, NDList outputs) {
    NDArray out = pick(outputs);
    Shape shape = out.getShape();
    float[] values =
        out.getDataType() == DataType.FLOAT32 ? out.toFloatArray() : toFloats(out.toDoubleArray());
    if (shape.dimension() == 1 || (shape.dimension() == 2 && shape.get(1) == 1)) {
      return values;
    }
    if (shape.dimension() == 2 && shape.get(1) == 2) {
      float[] positive = new float[(int) shape.get(0)];
      for (int i = 0; i < positive.length; i++) {
        positive[i] = values[2 * i + 1];
      }
      return positive;
    }
    throw new IllegalStateException(
        "model output '"
            + out.getName()
            + "' has shape "
            + shape
            + "; expected [N], [N, 1] or [N, 2] (class probabilities)");
  }

  private NDArray pick(NDList outputs) {
    if (outputName != null) {
      for (NDArray array : outputs) {
        if (outputName.equals(array.getName())) {
          return array;
        }
      }
      throw new IllegalStateException(
          "model has no output named '"
              + outputName
              + "' (the sidecar's 'output'); its outputs are "
              + names(outputs));
    }
    if (outputs.size() != 1) {
      throw new IllegalStateException(
          "model has outputs "
              + names(outputs)
              + "; name the score output in the sidecar's 'output' field");
    }
    return outputs.singletonOrThrow();
  }

  private static String names(NDList outputs) {
    StringBuilder names = new StringBuilder("[");
    for (NDArray array : outputs) {
      if (names.length() > 1) {
        names.append(", ");
      }
      names.append(array.getName());
    }
    return names.append(']').toString();
  }

  private static float[] toFloats(double[] values) {
    float[] floats = new float[values.length];
    for (int i = 0; i < values.length; i++) {
      floats[i] = (float) values[i];
    }
    return floats;
  }
}
