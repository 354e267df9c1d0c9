package dev.tidemark.bench.suite;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.emptyString;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.bench.flink.ClusterPart;
import dev.tidemark.bench.latency.LatencyPart;
import dev.tidemark.transforms.util.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URLConnection;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * Runs the suite's default parts but the latency part with the {@code small} profile, narrowed to
 * one measured run per point without warm-up, into a temporary directory and checks the outputs:
 * {@code latest.json} with every contract key (a number, or null with a note naming it), the
 * machine, notes, at least one measurement, and a PNG per chart. It checks that the suite ran and
 * produced numbers, never how fast anything was. {@code -Dtidemark.bench.output=DIR} keeps the
 * outputs in {@code DIR}.
 */
@RunWith(JUnit4.class)
public class BenchSuiteSmokeIT {
  @ClassRule public static final TemporaryFolder TEMP = new TemporaryFolder();

  /** A directory to write the outputs to and keep, instead of a temporary one. */
  public static final String KEEP_OUTPUT_PROPERTY = "tidemark.bench.output";

  private static final byte[] PNG_SIGNATURE = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

  @Test
  public void smallProfileWritesTheContractAndAChartPerSeries() throws Exception {
    String keep = System.getProperty(KEEP_OUTPUT_PROPERTY, "");
    Path out = keep.isEmpty() ? TEMP.getRoot().toPath().resolve("bench-results") : Paths.get(keep);
    ByteArrayOutputStream log = new ByteArrayOutputStream();

    // One measured run per point and no warm-up: the smoke test checks the contract, not figures.
    BenchProfile profile = BenchProfile.SMALL.with(null, null, 0, 1);
    // The latency part (four minutes of capacity probes) is left out: its measurement runs in
    // KafkaSinkBenchmarkIT and its logic in LatencyPartTest; its keys must then be null with a
    // note. So is the local-cluster part, which needs './tidemark cluster up' (its runs are tens
    // of minutes).
    List<BenchPart> parts = new ArrayList<>(BenchSuite.defaultParts());
    parts.removeIf(part -> part instanceof LatencyPart || part instanceof ClusterPart);
    new BenchSuite(parts).run(profile, out, new PrintStream(log, true, StandardCharsets.UTF_8));

    JsonNode root = Json.MAPPER.readTree(Files.readAllBytes(out.resolve("latest.json")));
    String printed = log.toString(StandardCharsets.UTF_8);
    System.out.print(printed);
    JsonNode notes = root.path("notes");
    assertThat(printed, notes.isArray(), is(true));
    for (JsonNode note : notes) {
      assertThat("no part failed", note.asText(), not(containsString(BenchSuite.FAILED)));
    }
    assertThat(
        "jar: URL readers no longer share one JarFile",
        URLConnection.getDefaultUseCaches("jar"),
        is(false));
    for (String key : BenchResults.NUMBER_KEYS) {
      JsonNode value = root.at("/" + key.replace('.', '/'));
      assertThat(key + " present in " + root, value.isMissingNode(), is(false));
      assertThat(key + " is a number or null", value.isNumber() || value.isNull(), is(true));
      if (value.isNull()) {
        assertThat(
            key + " is null with a note naming it: " + notes, mentions(notes, key), is(true));
      }
    }
    assertThat(root.path("machine").isTextual(), is(true));
    assertThat(root.path("machine").asText(), not(emptyString()));
    assertThat(root.path("profile").asText(), is("small"));
    assertThat(printed, root.path("measurements").size(), greaterThan(0));
    for (JsonNode m : root.path("measurements")) {
      assertThat(m.toString(), m.path("median").isNumber() || m.path("median").isNull(), is(true));
    }

    Set<String> charts = new LinkedHashSet<>();
    root.path("series").forEach(s -> charts.add(s.path("chart").asText()));
    for (String chart : charts) {
      Path png = out.resolve(Charts.fileName(chart));
      assertThat(png + " written", Files.isRegularFile(png), is(true));
      byte[] bytes = Files.readAllBytes(png);
      assertThat(png + " size", bytes.length, greaterThan(5_000));
      assertThat(
          png + " is a PNG",
          Arrays.equals(Arrays.copyOf(bytes, PNG_SIGNATURE.length), PNG_SIGNATURE),
          is(true));
    }
  }

  /** A note names a key by its dotted path ({@code latencyMs.p50}). */
  private static boolean mentions(JsonNode notes, String key) {
    for (JsonNode note : notes) {
      if (note.asText().contains(key)) {
        return true;
      }
    }
    return false;
  }
}
