package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.sameInstance;
import static org.junit.Assert.assertThrows;

import dev.tidemark.model.ScoreFeatures;
import dev.tidemark.pipelines.io.Sinks;
import dev.tidemark.pipelines.launch.OptionChecks;
import dev.tidemark.pipelines.launch.SpecChecks;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecException;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.transforms.ParseCloudEvents;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.Event;
import dev.tidemark.transforms.values.RawRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.values.WindowingStrategy.AccumulationMode;
import org.joda.time.Instant;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * {@code --specUri}: the spec's values are the options' defaults, an option given explicitly
 * overrides the spec for the run, and a spec that cannot be used or a model whose features are not
 * the spec's is refused at start with the spec's path and each problem.
 */
@RunWith(JUnit4.class)
public class SpecOptionsTest {
  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  private static final Path HOME =
      Paths.get(System.getProperty("tidemark.home", "..")).toAbsolutePath().normalize();

  private static TidemarkOptions options(String... args) {
    return PipelineOptionsFactory.fromArgs(args).as(TidemarkOptions.class);
  }

  /** The bundled payments spec with {@code from} replaced by {@code to} (which must occur). */
  private Path paymentsWith(String name, String... fromTo) throws IOException {
    return TestSpecs.paymentsWith(folder.getRoot().toPath().resolve(name), fromTo);
  }

  @Test
  public void withoutASpecTheBundledPaymentsSpecGivesTheDefaults() {
    TidemarkOptions options = options();
    assertThat(options.getSpecUri(), is("payments"));
    assertThat(options.getEventTypes(), is("payments.transaction.v1"));
    assertThat(options.getMaxEventBytes(), is(65536));
    assertThat(options.getMaxFutureSkew(), is("PT10M"));
    assertThat(options.getMaxOutOfOrderness(), is("PT30S"));
    assertThat(options.getDedupHorizon(), is("PT24H"));
    assertThat(options.getWindowSize(), is("PT5M"));
    assertThat(options.getWindowPeriod(), is("PT30S"));
    assertThat(options.getEarlyFiringDelay(), is("PT10S"));
    assertThat(options.getLateFiringDelay(), is("PT0S"));
    assertThat(options.getAllowedLateness(), is("PT1H"));
    assertThat(options.getAccumulationMode(), is(TidemarkOptions.AccumulationKind.ACCUMULATING));
    assertThat(options.getModelUri(), is("default"));
    assertThat(options.getModelEngine(), is((String) null));
    assertThat(options.getDecisionThreshold(), is(0.5));
    assertThat(SpecChecks.check(options).name(), is("payments"));
  }

  @Test
  public void aSpecFileGivesTheDefaultsAndGivenOptionsOverrideThem() throws IOException {
    Path spec =
        paymentsWith(
            "slow.yaml",
            "types: [payments.transaction.v1]",
            "types: [payments.transaction.v1, payments.refund.v1]",
            "maxEventBytes: 65536",
            "maxEventBytes: 4096",
            "horizon: PT24H",
            "horizon: PT2H",
            "maxFutureSkew: PT10M",
            "maxFutureSkew: PT1M",
            "maxOutOfOrderness: PT30S",
            "maxOutOfOrderness: PT5S",
            "size: PT5M",
            "size: PT10M",
            "period: PT30S",
            "period: PT1M",
            "earlyFiring: PT10S",
            "earlyFiring: none",
            "lateFiring: PT0S",
            "lateFiring: PT5S",
            "allowedLateness: PT1H",
            "allowedLateness: PT2H",
            "accumulation: accumulating",
            "accumulation: discarding",
            "threshold: 0.5",
            "threshold: 0.75");
    TidemarkOptions fromSpec = options("--specUri=" + spec);
    assertThat(fromSpec.getEventTypes(), is("payments.transaction.v1,payments.refund.v1"));
    assertThat(fromSpec.getMaxEventBytes(), is(4096));
    assertThat(fromSpec.getDedupHorizon(), is("PT2H"));
    assertThat(fromSpec.getMaxFutureSkew(), is("PT1M"));
    assertThat(fromSpec.getMaxOutOfOrderness(), is("PT5S"));
    assertThat(fromSpec.getWindowSize(), is("PT10M"));
    assertThat(fromSpec.getWindowPeriod(), is("PT1M"));
    assertThat(fromSpec.getEarlyFiringDelay(), is("none"));
    assertThat(fromSpec.getLateFiringDelay(), is("PT5S"));
    assertThat(fromSpec.getAllowedLateness(), is("PT2H"));
    assertThat(fromSpec.getAccumulationMode(), is(TidemarkOptions.AccumulationKind.DISCARDING));
    assertThat(fromSpec.getDecisionThreshold(), is(0.75));

    TidemarkOptions overridden =
        options(
            "--specUri=" + spec.toUri(),
            "--windowSize=PT20M",
            "--decisionThreshold=0.25",
            "--accumulationMode=ACCUMULATING");
    assertThat(overridden.getWindowSize(), is("PT20M"));
    assertThat(overridden.getDecisionThreshold(), is(0.25));
    assertThat(overridden.getAccumulationMode(), is(TidemarkOptions.AccumulationKind.ACCUMULATING));
    // What was not given still comes from the spec (here read through its file: URI).
    assertThat(overridden.getWindowPeriod(), is("PT1M"));
    assertThat(overridden.getDedupHorizon(), is("PT2H"));
    // The windowing step takes the resolved values.
    assertThat(
        TidemarkPipeline.windowedFeatures(fromSpec).accumulationMode(),
        is(AccumulationMode.DISCARDING_FIRED_PANES));
    assertThat(
        TidemarkPipeline.windowedFeatures(overridden).accumulationMode(),
        is(AccumulationMode.ACCUMULATING_FIRED_PANES));
  }

