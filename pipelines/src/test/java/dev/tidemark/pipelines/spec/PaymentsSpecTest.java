package dev.tidemark.pipelines.spec;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.model.DefaultModel;
import dev.tidemark.pipelines.Outputs;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.io.bigquery.BigQueryTables;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.PipelineSpec.Field;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.transforms.ComputeFeatures;
import dev.tidemark.transforms.DeduplicateEvents;
import dev.tidemark.transforms.ParseCloudEvents;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.DeadLetterReason;
import dev.tidemark.transforms.values.PaymentFeatures;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * {@code specs/payments.yaml} writes down what the code does today: every value that the code holds
 * as a constant or an option default is compared here, so the two cannot drift apart.
 */
@RunWith(JUnit4.class)
public class PaymentsSpecTest {
  static Path specs() {
    return Paths.get(System.getProperty("tidemark.home", "..")).resolve("specs");
  }

  static PipelineSpec payments() {
    return SpecLoader.load(specs().resolve("payments.yaml"));
  }

  private static Duration java(org.joda.time.Duration duration) {
    return Duration.ofMillis(duration.getMillis());
  }

  @Test
  public void eventsAreWhatTheParserAccepts() {
    PipelineSpec spec = payments();
    assertThat(spec.events().types(), is(List.of(ParseCloudEvents.DEFAULT_TYPE)));
    assertThat(spec.events().maxEventBytes(), is(ParseCloudEvents.DEFAULT_MAX_EVENT_BYTES));
    assertThat(spec.events().key(), is("accountId"));
    Field accountId = spec.field("accountId").orElseThrow();
    assertThat(accountId.maxLength(), is(ParseCloudEvents.MAX_ACCOUNT_ID_LENGTH));
    assertThat(accountId.minLength(), is(1));
    assertThat(accountId.plainText(), is(true));
    Field amount = spec.field("amount").orElseThrow();
    assertThat(amount.integerDigits(), is(ParseCloudEvents.MAX_AMOUNT_INTEGER_DIGITS));
    assertThat(amount.scale(), is(2));
    assertThat(amount.min(), is(BigDecimal.ZERO));
    assertThat(
        spec.field("currency").orElseThrow().values(),
        is(List.of(ParseCloudEvents.DEFAULT_CURRENCY)));
    assertThat(spec.field("merchantId").orElseThrow().optional(), is(true));
    assertThat(spec.field("country").orElseThrow().optional(), is(true));
    assertThat(spec.clocks().maxFutureSkew(), is(java(ParseCloudEvents.DEFAULT_MAX_FUTURE_SKEW)));
  }

  @Test
  public void deadLetterReasonsAreTheParsersCodes() {
    PipelineSpec spec = payments();
    Set<String> codes =
        Arrays.stream(DeadLetterReason.values())
            .map(DeadLetterReason::code)
            .collect(Collectors.toCollection(TreeSet::new));
    Set<String> fieldReasons = new TreeSet<>();
    for (Field field : spec.events().fields()) {
      assertThat(field.name() + "'s reason is a code", codes.contains(field.reason()), is(true));
      fieldReasons.add(field.reason());
    }
    Set<String> others = new TreeSet<>(codes);
    others.removeAll(fieldReasons);
    assertThat(new TreeSet<>(SpecLoader.RESERVED_REASONS), is(others));
  }

