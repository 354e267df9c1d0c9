package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertEquals;

import dev.tidemark.spec.FieldValues;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.transforms.ComputeFeatures;
import dev.tidemark.transforms.ParseCloudEvents;
import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.PaymentFeatures;
import dev.tidemark.transforms.values.RawRecord;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.AtomicCoder;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderRegistry;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.transforms.Combine.CombineFn;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.apache.beam.sdk.values.WindowingStrategy.AccumulationMode;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * {@link ScoreCloudEvents#of} builds every step from a spec, the steps a run with that spec and no
 * other option builds, and applied in a user's pipeline it follows the spec's fields and windows.
 */
@RunWith(JUnit4.class)
public class ScoreCloudEventsFromSpecTest {
  @Rule public final transient TestPipeline pipeline = TestPipeline.create();
  @Rule public final transient TemporaryFolder folder = new TemporaryFolder();

  private static final Instant START = Instant.parse("2026-03-01T10:00:00Z");

  /** The bundled payments spec with a channel field, fixed windows, a horizon and a threshold. */
  private Path ownSpec() throws IOException {
    String yaml = SpecLoader.bundledText("payments");
    String[][] changes = {
      {
        "    country:    {type: country, optional: true, reason: invalid_country}",
        "    country:    {type: country, optional: true, reason: invalid_country}\n"
            + "    channel:    {type: enum, values: [web, pos], reason: invalid_channel}"
      },
      {"  horizon: PT24H", "  horizon: PT2H"},
      {"  period: PT30S", "  period: PT5M"},
      {"  earlyFiring: PT10S", "  earlyFiring: none"},
      {"  allowedLateness: PT1H", "  allowedLateness: PT20M"},
      {"  threshold: 0.5", "  threshold: 0.8"},
    };
    for (String[] change : changes) {
      assertThat(change[0], yaml.contains(change[0]), is(true));
      yaml = yaml.replace(change[0], change[1]);
    }
    Path file = folder.getRoot().toPath().resolve("own-payments.yaml");
    Files.writeString(file, yaml, StandardCharsets.UTF_8);
    return file;
  }

  @Test
  public void everyStepComesFromTheSpec() throws IOException {
    PipelineSpec spec = SpecLoader.load(ownSpec());
    ScoreCloudEvents graph = ScoreCloudEvents.of(spec);

    assertEquals(ParseCloudEvents.create().withEvents(spec.events()), graph.parsing());
    assertThat(graph.deduplication().horizon(), is(Duration.standardHours(2)));
    assertEquals(
        ComputeFeatures.of(Duration.standardMinutes(5), Duration.standardMinutes(5))
            .withoutEarlyFirings()
            .withLateFiringDelay(Duration.ZERO)
            .withAllowedLateness(Duration.standardMinutes(20))
            .withAccumulationMode(AccumulationMode.ACCUMULATING_FIRED_PANES)
            .withFeatures(spec),
        graph.features());
    assertThat(graph.scoring().featureNames(), is(spec.featureNames()));
    assertThat(graph.scoring().threshold(), is(0.8));
  }

  @Test
  public void aRunWithTheSpecAndNoOtherOptionBuildsTheSameSteps() throws IOException {
    Path file = ownSpec();
    TidemarkOptions options =
        PipelineOptionsFactory.fromArgs("--specUri=" + file).as(TidemarkOptions.class);
    ScoreCloudEvents run = TidemarkPipeline.transform(options);
    ScoreCloudEvents of = ScoreCloudEvents.of(SpecLoader.load(file));

    assertEquals(of.parsing(), run.parsing());
    assertThat(run.deduplication().horizon(), is(of.deduplication().horizon()));
    // The gate's shards are an option of the run (its parallelism), not of the spec.
    assertEquals(
        of.features().withGateShards(TidemarkPipeline.gateShardsOf(options)), run.features());
    assertThat(run.scoring().modelUri(), is(of.scoring().modelUri()));
    assertThat(run.scoring().threshold(), is(of.scoring().threshold()));
    assertThat(run.scoring().engine(), is(of.scoring().engine()));
  }

  @Test
  public void anotherDomainsSpecKeysItsEventsAndComputesItsFeatures() {
    PipelineSpec logins = SpecLoader.loadBundled("logins");
    // One user: three failures from two addresses and two countries, then a success; another
    // user's login; a login without a user.
    List<RawRecord> records =
        List.of(
            login("l-1", "user-a", "192.0.2.1", false, "GB", 0),
            login("l-2", "user-a", "192.0.2.1", false, "GB", 10),
            login("l-3", "user-a", "198.51.100.7", false, "FR", 20),
            login("l-4", "user-a", "192.0.2.1", true, null, 30),
            login("l-5", "user-b", "192.0.2.9", true, "GB", 40),
            login("l-6", null, "192.0.2.9", true, "GB", 50));
    Outputs outputs =
        pipeline
            .apply("Logins", Create.of(records).withCoder(RawRecord.RawRecordCoder.of()))
            .apply("ScoreCloudEvents", ScoreCloudEvents.of(logins));
    // The window [10:00, 10:10) holds every login; its on-time pane, as JSON.
    PAssert.that(
            outputs.decisions.apply(
                "OnTime",
                MapElements.into(TypeDescriptors.strings())
                    .via(
                        d ->
                            d.paneTiming().equals("ON_TIME") && d.windowStart().equals(START)
                                ? d.key() + " " + d.features().toJson() + " " + d.label()
                                : "")))
        .satisfies(
            panes -> {
              List<String> onTime = new ArrayList<>();
              panes.forEach(p -> onTime.addAll(p.isEmpty() ? List.of() : List.of(p)));
              onTime.sort(null);
              assertThat(
                  onTime.stream().map(p -> p.substring(0, p.lastIndexOf(' '))).toList(),
                  is(
                      List.of(
                          "user-a {\"attempts\":4,\"failures\":3,\"distinctIps\":2,"
                              + "\"distinctCountries\":2,\"distinctDevices\":0}",
                          "user-b {\"attempts\":1,\"failures\":0,\"distinctIps\":1,"
                              + "\"distinctCountries\":1,\"distinctDevices\":0}")));
              // The spec's labels, not the payments ones.
              for (String pane : onTime) {
                String label = pane.substring(pane.lastIndexOf(' ') + 1);
                assertThat(pane, label.equals("challenge") || label.equals("allow"), is(true));
              }
              return null;
            });
    PAssert.that(
            outputs.deadLetters.apply(
                "Reasons", MapElements.into(TypeDescriptors.strings()).via(DeadLetter::reasonCode)))
        .containsInAnyOrder("invalid_user_id");
    pipeline.run().waitUntilFinish();
  }

  private static RawRecord login(
      String id, String user, String ip, boolean success, String country, int seconds) {
    Instant time = START.plus(Duration.standardSeconds(seconds));
    String json =
        "{\"specversion\":\"1.0\",\"id\":\""
            + id
            + "\",\"source\":\"/auth\",\"type\":\"auth.login.v1\",\"time\":\""
            + time
            + "\",\"data\":{"
            + (user == null ? "" : "\"userId\":\"" + user + "\",")
            + "\"ip\":\""
            + ip
            + "\",\"success\":"
            + success
            + (country == null ? "" : ",\"country\":\"" + country + "\"")
            + "}}";
    return RawRecord.of(json.getBytes(StandardCharsets.UTF_8), time, "auth");
  }

  /** Payments of at least {@code cents}, from each event's amount field: a combine of a user's. */
  static final class PaymentsAtLeast extends CombineFn<FieldValues, long[], Long> {
    private final int amount;
    private final long cents;

    PaymentsAtLeast(PipelineSpec spec, long cents) {
      this.amount = spec.events().fields().indexOf(spec.field("amount").orElseThrow());
      this.cents = cents;
    }

    @Override
    public long[] createAccumulator() {
      return new long[1];
    }

    @Override
    public long[] addInput(long[] acc, FieldValues input) {
      acc[0] += input.isPresent(amount) && input.getLong(amount) >= cents ? 1 : 0;
      return acc;
    }

    @Override
    public long[] mergeAccumulators(Iterable<long[]> accumulators) {
      long[] merged = new long[1];
      accumulators.forEach(a -> merged[0] += a[0]);
      return merged;
    }

    @Override
    public Long extractOutput(long[] acc) {
      return acc[0];
    }

    @Override
    public Coder<long[]> getAccumulatorCoder(CoderRegistry registry, Coder<FieldValues> input) {
      return new AtomicCoder<long[]>() {
        @Override
        public void encode(long[] value, OutputStream out) throws IOException {
          VarLongCoder.of().encode(value[0], out);
        }

        @Override
        public long[] decode(InputStream in) throws IOException {
          return new long[] {VarLongCoder.of().decode(in)};
        }
      };
    }
  }

  @Test
  public void aUsersCombineComputesOneNamedFeatureAndTheSpecTheRest() throws IOException {
    PipelineSpec spec = SpecLoader.load(ownSpec());
    List<RawRecord> records = new ArrayList<>();
    long[] cents = {500, 1_250, 2_000, 9_999, 10_000, 30_000};
    for (int i = 0; i < cents.length; i++) {
      records.add(payment("e-" + i, cents[i], 30 * i));
    }
    Outputs outputs =
        pipeline
            .apply("Shop", Create.of(records).withCoder(RawRecord.RawRecordCoder.of()))
            .apply(
                "ScoreCloudEvents",
                ScoreCloudEvents.of(spec)
                    .withFeatureFn("distinctCountries", new PaymentsAtLeast(spec, 10_000)));
    // One 5-minute window: the spec's count, sum and maximum, and the user's count of payments of
    // at least 100.00 in the place of distinctCountries (the model input keeps its order).
    PAssert.that(
            outputs.decisions.apply(
                "Features",
                MapElements.into(TypeDescriptors.strings()).via(d -> d.features().toJson())))
        .containsInAnyOrder(
            "{\"txnCount\":6,\"amountSum\":537.49,\"amountMax\":300.00,"
                + "\"distinctMerchants\":0,\"distinctCountries\":2,\"amountSumSaturated\":false}");
    pipeline.run().waitUntilFinish();
  }

  @Test
  public void appliedInAUsersPipelineItChecksTheSpecsFields() throws IOException {
    List<RawRecord> records = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      records.add(event("e-" + i, "acct-a", i % 2 == 0 ? "web" : "pos", 30 * i));
    }
    records.add(event("e-6", "acct-a", "phone", 200));
    records.add(event("e-7", "acct-a", null, 210));
    Outputs outputs =
        pipeline
            .apply("Shop", Create.of(records).withCoder(RawRecord.RawRecordCoder.of()))
            .apply("ScoreCloudEvents", ScoreCloudEvents.of(SpecLoader.load(ownSpec())));
    PAssert.that(
            outputs.deadLetters.apply(
                "Reasons", MapElements.into(TypeDescriptors.strings()).via(DeadLetter::reasonCode)))
        .containsInAnyOrder("invalid_channel", "invalid_channel");
    // One 5-minute window, no early panes: one decision over the six valid payments.
    PAssert.that(
            outputs.decisions.apply(
                "Counts",
                MapElements.into(TypeDescriptors.strings())
                    .via(d -> d.key() + " " + d.features().getLong(PaymentFeatures.TXN_COUNT))))
        .containsInAnyOrder("acct-a 6");
    PipelineResult result = pipeline.run();
    result.waitUntilFinish();
    Map<String, Long> counters = new TreeMap<>();
    for (MetricResult<Long> counter :
        result.metrics().queryMetrics(outputs.counters()).getCounters()) {
      counters.merge(counter.getName().getName(), counter.getAttempted(), Long::sum);
    }
    assertThat(counters.get(TidemarkMetrics.READ), is(8L));
    assertThat(counters.get(TidemarkMetrics.VALID), is(6L));
    assertThat(counters.get(TidemarkMetrics.DEAD_LETTERS), is(2L));
  }

  @Test
  public void theEventTimeCanBeAFieldOfData() throws IOException {
    // Fixed 5-minute windows without early panes; the event time is data.paidAt.
    String yaml = Files.readString(ownSpec(), StandardCharsets.UTF_8);
    yaml =
        yaml.replace(
                "    channel:    {type: enum, values: [web, pos], reason: invalid_channel}",
                "    channel:    {type: enum, values: [web, pos], optional: true,"
                    + " reason: invalid_channel}\n"
                    + "    paidAt:     {type: timestamp, reason: invalid_paid_at}")
            .replace("eventTime: time", "eventTime: paidAt");
    PipelineSpec spec = SpecLoader.parse(yaml, "paid-at.yaml");
    // Every record's attribute time is an hour after its paidAt, and two paidAt times fall in the
    // next window: the windows and the decisions' event times follow paidAt.
    List<RawRecord> records = new ArrayList<>();
    int[] seconds = {0, 30, 60, 290, 300, 330};
    for (int i = 0; i < seconds.length; i++) {
      Instant paidAt = START.plus(Duration.standardSeconds(seconds[i]));
      String json =
          new String(
                  event("p-" + i, "acct-a", null, seconds[i] + 3600).payload(),
                  StandardCharsets.UTF_8)
              .replace(
                  "\"currency\":\"GBP\"", "\"currency\":\"GBP\",\"paidAt\":\"" + paidAt + "\"");
      records.add(RawRecord.of(json.getBytes(StandardCharsets.UTF_8), paidAt, "shop"));
    }
    Outputs outputs =
        pipeline
            .apply("Shop", Create.of(records).withCoder(RawRecord.RawRecordCoder.of()))
            .apply("ScoreCloudEvents", ScoreCloudEvents.of(spec));
    PAssert.that(
            outputs.decisions.apply(
                "Windows",
                MapElements.into(TypeDescriptors.strings())
                    .via(
                        d ->
                            d.windowStart()
                                + " "
                                + d.features().getLong(PaymentFeatures.TXN_COUNT)
                                + " "
                                + d.eventTime())))
        .containsInAnyOrder(
            START + " 4 " + START.plus(Duration.standardSeconds(290)),
            START.plus(Duration.standardMinutes(5))
                + " 2 "
                + START.plus(Duration.standardSeconds(330)));
    PAssert.that(outputs.deadLetters).empty();
    pipeline.run().waitUntilFinish();
  }

  private static RawRecord payment(String id, long cents, int seconds) {
    return event(id, "acct-a", java.math.BigDecimal.valueOf(cents, 2).toString(), "web", seconds);
  }

  private static RawRecord event(String id, String account, String channel, int seconds) {
    return event(id, account, "12.5", channel, seconds);
  }

  private static RawRecord event(
      String id, String account, String amount, String channel, int seconds) {
    Instant time = START.plus(Duration.standardSeconds(seconds));
    String json =
        "{\"specversion\":\"1.0\",\"id\":\""
            + id
            + "\",\"source\":\"/shop\",\"type\":\"payments.transaction.v1\",\"time\":\""
            + time
            + "\",\"data\":{\"accountId\":\""
            + account
            + "\",\"amount\":"
            + amount
            + ",\"currency\":\"GBP\""
            + (channel == null ? "" : ",\"channel\":\"" + channel + "\"")
            + "}}";
    return RawRecord.of(json.getBytes(StandardCharsets.UTF_8), time, "shop");
  }
}
