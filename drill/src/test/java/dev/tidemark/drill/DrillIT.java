package dev.tidemark.drill;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.cluster.LocalCluster;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import picocli.CommandLine;

/**
 * A drill sized for CI, on the local cluster ({@link SharedCluster}: three brokers, two
 * JobManagers): {@value #EVENTS} events fed at {@value #RATE} records/s to each sink mode, every
 * fault kind once, each with pending work: the transactional run has a TaskManager SIGKILL and a
 * SIGKILL of the broker leading a decisions partition mid-transaction, the idempotent run a SIGKILL
 * of the leading JobManager and a broker restart; then a rescale and a model upgrade through
 * savepoints. Every check must be 0, and the TaskManagers' Prometheus endpoints must report
 * Tidemark's counters while the job runs. Its input has no too-late events: a job that reads a
 * backlog ahead of its watermark accepts them as late (the gate's documented direction of error),
 * and in an input this small no margin separates the two, so the batch reference would call them
 * otherwise. The rescale and the upgrade use the idempotent sink: with the transactional sink a
 * restore can fail in Beam's exactly-once writer (docs/drill.md).
 */
public class DrillIT {
  /**
   * Distinct events of the input. Fewer would save little: the batch reference's cost is mostly its
   * warm-up and its replay clock's steps, and the fault runs' is the faults' recovery.
   */
  static final int EVENTS = 1200;

  /** Records fed per second: the input in about six seconds, within which the faults strike. */
  static final int RATE = 200;

  private static Path dir;
  private static LocalCluster cluster;
  private static int transactionalExit;
  private static int idempotentExit;
  private static JsonNode transactional;
  private static JsonNode drill;
  private static List<JsonNode> runs;

  @BeforeClass
  public static void drillOnce() throws Exception {
    cluster = SharedCluster.hold();
    dir = Files.createTempDirectory("tidemark-drill-it");
    transactionalExit =
        drill(
            "transactional",
            "--sinks=transactional",
            "--kills=1",
            "--brokerKills=1",
            "--brokerRestarts=0",
            "--jobManagerKills=0");
    transactional = report("transactional");
    idempotentExit =
        drill(
            "idempotent",
            "--sinks=idempotent",
            "--kills=0",
            "--brokerKills=0",
            "--brokerRestarts=1",
            "--jobManagerKills=1",
            "--savepointSink=idempotent",
            "--rescale",
            "--upgrade");
    drill = report("idempotent");
    runs = List.of(transactional.get("runs").get(0), drill.get("runs").get(0));
  }

