package dev.tidemark.bench;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertArrayEquals;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.transforms.util.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.beam.runners.flink.FlinkPipelineOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.GlobalConfiguration;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * Smoke test of {@link KafkaSinkBenchmark} with tiny settings: it produces figures for both sinks
 * and writes its JSON. It asserts that numbers exist, never how fast anything is.
 */
@RunWith(JUnit4.class)
public class KafkaSinkBenchmarkIT {
  @ClassRule public static final TemporaryFolder TEMP = new TemporaryFolder();

  /**
   * One window's accumulating early panes; the third is triggered by an out-of-order event (its
   * latest event by event time is still the second pane's), so its ingestion clock is not its
   * trigger's. Another window lost its pane 1, so its pane 2 cannot be judged.
   */
  @Test
  public void onlyPanesWhoseLatestEventIsTheirTriggerAreAttributable() throws Exception {
    List<KafkaSinkBenchmark.Pane> decisions =
        List.of(
            pane("w1", 0, 1, "00:00:10"),
            pane("w1", 1, 2, "00:00:20"),
            pane("w1", 2, 3, "00:00:20"),
            pane("w1", 3, 4, "00:00:30"),
            pane("w2", 2, 3, "00:00:40"),
            pane("w2", 0, 1, "00:00:35"));
    assertArrayEquals(
        new boolean[] {true, true, false, true, false, true},
        KafkaSinkBenchmark.triggeredByLatest(decisions));
    // A pane that added more than one event (or repeated a count) names no single trigger.
    assertArrayEquals(
        new boolean[] {true, false},
        KafkaSinkBenchmark.triggeredByLatest(
            List.of(pane("w3", 0, 1, "00:00:01"), pane("w3", 1, 3, "00:00:09"))));
  }

  @Test
  public void latencySettingsBecomeFlinkRunnerOptions() throws Exception {
    KafkaSinkBenchmark.Settings settings =
        KafkaSinkBenchmark.Settings.parse("--maxBundleTimeMills=20", "--bufferTimeout=5");
    Path work = TEMP.newFolder().toPath();
    TidemarkOptions options =
        KafkaSinkBenchmark.options(
            "localhost:9092", "settings", KafkaOptions.KafkaSinkMode.idempotent, settings, work);
    FlinkPipelineOptions flink = options.as(FlinkPipelineOptions.class);
    assertThat(flink.getMaxBundleTimeMills(), is(20L));
    Configuration conf = GlobalConfiguration.loadConfiguration(flink.getFlinkConfDir());
    assertThat(conf.get(ExecutionOptions.BUFFER_TIMEOUT), is(java.time.Duration.ofMillis(5)));
  }

  @Test
  public void aJobKeepsUpWhenItsLatencyIsLowAndDoesNotGrowOverTheSpan() {
    assertThat(run(100, 95, 40, 0, true).keptUp(), is(true));
    assertThat("a growing lag", run(100, 95, 40, 250, true).keptUp(), is(false));
    assertThat("a standing backlog", run(100, 95, 1500, 0, true).keptUp(), is(false));
    assertThat("decisions still arriving", run(100, 95, 40, 0, false).keptUp(), is(false));
    assertThat("the feed fell short of the rate", run(100, 70, 40, 0, true).keptUp(), is(false));
    assertThat(
        "still catching up when measured", run(100, 95, 40, 0, true, false).keptUp(), is(false));
  }

  @Test
  public void aJobHasCaughtUpWhenItsLagStopsFalling() {
    KafkaSinkBenchmark.CatchUp catchingUp = new KafkaSinkBenchmark.CatchUp();
    KafkaSinkBenchmark.CatchUp steady = new KafkaSinkBenchmark.CatchUp();
    KafkaSinkBenchmark.CatchUp boundByBundles = new KafkaSinkBenchmark.CatchUp();
    KafkaSinkBenchmark.CatchUp fallingBehind = new KafkaSinkBenchmark.CatchUp();
    for (long at = 0; at <= 8_000; at += 100) {
      catchingUp.add(at, 8_000 - at / 2);
      steady.add(at, 20 + (at / 100) % 3 * 20);
      boundByBundles.add(at, 900 + (at / 100) % 5 * 50);
      fallingBehind.add(at, 100 + at / 4);
    }
    assertThat("lag falling 0.5 s a second", catchingUp.settled(8_000), is(false));
    assertThat("20-60 ms", steady.settled(8_000), is(true));
    assertThat("0.9-1.1 s", boundByBundles.settled(8_000), is(true));
    assertThat("lag growing 0.25 s a second", fallingBehind.settled(8_000), is(false));
    KafkaSinkBenchmark.CatchUp young = new KafkaSinkBenchmark.CatchUp();
    young.add(0, 30);
    young.add(5_000, 30);
    assertThat("less than two holds of samples", young.settled(5_000), is(false));
    KafkaSinkBenchmark.CatchUp everyEvent = new KafkaSinkBenchmark.CatchUp();
    for (long at = 0; at <= 6_500; at++) {
      everyEvent.add(at, at < 3_000 ? 5_000 : 30);
    }
    assertThat("thinned to one sample per 100 ms", everyEvent.samples(), is(61));
  }

