package dev.tidemark.pipelines.io.kafka;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.Assert.assertThrows;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tidemark.pipelines.OutputOptions.OutputFormat;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.PaymentFeatures;
import io.cloudevents.CloudEvent;
import io.cloudevents.SpecVersion;
import io.cloudevents.kafka.CloudEventDeserializer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.util.SerializableUtils;
import org.apache.beam.sdk.values.KV;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.joda.time.Instant;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * Decisions as records of each {@code --outputFormat}, sent through the sink's value serializer and
 * read back with the CloudEvents SDK's Kafka deserializer.
 */
@RunWith(JUnit4.class)
public class DecisionRecordsTest {
  private static final String TOPIC = "tidemark.decisions";
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final Instant START = Instant.parse("2026-03-01T10:00:00Z");
  private static final Instant END = Instant.parse("2026-03-01T10:05:00Z");

  /** Pane {@code version} of acct-42's window, scored at {@code decided}. */
  private static Decision decision(long version, Instant decided) {
    Features features =
        PaymentFeatures.of(3, 12_345, 9_000, 2, 1, END.minus(1_000), END.minus(500));
    return Decision.unscored(
            "acct-42",
            START,
            END,
            version == 0 ? "ON_TIME" : "LATE",
            version,
            version == 0,
            false,
            features,
            decided.minus(3))
        .withScore(0.875, "review", new Decision.ModelRef("default", "1", "onnx"), decided);
  }

  private static final Decision DECISION = decision(1, Instant.parse("2026-03-01T10:05:02.250Z"));

  private static TidemarkOptions options(String... args) {
    List<String> all = new ArrayList<>(List.of("--sink=kafka"));
    all.addAll(List.of(args));
    return PipelineOptionsFactory.fromArgs(all.toArray(new String[0])).as(TidemarkOptions.class);
  }

  /** The record's headers and value as the sink's serializer hands them to the producer. */
  private static Headers sentHeaders(HeaderedValue value) {
    Headers headers = new RecordHeaders();
    new HeaderedValue.ValueSerializer().serialize(TOPIC, headers, value);
    return headers;
  }

  private static CloudEvent readBack(HeaderedValue value) {
    Headers headers = new RecordHeaders();
    byte[] bytes = new HeaderedValue.ValueSerializer().serialize(TOPIC, headers, value);
    try (CloudEventDeserializer deserializer = new CloudEventDeserializer()) {
      return deserializer.deserialize(TOPIC, headers, bytes);
    }
  }

  private static List<String> headerNames(HeaderedValue value) {
    List<String> names = new ArrayList<>();
    for (Header header : sentHeaders(value)) {
      names.add(header.key());
    }
    return names;
  }

  private static String json() {
    return DECISION.toJson();
  }

  private static void assertDecisionEvent(CloudEvent event) throws Exception {
    assertThat(event.getSpecVersion(), is(SpecVersion.V1));
    assertThat(event.getType(), is("dev.tidemark.decision.v1"));
    assertThat(event.getId(), is(DECISION.decisionId() + "/1"));
    assertThat(event.getSource(), is(URI.create("/tidemark/" + TOPIC)));
    assertThat(event.getSubject(), is("acct-42"));
    assertThat(event.getTime(), is(OffsetDateTime.parse("2026-03-01T10:05:02.250Z")));
    assertThat(event.getDataContentType(), is("application/json"));
    assertThat(event.getDataSchema(), is(nullValue()));
    assertThat(event.getExtensionNames().isEmpty(), is(true));
    assertThat(MAPPER.readTree(event.getData().toBytes()), is(equalTo(MAPPER.readTree(json()))));
  }

  @Test
  public void jsonIsTheDefaultAndWritesTheDecisionJsonWithItsHeaders() {
    TidemarkOptions options = options();
    assertThat(options.getOutputFormat(), is("json"));
    KV<String, HeaderedValue> record = DecisionRecords.of(options).apply(DECISION);

    assertThat(record.getKey(), is(DECISION.decisionId()));
    assertThat(new String(record.getValue().value(), StandardCharsets.UTF_8), is(json()));
    assertThat(record.getValue().headers(), is(Map.of("version", "1", "paneTiming", "LATE")));
    assertThat(headerNames(record.getValue()), contains("version", "paneTiming"));
  }

