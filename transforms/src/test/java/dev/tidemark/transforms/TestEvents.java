package dev.tidemark.transforms;

import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.Event;
import dev.tidemark.transforms.values.PaymentFields;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.MetricQueryResults;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.MetricsFilter;
import org.joda.time.Duration;
import org.joda.time.Instant;

/** Named fixtures shared by the transform tests (and the value tests, in their own package). */
public final class TestEvents {
  /** 2026-01-01T00:00:00Z, the start of every test timeline. */
  public static final Instant BASE = Instant.parse("2026-01-01T00:00:00Z");

  public static final String SOURCE = "/tidemark/test";

  /** Test accounts. */
  public enum Account {
    ALICE("acct-alice"),
    BOB("acct-bob");

    public final String id;

    Account(String id) {
      this.id = id;
    }
  }

  private TestEvents() {}

  public static Instant at(Duration offset) {
    return BASE.plus(offset);
  }

  public static Instant minutes(double minutes) {
    return BASE.plus(Duration.millis((long) (minutes * 60_000)));
  }

  /** Reads the payment fields of events. */
  public static final PaymentFields PAYMENT = PaymentFields.bundled();

  /** A valid payment; the fingerprint derives from id and amount, like content would. */
  public static Event payment(
      Account account, String id, long cents, String merchant, String country, Instant time) {
    return PAYMENT.event(
        SOURCE,
        id,
        ParseCloudEvents.DEFAULT_TYPE,
        time,
        time,
        account.id,
        cents,
        "GBP",
        merchant,
        country,
        Arrays.copyOf((id + "/" + cents).getBytes(StandardCharsets.UTF_8), 16));
  }

  /** The sum of a runner's late-data drop counters: must stay zero in every Tidemark pipeline. */
  public static long runnerDropped(PipelineResult result) {
    MetricQueryResults metrics = result.metrics().queryMetrics(MetricsFilter.builder().build());
    long dropped = 0;
    for (MetricResult<Long> counter : metrics.getCounters()) {
      String name = counter.getName().getName();
      if (name.equalsIgnoreCase(TidemarkMetrics.RUNNER_DROPPED_DUE_TO_LATENESS)
          || name.equals(TidemarkMetrics.RUNNER_STATEFUL_PARDO_DROPPED)) {
        dropped += counter.getAttempted();
      }
    }
    return dropped;
  }

  /** A Tidemark counter's attempted value. */
  public static long counter(PipelineResult result, String name) {
    MetricQueryResults metrics =
        result
            .metrics()
            .queryMetrics(
                MetricsFilter.builder()
                    .addNameFilter(
                        org.apache.beam.sdk.metrics.MetricNameFilter.named(
                            TidemarkMetrics.NAMESPACE, name))
                    .build());
    long total = 0;
    for (MetricResult<Long> counter : metrics.getCounters()) {
      total += counter.getAttempted();
    }
    return total;
  }
}
