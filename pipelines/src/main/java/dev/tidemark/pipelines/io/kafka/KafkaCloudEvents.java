package dev.tidemark.pipelines.io.kafka;

import dev.tidemark.pipelines.io.CloudEventBindings;
import dev.tidemark.pipelines.io.CloudEventTime;
import dev.tidemark.transforms.values.DeadLetterReason;
import dev.tidemark.transforms.values.RawRecord;
import io.cloudevents.jackson.JsonFormat;
import io.cloudevents.kafka.KafkaMessageFactory;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;

/**
 * The CloudEvents Kafka protocol binding, both ways, on top of the CloudEvents SDK's {@code
 * cloudevents-kafka}.
 *
 * <p>In: a record with a {@code ce_specversion} header is a binary-mode event (attributes in {@code
 * ce_*} headers, data in the value); it is turned into the structured JSON form so that {@code
 * ParseCloudEvents} validates every event the same way. Any other record is treated as structured
 * mode ({@code content-type: application/cloudevents+json}, the event is the value). A record that
 * is neither becomes a rejected {@link RawRecord} with the reason, which the parser dead-letters;
 * the origin names the topic, partition and offset.
 */
public final class KafkaCloudEvents {
  /** The structured-mode content type. */
  public static final String STRUCTURED_CONTENT_TYPE = JsonFormat.CONTENT_TYPE;

  private KafkaCloudEvents() {}

  /** The origin of a Kafka record: {@code kafka:topic/partition@offset}. */
  public static String origin(String topic, int partition, long offset) {
    return "kafka:" + topic + "/" + partition + "@" + offset;
  }

  /** One consumed record as the parser's input. */
  public static RawRecord toRawRecord(
      @Nullable Headers headers, byte @Nullable [] value, Instant ingestionTime, String origin) {
    Headers present = headers == null ? new RecordHeaders() : headers;
    byte[] payload = value == null ? new byte[0] : value;
    if (present.lastHeader("ce_specversion") != null) {
      return CloudEventBindings.binary(
          () -> KafkaMessageFactory.createReader(present, payload).toEvent(),
          payload,
          ingestionTime,
          origin,
          "binary-mode Kafka record");
    }
    if (value == null) {
      return RawRecord.rejected(
          payload,
          ingestionTime,
          origin,
          DeadLetterReason.NOT_A_CLOUDEVENT,
          "Kafka record with no value (a tombstone) and no ce_* headers");
    }
    String contentType = header(present, "content-type");
    if (contentType != null && !CloudEventBindings.isStructured(contentType)) {
      return RawRecord.rejected(
          payload,
          ingestionTime,
          origin,
          DeadLetterReason.NOT_A_CLOUDEVENT,
          "Kafka record with content-type '"
              + contentType
              + "' and no ce_specversion header is neither a structured ("
              + STRUCTURED_CONTENT_TYPE
              + ") nor a binary-mode CloudEvent");
    }
    return RawRecord.of(payload, ingestionTime, origin);
  }

  /**
   * The event time of a record, cheaply, without building the event: the {@code ce_time} header in
   * binary mode, the top-level {@code time} member in structured mode. Null when there is none or
   * it is not RFC 3339; the parser then dead-letters the record with the precise reason.
   */
  public static @Nullable Instant eventTime(@Nullable Headers headers, byte @Nullable [] value) {
    return eventTime(headers, value, CloudEventTime.ATTRIBUTE);
  }

  /** The event time of a record where {@code eventTime} reads it, in either content mode. */
  public static @Nullable Instant eventTime(
      @Nullable Headers headers, byte @Nullable [] value, CloudEventTime eventTime) {
    if (headers != null && headers.lastHeader("ce_specversion") != null) {
      return eventTime.ofBinary(header(headers, "ce_time"), value);
    }
    return eventTime.ofStructured(value);
  }

  private static @Nullable String header(Headers headers, String name) {
    Header header = headers.lastHeader(name);
    return header == null || header.value() == null
        ? null
        : new String(header.value(), StandardCharsets.UTF_8);
  }
}