  @Test
  public void aBundledSpecIsNamedByItsName() {
    TidemarkOptions logins = options("--specUri=logins");
    assertThat(RunSpecs.of(logins).name(), is("logins"));
    assertThat(
        logins.getEventTypes(), is(String.join(",", RunSpecs.load("logins").events().types())));
    assertThat(RunSpecs.location("logins"), is("specs/logins.yaml"));
    assertThat(RunSpecs.location(null), is("specs/payments.yaml"));
  }

  @Test
  public void theSpecIsReadOncePerRun() {
    TidemarkOptions options = options("--specUri=logins");
    PipelineSpec first = RunSpecs.of(options);
    options.getEventTypes();
    options.getMaxFutureSkew();
    assertThat(RunSpecs.of(options), sameInstance(first));
    assertThat(RunSpecs.of(options("--specUri=logins")), not(sameInstance(first)));
  }

  @Test
  public void aSpecNamesItsOutputsPerProfile() throws IOException {
    // The profile a run is started with picks the spec's names; an option still wins.
    List<String> flinkRun =
        new RunnerProfiles(HOME).arguments("flink", List.of("--specUri=logins"));
    assertThat(flinkRun.contains("--runnerProfile=flink"), is(true));
    TidemarkOptions flink = options(flinkRun.toArray(new String[0]));
    assertThat(flink.getKafkaDecisionsTopic(), is("logins.decisions"));
    assertThat(flink.getKafkaDeadLettersTopic(), is("logins.dead-letters"));
    assertThat(flink.getKafkaDuplicatesTopic(), is("logins.duplicates"));
    assertThat(flink.getKafkaTooLateTopic(), is("logins.too-late"));
    assertThat(
        options("--specUri=logins", "--runnerProfile=flink", "--kafkaDecisionsTopic=mine")
            .getKafkaDecisionsTopic(),
        is("mine"));
    // The local profile writes files: its Kafka topics are the defaults, as for payments.
    assertThat(options("--specUri=logins").getKafkaDecisionsTopic(), is("tidemark.decisions"));
    assertThat(options("--runnerProfile=flink").getKafkaDecisionsTopic(), is("tidemark.decisions"));

    String yaml =
        SpecLoader.bundledText("logins")
            .replace(
                "  local:         {sink: files}",
                "  local:\n    sink: files\n    names: {decisions: login-decisions}");
    Path file = folder.getRoot().toPath().resolve("named-logins.yaml");
    Files.writeString(file, yaml, StandardCharsets.UTF_8);
    // Files: each output's directory under --output; the names not given keep their defaults.
    assertThat(
        Sinks.fileNames(options("--specUri=" + file)),
        is(List.of("login-decisions", "dead-letters", "duplicates", "too-late")));
    assertThat(
        Sinks.fileNames(options("--specUri=" + file, "--runnerProfile=flink")), is(Outputs.NAMES));
  }

