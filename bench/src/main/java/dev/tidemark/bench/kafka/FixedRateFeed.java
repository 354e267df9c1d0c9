package dev.tidemark.bench.kafka;

import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * The feed of a latency run: events with record timestamp = send time, 10 a second until the job's
 * first decision (a full rate from submission on would build a start-up backlog that the measured
 * span then spent catching up), then at the fixed rate. After the span's warm-up, once the job has
 * caught up ({@link CatchUp}) or at the span's steady cap, the measured span begins; the feed stops
 * when it ends. What it did is in its fields, epoch millis.
 */
final class FixedRateFeed {
  /** Events are sent this far apart until the first decision (10 events/s). */
  static final long STARTUP_TRICKLE_NANOS = 100_000_000L;

  /** The longest a job may take to its first decision. */
  static final long FIRST_DECISION_MILLIS = 180_000;

  long firstDecision = Long.MAX_VALUE;
  long measureFrom = Long.MAX_VALUE;
  long measureTo = Long.MAX_VALUE;
  int measuredSent;
  boolean steady;

  /** Feeds {@code lines} to {@code topic} at {@code rate} until the measured span has passed. */
  void run(
      KafkaProducer<String, byte[]> producer,
      String topic,
      List<SinkEvents.Line> lines,
      double rate,
      DecisionWatcher watcher,
      LatencySpan span,
      String name) {
    CatchUp catchUp = new CatchUp();
    long due = System.nanoTime();
    long deadline = System.currentTimeMillis() + FIRST_DECISION_MILLIS;
    for (SinkEvents.Line line : lines) {
      long wait = due - System.nanoTime();
      if (wait > 0) {
        LockSupport.parkNanos(wait);
      }
      long now = System.currentTimeMillis();
      if (firstDecision == Long.MAX_VALUE && watcher.count() > 0) {
        firstDecision = now;
      }
      if (measureFrom == Long.MAX_VALUE && firstDecision != Long.MAX_VALUE) {
        catchUp.add(now, watcher.lagMillis(now));
        long warm = firstDecision + (long) (span.warmupSeconds() * 1000);
        steady = now >= warm && catchUp.settled(now);
        if (steady || now >= warm + (long) (span.steadyCapSeconds() * 1000)) {
          measureFrom = now;
          measureTo = measureFrom + (long) (span.latencySeconds() * 1000);
          watcher.stopTrackingLag();
        }
      }
      if (now >= measureTo) {
        break;
      }
      if (firstDecision == Long.MAX_VALUE && now > deadline) {
        throw new IllegalStateException(
            "run " + name + ": no decision within " + FIRST_DECISION_MILLIS / 1000 + " s");
      }
      producer.send(SinkEvents.record(topic, line, now));
      if (now >= measureFrom) {
        measuredSent++;
      }
      due += firstDecision == Long.MAX_VALUE ? STARTUP_TRICKLE_NANOS : (long) (1e9 / rate);
    }
    producer.flush();
    if (measureTo == Long.MAX_VALUE) {
      throw new IllegalStateException("run " + name + ": ran out of events before measuring");
    }
    measureTo = Math.min(measureTo, System.currentTimeMillis());
  }
}