  @Test
  public void structuredModeWritesTheEventInTheJsonFormatWithTheDecisionJsonAsData()
      throws Exception {
    KV<String, HeaderedValue> record =
        DecisionRecords.of(options("--outputFormat=cloudevents-structured")).apply(DECISION);

    assertThat(record.getKey(), is(DECISION.decisionId()));
    assertThat(headerNames(record.getValue()), contains("content-type", "version", "paneTiming"));
    assertThat(
        record.getValue().headers().get("content-type"),
        containsString("application/cloudevents+json"));
    assertThat(record.getValue().headers().get("version"), is("1"));
    assertThat(record.getValue().headers().get("paneTiming"), is("LATE"));
    String value = new String(record.getValue().value(), StandardCharsets.UTF_8);
    // The data member is the json format's bytes, verbatim.
    assertThat(value, containsString("\"data\":" + json()));
    assertThat(MAPPER.readTree(value).get("specversion").asText(), is("1.0"));
    assertDecisionEvent(readBack(record.getValue()));
  }

  @Test
  public void binaryModeWritesCeHeadersAndTheDecisionJsonAsValue() throws Exception {
    KV<String, HeaderedValue> record =
        DecisionRecords.of(options("--outputFormat=cloudevents-binary")).apply(DECISION);

    assertThat(record.getKey(), is(DECISION.decisionId()));
    assertThat(new String(record.getValue().value(), StandardCharsets.UTF_8), is(json()));
    Map<String, String> headers = record.getValue().headers();
    assertThat(headers.get("ce_specversion"), is("1.0"));
    assertThat(headers.get("ce_type"), is("dev.tidemark.decision.v1"));
    assertThat(headers.get("ce_id"), is(DECISION.decisionId() + "/1"));
    assertThat(headers.get("ce_source"), is("/tidemark/" + TOPIC));
    assertThat(headers.get("ce_subject"), is("acct-42"));
    assertThat(headers.get("content-type"), is("application/json"));
    assertThat(headers.get("version"), is("1"));
    assertThat(headers.get("paneTiming"), is("LATE"));
    assertThat(headerNames(record.getValue()), hasItem("ce_time"));
    CloudEvent event = readBack(record.getValue());
    assertDecisionEvent(event);
    assertThat(new String(event.getData().toBytes(), StandardCharsets.UTF_8), is(json()));
  }

  @Test
  public void theIdIsTheDecisionIdAndVersionAndStableAcrossReplays() {
    Decision replayed = decision(1, Instant.parse("2026-03-02T08:00:00Z"));
    Decision nextPane = decision(2, Instant.parse("2026-03-01T10:06:00Z"));

    assertThat(DecisionRecords.id(replayed), is(DecisionRecords.id(DECISION)));
    assertThat(DecisionRecords.id(nextPane), is(DECISION.decisionId() + "/2"));
    assertThat(DecisionRecords.id(nextPane), not(DecisionRecords.id(DECISION)));
    assertThat(
        readBack(
                DecisionRecords.of(options("--outputFormat=cloudevents-binary"))
                    .apply(replayed)
                    .getValue())
            .getId(),
        is(DECISION.decisionId() + "/1"));
  }

  @Test
  public void theSourceIsTheOptionOrNamesTheDecisionsTopic() {
    assertThat(
        DecisionRecords.source(options("--kafkaDecisionsTopic=payments.decisions")),
        is("/tidemark/payments.decisions"));
    TidemarkOptions custom =
        options(
            "--outputFormat=cloudevents-binary",
            "--outputEventSource=https://tidemark.example.com/eu-west");
    assertThat(
        readBack(DecisionRecords.of(custom).apply(DECISION).getValue()).getSource(),
        is(URI.create("https://tidemark.example.com/eu-west")));

    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                DecisionRecords.of(
                    options("--outputFormat=cloudevents-binary", "--outputEventSource=a b")));
    assertThat(e.getMessage(), containsString("--outputEventSource=a b is not a URI reference"));
  }

  @Test
  public void theFormatIsParsedFromItsHyphenatedName() {
    assertThat(OutputFormat.parse("json"), is(OutputFormat.JSON));
    assertThat(
        OutputFormat.parse("cloudevents-structured"), is(OutputFormat.CLOUDEVENTS_STRUCTURED));
    assertThat(OutputFormat.parse(" CloudEvents-Binary "), is(OutputFormat.CLOUDEVENTS_BINARY));
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> DecisionRecords.of(options("--outputFormat=cloudevents_binary")));
    assertThat(
        e.getMessage(),
        is(
            "--outputFormat=cloudevents_binary: use one of json, cloudevents-structured,"
                + " cloudevents-binary"));
  }

  @Test
  public void theRecordFunctionIsSerializable() {
    for (String format : OutputFormat.optionValues()) {
      DecisionRecords records =
          SerializableUtils.ensureSerializable(
              DecisionRecords.of(options("--outputFormat=" + format)));
      assertThat(
          records.apply(DECISION),
          is(DecisionRecords.of(options("--outputFormat=" + format)).apply(DECISION)));
    }
  }
}