  @Test
  public void aSpecChoosesTheSinkOfEachProfileAndAnOptionOverridesIt() throws IOException {
    // The bundled profiles name no sink: each takes the spec's.
    for (String profile : new RunnerProfiles(HOME).names()) {
      assertThat(profile, new RunnerProfiles(HOME).load(profile).containsKey("sink"), is(false));
    }
    TidemarkOptions flink =
        options(new RunnerProfiles(HOME).arguments("flink", List.of()).toArray(new String[0]));
    assertThat(flink.getSink(), is(TidemarkOptions.SinkKind.kafka));
    assertThat(
        options("--runnerProfile=dataflow").getSink(), is(TidemarkOptions.SinkKind.bigquery));
    assertThat(options().getSink(), is(TidemarkOptions.SinkKind.files));
    // A profile the spec does not name writes files.
    assertThat(options("--runnerProfile=mine").getSink(), is(TidemarkOptions.SinkKind.files));

    Path spec =
        paymentsWith(
            "kafka-locally.yaml",
            "  local:         {sink: files}",
            "  local:         {sink: kafka}",
            "  dataflow:\n    sink: bigquery\n    names: {decisions: decisions, deadLetters:"
                + " dead_letters, duplicates: duplicates, tooLate: too_late}",
            "  dataflow:\n    sink: bigquery\n    names: {decisions: scored, deadLetters:"
                + " rejected, duplicates: repeated, tooLate: late, drift: alarms}");
    assertThat(options("--specUri=" + spec).getSink(), is(TidemarkOptions.SinkKind.kafka));
    assertThat(
        options("--specUri=" + spec, "--sink=files").getSink(), is(TidemarkOptions.SinkKind.files));
    TidemarkOptions dataflow = options("--specUri=" + spec, "--runnerProfile=dataflow");
    // The model loop's outputs: the one named, the others by default.
    assertThat(
        SpecDefaults.outputNames(dataflow, PipelineSpec.Sink.BIGQUERY),
        is(
            Map.of(
                "decisions", "scored",
                "deadLetters", "rejected",
                "duplicates", "repeated",
                "tooLate", "late",
                "evaluations", "evaluations",
                "unmatchedLabels", "unmatched_labels",
                "labelDuplicates", "label_duplicates",
                "labelDeadLetters", "label_dead_letters",
                "drift", "alarms")));
    // Another profile's tables keep the default names.
    assertThat(
        SpecDefaults.outputNames(options("--specUri=" + spec), PipelineSpec.Sink.BIGQUERY)
            .get("decisions"),
        is("decisions"));
  }

  @Test
  public void aPaymentsSpecWithFeaturesOfItsOwnIsTakenAndTheModelMustTakeThemToo()
      throws IOException {
    Path file =
        paymentsWith(
            "own-features.yaml",
            "  - {name: amountMax,         aggregate: max,      of: amount}",
            "  - {name: amountMean,        aggregate: mean,     of: amount}\n"
                + "  - {name: gbPayments,        aggregate: count,    where: {country: GB}}");
    PipelineSpec spec = SpecLoader.load(file);
    // The graph takes these features: they read payment fields only.
    SpecSupport.check(spec, file.toString());
    // The shipped model takes the payments spec's five, so the run is refused, naming both.
    SpecException e =
        assertThrows(SpecException.class, () -> SpecChecks.check(options("--specUri=" + file)));
    assertThat(e.getMessage(), containsString(file.toString()));
    assertThat(e.getMessage(), containsString("amountMean"));
    assertThat(e.getMessage(), containsString("amountMax"));
  }

