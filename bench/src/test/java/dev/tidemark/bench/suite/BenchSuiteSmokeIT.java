package dev.tidemark.bench.suite;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.emptyString;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.bench.flink.ClusterPart;
import dev.tidemark.bench.kafka.KafkaSinkPart;
import dev.tidemark.bench.latency.LatencyPart;
import dev.tidemark.bench.scoring.BatchingPart;
import dev.tidemark.bench.scoring.ScoringPart;
import dev.tidemark.model.ScoreFeatures;
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
import java.util.stream.Stream;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * Runs the suite's default parts but the latency parts and the local-cluster part with the {@code
 * smoke} profile (every part's code on tiny inputs, one measured run per point, no warm-up) into a
 * temporary directory and checks the outputs: {@code latest.json} with every contract key (a
 * number, or null with a note naming it), the machine, notes, every figure of the scoring, batching
 * and Kafka sink parts, and a PNG per chart. It checks that the suite ran and produced numbers,
 * never how fast anything was. {@code -Dtidemark.bench.output=DIR} keeps the outputs in {@code
 * DIR}.
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

    // The smoke profile: the smoke test checks the contract, not figures.
    BenchProfile profile = BenchProfile.SMOKE;
    // The latency parts (minutes of capacity probes each) are left out: their jobs and
    // measurements are the kafka-sink part's, run here, and their logic is in LatencyPartTest;
    // their keys must then be null with a note. So is the local-cluster part, which needs
    // './tidemark cluster up' (its runs are tens of minutes).
    List<BenchPart> parts = new ArrayList<>(BenchSuite.defaultParts());
    parts.removeIf(part -> part instanceof LatencyPart || part instanceof ClusterPart);
    new BenchSuite(parts).run(profile, out, new PrintStream(log, true, StandardCharsets.UTF_8));

    JsonNode root = Json.MAPPER.readTree(Files.readAllBytes(out.resolve("latest.json")));
    // The run's own JSON, named by its start, profile and parts, is latest.json's twin.
    List<Path> dated;
    try (Stream<Path> files = Files.list(out)) {
      dated =
          files
              .filter(
                  f ->
                      f.getFileName().toString().matches("\\d{4}-\\d\\d-\\d\\dT.*-smoke-.*\\.json"))
              .toList();
    }
    assertThat(dated.toString(), dated.size(), is(1));
    assertThat(Files.readString(dated.get(0)), is(Files.readString(out.resolve("latest.json"))));
    String printed = log.toString(StandardCharsets.UTF_8);
    System.out.print(printed);
    JsonNode notes = root.path("notes");
    assertThat(printed, notes.isArray(), is(true));
    for (JsonNode note : notes) {
      assertThat("no part failed", note.asText(), not(containsString(BenchSuite.FAILED)));
      // The Flink SQL baseline produced the DataStream job's outputs, backfill and streaming.
      assertThat("Flink SQL's outputs", note.asText(), not(containsString("MISMATCH: Flink SQL")));
    }
    // The smoke profile runs the Flink SQL baseline in streaming only.
    assertThat(root.at("/ratios/tidemarkVsFlinkSqlStreaming").isNumber(), is(true));
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
    assertThat(root.path("profile").asText(), is("smoke"));
    assertThat(printed, root.path("measurements").size(), greaterThan(0));
    for (JsonNode m : root.path("measurements")) {
      assertThat(m.toString(), m.path("median").isNumber() || m.path("median").isNull(), is(true));
    }
    for (String key : BenchResults.NUMBER_KEYS) {
      if (key.startsWith("scoring.")) {
        assertThat(key + " measured", root.at("/" + key.replace('.', '/')).isNumber(), is(true));
      }
    }
    for (String engine : List.of("XGBoost", "OnnxRuntime")) {
      for (int batch : new int[] {1, 64, 256}) {
        for (String path : List.of("raw", "raw + decisions", "transform")) {
          assertMeasured(root, ScoringPart.NAME, engine + " batch " + batch + " " + path, "");
        }
      }
    }
    for (ScoreFeatures.Batching batching : ScoreFeatures.Batching.values()) {
      for (String figure : List.of("pipeline throughput", "mean batch", "engine calls")) {
        assertMeasured(root, BatchingPart.NAME, batching + " " + figure, "");
      }
    }
    // The smoke profile runs the sink jobs on the heap only.
    for (String backend : List.of("heap")) {
      for (String mode : List.of("idempotent", "transactional")) {
        String side = mode + " on " + backend;
        assertMeasured(root, KafkaSinkPart.NAME, side + " throughput (submit->last decision)", "");
        assertMeasured(root, KafkaSinkPart.NAME, side + " throughput (first->last decision)", "");
        for (String latency : List.of("record", "visible")) {
          for (String p : List.of("p50", "p95", "p99")) {
            assertMeasured(
                root, KafkaSinkPart.NAME, side + " @90%", " " + latency + " latency " + p);
          }
        }
        assertMeasured(root, KafkaSinkPart.NAME, side + " @90%", " sent");
      }
      for (String span : List.of("submit->last", "first->last")) {
        assertMeasured(
            root, KafkaSinkPart.NAME, "transactional cost on " + backend + " (" + span + ")", "");
      }
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

  /**
   * A measurement of {@code part} whose name starts with {@code prefix} and ends with {@code
   * suffix} (the whole name when the suffix is empty) has a number as its median.
   */
  private static void assertMeasured(JsonNode root, String part, String prefix, String suffix) {
    List<String> names = new ArrayList<>();
    for (JsonNode m : root.path("measurements")) {
      String name = m.path("name").asText();
      if (m.path("part").asText().equals(part)) {
        names.add(name);
        boolean matches =
            suffix.isEmpty()
                ? name.equals(prefix)
                : name.startsWith(prefix) && name.endsWith(suffix);
        if (matches) {
          assertThat(m.toString(), m.path("median").isNumber(), is(true));
          return;
        }
      }
    }
    throw new AssertionError(part + " did not measure " + prefix + "..." + suffix + ": " + names);
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
