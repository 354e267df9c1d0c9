package dev.tidemark.launcher;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.hasItems;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** {@code run} as a newcomer uses it: the bundled sample with no arguments, and a hostile input. */
@RunWith(JUnit4.class)
public class TidemarkRunIT {
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
    int exit = Tidemark.execute("run", "--output=" + out);
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
