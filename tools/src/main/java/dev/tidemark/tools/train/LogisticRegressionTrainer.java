package dev.tidemark.tools.train;

import dev.tidemark.model.OnnxLogisticRegression;

/**
 * Fits a logistic regression with plain full-batch gradient descent on standardised features (mean
 * and standard deviation of the training rows), with a small L2 penalty, then folds the
 * standardisation into the weights so the exported model takes raw features. Deterministic: fixed
 * iteration count, fixed summation order, no randomness.
 */
public final class LogisticRegressionTrainer {
  private final int iterations;
  private final double learningRate;
  private final double l2;

  public LogisticRegressionTrainer(int iterations, double learningRate, double l2) {
    if (iterations < 1 || !(learningRate > 0) || !(l2 >= 0)) {
      throw new IllegalArgumentException(
          "iterations must be >= 1, learning rate > 0 and l2 >= 0; got "
              + iterations
              + ", "
              + learningRate
              + ", "
              + l2);
    }
    this.iterations = iterations;
    this.learningRate = learningRate;
    this.l2 = l2;
  }

  /** Fits on {@code rows} (each of the same length) and 0/1 {@code labels}. */
  public OnnxLogisticRegression fit(float[][] rows, boolean[] labels) {
    int n = rows.length;
    int k = rows[0].length;
    double[] mean = new double[k];
    double[] sd = new double[k];
    for (float[] row : rows) {
      for (int j = 0; j < k; j++) {
        mean[j] += row[j];
      }
    }
    for (int j = 0; j < k; j++) {
      mean[j] /= n;
    }
    for (float[] row : rows) {
      for (int j = 0; j < k; j++) {
        double d = row[j] - mean[j];
        sd[j] += d * d;
      }
    }
    for (int j = 0; j < k; j++) {
      sd[j] = Math.sqrt(sd[j] / n);
      if (sd[j] == 0) {
        sd[j] = 1; // a constant feature: its weight stays 0
      }
    }
    double[][] z = new double[n][k];
    for (int i = 0; i < n; i++) {
      for (int j = 0; j < k; j++) {
        z[i][j] = (rows[i][j] - mean[j]) / sd[j];
      }
    }
    double[] w = new double[k];
    double b = 0;
    double[] grad = new double[k];
    for (int it = 0; it < iterations; it++) {
      java.util.Arrays.fill(grad, 0);
      double gradB = 0;
      for (int i = 0; i < n; i++) {
        double logit = b;
        for (int j = 0; j < k; j++) {
          logit += w[j] * z[i][j];
        }
        double err = sigmoid(logit) - (labels[i] ? 1 : 0);
        for (int j = 0; j < k; j++) {
          grad[j] += err * z[i][j];
        }
        gradB += err;
      }
      for (int j = 0; j < k; j++) {
        w[j] -= learningRate * (grad[j] / n + l2 * w[j]);
      }
      b -= learningRate * gradB / n;
    }
    float[] raw = new float[k];
    double rawBias = b;
    for (int j = 0; j < k; j++) {
      raw[j] = (float) (w[j] / sd[j]);
      rawBias -= w[j] * mean[j] / sd[j];
    }
    return new OnnxLogisticRegression(raw, (float) rawBias);
  }

  private static double sigmoid(double x) {
    return 1.0 / (1.0 + Math.exp(-x));
  }
}
