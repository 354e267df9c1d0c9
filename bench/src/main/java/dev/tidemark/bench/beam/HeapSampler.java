package dev.tidemark.bench.beam;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;

/**
 * Samples the used heap of this whole JVM (the Flink MiniCluster runs in it, so this includes the
 * cluster, the held input and the benchmark itself) every {@link #PERIOD_MILLIS} ms in a daemon
 * thread, and keeps the peak.
 */
final class HeapSampler implements AutoCloseable {
  static final long PERIOD_MILLIS = 100;

  private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

  private final Thread thread;
  private volatile boolean running = true;
  private volatile long peak;

  private HeapSampler() {
    peak = usedHeap();
    thread = new Thread(this::sample, "bench-heap-sampler");
    thread.setDaemon(true);
    thread.start();
  }

  /** Starts sampling now. */
  static HeapSampler start() {
    return new HeapSampler();
  }

  /** Used heap of the JVM now, in bytes. */
  static long usedHeap() {
    return MEMORY.getHeapMemoryUsage().getUsed();
  }

  private void sample() {
    while (running) {
      peak = Math.max(peak, usedHeap());
      try {
        Thread.sleep(PERIOD_MILLIS);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** The peak used heap so far, in bytes. */
  long peakBytes() {
    return Math.max(peak, usedHeap());
  }

  @Override
  public void close() {
    running = false;
    thread.interrupt();
    try {
      thread.join(1000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