  @Test
  public void aPaymentsSpecWithRulesAndFieldsOfItsOwnIsTakenAndTheRunChecksThem()
      throws IOException {
    Path spec =
        paymentsWith(
            "own.yaml",
            "maxLength: 128, reason: invalid_account_id}",
            "maxLength: 12, reason: invalid_account_id}\n"
                + "    channel:    {type: enum, values: [web, pos], reason: invalid_channel}");
    TidemarkOptions options = options("--specUri=" + spec);
    OptionChecks.check(options);
    ParseCloudEvents.Parser parser = TidemarkPipeline.parser(options).newParser();
    List<DeadLetter> deadLetters = new ArrayList<>();
    String[] data = {
      "\"accountId\":\"acct-1\",\"channel\":\"web\"",
      "\"accountId\":\"acct-2\",\"channel\":\"phone\"",
      "\"accountId\":\"acct-1234567890\",\"channel\":\"pos\""
    };
    List<String> accepted = new ArrayList<>();
    for (int i = 0; i < data.length; i++) {
      String line =
          "{\"specversion\":\"1.0\",\"id\":\"e"
              + i
              + "\",\"source\":\"/s\",\"type\":\"payments.transaction.v1\","
              + "\"time\":\"2026-01-01T00:00:00Z\",\"data\":{\"amount\":1,\"currency\":\"GBP\","
              + data[i]
              + "}}";
      Event event =
          parser.parse(
              RawRecord.of(
                  line.getBytes(StandardCharsets.UTF_8),
                  Instant.parse("2026-01-01T00:00:00Z"),
                  "line " + i),
              deadLetters::add);
      if (event != null) {
        accepted.add(event.key());
      }
    }
    assertThat(accepted, is(List.of("acct-1")));
    assertThat(
        deadLetters.stream().map(d -> d.reasonCode() + ": " + d.message()).toList(),
        is(
            List.of(
                "invalid_channel: data.channel \"phone\" is not one of [web, pos]",
                "invalid_account_id: data.accountId is 15 characters, over the limit of 12")));
  }

  @Test
  public void aDataFieldAsTheEventTimeIsReadByTheParserAndRefusedByPubsub() throws IOException {
    Path spec =
        paymentsWith(
            "paid-at.yaml",
            "country:    {type: country, optional: true, reason: invalid_country}",
            "country:    {type: country, optional: true, reason: invalid_country}\n"
                + "    paidAt:     {type: timestamp, reason: invalid_paid_at}",
            "eventTime: time",
            "eventTime: paidAt");
    TidemarkOptions options = options("--specUri=" + spec);
    OptionChecks.check(options);
    String line =
        "{\"specversion\":\"1.0\",\"id\":\"e1\",\"source\":\"/s\","
            + "\"type\":\"payments.transaction.v1\",\"data\":{\"accountId\":\"a\","
            + "\"amount\":1,\"currency\":\"GBP\",\"paidAt\":\"2026-01-01T00:00:30Z\"}}";
    List<DeadLetter> deadLetters = new ArrayList<>();
    Event event =
        TidemarkPipeline.parser(options)
            .newParser()
            .parse(
                RawRecord.of(
                    line.getBytes(StandardCharsets.UTF_8),
                    Instant.parse("2026-01-01T00:01:00Z"),
                    "line 1"),
                deadLetters::add);
    assertThat(
        deadLetters.toString(), event.eventTime(), is(Instant.parse("2026-01-01T00:00:30Z")));

    TidemarkOptions pubsub =
        options(
            "--specUri=" + spec,
            "--source=pubsub",
            "--pubsubSubscription=projects/p/subscriptions/s");
    IllegalArgumentException refused =
        assertThrows(IllegalArgumentException.class, () -> OptionChecks.check(pubsub));
    assertThat(
        refused.getMessage(),
        containsString(
            "--source=pubsub: the spec's clocks.eventTime is data.paidAt, but a Pub/Sub source"
                + " takes its timestamps from the message attribute"));
  }

  @Test
  public void aPaymentsSpecWithAnotherCurrencyIsTakenAndSetsTheCurrency() throws IOException {
    Path spec = paymentsWith("euro.yaml", "values: [GBP]", "values: [EUR]");
    TidemarkOptions options = options("--specUri=" + spec);
    OptionChecks.check(options);
    assertThat(options.getCurrency(), is("EUR"));
    assertThat(options("--specUri=" + spec, "--currency=USD").getCurrency(), is("USD"));
    assertThat(options().getCurrency(), is("GBP"));
    // Two currencies: the spec's enum accepts both, and there is no one currency to set.
    Path two = paymentsWith("two.yaml", "values: [GBP]", "values: [GBP, EUR]");
    OptionChecks.check(options("--specUri=" + two));
    assertThat(options("--specUri=" + two).getCurrency(), is((String) null));
  }

