package dev.tidemark.model;

/**
 * A batch of feature rows, row-major, as one model input of shape {@code [rows, columns]}.
 *
 * @param values {@code rows * columns} floats, row after row
 */
record FeatureBatch(float[] values, int rows, int columns) {
  FeatureBatch {
    if (rows <= 0 || columns <= 0 || values.length != rows * columns) {
      throw new IllegalArgumentException(
          "a feature batch needs rows * columns values, got "
              + values.length
              + " for "
              + rows
              + " x "
              + columns);
    }
  }
}
