package dev.tidemark.bench.kafka;

/**
 * The phases of a latency run after the job's first decision: a warm-up, then up to {@code
 * steadyCapSeconds} waiting for the job to catch up ({@link CatchUp}), then the measured span.
 */
public record LatencySpan(double warmupSeconds, double steadyCapSeconds, double latencySeconds) {
  /** Wall seconds of events a run must have ready: start-up, warm-up, catch-up and the span. */
  double feedSeconds() {
    return latencySeconds + warmupSeconds + steadyCapSeconds + 90;
  }
}
