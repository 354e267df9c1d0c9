package dev.tidemark.transforms;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.nullValue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Event;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.PaymentFeatures;
import dev.tidemark.transforms.values.RawRecord;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.runners.direct.DirectOptions;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.SerializableFunction;
import org.apache.beam.sdk.transforms.WithFailures;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The largest amounts the parser accepts, many of them in one account's window: parse, dedup,
 * features and decisions run to the end, and the decision carries the saturated sum and its flag.
 */
@RunWith(JUnit4.class)
public class ExtremeAmountsIT {
  @Rule public final transient TestPipeline p = TestPipeline.create();

  /**
   * The DirectRunner's immutability check walks the whole graph for every bundle, which here costs
   * more than the run; what this test proves is about values, and the unit tests keep the check.
   */
  @Before
  public void withoutTheImmutabilityCheck() {
    p.getOptions().as(DirectOptions.class).setEnforceImmutability(false);
  }

  private static final int EVENTS = 1000;

  /** The largest amount ParseCloudEvents accepts: 15 integer digits and 2 decimals. */
  private static final String MAX_AMOUNT = "999999999999999.99";

  /** Long.MAX_VALUE minor units, written by hand: 9223372036854775807 pence. */
  private static final BigDecimal SATURATED_SUM = new BigDecimal("92233720368547758.07");

  private static final Instant WINDOW_START = TestEvents.BASE;

  /** One event per 200 ms from the window start: the last at 00:03:19.800, inside five minutes. */
  private static List<RawRecord> maximumAmounts() {
    List<RawRecord> records = new ArrayList<>();
    for (int i = 0; i < EVENTS; i++) {
      Instant time = WINDOW_START.plus(Duration.millis(200L * i));
      String json =
          "{\"specversion\":\"1.0\",\"id\":\"max-"
              + i
              + "\",\"source\":\"/tidemark/test\",\"type\":\"payments.transaction.v1\",\"time\":\""
              + time
              + "\",\"data\":{\"accountId\":\"acct-alice\",\"amount\":"
              + MAX_AMOUNT
              + ",\"currency\":\"GBP\",\"merchantId\":\"m-"
              + (i % 3)
              + "\",\"country\":\"GB\"}}";
      records.add(RawRecord.of(json.getBytes(StandardCharsets.UTF_8), time, "test:line " + i));
    }
    return records;
  }

  /**
   * Checks each decision against hand-computed features: by window start, the events it holds and
   * the latest event time among them. Every window has more than 92 maximum amounts, so every sum
   * saturates.
   */
  private static final class ExpectSaturatedDecisions
      implements SerializableFunction<Iterable<Decision>, Void> {
    private final Map<Instant, KV<Long, Instant>> expected;

    ExpectSaturatedDecisions(Map<Instant, KV<Long, Instant>> expected) {
      this.expected = expected;
    }

    @Override
    public Void apply(Iterable<Decision> decisions) {
      Map<Instant, Decision> byStart = new HashMap<>();
      for (Decision decision : decisions) {
        assertThat(
            "one decision per window",
            byStart.put(decision.windowStart(), decision),
            is(nullValue()));
      }
      assertThat(byStart.keySet(), is(expected.keySet()));
      expected.forEach(
          (start, countAndLatest) -> {
            Decision decision = byStart.get(start);
            Features features = decision.features();
            assertThat(decision.toString(), decision.paneTiming(), is("ON_TIME"));
            assertThat(features.getLong(PaymentFeatures.TXN_COUNT), is(countAndLatest.getKey()));
            assertThat(
                features.decimal(PaymentFeatures.AMOUNT_MAX), is(new BigDecimal(MAX_AMOUNT)));
            assertThat(
                features.getLong(PaymentFeatures.AMOUNT_SUM), is(9_223_372_036_854_775_807L));
            assertThat(features.decimal(PaymentFeatures.AMOUNT_SUM), is(SATURATED_SUM));
            assertThat(features.isSaturated(PaymentFeatures.AMOUNT_SUM), is(true));
            assertThat(features.getLong(PaymentFeatures.DISTINCT_MERCHANTS), is(3L));
            assertThat(features.getLong(PaymentFeatures.DISTINCT_COUNTRIES), is(1L));
            assertThat(features.latestEventTime(), is(countAndLatest.getValue()));
            JsonNode json = readTree(decision.toJson()).get("features");
            assertThat(json.get("txnCount").asLong(), is(countAndLatest.getKey()));
            assertThat(json.get("amountMax").decimalValue(), is(new BigDecimal(MAX_AMOUNT)));
            assertThat(json.get("amountSum").decimalValue(), is(SATURATED_SUM));
            assertThat(json.get("amountSumSaturated").isBoolean(), is(true));
            assertThat(json.get("amountSumSaturated").booleanValue(), is(true));
          });
      return null;
    }
  }

