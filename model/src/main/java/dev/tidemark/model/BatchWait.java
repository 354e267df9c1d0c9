package dev.tidemark.model;

import java.io.Serializable;
import java.util.Objects;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;

/**
 * How long a partial batch of bundle batching may wait for rows before it is scored ({@link
 * ScoreFeatures#withMaxBatchWait}): measured from the first row it holds, in processing time, and
 * checked as each row arrives. A DoFn without keyed state has no timer of its own, so a batch that
 * no later row follows is scored at the end of its bundle, as without a wait.
 */
final class BatchWait implements Serializable {
  private static final long serialVersionUID = 1L;

  /** A monotonic clock in nanoseconds; {@link System#nanoTime()} outside tests. */
  interface Clock extends Serializable {
    long nanos();
  }

  private static final class SystemClock implements Clock {
    private static final long serialVersionUID = 1L;

    @Override
    public long nanos() {
      return System.nanoTime();
    }
  }

  /** No wait: a batch is scored when it is full or at the end of its bundle. */
  static final BatchWait NONE = new BatchWait(null, new SystemClock());

  private final @Nullable Duration maxWait;
  private final Clock clock;

  private BatchWait(@Nullable Duration maxWait, Clock clock) {
    this.maxWait = maxWait;
    this.clock = clock;
  }

  /** A batch is scored once its first row has waited {@code maxWait}; null: {@link #NONE}. */
  static BatchWait of(@Nullable Duration maxWait) {
    return maxWait == null ? NONE : new BatchWait(maxWait, new SystemClock());
  }

  /** The same wait on another clock (tests). */
  BatchWait withClock(Clock clock) {
    return new BatchWait(maxWait, Objects.requireNonNull(clock, "clock"));
  }

  @Nullable Duration maxWait() {
    return maxWait;
  }

  /** A timer for one DoFn instance. */
  Timer timer() {
    return new Timer(maxWait == null ? -1 : maxWait.getMillis() * 1_000_000L, clock);
  }

  /** The wait of the batch being filled. Not thread-safe: one per DoFn instance. */
  static final class Timer {
    private final long maxWaitNanos;
    private final Clock clock;
    private long firstRowNanos;

    private Timer(long maxWaitNanos, Clock clock) {
      this.maxWaitNanos = maxWaitNanos;
      this.clock = clock;
    }

    /**
     * Called with each row added; {@code first} when it is the first of its batch. True when the
     * batch has waited long enough to be scored now.
     */
    boolean due(boolean first) {
      if (maxWaitNanos < 0) {
        return false;
      }
      long now = clock.nanos();
      if (first) {
        firstRowNanos = now;
      }
      return now - firstRowNanos >= maxWaitNanos;
    }
  }

  @Override
  public String toString() {
    return maxWait == null ? "none" : maxWait.toString();
  }
}
