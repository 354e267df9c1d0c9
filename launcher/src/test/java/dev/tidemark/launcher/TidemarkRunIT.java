package dev.tidemark.launcher;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.hasItems;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.pipelines.Outputs;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * {@code run} as a newcomer uses it: the bundled sample with no arguments, and a hostile input.
 *
 * <p>The run of the bundled sample also gives, record for record, the dead letters, duplicates and
 * too-late records, and of every window the on-time and the final decision, that the pipeline gave
 * before it read a spec and built sliding windows from slices (docs/sliding-windows.md: the early
 * and late panes in between may differ), and the same summary but for the counts of decisions and
 * what derives from them. The expected files under {@code
 * src/test/resources/expected/payments-sample/} were written by the code of the commit before the
 * spec was wired (the hand-written payment parser, features and coders, one combine per window),
 * except three dead letters' messages about bad {@code data} fields: the spec's field parser, which
 * replaced the hand-written checks, words them (the reasons are the same); each holds an output's
 * records as canonical JSON, sorted, without the two wall-clock fields ({@code
 * clocks.processingTime}, {@code clocks.decisionTime}). Regenerate them, only when an output is
 * meant to change, from the project root with the command below; it runs the one-stage combine
 * ({@code --windowAggregation=ONE_STAGE}), the path the files were written by:
 *
 * <pre>
 * mvn -B -o -pl launcher verify -Dit.test=TidemarkRunIT -Dtest=none \
 *     -Dsurefire.failIfNoSpecifiedTests=false -Dtidemark.regenerate=true
 * </pre>
 */
@RunWith(JUnit4.class)
public class TidemarkRunIT {
  private static final Path EXPECTED =
      Paths.get(System.getProperty("tidemark.home", ".."))
          .resolve("launcher/src/test/resources/expected/payments-sample");

  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  private static long lines(Path dir) throws IOException {
    long count = 0;
    try (var files = Files.list(dir)) {
      for (Path file : (Iterable<Path>) files::iterator) {
        count += Files.readAllLines(file).size();
      }
    }
    return count;
  }

  @Test
  public void runWithNoArgumentsProcessesTheBundledSampleAndTheIdentityHolds() throws IOException {
    Path out = folder.newFolder("out").toPath();
    int exit =
        REGENERATE
            ? Tidemark.execute("run", "--output=" + out, "--windowAggregation=ONE_STAGE")
            : Tidemark.execute("run", "--output=" + out);
    assertThat(exit, is(0));

    JsonNode summary = Json.MAPPER.readTree(out.resolve("summary.json").toFile());
    long read = summary.get("read").asLong();
    assertThat(read, greaterThan(1000L));
    assertThat(summary.get("identityHolds").asBoolean(), is(true));
    assertThat(read, is(summary.get("valid").asLong() + summary.get("deadLetters").asLong()));
    assertThat(
        summary.get("valid").asLong(),
        is(summary.get("unique").asLong() + summary.get("duplicates").asLong()));
    assertThat(
        summary.get("unique").asLong(),
        is(
            summary.get("windowed").asLong()
                + summary.get("tooLate").asLong()
                + summary.get("droppedByRunner").asLong()));
    assertThat(summary.get("droppedByRunner").asLong(), is(0L));
    // The sample carries every kind of trouble.
    assertThat(summary.get("conflicts").asLong(), greaterThan(0L));
    assertThat(summary.get("tooLate").asLong(), greaterThan(0L));
    for (String timing : List.of("EARLY", "ON_TIME", "LATE")) {
      assertThat(timing, summary.get("decisionsByTiming").get(timing).asLong(), greaterThan(0L));
    }
    List<String> reasons = new ArrayList<>();
    summary.get("deadLettersByReason").fieldNames().forEachRemaining(reasons::add);
    assertThat(
        reasons, hasItems("invalid_json", "invalid_utf8", "oversized_record", "invalid_amount"));
    // Every decision is scored by the shipped model, and the fraud bursts get flagged.
    long review = 0;
    try (var files = Files.list(out.resolve("decisions"))) {
      for (Path file : (Iterable<Path>) files::iterator) {
        for (String line : Files.readAllLines(file)) {
          JsonNode decision = Json.MAPPER.readTree(line);
          double score = decision.get("score").asDouble();
          assertThat(line, score >= 0 && score <= 1, is(true));
          String verdict = decision.get("decision").asText();
          assertThat(verdict, is(score >= 0.5 ? "review" : "allow"));
          assertThat(decision.get("model").get("name").asText(), is("tidemark-fraud-xgb"));
          review += verdict.equals("review") ? 1 : 0;
        }
      }
    }
    assertThat(review, greaterThan(0L));
    // The files hold what the summary counts.
    assertThat(lines(out.resolve("decisions")), is(summary.get("decisions").asLong()));
    assertThat(lines(out.resolve("dead-letters")), is(summary.get("deadLetters").asLong()));
    assertThat(lines(out.resolve("duplicates")), is(summary.get("duplicates").asLong()));
    assertThat(
        lines(out.resolve("too-late")),
        is(summary.get("tooLate").asLong() + summary.get("partiallyLate").asLong()));
    // The sample's fraud mix is the training stream's: neither its scores nor its labelled
    // errors raise a drift alarm.
    assertThat(summary.at("/drift").toString(), summary.at("/drift/alarms").asLong(), is(0L));
    assertThat(lines(out.resolve("drift")), is(0L));
    // The sample's labels are read beside it: every one accounted for, the shipped model
    // evaluated on them, the evaluation windows written and shown in the report.
    JsonNode labels = summary.get("labels");
    Path labelsFile =
        Paths.get(System.getProperty("tidemark.home", ".."))
            .resolve("samples/sample-labels.ndjson");
    assertThat(
        labels.toString(),
        labels.get("read").asLong(),
        is((long) Files.readAllLines(labelsFile).size()));
    JsonNode shipped = labels.at("/byModel/deciding/tidemark-fraud-xgb:1");
    assertThat(
        labels.toString(), shipped.get("labels").asLong(), is(labels.get("evaluations").asLong()));
    assertThat(shipped.get("truePositives").asLong(), greaterThan(0L));
    assertThat(lines(out.resolve("evaluations")), greaterThan(0L));
    assertThat(
        Files.readString(out.resolve("report.html")),
        containsString("Online evaluation per model version"));
    theOutputsOfTheHandWrittenPipeline(out);
  }