  private static Instant at(String time) {
    return Instant.parse("2026-01-01T" + time + "Z");
  }

  private static JsonNode readTree(String json) {
    try {
      return Json.MAPPER.readTree(json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private PCollection<Decision> decisions(ComputeFeatures features) {
    WithFailures.Result<PCollection<Event>, DeadLetter> parsed =
        p.apply(Create.of(maximumAmounts()).withCoder(RawRecord.RawRecordCoder.of()))
            .apply(ParseCloudEvents.create());
    PAssert.that(parsed.failures()).empty();
    return parsed
        .output()
        .apply(DeduplicateEvents.create())
        .events()
        .apply(features)
        .features()
        .apply(AssembleDecisions.create());
  }

  @Test
  public void aThousandMaximumAmountsInOneFixedWindowSaturateTheSum() {
    PCollection<Decision> decisions =
        // No processing-time early firing: a slow machine would otherwise see an early pane first.
        decisions(
            ComputeFeatures.of(Duration.standardMinutes(5), Duration.standardMinutes(5))
                .withoutEarlyFirings());
    PAssert.that(decisions)
        .satisfies(
            new ExpectSaturatedDecisions(Map.of(WINDOW_START, KV.of(1000L, at("00:03:19.800")))));
    PipelineResult run = p.run();
    run.waitUntilFinish();
    assertThat(TestEvents.counter(run, TidemarkMetrics.VALID), is(1000L));
    assertThat(TestEvents.counter(run, TidemarkMetrics.WINDOWED), is(1000L));
  }

  @Test
  public void slidingWindowsBuiltFromSlicesSaturateTheSumToo() {
    // Five-minute windows every minute, built from one-minute slices of 300 events each (the
    // last, 00:03:00 to 00:03:19.8, of 100). The windows starting at 23:59 and 00:00 hold all
    // 1,000 events, merged from four slices; the others hold the slices they overlap.
    PCollection<Decision> decisions =
        decisions(ComputeFeatures.of(Duration.standardMinutes(5), Duration.standardMinutes(1)));
    Map<Instant, KV<Long, Instant>> expected = new HashMap<>();
    expected.put(Instant.parse("2025-12-31T23:56:00Z"), KV.of(300L, at("00:00:59.800")));
    expected.put(Instant.parse("2025-12-31T23:57:00Z"), KV.of(600L, at("00:01:59.800")));
    expected.put(Instant.parse("2025-12-31T23:58:00Z"), KV.of(900L, at("00:02:59.800")));
    expected.put(Instant.parse("2025-12-31T23:59:00Z"), KV.of(1000L, at("00:03:19.800")));
    expected.put(at("00:00:00"), KV.of(1000L, at("00:03:19.800")));
    expected.put(at("00:01:00"), KV.of(700L, at("00:03:19.800")));
    expected.put(at("00:02:00"), KV.of(400L, at("00:03:19.800")));
    expected.put(at("00:03:00"), KV.of(100L, at("00:03:19.800")));
    PAssert.that(decisions).satisfies(new ExpectSaturatedDecisions(expected));
    p.run().waitUntilFinish();
  }
}
