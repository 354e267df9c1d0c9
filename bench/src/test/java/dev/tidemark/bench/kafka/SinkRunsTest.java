package dev.tidemark.bench.kafka;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertArrayEquals;

import dev.tidemark.pipelines.KafkaOptions.KafkaSinkMode;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.transforms.util.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
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
 * The pieces of the sink runs that need no broker: which panes are attributable, when a job has
 * caught up or kept up, the ingestion clock of a decision, and the job's options. The suite's smoke
 * test runs the jobs themselves ({@link KafkaSinkPart}).
 */
@RunWith(JUnit4.class)
public class SinkRunsTest {
  @ClassRule public static final TemporaryFolder TEMP = new TemporaryFolder();

  /**
   * One window's accumulating early panes; the third is triggered by an out-of-order event (its
   * latest event by event time is still the second pane's), so its ingestion clock is not its
   * trigger's. Another window lost its pane 1, so its pane 2 cannot be judged.
   */
  @Test
  public void onlyPanesWhoseLatestEventIsTheirTriggerAreAttributable() throws Exception {
    List<Pane> decisions =
        List.of(
            pane("w1", 0, 1, "00:00:10"),
            pane("w1", 1, 2, "00:00:20"),
            pane("w1", 2, 3, "00:00:20"),
            pane("w1", 3, 4, "00:00:30"),
            pane("w2", 2, 3, "00:00:40"),
            pane("w2", 0, 1, "00:00:35"));
    assertArrayEquals(
        new boolean[] {true, true, false, true, false, true}, Pane.triggeredByLatest(decisions));
    // A pane that added more than one event (or repeated a count) names no single trigger.
    assertArrayEquals(
        new boolean[] {true, false},
        Pane.triggeredByLatest(
            List.of(pane("w3", 0, 1, "00:00:01"), pane("w3", 1, 3, "00:00:09"))));
  }

  @Test
  public void latencySettingsBecomeFlinkRunnerOptions() throws Exception {
    SinkJobSettings settings = SinkJobSettings.of(StateBackend.HEAP).withLatencySettings(20, 5);
    Path work = TEMP.newFolder().toPath();
    TidemarkOptions options =
        SinkJob.options("localhost:9092", "settings", KafkaSinkMode.idempotent, settings, work);
    FlinkPipelineOptions flink = options.as(FlinkPipelineOptions.class);
    assertThat(flink.getMaxBundleTimeMills(), is(20L));
    assertThat(flink.getCheckpointingInterval(), is(SinkJobSettings.CHECKPOINT_INTERVAL_MS));
    Configuration conf = GlobalConfiguration.loadConfiguration(flink.getFlinkConfDir());
    assertThat(conf.get(ExecutionOptions.BUFFER_TIMEOUT), is(java.time.Duration.ofMillis(5)));
  }

  @Test
  @SuppressWarnings("deprecation") // the FlinkRunner's state backend factory option
  public void theStateBackendBecomesAFlinkRunnerOption() throws Exception {
    Path work = TEMP.newFolder().toPath();
    FlinkPipelineOptions heap =
        SinkJob.options(
                "localhost:9092",
                "heap",
                KafkaSinkMode.transactional,
                SinkJobSettings.of(StateBackend.HEAP),
                work)
            .as(FlinkPipelineOptions.class);
    FlinkPipelineOptions rocksDb =
        SinkJob.options(
                "localhost:9092",
                "rocksdb",
                KafkaSinkMode.transactional,
                SinkJobSettings.of(StateBackend.ROCKSDB).withCheckpointInterval(1000),
                work)
            .as(FlinkPipelineOptions.class);
    assertThat(heap.getStateBackend(), is("filesystem"));
    assertThat(
        rocksDb.getStateBackendFactory().getName(),
        is(dev.tidemark.bench.beam.IncrementalRocksDbFactory.class.getName()));
    assertThat(rocksDb.getCheckpointingInterval(), is(1000L));
    assertThat(heap.getMaxBundleTimeMills(), is(1000L));
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
    CatchUp catchingUp = new CatchUp();
    CatchUp steady = new CatchUp();
    CatchUp boundByBundles = new CatchUp();
    CatchUp fallingBehind = new CatchUp();
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
    CatchUp young = new CatchUp();
    young.add(0, 30);
    young.add(5_000, 30);
    assertThat("less than two holds of samples", young.settled(5_000), is(false));
    CatchUp everyEvent = new CatchUp();
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
            .getBytes(StandardCharsets.UTF_8);
    assertThat(
        DecisionWatcher.ingestionClock(decision),
        is(Instant.parse("2026-11-29T12:52:19.981Z").toEpochMilli()));
    assertThat(
        DecisionWatcher.ingestionClock("{}".getBytes(StandardCharsets.UTF_8)), is(Long.MIN_VALUE));
  }

  @Test
  public void latencyRunsAreFedAtSharesOfTheCapacity() {
    assertThat(LatencyRun.ratesAt(1000, LatencyRun.RATE_SHARES), is(List.of(500.0, 900.0)));
    assertThat(
        "at least one event a second", LatencyRun.ratesAt(1, List.of(0.5)), is(List.of(1.0)));
  }

  @Test
  public void generatedEventsAreKeyedByAccountWithoutDirectives() throws Exception {
    List<SinkEvents.Line> lines = SinkEvents.backlog(200, 10);
    assertThat(lines.size() >= 200, is(true));
    long keyed = lines.stream().filter(line -> line.key != null).count();
    assertThat("malformed lines have no key, the rest do", keyed >= 195, is(true));
    for (SinkEvents.Line line : lines) {
      String text = new String(line.value, StandardCharsets.UTF_8);
      assertThat(text, text.contains("advanceProcessingTime"), is(false));
      if (line.key != null) {
        assertThat(
            Json.MAPPER.readTree(line.value).path("data").path("accountId").asText(), is(line.key));
      }
    }
    assertThat(SinkEvents.maxEventTimeMillis(lines) > 0, is(true));
  }

  private static LatencyRun run(
      double rate, double achieved, long latencyMs, double lagGrowthMs, boolean drained) {
    return run(rate, achieved, latencyMs, lagGrowthMs, drained, true);
  }

  private static LatencyRun run(
      double rate,
      double achieved,
      long latencyMs,
      double lagGrowthMs,
      boolean drained,
      boolean steady) {
    long[] latencies = new long[100];
    Arrays.fill(latencies, latencyMs);
    return new LatencyRun(
        KafkaSinkMode.idempotent,
        rate,
        achieved,
        latencies,
        latencies,
        Map.of("EARLY", 100),
        new long[][] {latencies, latencies, latencies},
        0,
        lagGrowthMs,
        drained,
        5_000,
        steady);
  }

  private static Pane pane(String id, int index, int count, String eventTime) throws Exception {
    return new Pane(
        Json.MAPPER.readTree(
            String.format(
                "{\"decisionId\": \"%s\", \"pane\": {\"timing\": \"EARLY\", \"index\": %d},"
                    + " \"features\": {\"txnCount\": %d},"
                    + " \"clocks\": {\"eventTime\": \"2026-01-01T%s.000Z\"}}",
                id, index, count, eventTime)),
        0,
        0);
  }
}
