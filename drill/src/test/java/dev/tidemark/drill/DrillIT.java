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
 * A drill sized for CI, run once on the local cluster ({@link SharedCluster}): {@value #EVENTS}
 * events fed at {@value #RATE} records/s to each sink mode, with one TaskManager kill and one
 * broker restart each; then a rescale and a model upgrade through savepoints. Every mismatch must
 * be 0, and the TaskManagers' Prometheus endpoints must report Tidemark's counters while the job
 * runs. Its input has no too-late events: a job that reads a backlog ahead of its watermark accepts
 * them as late (the gate's documented direction of error), and in an input this small no margin
 * separates the two, so the batch reference would call them otherwise. The rescale and the upgrade
 * use the idempotent sink: with the transactional sink a restore can fail in Beam's exactly-once
 * writer (docs/drill.md).
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
  private static int exit;
  private static JsonNode drill;

  @BeforeClass
  public static void drillOnce() throws Exception {
    cluster = SharedCluster.hold();
    dir = Files.createTempDirectory("tidemark-drill-it");
    Path output = dir.resolve("drill");
    exit =
        new CommandLine(new DrillCommand())
            .execute(
                "--dir=" + cluster.settings().dir(),
                "--output=" + output,
                "--events=" + EVENTS,
                "--rate=" + RATE,
                "--tooLateFraction=0",
                "--kills=1",
                "--brokerRestarts=1",
                "--sinks=transactional,idempotent",
                "--savepointSink=idempotent",
                "--rescale",
                "--upgrade");
    Path report = output.resolve("drill.json");
    assertThat("the drill writes drill.json (exit " + exit + ")", Files.exists(report), is(true));
    drill = Json.MAPPER.readTree(Files.readString(report));
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
  public void theDrillRanToItsEndAndExitsZero() {
    assertThat(drill.toPrettyString(), drill.has("error"), is(false));
    assertThat(drill.toPrettyString(), drill.get("passed").asBoolean(), is(true));
    assertThat(drill.toPrettyString(), exit, is(0));
  }

  @Test
  public void killsAndBrokerRestartsLoseAndDoubleNothing() {
    assertThat(drill.toPrettyString(), drill.get("runs").size(), is(2));
    for (JsonNode run : drill.get("runs")) {
      String sink = run.get("sink").asText();
      assertThat(sink + " kills", run.get("kills").asInt(), is(1));
      assertThat(sink + " broker restarts", run.get("brokerRestarts").asInt(), is(1));
      assertThat(sink + " job restarts", run.get("jobRestarts").asLong(), greaterThanOrEqualTo(1L));
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
    for (String key :
        List.of(
            "missingVersions",
            "duplicateVersions",
            "finalStateMismatches",
            "deadLetterMismatches",
            "duplicateMismatches",
            "tooLateMismatches")) {
      assertThat(key, drill.get(key).asLong(), is(0L));
    }
    assertThat(drill.get("kills").asInt(), is(2));
    assertThat(drill.get("brokerRestarts").asInt(), is(2));
    assertThat(drill.get("identityHolds").asBoolean(), is(true));
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
