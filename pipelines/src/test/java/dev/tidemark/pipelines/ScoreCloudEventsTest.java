package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsInAnyOrder;
import static org.hamcrest.Matchers.everyItem;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.matchesPattern;

import dev.tidemark.transforms.ComputeFeatures;
import dev.tidemark.transforms.DeduplicateEvents;
import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.PaymentFeatures;
import dev.tidemark.transforms.values.RawRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.io.TextIO;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptor;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * {@link ScoreCloudEvents} applied as a user would apply it in a pipeline of their own: their own
 * source (CSV lines of a legacy feed, turned into CloudEvents by their own step), their own sinks
 * (text files of their own format), no Tidemark options, sources or sinks. Every record comes out
 * in exactly one place, and the counters the transform returns prove it.
 */
public class ScoreCloudEventsTest {
  @Rule public final transient TestPipeline pipeline = TestPipeline.create();
  @Rule public final transient TemporaryFolder folder = new TemporaryFolder();

  private static final Instant START = Instant.parse("2026-03-01T10:00:00Z");

  /** The user's feed: id, account, amount, merchant, country, seconds after {@link #START}. */
  private static List<String> feed() {
    List<String> lines = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      lines.add(String.format("p-%02d,acct-a,%d.50,m-%d,GB,%d", i, 10 + i, i % 3, 20 * i));
    }
    for (int i = 0; i < 4; i++) {
      lines.add(String.format("q-%02d,acct-b,7.25,m-9,FR,%d", i, 400 + 30 * i));
    }
    lines.add("p-03,acct-a,13.50,m-0,GB,60"); // the feed sent p-03 twice
    lines.add("x-01,acct-c,not-a-number,m-1,GB,100"); // a record the parser must refuse
    return lines;
  }

  /** The user's own step: a CSV line as a structured-mode CloudEvent, as bytes. */
  static RawRecord toCloudEvent(String line) {
    String[] f = line.split(",", -1);
    Instant time = START.plus(Duration.standardSeconds(Long.parseLong(f[5])));
    String json =
        "{\"specversion\":\"1.0\",\"id\":\""
            + f[0]
            + "\",\"source\":\"/legacy/feed\",\"type\":\"payments.transaction.v1\",\"time\":\""
            + time
            + "\",\"data\":{\"accountId\":\""
            + f[1]
            + "\",\"amount\":"
            + (f[2].matches("[0-9.]+") ? f[2] : "\"" + f[2] + "\"")
            + ",\"currency\":\"GBP\",\"merchantId\":\""
            + f[3]
            + "\",\"country\":\""
            + f[4]
            + "\"}}";
    return RawRecord.of(json.getBytes(StandardCharsets.UTF_8), time, "legacy-feed");
  }

  @Test
  public void appliesInAUsersPipelineWithItsOwnSourceAndSinks() throws IOException {
    Path out = folder.getRoot().toPath();
    PCollection<RawRecord> raw =
        pipeline
            .apply("ReadLegacyFeed", Create.of(feed()))
            .apply(
                "ToCloudEvents",
                MapElements.into(TypeDescriptor.of(RawRecord.class))
                    .via(ScoreCloudEventsTest::toCloudEvent))
            .setCoder(RawRecord.RawRecordCoder.of());

    Outputs outputs =
        raw.apply(
            "ScoreCloudEvents",
            ScoreCloudEvents.create()
                .withDeduplication(
                    DeduplicateEvents.create().withHorizon(Duration.standardHours(1)))
                .withFeatures(
                    ComputeFeatures.of(Duration.standardMinutes(5), Duration.standardMinutes(5))
                        .withoutEarlyFirings()));

    outputs
        .decisions
        .apply(
            "DecisionsAsCsv",
            MapElements.into(TypeDescriptors.strings())
                .via(
                    (Decision d) ->
                        d.key()
                            + ","
                            + d.windowStart()
                            + ","
                            + d.features().getLong(PaymentFeatures.TXN_COUNT)
                            + ","
                            + d.label()))
        .apply("WriteDecisions", TextIO.write().to(out.resolve("decisions").toString()));
    outputs
        .deadLetters
        .apply(
            "DeadLettersAsCsv",
            MapElements.into(TypeDescriptors.strings())
                .via((DeadLetter d) -> d.reason().name() + "," + d.origin()))
        .apply("WriteDeadLetters", TextIO.write().to(out.resolve("dead-letters").toString()));

    PipelineResult result = pipeline.run();
    result.waitUntilFinish();

    // A bounded input gets one on-time pane per account and window: acct-a's twelve payments
    // every 20 s fall into the windows at 10:00 (p-00..p-14 s) and 10:05, acct-b's four at 10:05.
    List<String> decisions = lines(out, "decisions");
    assertThat(
        decisions.stream().map(l -> l.substring(0, l.lastIndexOf(','))).toList(),
        containsInAnyOrder(
            "acct-a,2026-03-01T10:00:00.000Z,12", "acct-b,2026-03-01T10:05:00.000Z,4"));
    assertThat(decisions, everyItem(matchesPattern(".*,(allow|review)")));
    assertThat(lines(out, "dead-letters"), containsInAnyOrder("INVALID_AMOUNT,legacy-feed"));

    Map<String, Long> counters = counters(result, outputs);
    assertThat(counters.get(TidemarkMetrics.READ), is(18L));
    assertThat(counters.get(TidemarkMetrics.DEAD_LETTERS), is(1L));
    assertThat(counters.get(TidemarkMetrics.DUPLICATES), is(1L));
    assertThat(counters.get(TidemarkMetrics.UNIQUE), is(16L));
    assertThat(counters.get(TidemarkMetrics.WINDOWED), is(16L));
    assertThat(counters.getOrDefault(TidemarkMetrics.TOO_LATE, 0L), is(0L));
    assertThat(counters.get(TidemarkMetrics.DECISIONS), is(2L));
    // The accounting identity, from the counters alone.
    assertThat(
        counters.get(TidemarkMetrics.READ),
        is(counters.get(TidemarkMetrics.VALID) + counters.get(TidemarkMetrics.DEAD_LETTERS)));
    assertThat(
        counters.get(TidemarkMetrics.VALID),
        is(counters.get(TidemarkMetrics.UNIQUE) + counters.get(TidemarkMetrics.DUPLICATES)));
  }

  private static Map<String, Long> counters(PipelineResult result, Outputs outputs) {
    Map<String, Long> counters = new TreeMap<>();
    for (MetricResult<Long> counter :
        result.metrics().queryMetrics(outputs.counters()).getCounters()) {
      counters.merge(counter.getName().getName(), counter.getAttempted(), Long::sum);
    }
    return counters;
  }

  private static List<String> lines(Path directory, String prefix) throws IOException {
    List<String> lines = new ArrayList<>();
    try (Stream<Path> files = Files.list(directory)) {
      for (Path file :
          files.filter(f -> f.getFileName().toString().startsWith(prefix + "-")).toList()) {
        lines.addAll(Files.readAllLines(file, StandardCharsets.UTF_8));
      }
    }
    return lines;
  }
}
