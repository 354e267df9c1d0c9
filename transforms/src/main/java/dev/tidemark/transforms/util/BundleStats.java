package dev.tidemark.transforms.util;

import org.apache.beam.sdk.metrics.Distribution;
import org.apache.beam.sdk.metrics.Gauge;

/**
 * Observations of one bundle, reported once at its end: a metric's {@code update} looks up the
 * step's metrics container each time, a cost paid per element otherwise. One per metric and DoFn
 * instance, in a transient field, {@link #reset} at start bundle and {@link #report}ed at finish
 * bundle.
 */
public final class BundleStats {
  private long count;
  private long sum;
  private long min;
  private long max;

  public BundleStats() {
    reset();
  }

  public void reset() {
    count = 0;
    sum = 0;
    min = Long.MAX_VALUE;
    max = Long.MIN_VALUE;
  }

  public void add(long value) {
    count++;
    sum += value;
    min = Math.min(min, value);
    max = Math.max(max, value);
  }

  /**
   * Adds the bundle's observations to {@code distribution} and sets {@code bundleMax} to their
   * largest; does nothing for an empty bundle.
   */
  public void report(Distribution distribution, Gauge bundleMax) {
    if (count > 0) {
      distribution.update(sum, count, min, max);
      bundleMax.set(max);
    }
  }
}
