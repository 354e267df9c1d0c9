package dev.tidemark.bench.suite;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.transforms.util.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * Each part in a JVM of its own: the child JVMs really run, and the parent merges their results.
 */
@RunWith(JUnit4.class)
public class BenchSuiteForkIT {
  @Rule public final TemporaryFolder temp = new TemporaryFolder();

  /** Records figures of every kind, and the JVM it ran in. */
  public static final class ProbeA implements BenchPart {
    @Override
    public String name() {
      return "probe-a";
    }

    @Override
    public void run(BenchProfile profile, BenchResults results) {
      System.out.println("probe A ran");
      results.note(name(), "pid=" + ProcessHandle.current().pid());
      results.note(name(), "repeats=" + profile.repeats);
      results.ratio("featuresVsNaiveCombine", 1.25);
      results.latencyMs(10.0, 20.0, 30.0);
      results.measure(name(), "probe events/s", Stats.of(3, 1, 2), "events/s");
      results.point("probe-chart", "probe line", 1, 2);
      results.point("probe-chart", "probe line", 3, 4);
    }
  }

  /** Records the other figures. */
  public static final class ProbeB implements BenchPart {
    @Override
    public String name() {
      return "probe-b";
    }

    @Override
    public void run(BenchProfile profile, BenchResults results) {
      results.note(name(), "pid=" + ProcessHandle.current().pid());
      results.ratio("dedupVsBeamDeduplicate", 0.75);
      results.throughput1MVs1kAccounts(0.6);
      results.stateBytesPerDedupKey(190.0);
    }
  }

  /** Throws. */
  public static final class Failing implements BenchPart {
    @Override
    public String name() {
      return "probe-failing";
    }

    @Override
    public void run(BenchProfile profile, BenchResults results) {
      results.ratio("tidemarkVsNativeFlinkBackfill", 0.5);
      throw new IllegalStateException("probe failure");
    }
  }

  /** Kills its JVM: only ever run forked. */
  public static final class Dying implements BenchPart {
    @Override
    public String name() {
      return "probe-dying";
    }

    @Override
    public void run(BenchProfile profile, BenchResults results) {
      results.ratio("tidemarkVsNativeFlinkStreaming", 0.5);
      System.exit(3);
    }
  }

  @Test
  public void eachPartRunsInItsOwnJvmAndTheParentMergesWhatItRecorded() throws Exception {
    Path out = temp.getRoot().toPath();
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    BenchProfile profile = BenchProfile.SMALL.with(List.of(), List.of(), null, 5);

    new BenchSuite(List.of(new ProbeA(), new ProbeB(), new Failing(), new Dying()))
        .forkingEachPart()
        .run(profile, out, new PrintStream(log, true, StandardCharsets.UTF_8));

    JsonNode root = Json.MAPPER.readTree(Files.readAllBytes(out.resolve("latest.json")));
    String printed = log.toString(StandardCharsets.UTF_8);
    assertThat("a child's output reaches the parent's", printed, containsString("probe A ran"));

    List<String> notes = new ArrayList<>();
    root.path("notes").forEach(note -> notes.add(note.asText()));
    Set<String> pids = new HashSet<>();
    for (String note : notes) {
      if (note.contains(": pid=")) {
        pids.add(note.substring(note.indexOf("pid=") + 4));
      }
    }
    assertThat(notes.toString(), pids, hasSize(2));
    assertThat(pids.contains(String.valueOf(ProcessHandle.current().pid())), is(false));
    assertThat("the overrides reach the child", notes.contains("probe-a: repeats=5"), is(true));

    assertThat(root.at("/ratios/featuresVsNaiveCombine").asDouble(), is(1.25));
    assertThat(root.at("/ratios/dedupVsBeamDeduplicate").asDouble(), is(0.75));
    assertThat(root.at("/scaling/throughput1MVs1kAccounts").asDouble(), is(0.6));
    assertThat(root.at("/latencyMs/p95").asDouble(), is(20.0));
    assertThat(root.path("stateBytesPerDedupKey").asDouble(), is(190.0));

    JsonNode measurement = root.path("measurements").get(0);
    assertThat(measurement.path("name").asText(), is("probe events/s"));
    assertThat(measurement.path("median").asDouble(), is(2.0));
    assertThat(measurement.path("min").asDouble(), is(1.0));
    assertThat(measurement.path("max").asDouble(), is(3.0));
    assertThat(measurement.path("repeats").asInt(), is(3));
    JsonNode series = root.path("series").get(0);
    assertThat(series.path("chart").asText(), is("probe-chart"));
    assertThat(series.path("points").size(), is(2));
    assertThat(series.path("points").get(1).get(0).asDouble(), is(3.0));
    assertThat(series.path("points").get(1).get(1).asDouble(), is(4.0));
    assertThat(Files.exists(out.resolve("probe-chart.png")), is(true));

    // A part that throws is noted with what it had recorded; one whose JVM dies, with its exit.
    assertThat(root.at("/ratios/tidemarkVsNativeFlinkBackfill").asDouble(), is(0.5));
    assertThat(
        notes.toString(),
        notes.contains(
            "probe-failing: "
                + BenchSuite.FAILED
                + "java.lang.IllegalStateException: probe failure"),
        is(true));
    assertThat(root.at("/ratios/tidemarkVsNativeFlinkStreaming").isNull(), is(true));
    assertThat(
        notes.toString(),
        notes.stream()
            .anyMatch(
                n ->
                    n.startsWith("probe-dying: " + BenchSuite.FAILED)
                        && n.contains("exited with 3")),
        is(true));
    assertThat(printed, not(containsString("Exception in thread")));
  }
}
