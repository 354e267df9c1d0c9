package dev.tidemark.pipelines.io.kafka;

import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.pipelines.OutputOptions;
import dev.tidemark.pipelines.OutputOptions.OutputFormat;
import dev.tidemark.transforms.values.Decision;
import io.cloudevents.CloudEvent;
import io.cloudevents.core.builder.CloudEventBuilder;
import io.cloudevents.core.format.EventFormat;
import io.cloudevents.jackson.JsonFormat;
import io.cloudevents.kafka.KafkaMessageFactory;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.apache.beam.sdk.transforms.ProcessFunction;
import org.apache.beam.sdk.values.KV;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;

/**
 * Decisions as Kafka records in the {@code --outputFormat} of the decisions topic. The key is
 * always the {@code decisionId}, so partitioning, ordering and compaction do not depend on the
 * format, and every format carries the headers {@code version} and {@code paneTiming}.
 *
 * <ul>
 *   <li>{@link OutputFormat#JSON}: value = the decision JSON ({@link Decision#toJson}).
 *   <li>{@link OutputFormat#CLOUDEVENTS_STRUCTURED}: value = the decision event ({@link #event}) in
 *       the CloudEvents JSON event format, whose {@code data} member is the decision JSON verbatim;
 *       header {@code content-type: application/cloudevents+json}.
 *   <li>{@link OutputFormat#CLOUDEVENTS_BINARY}: value = the decision JSON, the event's attributes
 *       in {@code ce_*} headers and {@code content-type: application/json}.
 * </ul>
 *
 * <p>Both CloudEvents modes are written by the SDK's Kafka protocol binding ({@link
 * KafkaMessageFactory}); its headers travel in the {@link HeaderedValue}, which both sink modes add
 * to the record they send.
 */
public final class DecisionRecords implements ProcessFunction<Decision, KV<String, HeaderedValue>> {
  private static final long serialVersionUID = 1L;

  /** The CloudEvents type of a decision event. */
  public static final String TYPE = "dev.tidemark.decision.v1";

  /** The content type of a decision event's data: the decision JSON. */
  public static final String DATA_CONTENT_TYPE = "application/json";

  /** The separator of the decisionId and the version in an event id. */
  public static final String ID_SEPARATOR = "/";

  /** The prefix of the default event source, followed by the decisions topic. */
  public static final String DEFAULT_SOURCE_PREFIX = "/tidemark/";

  /** The SDK's JSON event format; stateless, kept out of the serialized function. */
  private static final EventFormat JSON_FORMAT = new JsonFormat();

  private final OutputFormat format;
  private final String topic;
  private final String source;

  /**
   * Records of {@code format} for {@code topic} (the binding's writer names it; the sink sends to
   * it), events from {@code source} (a URI reference; unused by {@link OutputFormat#JSON}).
   */
  public DecisionRecords(OutputFormat format, String topic, String source) {
    this.format = Objects.requireNonNull(format, "format");
    this.topic = Objects.requireNonNull(topic, "topic");
    this.source = checkSource(source);
  }

  /** The records of the decisions topic as the options configure them. */
  public static DecisionRecords of(KafkaOptions options) {
    OutputOptions output = options.as(OutputOptions.class);
    return new DecisionRecords(
        OutputFormat.parse(output.getOutputFormat()),
        options.getKafkaDecisionsTopic(),
        source(options));
  }

  /**
   * The event source: {@code --outputEventSource}, else {@value #DEFAULT_SOURCE_PREFIX} and the
   * decisions topic. The topic names the pipeline's decision stream, and unlike a job name
   * (generated per launch unless set) it stays the same across restarts and replays, which
   * deduplication by ({@code source}, {@code id}) needs.
   */
  public static String source(KafkaOptions options) {
    String source = options.as(OutputOptions.class).getOutputEventSource();
    return source == null || source.isBlank()
        ? DEFAULT_SOURCE_PREFIX + options.getKafkaDecisionsTopic()
        : source;
  }

  /**
   * The event id: {@code <decisionId>/<version>}. A decisionId is hex and a version a number, so
   * the separator cannot be part of either; the pair is the same on every delivery and replay of a
   * pane, and differs between the panes of one window.
   */
  public static String id(Decision decision) {
    return decision.decisionId() + ID_SEPARATOR + decision.version();
  }

  /**
   * A decision as a CloudEvent: spec version 1.0, type {@value #TYPE}, id {@link #id}, {@code
   * source}, subject the account id, time the decision time (when this version of the decision was
   * made: the window end is the same for every version and is in the data), data the decision JSON
   * as {@value #DATA_CONTENT_TYPE}.
   */
  public static CloudEvent event(Decision decision, String source) {
    return CloudEventBuilder.v1()
        .withId(id(decision))
        .withSource(URI.create(source))
        .withType(TYPE)
        .withSubject(decision.key())
        .withTime(
            OffsetDateTime.ofInstant(
                java.time.Instant.ofEpochMilli(decision.decisionTime().getMillis()),
                ZoneOffset.UTC))
        .withDataContentType(DATA_CONTENT_TYPE)
        .withData(decision.toJson().getBytes(StandardCharsets.UTF_8))
        .build();
  }

  @Override
  public KV<String, HeaderedValue> apply(Decision decision) {
    if (!format.isCloudEvent()) {
      return KV.of(
          decision.decisionId(),
          new HeaderedValue(decision.toJson().getBytes(StandardCharsets.UTF_8), headers(decision)));
    }
    CloudEvent event = event(decision, source);
    ProducerRecord<Void, byte[]> record =
        format == OutputFormat.CLOUDEVENTS_BINARY
            ? KafkaMessageFactory.createWriter(topic).writeBinary(event)
            : KafkaMessageFactory.createWriter(topic).writeStructured(event, JSON_FORMAT);
    Map<String, String> headers = new LinkedHashMap<>();
    for (Header header : record.headers()) {
      headers.put(header.key(), new String(header.value(), StandardCharsets.UTF_8));
    }
    headers.putAll(headers(decision));
    return KV.of(decision.decisionId(), new HeaderedValue(record.value(), headers));
  }

  /**
   * The headers of every format: the version, the pane timing and, with accumulating panes, the
   * correction, so a consumer can route a reversal without parsing the value.
   */
  private static Map<String, String> headers(Decision decision) {
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("version", Long.toString(decision.version()));
    headers.put("paneTiming", decision.paneTiming());
    if (decision.correction() != null) {
      headers.put("correction", decision.correction().jsonName());
    }
    return headers;
  }

  /** {@code source} if it is a non-empty URI reference, else a usage error. */
  private static String checkSource(String source) {
    if (source == null || source.isBlank()) {
      throw new IllegalArgumentException("--outputEventSource must be a non-empty URI reference");
    }
    try {
      new URI(source);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(
          "--outputEventSource="
              + source
              + " is not a URI reference ("
              + e.getReason()
              + "); use e.g. /tidemark/payments or https://example.com/tidemark",
          e);
    }
    return source;
  }
}