  private static final boolean REGENERATE = Boolean.getBoolean("tidemark.regenerate");

  private static void theOutputsOfTheHandWrittenPipeline(Path out) throws IOException {
    String summary =
        Summary.withoutWallClock(
            Files.readString(out.resolve("summary.json"), StandardCharsets.UTF_8));
    if (REGENERATE) {
      Files.createDirectories(EXPECTED);
      Files.writeString(EXPECTED.resolve("summary.json"), summary, StandardCharsets.UTF_8);
    }
    for (String name : Outputs.NAMES) {
      List<String> actual = sortedLines(out, name);
      Path file = EXPECTED.resolve(name + ".ndjson.gz");
      if (REGENERATE) {
        try (OutputStream gz = new GZIPOutputStream(Files.newOutputStream(file))) {
          for (String line : actual) {
            gz.write((line + "\n").getBytes(StandardCharsets.UTF_8));
          }
        }
      }
      List<String> expected;
      try (InputStream gz = new GZIPInputStream(Files.newInputStream(file))) {
        String text = new String(gz.readAllBytes(), StandardCharsets.UTF_8);
        expected = text.isEmpty() ? List.of() : List.of(text.split("\n"));
      }
      if (name.equals("decisions")) {
        assertEquals(
            "on-time decisions", onTimeAndFinal(expected, true), onTimeAndFinal(actual, true));
        assertEquals(
            "final decisions", onTimeAndFinal(expected, false), onTimeAndFinal(actual, false));
        continue;
      }
      assertThat(name + ": number of records", actual.size(), is(expected.size()));
      for (int i = 0; i < expected.size(); i++) {
        assertEquals(name + " record " + i + " (sorted)", expected.get(i), actual.get(i));
      }
    }
    assertEquals(
        withoutDecisionCounts(
            Files.readString(EXPECTED.resolve("summary.json"), StandardCharsets.UTF_8)),
        withoutDecisionCounts(summary));
  }

