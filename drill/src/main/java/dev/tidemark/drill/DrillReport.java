package dev.tidemark.drill;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/** drill.json: what each run did and how its committed outputs compare. */
final class DrillReport {
  private final int records;
  private final ArrayNode runs = Json.MAPPER.createArrayNode();
  private boolean passed = true;
  private ObjectNode rescale;
  private ObjectNode upgrade;

  DrillReport(int records) {
    this.records = records;
  }

  void add(KafkaOptions.KafkaSinkMode sink, FaultRun.Outcome outcome) {
    ObjectNode run = runs.addObject();
    run.put("sink", sink.toString());
    run.put("events", outcome.fed().records);
    run.put("kills", outcome.kills());
    run.put("brokerRestarts", outcome.brokerRestarts());
    run.put("jobRestarts", outcome.jobRestarts());
    Map<String, TreeSet<Long>> versions = new TreeMap<>();
    long duplicates = 0;
    long decisions = 0;
    for (ConsumerRecord<byte[], byte[]> record : outcome.committed().get("decisions")) {
      decisions++;
      try {
        JsonNode decision = Json.MAPPER.readTree(record.value());
        String id = new String(record.key(), StandardCharsets.UTF_8);
        if (!versions
            .computeIfAbsent(id, k -> new TreeSet<>())
            .add(decision.get("version").asLong())) {
          duplicates++;
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    long missing = 0;
    for (TreeSet<Long> seen : versions.values()) {
      missing += seen.last() + 1 - seen.size();
    }
    run.put("decisionsCommitted", decisions);
    run.put("duplicateVersions", duplicates);
    run.put("missingVersions", missing);
    run.put("wallTimeSeconds", outcome.wallTime().toMillis() / 1000.0);
    run.put("throughputPerSecond", outcome.fed().records * 1000.0 / outcome.wallTime().toMillis());
    ObjectNode metrics = run.putObject("taskManagerMetrics");
    outcome.taskManagerMetrics().forEach(metrics::put);
    ArrayNode log = run.putArray("log");
    outcome.log().forEach(log::add);
    if (missing > 0 || (sink == KafkaOptions.KafkaSinkMode.transactional && duplicates > 0)) {
      passed = false;
    }
  }

  void addRescale(SavepointSteps.Outcome outcome) {
    rescale = step(outcome);
  }

  void addUpgrade(SavepointSteps.Outcome outcome) {
    upgrade = step(outcome);
    boolean held =
        Boolean.TRUE.equals(outcome.checks().get("resentRecordedAsDuplicate"))
            && !((java.util.Map<?, ?>) outcome.checks().get("decisionsAfter")).isEmpty()
            && ((java.util.Map<?, ?>) outcome.checks().get("decisionsAfter"))
                .keySet()
                .equals(java.util.Set.of("tidemark-fraud-logreg"))
            && !((java.util.Map<?, ?>) outcome.checks().get("decisionsBefore"))
                .containsKey("tidemark-fraud-logreg");
    upgrade.put("holds", held);
    passed &= held;
  }

  private ObjectNode step(SavepointSteps.Outcome outcome) {
    ObjectNode step = Json.MAPPER.createObjectNode();
    step.put("events", outcome.fed());
    ArrayNode savepoints = step.putArray("savepoints");
    outcome.savepoints().forEach(savepoints::add);
    step.set("checks", Json.MAPPER.valueToTree(outcome.checks()));
    ArrayNode log = step.putArray("log");
    outcome.log().forEach(log::add);
    return step;
  }

  boolean passed() {
    return passed;
  }

  ObjectNode toJson() {
    ObjectNode json = Json.MAPPER.createObjectNode();
    json.put("events", records);
    json.put("passed", passed);
    json.set("runs", runs);
    if (rescale != null) {
      json.set("rescale", rescale);
    }
    if (upgrade != null) {
      json.set("upgrade", upgrade);
    }
    return json;
  }
}
