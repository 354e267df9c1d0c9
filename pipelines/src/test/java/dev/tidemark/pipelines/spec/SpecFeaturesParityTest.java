package dev.tidemark.pipelines.spec;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

import dev.tidemark.spec.FeatureValues;
import dev.tidemark.spec.FieldParser;
import dev.tidemark.spec.FieldValues;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecFeaturesFn;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.transforms.AggregateFeaturesFn;
import dev.tidemark.transforms.ParseCloudEvents;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.PaymentEvent;
import dev.tidemark.transforms.values.RawRecord;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.joda.time.Instant;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * {@link SpecFeaturesFn} with {@code specs/payments.yaml} gives the five values, the clocks and the
 * saturation flag that {@link AggregateFeaturesFn} gives today, on generated events grouped by
 * account and five-minute window, combined in random slices and orders, and at the sum's overflow.
 */
@RunWith(JUnit4.class)
public class SpecFeaturesParityTest {
  private static final Instant INGESTION = Instant.parse("2030-01-01T00:00:00Z");

  /** One event as both combines read it. */
  private record Pair(PaymentEvent event, FieldValues values) {}

  @Test
  public void givesTodaysFeaturesOnGeneratedEvents() throws Exception {
    PipelineSpec spec = PaymentsSpecTest.payments();
    FieldParser fields = FieldParser.of(spec);
    ParseCloudEvents.Parser parser = ParseCloudEvents.create().newParser();
    GeneratorConfig config =
        GeneratorConfig.builder().seed(11).numAccounts(30).numEvents(3_000).build();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    new EventGenerator(config).writeTo(out);
    Map<String, List<Pair>> panes = new TreeMap<>();
    for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
      byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
      PaymentEvent event = parser.parse(RawRecord.of(bytes, INGESTION, "generated"), d -> {});
      if (event == null) {
        continue;
      }
      FieldValues values =
          fields.parse(
              Json.STRICT_READER.readTree(bytes).get("data"),
              event.eventTime().getMillis(),
              event.ingestionTime().getMillis());
      String pane = event.accountId() + "@" + event.eventTime().getMillis() / 300_000;
      panes.computeIfAbsent(pane, k -> new ArrayList<>()).add(new Pair(event, values));
    }
    assertThat(panes.size(), greaterThan(500));
    Random random = new Random(5);
    for (Map.Entry<String, List<Pair>> pane : panes.entrySet()) {
      assertSame(pane.getKey(), pane.getValue(), spec, random);
    }
  }

  @Test
  public void saturatesAsTodayAtTheSumsOverflow() throws Exception {
    PipelineSpec spec = PaymentsSpecTest.payments();
    FieldParser fields = FieldParser.of(spec);
    List<Pair> events = new ArrayList<>();
    for (int i = 0; i < 93; i++) {
      String data =
          "{\"accountId\":\"a\",\"amount\":999999999999999.99,\"currency\":\"GBP\","
              + "\"merchantId\":\"m"
              + (i % 7)
              + "\",\"country\":\"GB\"}";
      FieldValues values = fields.parse(Json.STRICT_READER.readTree(data), 1_000 + i, 2_000);
      PaymentEvent event =
          new PaymentEvent(
              "/s",
              "id" + i,
              "payments.transaction.v1",
              new Instant(1_000 + i),
              new Instant(2_000),
              "a",
              99_999_999_999_999_999L,
              "GBP",
              "m" + (i % 7),
              "GB",
              new byte[16]);
      events.add(new Pair(event, values));
    }
    Random random = new Random(9);
    assertSame("92 events", events.subList(0, 92), spec, random);
    assertSame("93 events", events, spec, random);
    Features today = today(events, random);
    assertThat(today.amountSumSaturated(), is(true));
  }

  private static Features today(List<Pair> events, Random random) {
    AggregateFeaturesFn fn = new AggregateFeaturesFn();
    List<AggregateFeaturesFn.Accumulator> parts = new ArrayList<>();
    List<Pair> shuffled = new ArrayList<>(events);
    Collections.shuffle(shuffled, random);
    for (int at = 0; at < shuffled.size(); ) {
      int end = Math.min(shuffled.size(), at + 1 + random.nextInt(5));
      AggregateFeaturesFn.Accumulator acc = fn.createAccumulator();
      for (Pair pair : shuffled.subList(at, end)) {
        fn.addEvent(acc, pair.event());
      }
      parts.add(acc);
      at = end;
    }
    return fn.extractOutput(fn.mergeAccumulators(parts));
  }

  private static FeatureValues generic(SpecFeaturesFn fn, List<Pair> events, Random random) {
    List<SpecFeaturesFn.Accumulator> parts = new ArrayList<>();
    List<Pair> shuffled = new ArrayList<>(events);
    Collections.shuffle(shuffled, random);
    for (int at = 0; at < shuffled.size(); ) {
      int end = Math.min(shuffled.size(), at + 1 + random.nextInt(5));
      SpecFeaturesFn.Accumulator acc = fn.createAccumulator();
      for (Pair pair : shuffled.subList(at, end)) {
        fn.addInput(acc, pair.values());
      }
      parts.add(acc);
      at = end;
    }
    return fn.extractOutput(fn.mergeAccumulators(parts));
  }

  private static void assertSame(String pane, List<Pair> events, PipelineSpec spec, Random random) {
    SpecFeaturesFn fn = SpecFeaturesFn.of(spec);
    Features today = today(events, random);
    FeatureValues generic = generic(fn, events, random);
    String at = pane + ": " + today + " vs " + generic;
    assertThat(at, generic.getLong(0), is(today.txnCount()));
    assertThat(at, generic.getLong(1), is(today.amountSumCents()));
    assertThat(at, generic.isSaturated(1), is(today.amountSumSaturated()));
    assertThat(at, generic.getLong(2), is(today.amountMaxCents()));
    assertThat(at, generic.getLong(3), is(today.distinctMerchants()));
    assertThat(at, generic.getLong(4), is(today.distinctCountries()));
    assertThat(at, generic.isSaturated(3) || generic.isSaturated(4), is(false));
    assertThat(at, generic.latestEventMillis(), is(today.latestEventTime().getMillis()));
    assertThat(at, generic.latestIngestionMillis(), is(today.latestIngestionTime().getMillis()));
    assertThat(at, fn.toVector(generic), is(today.toVector()));
  }
}
