package dev.tidemark.bench.kafka;

import dev.tidemark.bench.suite.Stats;
import java.util.ArrayDeque;
import java.util.Arrays;

/**
 * Whether a job has caught up with its feed: the lag (now minus the newest ingestion clock among
 * the decisions seen) is flat, its median over the last {@value #HOLD_MS} ms within {@value
 * #TOLERANCE_MS} ms and 10 % of its median over the {@value #HOLD_MS} ms before. A cold JVM falls
 * seconds behind its first full-rate feed and then catches up at a few hundred ms a second;
 * measured in that phase, the latencies would be the catch-up's. Relative, so it also settles at a
 * settings-bound lag (a one-second bundle). A job whose lag keeps growing never settles: it is
 * measured at the run's steady cap, and {@link LatencyRun#keptUp} rejects it.
 */
public final class CatchUp {
  public static final long HOLD_MS = 3_000;
  public static final long TOLERANCE_MS = 50;

  /** Samples closer together are dropped: the feed asks once per event, thousands a second. */
  static final long SAMPLE_EVERY_MS = 100;

  private final ArrayDeque<long[]> samples = new ArrayDeque<>();
  private long firstSample = Long.MAX_VALUE;

  void add(long at, long lagMillis) {
    if (!samples.isEmpty() && at - samples.peekLast()[0] < SAMPLE_EVERY_MS) {
      return;
    }
    firstSample = Math.min(firstSample, at);
    samples.addLast(new long[] {at, lagMillis});
    while (samples.peekFirst()[0] < at - 2 * HOLD_MS) {
      samples.removeFirst();
    }
  }

  int samples() {
    return samples.size();
  }

  boolean settled(long now) {
    if (now - firstSample < 2 * HOLD_MS) {
      return false;
    }
    long[] before =
        samples.stream().filter(s -> s[0] < now - HOLD_MS).mapToLong(s -> s[1]).toArray();
    long[] last =
        samples.stream().filter(s -> s[0] >= now - HOLD_MS).mapToLong(s -> s[1]).toArray();
    if (before.length == 0 || last.length == 0) {
      return false;
    }
    double earlier = median(before);
    return Math.abs(earlier - median(last)) <= TOLERANCE_MS + 0.1 * earlier;
  }

  /** The nearest-rank median (sorts {@code values}). */
  private static double median(long[] values) {
    Arrays.sort(values);
    return Stats.percentile(values, 0.5);
  }
}
