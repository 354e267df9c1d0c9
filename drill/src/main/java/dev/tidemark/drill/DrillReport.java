package dev.tidemark.drill;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.launcher.check.Comparison;
import dev.tidemark.launcher.check.OutputView;
import dev.tidemark.launcher.check.Reference;
import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.transforms.util.Json;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * drill.json: each run's figures and its comparison with the batch reference, and the totals.
 *
 * <p>Top level: {@code events} (records fed to each run), the sums over the fault runs of {@code
 * kills}, {@code brokerRestarts}, {@code jobRestarts}, {@code decisionsCommitted}, {@code
 * missingVersions} and the four {@code *Mismatches}; {@code duplicateVersions} counts those of the
 * runs that promise each version once (the transactional sink; an idempotent run's own count is in
 * its entry of {@code runs}); {@code identityHolds} when it holds in every run; {@code passed}.
 */
final class DrillReport {
  static final List<String> SUMMED =
      List.of(
          "kills",
          "brokerRestarts",
          "jobRestarts",
          "decisionsCommitted",
          "missingVersions",
          "finalStateMismatches",
          "deadLetterMismatches",
          "duplicateMismatches",
          "tooLateMismatches");

  private final int records;
  private final Reference reference;
  private final ArrayNode runs = Json.MAPPER.createArrayNode();
  private final ObjectNode totals = Json.MAPPER.createObjectNode();
  private long duplicateVersions;
  private boolean identityHolds = true;
  private boolean passed = true;
  private @Nullable ObjectNode rescale;
  private @Nullable ObjectNode upgrade;
  private @Nullable String error;

  DrillReport(int records, Reference reference) {
    this.records = records;
    this.reference = reference;
    SUMMED.forEach(key -> totals.put(key, 0L));
  }

  void add(KafkaOptions.KafkaSinkMode sink, FaultRun.Outcome outcome) {
    Comparison.Delivery delivery = DrillJobs.delivery(sink);
    Comparison comparison =
        Comparison.compare(
            reference,
            OutputView.fromRecords(outcome.committed()),
            outcome.fed().records,
            outcome.markers(),
            delivery);
    ObjectNode run = runs.addObject();
    run.put("sink", sink.toString());
    run.put("events", outcome.fed().records);
    run.put("kills", outcome.kills());
    run.put("brokerRestarts", outcome.brokerRestarts());
    run.put("jobRestarts", outcome.jobRestarts());
    run.setAll(comparison.toJsonNode());
    run.put("passed", comparison.passed());
    run.put("wallTimeSeconds", outcome.wallTime().toMillis() / 1000.0);
    run.put(
        "eventsPerSecond",
        Math.round(outcome.fed().records * 1000.0 / outcome.wallTime().toMillis()));
    run.set("mismatchExamples", Json.MAPPER.valueToTree(comparison.mismatches()));
    ObjectNode metrics = run.putObject("taskManagerMetrics");
    outcome.taskManagerMetrics().forEach(metrics::put);
    ArrayNode log = run.putArray("log");
    outcome.log().forEach(log::add);
    for (String key : SUMMED) {
      totals.put(key, totals.get(key).asLong() + run.path(key).asLong());
    }
    if (delivery == Comparison.Delivery.EXACTLY_ONCE) {
      duplicateVersions += comparison.duplicateVersions();
    }
    identityHolds &= comparison.identityHolds();
    passed &= comparison.passed();
    System.out.println("drill: " + sink + " sink: " + comparison.describe());
  }

  /** The rescale's outputs must equal the reference as a fault run's do. */
  void addRescale(SavepointSteps.Outcome outcome) {
    Comparison comparison =
        Comparison.compare(
            reference,
            OutputView.fromRecords(outcome.committed()),
            outcome.fed(),
            outcome.markers(),
            DrillJobs.delivery(outcome.sink()));
    rescale = step(outcome);
    rescale.setAll(comparison.toJsonNode());
    rescale.set("mismatchExamples", Json.MAPPER.valueToTree(comparison.mismatches()));
    rescale.put("holds", comparison.passed());
    passed &= comparison.passed();
    System.out.println("drill: rescale: " + comparison.describe());
  }

  /**
   * The upgrade holds when the re-sent event is recorded as a duplicate and every decision made
   * after the resume, and none before it, names the new model.
   */
  void addUpgrade(SavepointSteps.Outcome outcome) {
    upgrade = step(outcome);
    Map<?, ?> after = (Map<?, ?>) outcome.checks().get("decisionsAfter");
    Map<?, ?> before = (Map<?, ?>) outcome.checks().get("decisionsBefore");
    boolean holds =
        Boolean.TRUE.equals(outcome.checks().get("resentRecordedAsDuplicate"))
            && after.keySet().equals(Set.of(SavepointSteps.UPGRADE_MODEL_NAME))
            && !before.isEmpty()
            && !before.containsKey(SavepointSteps.UPGRADE_MODEL_NAME);
    upgrade.put("holds", holds);
    passed &= holds;
  }

  private static ObjectNode step(SavepointSteps.Outcome outcome) {
    ObjectNode step = Json.MAPPER.createObjectNode();
    step.put("sink", outcome.sink().toString());
    step.put("events", outcome.fed());
    ArrayNode savepoints = step.putArray("savepoints");
    outcome.savepoints().forEach(savepoints::add);
    step.set("checks", Json.MAPPER.valueToTree(outcome.checks()));
    ArrayNode log = step.putArray("log");
    outcome.log().forEach(log::add);
    return step;
  }

  /** The drill stopped at {@code failure}: the report keeps what ran before it. */
  void stopped(Exception failure) {
    error = String.valueOf(failure);
    passed = false;
  }

  boolean passed() {
    return passed;
  }

  ObjectNode toJson() {
    ObjectNode json = Json.MAPPER.createObjectNode();
    json.put("events", records);
    for (String key : SUMMED) {
      json.set(key, totals.get(key));
    }
    json.put("duplicateVersions", duplicateVersions);
    json.put("identityHolds", identityHolds);
    json.put("passed", passed);
    json.set("runs", runs);
    if (rescale != null) {
      json.set("rescale", rescale);
    }
    if (upgrade != null) {
      json.set("upgrade", upgrade);
    }
    if (error != null) {
      json.put("error", error);
    }
    return json;
  }
}