  /**
   * Per window ({@code decisionId}), its on-time decision ({@code onTime}) or its final one (the
   * highest version), without what depends on how many panes came before it: the version, the
   * pane's index and first/last flags, and the correction fields. Sorted by decision id.
   */
  private static List<String> onTimeAndFinal(List<String> decisions, boolean onTime)
      throws IOException {
    java.util.Map<String, ObjectNode> chosen = new java.util.TreeMap<>();
    for (String line : decisions) {
      ObjectNode decision = (ObjectNode) Json.MAPPER.readTree(line);
      String id = decision.get("decisionId").asText();
      if (onTime) {
        if (decision.get("pane").get("timing").asText().equals("ON_TIME")) {
          chosen.put(id, decision);
        }
      } else {
        ObjectNode before = chosen.get(id);
        if (before == null || before.get("version").asLong() < decision.get("version").asLong()) {
          chosen.put(id, decision);
        }
      }
    }
    List<String> lines = new ArrayList<>();
    for (ObjectNode decision : chosen.values()) {
      decision.remove(List.of("version", "pane", "correction", "supersedes"));
      lines.add(Json.canonical(decision));
    }
    return lines;
  }

  /**
   * A summary without the counts that depend on how many early and late panes fired, and without
   * the drift block, which the expected files predate (the run's own test checks it).
   */
  private static String withoutDecisionCounts(String summaryJson) throws IOException {
    ObjectNode summary = (ObjectNode) Json.MAPPER.readTree(summaryJson);
    summary.remove(List.of("decisions", "decisionsByTiming", "corrections", "models", "drift"));
    ObjectNode signals = (ObjectNode) summary.get("signals");
    signals.remove("correctionsPerDecision");
    return Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(summary);
  }

  /**
   * Every line of one output as canonical JSON without the wall-clock fields ({@code
   * clocks.processingTime}, {@code clocks.decisionTime}), sorted, repeated lines kept.
   */
  private static List<String> sortedLines(Path output, String name) throws IOException {
    List<String> lines = new ArrayList<>();
    try (Stream<Path> files = Files.list(output.resolve(name))) {
      for (Path file : (Iterable<Path>) files::iterator) {
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
          JsonNode node = Json.MAPPER.readTree(line);
          if (node.get("clocks") instanceof ObjectNode clocks) {
            clocks.remove("processingTime");
            clocks.remove("decisionTime");
          }
          lines.add(Json.canonical(node));
        }
      }
    }
    Collections.sort(lines);
    return lines;
  }

  @Test
  public void manyMaximumAmountsInOneAccountSaturateTheSumAndTheRunGoesOn() throws IOException {
    // 120 events of 999999999999999 (the largest whole amount), one a second for one account:
    // their sum, 119999999999999880, is over Long.MAX_VALUE minor units.
    Path input = folder.getRoot().toPath().resolve("max-amounts.ndjson");
    List<String> lines = new ArrayList<>();
    for (int i = 0; i < 120; i++) {
      String time = java.time.Instant.parse("2026-01-01T00:00:00Z").plusSeconds(i).toString();
      lines.add(
          TidemarkCliTest.event("max-" + i, "acct-whale", "999999999999999", time)
              + (i % 10 == 9 ? "\n{\"advanceProcessingTime\":\"PT10S\"}" : ""));
    }
    Files.write(input, lines, java.nio.charset.StandardCharsets.UTF_8);
    Path out = folder.newFolder("max-out").toPath();

    assertThat(Tidemark.execute("run", "--input=" + input, "--output=" + out), is(0));

    JsonNode summary = Json.MAPPER.readTree(out.resolve("summary.json").toFile());
    assertThat(summary.get("valid").asLong(), is(120L));
    assertThat(summary.get("identityHolds").asBoolean(), is(true));
    java.math.BigDecimal max = new java.math.BigDecimal("999999999999999");
    java.math.BigDecimal saturatedSum = new java.math.BigDecimal("92233720368547758.07");
    long saturated = 0;
    long sawAll = 0;
    try (var files = Files.list(out.resolve("decisions"))) {
      for (Path file : (Iterable<Path>) files::iterator) {
        for (String line : Files.readAllLines(file)) {
          JsonNode features = Json.MAPPER.readTree(line).get("features");
          long count = features.get("txnCount").asLong();
          boolean flag = features.get("amountSumSaturated").asBoolean();
          // 92 such amounts fit a long of minor units; 93 do not.
          assertThat(line, flag, is(count > 92));
          assertThat(
              line,
              features
                  .get("amountSum")
                  .decimalValue()
                  .compareTo(
                      flag ? saturatedSum : max.multiply(java.math.BigDecimal.valueOf(count))),
              is(0));
          assertThat(line, features.get("amountMax").decimalValue().compareTo(max), is(0));
          saturated += flag ? 1 : 0;
          sawAll += count == 120 ? 1 : 0;
        }
      }
    }
    assertThat(saturated, greaterThan(0L));
    assertThat("a window holding all 120 events", sawAll, greaterThan(0L));
  }
}
