package dev.tidemark.spec;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.Assert.assertThrows;

import dev.tidemark.spec.PipelineSpec.Accumulation;
import dev.tidemark.spec.PipelineSpec.Aggregation;
import dev.tidemark.spec.PipelineSpec.FieldType;
import dev.tidemark.spec.PipelineSpec.Sink;
import dev.tidemark.spec.PipelineSpec.ValueType;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.math.BigDecimal;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** The loader reads the bundled specs and refuses broken ones with every problem and its path. */
@RunWith(JUnit4.class)
public class SpecLoaderTest {

  @Test
  public void readsThePaymentsSpec() {
    PipelineSpec spec = BundledSpecs.load("payments");
    assertThat(spec.name(), is("payments"));
    assertThat(spec.events().types(), contains("payments.transaction.v1"));
    assertThat(spec.events().key(), is("accountId"));
    PipelineSpec.Field amount = spec.field("amount").orElseThrow();
    assertThat(amount.type(), is(FieldType.DECIMAL));
    assertThat(amount.scale(), is(2));
    assertThat(amount.integerDigits(), is(15));
    assertThat(amount.min(), is(BigDecimal.ZERO));
    assertThat(spec.field("merchantId").orElseThrow().optional(), is(true));
    assertThat(spec.field("merchantId").orElseThrow().reason(), is("invalid_merchant_id"));
    assertThat(spec.windows().size(), is(Duration.ofMinutes(5)));
    assertThat(spec.windows().accumulation(), is(Accumulation.ACCUMULATING));
    assertThat(
        spec.featureNames(),
        contains("txnCount", "amountSum", "amountMax", "distinctMerchants", "distinctCountries"));
    PipelineSpec.Feature sum = spec.feature("amountSum").orElseThrow();
    assertThat(sum.aggregation(), is(Aggregation.SUM));
    assertThat(sum.valueType(), is(ValueType.DECIMAL));
    assertThat(sum.scale(), is(2));
    assertThat(spec.model().positiveLabel(), is("review"));
    assertThat(spec.outputs().get("dataflow").sink(), is(Sink.BIGQUERY));
    assertThat(spec.outputs().get("local").names().get("deadLetters"), is("dead-letters"));
  }

  @Test
  public void readsTheLoginsSpec() {
    PipelineSpec spec = BundledSpecs.load("logins");
    assertThat(spec.events().key(), is("userId"));
    assertThat(
        spec.featureNames(),
        contains("attempts", "failures", "distinctIps", "distinctCountries", "distinctDevices"));
    PipelineSpec.Feature failures = spec.feature("failures").orElseThrow();
    assertThat(failures.where(), contains(new PipelineSpec.Condition("success", "false")));
    assertThat(spec.feature("distinctIps").orElseThrow().maxDistinct(), is(1000));
    assertThat(
        spec.feature("distinctCountries").orElseThrow().maxDistinct(),
        is(PipelineSpec.Feature.DEFAULT_MAX_DISTINCT));
    assertThat(spec.field("ip").orElseThrow().reason(), is("invalid_ip"));
    assertThat(spec.field("userId").orElseThrow().reason(), is("invalid_user_id"));
  }