  private static int drill(String name, String... options) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--dir=" + cluster.settings().dir(),
                "--output=" + dir.resolve(name),
                "--events=" + EVENTS,
                "--rate=" + RATE,
                "--tooLateFraction=0"));
    args.addAll(List.of(options));
    return new CommandLine(new DrillCommand()).execute(args.toArray(new String[0]));
  }

  private static JsonNode report(String name) throws IOException {
    Path report = dir.resolve(name).resolve("drill.json");
    assertThat("the " + name + " drill writes drill.json", Files.exists(report), is(true));
    return Json.MAPPER.readTree(Files.readString(report));
  }

  @AfterClass
  public static void releaseCluster() throws IOException {
    try {
      if (dir != null) {
        try (Stream<Path> files = Files.walk(dir)) {
          files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
      }
    } finally {
      SharedCluster.release();
    }
  }

  @Test
  public void theDrillsRanToTheirEndAndExitZero() {
    for (JsonNode report : List.of(transactional, drill)) {
      assertThat(report.toPrettyString(), report.has("error"), is(false));
      assertThat(report.toPrettyString(), report.get("passed").asBoolean(), is(true));
    }
    assertThat(transactional.toPrettyString(), transactionalExit, is(0));
    assertThat(drill.toPrettyString(), idempotentExit, is(0));
  }

  @Test
  public void everyFaultKindHitPendingWorkAndLostOrDoubledNothing() {
    JsonNode tx = runs.get(0);
    JsonNode idem = runs.get(1);
    assertThat(tx.toPrettyString(), tx.get("kills").asInt(), is(1));
    assertThat(tx.toPrettyString(), tx.get("brokerKills").asInt(), is(1));
    assertThat(tx.toPrettyString(), tx.get("jobRestarts").asLong(), greaterThanOrEqualTo(1L));
    assertThat(idem.toPrettyString(), idem.get("jobManagerKills").asInt(), is(1));
    assertThat(idem.toPrettyString(), idem.get("brokerRestarts").asInt(), is(1));
    for (JsonNode run : runs) {
      String sink = run.get("sink").asText();
      assertThat(sink + " faults", run.get("faults").size(), is(2));
      for (JsonNode fault : run.get("faults")) {
        assertThat(fault.toString(), fault.get("countsTowardFaults").asBoolean(), is(true));
        assertThat(
            fault.toString(),
            fault.get("inputToFeed").asLong() + fault.get("fedNotCommitted").asLong(),
            greaterThan(0L));
      }
      assertThat(sink + " settled", run.get("settled").asBoolean(), is(true));
      assertThat(sink + " exactly once", run.get("exactlyOnceHolds").asBoolean(), is(true));
      assertThat(sink + " lateness beyond bound", run.get("latenessBeyondBound").asLong(), is(0L));
      assertThat(
          sink + " decisions", run.get("decisionsCommitted").asLong(), greaterThan((long) EVENTS));
      assertThat(sink + " missing versions", run.get("missingVersions").asLong(), is(0L));
      if (sink.equals("transactional")) {
        assertThat(sink + " duplicate versions", run.get("duplicateVersions").asLong(), is(0L));
      }
      JsonNode metrics = run.get("taskManagerMetrics");
      for (String counter :
          List.of(
              "tidemark_read",
              "tidemark_duplicates",
              "tidemark_deadLetters",
              "tidemark_decisions",
              "tidemark_windowed",
              "BeamML_ScoreFeatures_num_inferences")) {
        assertThat(
            sink + " " + counter + " in " + metrics,
            metrics.path(counter).asDouble(),
            greaterThan(0.0));
      }
      // The operating signals are exported too: the state-size counters (net since the job's
      // current attempt started, so negative after a restore whose identities then expire), the
      // lag and watermark gauges (Flink's reporters export Beam's gauges, not its distributions).
      for (String gauge :
          List.of(
              "tidemark_dedup_liveIdentities",
              "tidemark_windows_open",
              "tidemark_lag_ingestionMinusEventMillis_bundleMax",
              "tidemark_lag_decisionMinusIngestionMillis_bundleMax",
              "tidemark_watermarkLag_gateMillis",
              "tidemark_watermarkLag_windowsMillis")) {
        assertThat(sink + " " + gauge + " in " + metrics, metrics.has(gauge), is(true));
      }
      // Decisions by timing: which timings the attempt that survived the kill made depends on
      // when the kill fell (a backlog read after it may pass window ends before early panes fire),
      // but together they count every decision.
      double byTiming =
          metrics.path("tidemark_decisions_EARLY").asDouble()
              + metrics.path("tidemark_decisions_ON_TIME").asDouble()
              + metrics.path("tidemark_decisions_LATE").asDouble();
      assertThat(
          sink + " decisions by timing in " + metrics,
          byTiming,
          is(metrics.path("tidemark_decisions").asDouble()));
      List<String> reasons = new ArrayList<>();
      metrics
          .fieldNames()
          .forEachRemaining(
              name -> {
                if (name.startsWith("tidemark_deadLetters_")) {
                  reasons.add(name);
                }
              });
      assertThat(sink + " dead letters by reason in " + metrics, reasons.size(), greaterThan(1));
    }
    for (JsonNode report : List.of(transactional, drill)) {
      for (String key :
          List.of(
              "missingVersions",
              "duplicateVersions",
              "finalStateMismatches",
              "deadLetterMismatches",
              "duplicateMismatches",
              "tooLateMismatches",
              "latenessBeyondBound")) {
        assertThat(key, report.get(key).asLong(), is(0L));
      }
      assertThat(report.get("identityHolds").asBoolean(), is(true));
    }
  }

  @Test
  public void rescaleAndUpgradeThroughSavepointsKeepTheState() {
    assertThat(drill.toPrettyString(), drill.has("rescale") && drill.has("upgrade"), is(true));
    JsonNode rescale = drill.get("rescale");
    assertThat(rescale.get("savepoints").size(), is(2));
    assertThat(rescale.get("finalStateMismatches").asLong(), is(0L));
    assertThat(rescale.get("missingVersions").asLong(), is(0L));
    assertThat(rescale.get("holds").asBoolean(), is(true));
    JsonNode upgrade = drill.get("upgrade");
    assertThat(upgrade.get("checks").get("resentRecordedAsDuplicate").asBoolean(), is(true));
    assertThat(
        upgrade
            .get("checks")
            .get("decisionsAfter")
            .path(SavepointSteps.UPGRADE_MODEL_NAME)
            .asLong(),
        greaterThan(0L));
    assertThat(upgrade.get("holds").asBoolean(), is(true));
  }
}
