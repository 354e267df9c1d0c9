package dev.tidemark.pipelines.io.pubsub;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.ByteString;
import com.google.protobuf.Timestamp;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.RawRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.beam.sdk.io.gcp.pubsub.PubsubClient.IncomingMessage;
import org.apache.beam.sdk.transforms.DoFn;
import org.joda.time.Instant;

/** Named messages shared by the Pub/Sub tests. */
public final class PubsubFixtures {
  /** 2026-01-01T00:00:00Z. */
  static final Instant BASE = Instant.parse("2026-01-01T00:00:00Z");

  static final String SOURCE = "/tidemark/pubsub-test";
  static final String ALICE = "acct-alice";

  private PubsubFixtures() {}

  static Instant seconds(long seconds) {
    return BASE.plus(seconds * 1000);
  }

  /** The data of a valid payment. */
  static String data(String account, String amount) {
    return "{\"accountId\":\"" + account + "\",\"amount\":" + amount + ",\"currency\":\"GBP\"}";
  }

  /** A structured-mode CloudEvent body. */
  static String structured(String id, Instant time, String data) {
    return "{\"specversion\":\"1.0\",\"id\":\""
        + id
        + "\",\"source\":\""
        + SOURCE
        + "\",\"type\":\"payments.transaction.v1\",\"time\":\""
        + time
        + "\",\"datacontenttype\":\"application/json\",\"data\":"
        + data
        + "}";
  }

  /** The attributes of a binary-mode CloudEvent; the data goes in the body. */
  static Map<String, String> binaryAttributes(String id, String time) {
    Map<String, String> attributes = new LinkedHashMap<>();
    attributes.put("ce-specversion", "1.0");
    attributes.put("ce-id", id);
    attributes.put("ce-source", SOURCE);
    attributes.put("ce-type", "payments.transaction.v1");
    attributes.put("ce-time", time);
    attributes.put("content-type", "application/json");
    return attributes;
  }

  /** The attributes a structured-mode publisher sets. */
  public static Map<String, String> structuredAttributes(Instant time) {
    Map<String, String> attributes = new LinkedHashMap<>();
    attributes.put("content-type", "application/cloudevents+json; charset=utf-8");
    attributes.put("ce-time", time.toString());
    return attributes;
  }

  /**
   * A structured-mode CloudEvent line sent in binary mode, as the test client hands it out: each
   * context attribute in a {@code ce-} attribute, the data as the body.
   */
  public static IncomingMessage incomingBinary(
      String messageId, String structuredLine, Instant publishTime) throws IOException {
    JsonNode event = Json.MAPPER.readTree(structuredLine);
    Map<String, String> attributes = new LinkedHashMap<>();
    event
        .fields()
        .forEachRemaining(
            field -> {
              if (!field.getKey().equals("data") && !field.getKey().equals("datacontenttype")) {
                attributes.put("ce-" + field.getKey(), field.getValue().asText());
              }
            });
    attributes.put("content-type", event.path("datacontenttype").asText("application/json"));
    return incoming(messageId, attributes, event.get("data").toString(), publishTime);
  }

  /** A pulled message as the test client hands it out: timestamp = publish time. */
  public static IncomingMessage incoming(
      String messageId, Map<String, String> attributes, String body, Instant publishTime) {
    com.google.pubsub.v1.PubsubMessage message =
        com.google.pubsub.v1.PubsubMessage.newBuilder()
            .setData(ByteString.copyFrom(body, StandardCharsets.UTF_8))
            .putAllAttributes(attributes)
            .setMessageId(messageId)
            .setPublishTime(
                Timestamp.newBuilder().setSeconds(publishTime.getMillis() / 1000).build())
            .build();
    return IncomingMessage.of(
        message, publishTime.getMillis(), 0, "ack-" + messageId, "record-" + messageId);
  }

  /**
   * One line per record: origin, element timestamp, ingestion time, and either the reject reason or
   * the event's id and time as the parser will read them.
   */
  static final class DescribeFn extends DoFn<RawRecord, String> {
    @ProcessElement
    public void processElement(
        @Element RawRecord record, @Timestamp Instant timestamp, OutputReceiver<String> out)
        throws IOException {
      out.output(describe(record, timestamp));
    }
  }

  static String describe(RawRecord record, Instant timestamp) throws IOException {
    String head =
        record.origin() + " ts=" + timestamp + " ingested=" + record.ingestionTime() + " ";
    if (record.sourceError() != null) {
      return head + "rejected=" + record.sourceError().code();
    }
    JsonNode event;
    try {
      event = Json.MAPPER.readTree(record.payload());
    } catch (IOException e) {
      return head + "unparsed";
    }
    return head
        + "id="
        + event.get("id").asText()
        + " time="
        + new Instant(OffsetDateTime.parse(event.get("time").asText()).toInstant().toEpochMilli())
        + " data="
        + Json.canonical(event.get("data"));
  }
}