  @Test
  public void aMissingFieldIsRefusedWithThePathAndADidYouMean() throws IOException {
    Path spec = paymentsWith("typo.yaml", "of: amount}", "of: amout}");
    SpecException e =
        assertThrows(SpecException.class, () -> OptionChecks.check(options("--specUri=" + spec)));
    assertThat(e.location(), is(spec.toString()));
    assertThat(e.getMessage(), containsString("the spec " + spec + " cannot be used (2 problems)"));
    assertThat(
        e.getMessage(),
        containsString(
            "features[1].of: no field 'amout' in events.fields (did you mean 'amount'?)"));
    assertThat(
        e.getMessage(),
        containsString(
            "features[2].of: no field 'amout' in events.fields (did you mean 'amount'?)"));
    // The option defaults read the same spec, and refuse it the same way.
    assertThrows(SpecException.class, () -> options("--specUri=" + spec).getWindowSize());
  }

  @Test
  public void aSpecThatCannotBeReadIsRefusedWithItsPath() {
    String missing = folder.getRoot().toPath().resolve("nowhere.yaml").toString();
    SpecException e =
        assertThrows(SpecException.class, () -> SpecChecks.check(options("--specUri=" + missing)));
    assertThat(e.getMessage(), containsString("the spec " + missing + " cannot be used"));
    assertThat(e.getMessage(), containsString("cannot read the spec"));
  }

  @Test
  public void aModelWhoseFeaturesDifferIsRefusedListingTheDifference() throws IOException {
    // The shipped model takes the payments features; a spec that reorders them does not fit it.
    Path spec =
        paymentsWith(
            "reordered.yaml",
            "  - {name: amountSum,         aggregate: sum,      of: amount}\n"
                + "  - {name: amountMax,         aggregate: max,      of: amount}\n",
            "  - {name: amountMax,         aggregate: max,      of: amount}\n"
                + "  - {name: amountSum,         aggregate: sum,      of: amount}\n");
    SpecException e =
        assertThrows(SpecException.class, () -> OptionChecks.check(options("--specUri=" + spec)));
    assertThat(e.location(), is(spec.toString()));
    List<String> problems = e.problems().stream().map(Object::toString).toList();
    assertThat(
        problems.get(0),
        is("features[1]: the spec has 'amountMax' where the model default has 'amountSum'"));
    assertThat(
        problems.get(1),
        is("features[2]: the spec has 'amountSum' where the model default has 'amountMax'"));
    assertThat(problems.get(2), containsString("model.uri: the model's features"));

    // The logins spec with the payments model (its default until a logins model is given).
    SpecException logins =
        assertThrows(
            SpecException.class,
            () -> SpecChecks.check(options("--specUri=logins", "--modelUri=default")));
    assertThat(logins.location(), is("specs/logins.yaml"));
    assertThat(logins.getMessage(), containsString("features[0]: the spec has '"));
    // A shadow model is held to the same features.
    SpecException shadow =
        assertThrows(
            SpecException.class,
            () ->
                SpecChecks.check(
                    options(
                        "--specUri=" + spec,
                        "--modelUri=" + writeModelWithFeatures(spec),
                        "--shadowModelUri=default")));
    assertThat(shadow.getMessage(), containsString("where the model default has"));
  }

  /** A copy of the shipped model whose sidecar lists the features of {@code specFile}. */
  private String writeModelWithFeatures(Path specFile) throws IOException {
    PipelineSpec spec = RunSpecs.load(specFile.toString());
    Path dir = folder.newFolder("model").toPath();
    Path model = dir.resolve("m.ubj");
    try (var in = getClass().getResourceAsStream("/models/tidemark-fraud-xgb-v1.ubj")) {
      Files.copy(in, model);
    }
    String sidecar;
    try (var in = getClass().getResourceAsStream("/models/tidemark-fraud-xgb-v1.ubj.json")) {
      sidecar = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    String names =
        "["
            + String.join(", ", spec.featureNames().stream().map(n -> "\"" + n + "\"").toList())
            + "]";
    sidecar =
        sidecar.replaceFirst(
            "\"featureNames\"\\s*:\\s*\\[[^\\]]*\\]", "\"featureNames\": " + names);
    Files.writeString(dir.resolve("m.ubj.json"), sidecar);
    assertThat(ScoreFeatures.sidecarFeatureNames(model.toString()), is(spec.featureNames()));
    return model.toString();
  }
}
