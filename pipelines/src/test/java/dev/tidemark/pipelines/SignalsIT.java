package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.closeTo;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.nio.file.Path;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** The operating signals in summary.json, from a replay whose lags are known. */
@RunWith(JUnit4.class)
public class SignalsIT {
  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  private static final Instant BASE = Instant.parse("2026-01-01T00:00:00Z");

  /**
   * Three events whose ingestion clock (the replay clock, moved only by the directives) trails
   * their event time by 0 s, 20 s and 90 s; one of them a copy of another.
   */
  @Test
  public void summaryJsonCarriesStateSizeLagWatermarkCorrectionAndReplaySignals()
      throws IOException {
    Path replay =
        new TestReplays()
            .event("a", "acct-1", "10.00", "m-1", BASE)
            .advanceProcessingTime(Duration.standardSeconds(30))
            .event("b", "acct-1", "11.00", "m-2", BASE.plus(Duration.standardSeconds(10)))
            .advanceProcessingTime(Duration.standardSeconds(60))
            .event("a", "acct-1", "10.00", "m-1", BASE)
            .advanceWatermarkToInfinity()
            .writeTo(folder.getRoot().toPath().resolve("lags.ndjson"));
    Path output = folder.newFolder("out").toPath();

    Summary summary = Launch.run(TestReplays.options(replay, output));

    assertThat(summary.identityViolations().toString(), summary.identityHolds(), is(true));
    JsonNode signals = Json.MAPPER.readTree(output.resolve("summary.json").toFile()).get("signals");
    // Every identity stored was expired at the end of the stream, every window too.
    assertThat(signals.toString(), signals.get("liveIdentities").asLong(), is(0L));
    assertThat(signals.get("openWindows").asLong(), is(0L));
    JsonNode ingestion = signals.get("lagMillis").get("ingestionMinusEvent");
    assertThat(ingestion.get("count").asLong(), is(3L));
    assertThat(ingestion.get("min").asLong(), is(0L));
    assertThat(ingestion.get("max").asLong(), is(90_000L));
    assertThat(ingestion.get("mean").asDouble(), closeTo(110_000 / 3.0, 0.001));
    JsonNode decision = signals.get("lagMillis").get("decisionMinusIngestion");
    assertThat(decision.get("count").asLong(), is(summary.decisions()));
    // Decided now, from a capture ingested on 2026-01-01.
    assertThat(decision.get("min").asLong(), greaterThan(0L));
    assertThat(signals.get("watermarkLagMillis").get("gate").isNumber(), is(true));
    assertThat(signals.get("watermarkLagMillis").get("windows").isNumber(), is(true));
    JsonNode rate = signals.get("correctionsPerDecision");
    assertThat(
        rate.get("refined").asDouble() + rate.get("reversed").asDouble(),
        closeTo((double) (summary.refined + summary.reversed) / summary.decisions(), 1e-9));
    assertThat(
        signals.get("perMinuteOfProcessing").get("duplicates").asDouble(),
        closeTo(summary.duplicates() * 60_000.0 / summary.wallTime.getMillis(), 1e-6));
    assertThat(summary.duplicates(), is(1L));
  }
}
