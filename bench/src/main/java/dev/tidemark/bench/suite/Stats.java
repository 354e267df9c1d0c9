package dev.tidemark.bench.suite;

import java.util.Arrays;

/** Median, min and max of repeated measurements (taken after warm-up). */
public final class Stats {
  private final double median;
  private final double min;
  private final double max;
  private final int count;

  private Stats(double median, double min, double max, int count) {
    this.median = median;
    this.min = min;
    this.max = max;
    this.count = count;
  }

  /** The statistics of at least one value. */
  public static Stats of(double... values) {
    if (values.length == 0) {
      throw new IllegalArgumentException("no measurements");
    }
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int n = sorted.length;
    double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    return new Stats(median, sorted[0], sorted[n - 1], n);
  }

  /**
   * The nearest-rank percentile of values sorted ascending: the smallest value with at least {@code
   * quantile} of the values at or below it; NaN when there are none.
   */
  public static double percentile(long[] sortedValues, double quantile) {
    if (sortedValues.length == 0) {
      return Double.NaN;
    }
    int rank = (int) Math.ceil(quantile * sortedValues.length);
    return sortedValues[Math.max(0, Math.min(sortedValues.length - 1, rank - 1))];
  }

  /** Statistics already summarized elsewhere (a part run in a JVM of its own). */
  static Stats summary(double median, double min, double max, int count) {
    return new Stats(median, min, max, count);
  }

  public double median() {
    return median;
  }

  public double min() {
    return min;
  }

  public double max() {
    return max;
  }

  public int count() {
    return count;
  }

  @Override
  public String toString() {
    return String.format(java.util.Locale.ROOT, "%.1f [%.1f..%.1f] n=%d", median, min, max, count);
  }
}
