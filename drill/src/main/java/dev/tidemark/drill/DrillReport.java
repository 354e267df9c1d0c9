package dev.tidemark.drill;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.launcher.check.Comparison;
import dev.tidemark.launcher.check.OutputView;
import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.transforms.util.Json;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;

/**
 * drill.json: each run's figures, its exactly-once checks against the {@link Recomputation} over
 * the events it accepted, its lateness decisions against the reference watermark, and the totals.
 *
 * <p>Top level: {@code events} (records fed to each run), the sums over the fault runs of {@code
 * kills}, {@code brokerRestarts}, {@code jobManagerKills}, {@code jobRestarts}, {@code
 * decisionsCommitted}, {@code missingVersions}, the four {@code *Mismatches} and {@code
 * latenessBeyondBound}; {@code duplicateVersions} counts those of the runs that promise each
 * version once (the transactional sink; an idempotent run's own count is in its entry of {@code
 * runs}); {@code identityHolds} when it holds in every run; {@code passed}.
 */
final class DrillReport {
  static final List<String> SUMMED =
      List.of(
          "kills",
          "brokerRestarts",
          "brokerKills",
          "jobManagerKills",
          "jobRestarts",
          "decisionsCommitted",
          "missingVersions",
          "finalStateMismatches",
          "deadLetterMismatches",
          "duplicateMismatches",
          "tooLateMismatches",
          "latenessDifferences",
          "latenessBeyondBound");

  /**
   * The reference watermark's own resolution, on top of a fault's backlog: the feed's clock moves
   * in steps of about a minute of event time ({@link dev.tidemark.testkit.generate.ReplayClock}),
   * and the too-late gate judges a window up to one window period after its deadline.
   */
  static final Duration CLOCK_STEP = Duration.standardSeconds(60);

  /** How many lateness differences drill.json lists, largest distance first. */
  static final int LATENESS_EXAMPLES = 20;

  private final int records;
  private final Recomputation recomputation;
  private final Duration windowSize;
  private final Duration windowPeriod;
  private final ArrayNode runs = Json.MAPPER.createArrayNode();
  private final ObjectNode totals = Json.MAPPER.createObjectNode();
  private long duplicateVersions;
  private boolean identityHolds = true;
  private boolean passed = true;
  private boolean infrastructureFailed;
  private @Nullable ObjectNode rescale;
  private @Nullable ObjectNode upgrade;
  private @Nullable String error;

  DrillReport(
      int records, Recomputation recomputation, Duration windowSize, Duration windowPeriod) {
    this.records = records;
    this.recomputation = recomputation;
    this.windowSize = windowSize;
    this.windowPeriod = windowPeriod;
    SUMMED.forEach(key -> totals.put(key, 0L));
  }

  /** The checks of one run's committed outputs, as drill.json reports them. */
  record Verdict(ObjectNode json, boolean passed, boolean identityHolds, long duplicateVersions) {}

  /**
   * Checks {@code committed} (fed {@code fed} records and {@code markers} markers): against the
   * recomputation over the events it accepted (exactly once), and its lateness decisions against
   * the reference watermark, differences allowed up to {@code backlogMillis} of a fault's backlog
   * plus {@link #CLOCK_STEP} and a window period.
   */
  Verdict check(
      KafkaOptions.KafkaSinkMode sink,
      Map<String, List<ConsumerRecord<byte[], byte[]>>> committed,
      long fed,
      int markers,
      long backlogMillis) {
    Comparison.Delivery delivery = DrillJobs.delivery(sink);
    OutputView observed = OutputView.fromRecords(committed);
    OutputView expected = recomputation.expected(observed);
    Comparison comparison =
        Comparison.compare(expected, List.of(), observed, fed, markers, windowSize, delivery);
    EditionCopies.Result copies =
        EditionCopies.compare(committed.getOrDefault("decisions", List.of()));
    ObjectNode run = Json.MAPPER.createObjectNode();
    run.setAll(comparison.toJsonNode());
    run.set("accounting", Json.MAPPER.valueToTree(comparison.accounting()));
    run.set("identityViolations", Json.MAPPER.valueToTree(comparison.identityViolations()));
    run.put("repeatedCopies", copies.repeatedCopies());
    run.put("conflictingCopies", copies.conflicting().size());
    run.put("conflictingFinalCopies", copies.conflictingFinal().size());
    ObjectNode examples = run.putObject("mismatchExamples");
    comparison
        .mismatches()
        .forEach(
            (what, keys) ->
                examples.set(
                    what, Json.MAPPER.valueToTree(keys.subList(0, Math.min(10, keys.size())))));
    examples.set(
        "conflictingCopies",
        Json.MAPPER.valueToTree(
            copies.conflicting().subList(0, Math.min(10, copies.conflicting().size()))));
    // Copies of one edition with other content are reported, not failed: after a restore an
    // at-least-once sink may fire a pane index again with other contents (early panes follow
    // processing time), and the later copy is the edition that stands, the one the final-state
    // check above compares.
    boolean exactlyOnce = comparison.passed();
    run.put("exactlyOnceHolds", exactlyOnce);

    Map<String, String> runWatermarks = new java.util.HashMap<>();
    for (ConsumerRecord<byte[], byte[]> record : committed.getOrDefault("too-late", List.of())) {
      try {
        com.fasterxml.jackson.databind.JsonNode late = Json.MAPPER.readTree(record.value());
        runWatermarks.put(
            late.path("source").asText() + "|" + late.path("id").asText(),
            late.path("watermark").asText());
      } catch (java.io.IOException e) {
        // Not JSON: the exactly-once checks report it.
      }
    }
    Recomputation.Lateness lateness = recomputation.lateness(observed, runWatermarks);
    long bound = backlogMillis + CLOCK_STEP.getMillis() + windowPeriod.getMillis();
    long resolution = CLOCK_STEP.getMillis() + windowPeriod.getMillis();
    List<Recomputation.Lateness.Difference> differences =
        new java.util.ArrayList<>(lateness.differences);
    differences.sort(
        (a, b) -> Long.compare(Math.abs(b.distanceMillis()), Math.abs(a.distanceMillis())));
    long beyond =
        differences.stream()
            .filter(d -> d.distanceMillis() > bound || -d.distanceMillis() > resolution)
            .count();
    ObjectNode late = run.putObject("lateness");
    late.put("tooLateByRun", lateness.tooLateByRun);
    late.put("tooLateByReference", lateness.tooLateByReference);
    late.put("differences", differences.size());
    late.put("acceptedByRunOnly", differences.stream().filter(d -> d.distanceMillis() > 0).count());
    late.put("boundSeconds", bound / 1000.0);
    late.put("beyondBound", beyond);
    late.put(
        "largestDistanceSeconds",
        differences.isEmpty() ? 0.0 : differences.get(0).distanceMillis() / 1000.0);
    ArrayNode listed = late.putArray("examples");
    differences.stream()
        .limit(LATENESS_EXAMPLES)
        .forEach(d -> listed.add(Json.MAPPER.valueToTree(d.toMap())));
    run.put("latenessDifferences", differences.size());
    run.put("latenessBeyondBound", beyond);
    boolean holds = exactlyOnce && beyond == 0;
    run.put("passed", holds);
    return new Verdict(
        run,
        holds,
        comparison.identityHolds(),
        delivery == Comparison.Delivery.EXACTLY_ONCE ? comparison.duplicateVersions() : 0);
  }