  @Test
  public void identityClocksAndWindowsAreTheDefaults() {
    PipelineSpec spec = payments();
    TidemarkOptions options = PipelineOptionsFactory.as(TidemarkOptions.class);
    assertThat(spec.identity().horizon(), is(java(DeduplicateEvents.DEFAULT_HORIZON)));
    assertThat(spec.identity().horizon(), is(Duration.parse(options.getDedupHorizon())));
    assertThat(spec.clocks().eventTime(), is("time"));
    assertThat(spec.clocks().maxFutureSkew(), is(Duration.parse(options.getMaxFutureSkew())));
    assertThat(
        spec.clocks().maxOutOfOrderness(), is(Duration.parse(options.getMaxOutOfOrderness())));
    assertThat(spec.events().types(), is(List.of(options.getEventTypes())));
    assertThat(spec.events().maxEventBytes(), is(options.getMaxEventBytes()));
    assertThat(spec.field("currency").orElseThrow().values(), is(List.of(options.getCurrency())));
    PipelineSpec.Windows windows = spec.windows();
    assertThat(windows.size(), is(java(ComputeFeatures.DEFAULT_WINDOW_SIZE)));
    assertThat(windows.size(), is(Duration.parse(options.getWindowSize())));
    assertThat(windows.period(), is(java(ComputeFeatures.DEFAULT_WINDOW_PERIOD)));
    assertThat(windows.period(), is(Duration.parse(options.getWindowPeriod())));
    assertThat(windows.earlyFiring(), is(java(ComputeFeatures.DEFAULT_EARLY_FIRING_DELAY)));
    assertThat(windows.earlyFiring(), is(Duration.parse(options.getEarlyFiringDelay())));
    assertThat(windows.lateFiring(), is(java(ComputeFeatures.DEFAULT_LATE_FIRING_DELAY)));
    assertThat(windows.lateFiring(), is(Duration.parse(options.getLateFiringDelay())));
    assertThat(windows.allowedLateness(), is(java(ComputeFeatures.DEFAULT_ALLOWED_LATENESS)));
    assertThat(windows.allowedLateness(), is(Duration.parse(options.getAllowedLateness())));
    assertThat(
        windows.accumulation().name() + "_FIRED_PANES",
        is(ComputeFeatures.DEFAULT_ACCUMULATION_MODE.name()));
    assertThat(windows.accumulation().name(), is(options.getAccumulationMode().name()));
  }

  @Test
  public void featuresAreTheModelsInputInItsOrder() throws IOException {
    PipelineSpec spec = payments();
    assertThat(spec.featureNames(), is(PaymentFeatures.SCHEMA.names()));
    for (String file : List.of(DefaultModel.XGBOOST_FILE, DefaultModel.ONNX_FILE)) {
      try (InputStream in = getClass().getResourceAsStream("/models/" + file + ".json")) {
        JsonNode sidecar = Json.MAPPER.readTree(in);
        List<String> names = new ArrayList<>();
        sidecar.get("featureNames").forEach(n -> names.add(n.asText()));
        assertThat(file, spec.featureNames(), is(names));
        assertThat(file, spec.model().threshold(), is(sidecar.get("threshold").asDouble()));
      }
    }
  }

  @Test
  public void theModelAndOutputsAreTheDefaults() {
    PipelineSpec spec = payments();
    TidemarkOptions options = PipelineOptionsFactory.as(TidemarkOptions.class);
    assertThat(spec.model().uri(), is(options.getModelUri()));
    assertThat(spec.model().threshold(), is(options.getDecisionThreshold()));
    assertThat(outputNames(spec, "local"), is(Outputs.NAMES));
    assertThat(
        outputNames(spec, "flink"),
        is(
            List.of(
                options.getKafkaDecisionsTopic(),
                options.getKafkaDeadLettersTopic(),
                options.getKafkaDuplicatesTopic(),
                options.getKafkaTooLateTopic())));
    assertThat(
        outputNames(spec, "dataflow"),
        is(
            List.of(
                BigQueryTables.DECISIONS.name(),
                BigQueryTables.DEAD_LETTERS.name(),
                BigQueryTables.DUPLICATES.name(),
                BigQueryTables.TOO_LATE.name())));
  }

  private static List<String> outputNames(PipelineSpec spec, String profile) {
    return PipelineSpec.OUTPUTS.stream()
        .map(output -> spec.outputs().get(profile).names().get(output))
        .toList();
  }
}