  @Test
  public void findsTheIngestionClockOfADecisionRecord() {
    byte[] decision =
        ("{\"decisionId\":\"7e68\",\"clocks\":{\"eventTime\":\"2026-01-01T00:00:00.000Z\","
                + "\"ingestionTime\":\"2026-11-29T12:52:19.981Z\","
                + "\"processingTime\":\"2026-11-29T12:52:20.001Z\"}}")
            .getBytes(java.nio.charset.StandardCharsets.UTF_8);
    assertThat(
        KafkaSinkBenchmark.ingestionClock(decision),
        is(java.time.Instant.parse("2026-11-29T12:52:19.981Z").toEpochMilli()));
    assertThat(
        KafkaSinkBenchmark.ingestionClock("{}".getBytes(java.nio.charset.StandardCharsets.UTF_8)),
        is(Long.MIN_VALUE));
  }

  private static KafkaSinkBenchmark.LatencyRun run(
      double rate, double achieved, long latencyMs, double lagGrowthMs, boolean drained) {
    return run(rate, achieved, latencyMs, lagGrowthMs, drained, true);
  }

  private static KafkaSinkBenchmark.LatencyRun run(
      double rate,
      double achieved,
      long latencyMs,
      double lagGrowthMs,
      boolean drained,
      boolean steady) {
    long[] latencies = new long[100];
    java.util.Arrays.fill(latencies, latencyMs);
    return new KafkaSinkBenchmark.LatencyRun(
        KafkaOptions.KafkaSinkMode.idempotent,
        rate,
        achieved,
        latencies,
        latencies,
        java.util.Map.of("EARLY", 100),
        new long[][] {latencies, latencies, latencies},
        0,
        lagGrowthMs,
        drained,
        5_000,
        steady);
  }

  private static KafkaSinkBenchmark.Pane pane(String id, int index, int count, String eventTime)
      throws Exception {
    return new KafkaSinkBenchmark.Pane(
        Json.MAPPER.readTree(
            String.format(
                "{\"decisionId\": \"%s\", \"pane\": {\"timing\": \"EARLY\", \"index\": %d},"
                    + " \"features\": {\"txnCount\": %d},"
                    + " \"clocks\": {\"eventTime\": \"2026-01-01T%s.000Z\"}}",
                id, index, count, eventTime)),
        0,
        0);
  }

  @Test
  public void producesThroughputAndLatencyFiguresForBothSinks() throws Exception {
    Path json = TEMP.getRoot().toPath().resolve("bench-results/kafka-sinks.json");
    KafkaSinkBenchmark.Report report =
        KafkaSinkBenchmark.run(
            KafkaSinkBenchmark.Settings.parse(
                "--events=50",
                "--accounts=20",
                "--repeats=1",
                "--rate=3",
                "--latencySeconds=3",
                "--warmupSeconds=1",
                "--checkpointingInterval=1000",
                "--output=" + json));

    for (KafkaOptions.KafkaSinkMode mode : KafkaOptions.KafkaSinkMode.values()) {
      assertThat(mode + " throughput", report.medianEventsPerSecond(mode), greaterThan(0.0));
    }
    assertThat(report.latencyRuns(), hasSize(2));
    for (KafkaSinkBenchmark.LatencyRun run : report.latencyRuns()) {
      assertThat(
          run.mode + " early decisions measured", run.recordLatencies.length, greaterThan(0));
      assertThat(
          KafkaSinkBenchmark.percentile(run.recordLatencies, 0.99),
          greaterThanOrEqualTo(KafkaSinkBenchmark.percentile(run.recordLatencies, 0.5)));
      assertThat(run.visibilityLatencies.length, is(run.recordLatencies.length));
    }
    assertThat(report.table().contains("transactional throughput cost"), is(true));

    JsonNode written = Json.MAPPER.readTree(Files.readAllBytes(json));
    assertThat(written.path("machine").path("cores").asInt(), greaterThan(0));
    assertThat(
        written.path("throughput").path("idempotent").path("eventsPerSecondMedian").asDouble(),
        greaterThan(0.0));
    assertThat(written.path("throughput").has("transactionalCost"), is(true));
    assertThat(written.path("latency").size(), is(2));
    for (JsonNode run : written.path("latency")) {
      for (String p : new String[] {"p50", "p95", "p99"}) {
        assertThat(run.path("recordLatencyMs").path(p).isNumber(), is(true));
        assertThat(run.path("visibleLatencyMs").path(p).isNumber(), is(true));
      }
    }
  }
}
