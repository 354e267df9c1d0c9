package dev.tidemark.bench.kafka;

import dev.tidemark.pipelines.KafkaOptions.KafkaSinkMode;
import java.util.Locale;

/**
 * One throughput run: a backlog produced before the job starts, drained by it; events/s from the
 * job's submission, and from its first decision, to its last decision record's Kafka timestamp.
 */
public final class ThroughputRun {
  final KafkaSinkMode mode;
  final int records;
  final long submittedMillis;
  final long firstDecisionMillis;
  final long lastDecisionMillis;
  final int decisions;
  final long jobDecisions;

  ThroughputRun(
      KafkaSinkMode mode,
      int records,
      long submittedMillis,
      long firstDecisionMillis,
      long lastDecisionMillis,
      int decisions,
      long jobDecisions) {
    this.mode = mode;
    this.records = records;
    this.submittedMillis = submittedMillis;
    this.firstDecisionMillis = firstDecisionMillis;
    this.lastDecisionMillis = lastDecisionMillis;
    this.decisions = decisions;
    this.jobDecisions = jobDecisions;
  }

  /** Records divided by the time from job submission to the last decision's timestamp. */
  public double eventsPerSecond() {
    return records * 1000.0 / Math.max(1, lastDecisionMillis - submittedMillis);
  }

  /** Records divided by the time between the first and the last decision's timestamps. */
  public double eventsPerSecondFirstToLast() {
    return records * 1000.0 / Math.max(1, lastDecisionMillis - firstDecisionMillis);
  }

  /** The decision records the run committed. */
  public int decisions() {
    return decisions;
  }

  /** The progress line of this run. */
  public String describe(String which) {
    return String.format(
        Locale.ROOT,
        "throughput %s %s: %d records, %.0f events/s (submit->last), %.0f events/s"
            + " (first->last decision), %d decisions committed, %d counted by the job",
        mode,
        which,
        records,
        eventsPerSecond(),
        eventsPerSecondFirstToLast(),
        decisions,
        jobDecisions);
  }
}