  void add(KafkaOptions.KafkaSinkMode sink, FaultRun.Outcome outcome) {
    Verdict verdict =
        check(
            sink,
            outcome.committed(),
            outcome.fed(),
            outcome.markers(),
            outcome.largestBacklogMillis());
    ObjectNode run = runs.addObject();
    run.put("sink", sink.toString());
    run.put("events", outcome.fed());
    run.put("kills", outcome.kills());
    run.put("brokerRestarts", outcome.brokerRestarts());
    run.put("brokerKills", outcome.brokerKills());
    run.put("jobManagerKills", outcome.jobManagerKills());
    run.put("jobRestarts", outcome.jobRestarts());
    run.put("settled", outcome.settled());
    ArrayNode faults = run.putArray("faults");
    outcome.faults().forEach(fault -> faults.add(Json.MAPPER.valueToTree(fault.toMap())));
    run.setAll(verdict.json());
    boolean holds = verdict.passed() && outcome.settled();
    run.put("passed", holds);
    run.put("wallTimeSeconds", outcome.wallTime().toMillis() / 1000.0);
    run.put("eventsPerSecond", Math.round(outcome.fed() * 1000.0 / outcome.wallTime().toMillis()));
    ObjectNode metrics = run.putObject("taskManagerMetrics");
    outcome.taskManagerMetrics().forEach(metrics::put);
    ArrayNode log = run.putArray("log");
    outcome.log().forEach(log::add);
    for (String key : SUMMED) {
      totals.put(key, totals.get(key).asLong() + run.path(key).asLong());
    }
    duplicateVersions += verdict.duplicateVersions();
    identityHolds &= verdict.identityHolds();
    passed &= holds;
    System.out.println("drill: " + sink + " sink: " + describe(run));
  }

  /** A fault run that could not run to its end: the drill goes on with the next one. */
  void failed(KafkaOptions.KafkaSinkMode sink, Exception failure) {
    ObjectNode run = runs.addObject();
    run.put("sink", sink.toString());
    run.put("error", String.valueOf(failure));
    run.put("passed", false);
    passed = false;
    infrastructureFailed = true;
  }

  private static String describe(ObjectNode run) {
    StringBuilder text = new StringBuilder();
    text.append(run.path("passed").asBoolean() ? "PASSED" : "FAILED");
    for (String key :
        List.of(
            "decisionsCommitted",
            "duplicateVersions",
            "missingVersions",
            "finalStateMismatches",
            "deadLetterMismatches",
            "duplicateMismatches",
            "tooLateMismatches",
            "conflictingFinalCopies",
            "latenessDifferences",
            "latenessBeyondBound")) {
      text.append(' ').append(key).append('=').append(run.path(key).asLong());
    }
    text.append(" identityHolds=").append(run.path("identityHolds").asBoolean());
    text.append(" settled=").append(run.path("settled").asBoolean(true));
    text.append("\n  accounting ").append(run.path("accounting"));
    if (!run.path("identityViolations").isEmpty()) {
      text.append("\n  identity violations ").append(run.path("identityViolations"));
    }
    run.path("mismatchExamples")
        .fields()
        .forEachRemaining(
            entry -> {
              if (!entry.getValue().isEmpty()) {
                text.append("\n  ").append(entry.getKey()).append(": ").append(entry.getValue());
              }
            });
    return text.toString();
  }

  /** The rescale's outputs must pass the checks a fault run's do. */
  void addRescale(SavepointSteps.Outcome outcome) {
    Verdict verdict =
        check(outcome.sink(), outcome.committed(), outcome.fed(), outcome.markers(), 0);
    rescale = step(outcome);
    rescale.setAll(verdict.json());
    rescale.put("holds", verdict.passed());
    passed &= verdict.passed();
    System.out.println("drill: rescale: " + describe(rescale));
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
    infrastructureFailed = true;
  }

  boolean passed() {
    return passed;
  }

  /** 0 when every check passed, 3 when a step could not run, else 1. */
  int exitCode() {
    return infrastructureFailed ? 3 : passed ? 0 : 1;
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
