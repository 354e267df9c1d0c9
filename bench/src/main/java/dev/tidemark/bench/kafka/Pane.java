package dev.tidemark.bench.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the latency figures need of one decision record: its Kafka timestamp, when the watcher saw
 * it, and a few of its fields, the clocks as epoch millis ({@link Long#MIN_VALUE} when absent).
 */
final class Pane {
  final long timestamp;
  final long seenAt;
  final String decisionId;
  final long index;
  final String timing;
  final long txnCount;
  final String eventTime;
  final long ingestion;
  final long fired;
  final long scored;

  Pane(JsonNode decision, long timestamp, long seenAt) {
    this.timestamp = timestamp;
    this.seenAt = seenAt;
    this.decisionId = decision.path("decisionId").asText();
    this.index = decision.path("pane").path("index").asLong();
    this.timing = decision.path("pane").path("timing").asText().intern();
    this.txnCount = decision.path("features").path("txnCount").asLong();
    this.eventTime = decision.path("clocks").path("eventTime").asText();
    this.ingestion = clock(decision, "ingestionTime");
    this.fired = clock(decision, "processingTime");
    this.scored = clock(decision, "decisionTime");
  }

  private static long clock(JsonNode decision, String name) {
    JsonNode clock = decision.path("clocks").path(name);
    return clock.isTextual() ? Instant.parse(clock.asText()).toEpochMilli() : Long.MIN_VALUE;
  }

  /**
   * Which decisions carry, in {@code clocks.ingestionTime}, the Kafka timestamp of the event that
   * triggered them. That clock belongs to the pane's latest event by event time (README, clocks).
   * With early firing on every element each pane adds one event, so the clock names the trigger
   * exactly when the trigger became the latest event: a window's first pane ({@code txnCount} 1),
   * or a pane whose {@code txnCount} is one more than the previous pane's and whose {@code
   * clocks.eventTime} differs from it. A pane triggered by an out-of-order event keeps the previous
   * latest event's clock, which would add the time between the two arrivals to its latency: those
   * (and panes whose previous pane was not seen) are not attributable. Accumulating panes only.
   */
  static boolean[] triggeredByLatest(List<Pane> decisions) {
    Map<String, Map<Long, Pane>> byWindow = new HashMap<>();
    for (Pane decision : decisions) {
      byWindow
          .computeIfAbsent(decision.decisionId, id -> new HashMap<>())
          .put(decision.index, decision);
    }
    boolean[] attributable = new boolean[decisions.size()];
    for (int i = 0; i < decisions.size(); i++) {
      Pane decision = decisions.get(i);
      if (decision.index == 0) {
        attributable[i] = decision.txnCount == 1;
        continue;
      }
      Pane previous = byWindow.get(decision.decisionId).get(decision.index - 1);
      attributable[i] =
          previous != null
              && decision.txnCount == previous.txnCount + 1
              && !decision.eventTime.equals(previous.eventTime);
    }
    return attributable;
  }
}