  @Test
  public void aSpecSurvivesJavaSerialization() throws Exception {
    PipelineSpec spec = BundledSpecs.load("logins");
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(spec);
    }
    try (ObjectInputStream in =
        new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      assertThat(in.readObject(), is(spec));
    }
  }

  @Test
  public void aMisspelledFieldIsNamedWithItsPathAndTheNearestField() {
    assertThat(
        problems(
            "payments",
            "{name: distinctCountries, aggregate: distinct, of: country}",
            "{name: distinctCountries, aggregate: sum, of: amout}"),
        contains("features[4].of: no field 'amout' in events.fields (did you mean 'amount'?)"));
  }

  @Test
  public void anUnknownKeyIsNamedWithTheKnownOnes() {
    List<String> problems = problems("payments", "  horizon: PT24H", "  horizn: PT24H");
    assertThat(problems.size(), is(1));
    assertThat(
        problems.get(0),
        containsString("identity.horizn: unknown key 'horizn' (did you mean 'horizon'?)"));
  }

  @Test
  public void aKeyForAnotherTypeIsUnknown() {
    assertThat(
        problems("payments", "{type: string, maxLength: 128,", "{type: string, scale: 2,").get(0),
        containsString("events.fields.accountId.scale: unknown key 'scale'"));
  }

  @Test
  public void aWrongTypeIsNamed() {
    assertThat(
        problems("payments", "threshold: 0.5", "threshold: high"),
        contains("model.threshold: must be a number from 0 to 1, got 'high'"));
    assertThat(
        problems("payments", "maxEventBytes: 65536", "maxEventBytes: [1]"),
        contains("events.maxEventBytes: must be a whole number, got a list"));
  }

  @Test
  public void anAggregationThatDoesNotFitItsFieldIsRefused() {
    assertThat(
        problems("payments", "aggregate: max,      of: amount", "aggregate: max, of: country"),
        contains(
            "features[2].of: max does not fit the country field 'country'; it needs a decimal,"
                + " integer or timestamp field"));
    assertThat(
        problems(
                "logins",
                "{name: failures,          aggregate: count,",
                "{name: failures, aggregate: mean, of: success,")
            .get(0),
        containsString("features[1].of: mean does not fit the boolean field 'success'"));
  }

  @Test
  public void aPeriodThatDoesNotDivideTheSizeIsRefused() {
    assertThat(
        problems("payments", "period: PT30S", "period: PT7S"),
        contains(
            "windows.period: PT7S does not divide the window size PT5M; choose a period that"
                + " does (size = period x a whole number)"));
    assertThat(
        problems("payments", "period: PT30S", "period: PT10M").get(0),
        containsString("windows.period: PT10M is longer than the window size PT5M"));
  }

  @Test
  public void negativeAndZeroDurationsAreRefused() {
    assertThat(
        problems("payments", "allowedLateness: PT1H", "allowedLateness: -PT1H"),
        contains("windows.allowedLateness: -PT1H is negative; it must be zero or longer"));
    assertThat(
        problems("payments", "size: PT5M", "size: PT0S"),
        hasItem("windows.size: must be longer than zero"));
    assertThat(
        problems("payments", "horizon: PT24H", "horizon: 24 hours"),
        contains("identity.horizon: '24 hours' is not an ISO-8601 duration such as PT5M"));
  }

  @Test
  public void aKeyThatIsNotAFieldIsRefused() {
    assertThat(
        problems("payments", "key: accountId", "key: acountId"),
        contains("events.key: no field 'acountId' in events.fields (did you mean 'accountId'?)"));
    assertThat(
        problems("payments", "key: accountId", "key: amount"),
        contains(
            "events.key: the key field 'amount' is decimal; a key is a string, enum or country"
                + " field"));
  }

  @Test
  public void aFilterOnAMissingFieldOrWithTheWrongValueIsRefused() {
    assertThat(
        problems("logins", "where: {success: false}", "where: {sucess: false}"),
        contains(
            "features[1].where.sucess: no field 'sucess' in events.fields (did you mean"
                + " 'success'?)"));
    assertThat(
        problems("logins", "where: {success: false}", "where: {success: 'no'}"),
        contains("features[1].where.success: the boolean field 'success' is compared with 'no'"));
  }

  @Test
  public void theFormatVersionIsChecked() {
    assertThat(
        problems("payments", "spec: 1", "spec: 2"),
        contains("spec: format 2 is not one this build reads; it reads format 1"));
  }

  @Test
  public void everyProblemIsListedAtOnce() {
    String yaml =
        BundledSpecs.text("payments")
            .replace("period: PT30S", "period: PT7S")
            .replace("key: accountId", "key: nobody")
            .replace("threshold: 0.5", "threshold: 2")
            .replace("of: merchantId}", "of: merchant}");
    SpecException e = assertThrows(SpecException.class, () -> SpecLoader.parse(yaml, "x.yaml"));
    assertThat(e.location(), is("x.yaml"));
    assertThat(e.problems().size(), is(4));
    assertThat(e.getMessage(), containsString("the spec x.yaml cannot be used (4 problems):"));
    assertThat(e.getMessage(), containsString("\n  features[3].of: no field 'merchant'"));
  }

  @Test
  public void brokenYamlAndDuplicateKeysAreProblemsToo() {
    SpecException broken =
        assertThrows(SpecException.class, () -> SpecLoader.parse("spec: [1", "a.yaml"));
    assertThat(broken.problems().get(0).message(), containsString("not valid YAML"));
    SpecException twice =
        assertThrows(
            SpecException.class, () -> SpecLoader.parse("spec: 1\nname: a\nname: b\n", "b.yaml"));
    assertThat(twice.problems().get(0).message(), containsString("Duplicate field 'name'"));
    SpecException empty = assertThrows(SpecException.class, () -> SpecLoader.parse("", "c.yaml"));
    assertThat(empty.problems().get(0).message(), containsString("the spec is empty"));
    SpecException missing =
        assertThrows(SpecException.class, () -> SpecLoader.load(Paths.get("no/such.yaml")));
    assertThat(missing.location(), is("no/such.yaml"));
  }

  @Test
  public void aFieldMayNotTakeAReasonThePipelineGives() {
    assertThat(
        problems("payments", "reason: invalid_amount}", "reason: invalid_json}"),
        contains(
            "events.fields.amount.reason: 'invalid_json' is a reason the pipeline gives itself;"
                + " choose another code"));
  }

  @Test
  public void defaultsFillWhatASpecLeavesOut() {
    PipelineSpec spec =
        SpecLoader.parse(
            String.join(
                "\n",
                "spec: 1",
                "name: tiny",
                "events: {types: [t.v1], key: k, fields: {k: {type: string}}}",
                "features: [{name: n, aggregate: count}]",
                "model: {uri: m.ubj}"),
            "tiny.yaml");
    assertThat(spec.identity().horizon(), is(Duration.ofHours(24)));
    assertThat(spec.clocks().eventTime(), is("time"));
    assertThat(spec.windows().earlyFiring(), is(Duration.ofSeconds(10)));
    assertThat(spec.model().threshold(), is(0.5));
    assertThat(spec.outputs().get("flink").sink(), is(Sink.KAFKA));
    assertThat(spec.events().maxEventBytes(), is(65536));
    assertThat(spec.field("k").orElseThrow().maxLength(), is(nullValue()));
  }

  @Test
  public void aModelWithOtherFeaturesIsRefusedWithTheDifferences() {
    PipelineSpec spec = BundledSpecs.load("payments");
    spec.checkModelFeatures("p.yaml", "m.ubj", spec.featureNames());
    SpecException e =
        assertThrows(
            SpecException.class,
            () ->
                spec.checkModelFeatures(
                    "p.yaml",
                    "m.ubj",
                    List.of("txnCount", "amountMax", "amountSum", "distinctMerchants")));
    assertThat(e.location(), is("p.yaml"));
    assertThat(
        e.problems().stream().map(SpecException.Problem::toString).toList(),
        contains(
            "features[1]: the spec has 'amountSum' where the model m.ubj has 'amountMax'",
            "features[2]: the spec has 'amountMax' where the model m.ubj has 'amountSum'",
            "features[4]: the spec has 'distinctCountries' where the model m.ubj has nothing",
            "model.uri: the model's features [txnCount, amountMax, amountSum, distinctMerchants]"
                + " are not the spec's [txnCount, amountSum, amountMax, distinctMerchants,"
                + " distinctCountries]; train a model for this spec or name its features in the"
                + " spec's order"));
  }

  @Test
  public void theLabelsSectionNamesThePositiveValuesTheHorizonAndTheEvaluationWindows() {
    PipelineSpec.Labels payments = BundledSpecs.load("payments").labels();
    assertThat(payments.positive(), contains("fraud"));
    assertThat(payments.horizon(), is(Duration.ofDays(7)));
    assertThat(payments.evaluationWindow(), is(Duration.ofDays(1)));
    assertThat(payments.evaluationPeriod(), is(Duration.ofHours(1)));
    assertThat(payments.evaluationLateness(), is(Duration.ZERO));
    assertThat(BundledSpecs.load("logins").labels().positive(), contains("takeover"));
    // Without the section, the defaults.
    String text = BundledSpecs.text("payments");
    String without =
        text.substring(0, text.indexOf("labels:\n  positive"))
            + text.substring(text.indexOf("outputs:"));
    PipelineSpec.Labels defaults = SpecLoader.parse(without, "p.yaml").labels();
    assertThat(defaults.positive(), is(PipelineSpec.Labels.DEFAULT_POSITIVE));
    assertThat(defaults.horizon(), is(Duration.ofDays(7)));
    assertThat(defaults.drift(), is(PipelineSpec.Drift.DEFAULT));
  }

  @Test
  public void theDriftSectionSetsTheCusumAllowancesAndLevels() {
    assertThat(BundledSpecs.load("payments").labels().drift(), is(PipelineSpec.Drift.DEFAULT));
    assertThat(BundledSpecs.load("logins").labels().drift(), is(PipelineSpec.Drift.DEFAULT));
    String text = BundledSpecs.text("payments");
    String changed =
        text.replace(
            "drift: {scoreDelta: 0.02, scoreThreshold: 50,",
            "drift: {scoreDelta: 0.1, scoreThreshold: 12.5,");
    PipelineSpec.Drift drift = SpecLoader.parse(changed, "p.yaml").labels().drift();
    assertThat(drift, is(new PipelineSpec.Drift(0.1, 12.5, 0.02, 30, 1000)));
  }

  @Test
  public void aDriftSectionThatCannotWorkIsRefused() {
    assertThat(
        problems("payments", "scoreDelta: 0.02", "scoreDelta: 1.5"),
        contains(
            "labels.drift.scoreDelta: must be a number from 0 up to 1 (a shift of a score or an"
                + " error rate), got 1.5"));
    assertThat(
        problems("payments", "errorThreshold: 30", "errorThreshold: 0"),
        contains(
            "labels.drift.errorThreshold: must be a number above 0 (the CUSUM sum that raises an"
                + " alarm), got 0"));
    assertThat(
        problems("payments", "baselineEvaluations: 1000", "baselineEvaluations: 0"),
        contains("labels.drift.baselineEvaluations: 0 is not from 1 to 2147483647"));
    assertThat(
        problems("payments", "scoreThreshold: 50", "scoreLimit: 50").get(0),
        containsString("labels.drift.scoreLimit: unknown key 'scoreLimit'"));
  }

  @Test
  public void aLabelsSectionThatCannotWorkIsRefused() {
    assertThat(
        problems("payments", "horizon: P7D", "horizon: PT30M"),
        contains(
            "labels.horizon: PT30M must be longer than windows.allowedLateness (PT1H): a window's"
                + " decisions must outlive its last pane"));
    assertThat(
        problems("payments", "every: PT1H", "every: P2D"),
        contains(
            "labels.evaluation.every: PT48H is longer than the window PT24H: some labels would"
                + " fall in none"));
    assertThat(
        problems("payments", "positive: [fraud]", "positive: [fraud, fraud]"),
        contains("labels.positive: 'fraud' is listed twice"));
    assertThat(
        problems("payments", "positive: [fraud]", "positive: []"),
        contains("labels.positive: must be a non-empty list of label values such as [fraud]"));
    assertThat(
        problems("payments", "horizon: P7D", "horizn: P7D").get(0),
        containsString("labels.horizn: unknown key 'horizn'"));
  }

  static List<String> problems(String bundled, String find, String replace) {
    String text = BundledSpecs.text(bundled);
    if (!text.contains(find)) {
      throw new AssertionError("the bundled spec " + bundled + " has no '" + find + "'");
    }
    String yaml = text.replace(find, replace);
    SpecException e =
        assertThrows(SpecException.class, () -> SpecLoader.parse(yaml, bundled + ".yaml"));
    return e.problems().stream().map(SpecException.Problem::toString).toList();
  }
}
