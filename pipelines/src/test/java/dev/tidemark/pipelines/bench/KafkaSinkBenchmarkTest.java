package dev.tidemark.pipelines.bench;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.transforms.Json;
import java.nio.file.Files;
import java.nio.file.Path;
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
public class KafkaSinkBenchmarkTest {
  @ClassRule public static final TemporaryFolder TEMP = new TemporaryFolder();

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
