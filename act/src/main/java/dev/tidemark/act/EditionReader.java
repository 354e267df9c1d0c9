package dev.tidemark.act;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tidemark.act.Edition.Correction;
import dev.tidemark.act.Edition.Superseded;
import dev.tidemark.act.Edition.Verdict;
import io.cloudevents.CloudEvent;
import io.cloudevents.kafka.CloudEventDeserializer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * Reads a decisions-topic record as an {@link Edition}, in any of the pipeline's {@code
 * --outputFormat}s: the decision JSON as the value ({@code json}), or a decision CloudEvent whose
 * data is that JSON ({@code cloudevents-structured}: header {@code content-type:
 * application/cloudevents+json}; {@code cloudevents-binary}: {@code ce_*} headers). A record that
 * is not an edition the consumer can act on is a {@link Rejection} with a reason code, never an
 * exception: the consumer records it and moves on.
 */
public final class EditionReader {
  /** The CloudEvents type of a decision event, as the pipeline writes it. */
  public static final String DECISION_EVENT_TYPE = "dev.tidemark.decision.v1";

  /** Reason: the value (or an event's data) is not a JSON object. */
  public static final String INVALID_JSON = "invalid_json";

  /** Reason: a field the consumer needs is missing or has the wrong type or value. */
  public static final String NOT_A_DECISION = "not_a_decision";

  /** Reason: the record's key is not the decision's decisionId. */
  public static final String KEY_MISMATCH = "key_mismatch";

  /**
   * Reason: the decision has no {@code correction}: written in discarding accumulation mode, where
   * a pane is a delta and not a verdict on its window, or by a pipeline older than corrections.
   */
  public static final String NO_CORRECTION = "no_correction";

  /** Reason: {@code correction} disagrees with {@code supersedes} (or one lacks the other). */
  public static final String INCONSISTENT_CORRECTION = "inconsistent_correction";

  /** Reason: a CloudEvent that is not a decision event or that the SDK cannot read. */
  public static final String UNSUPPORTED_EVENT = "unsupported_event";

  private static final ObjectMapper MAPPER =
      new ObjectMapper()
          .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  /** What a record turned out to be: exactly one of an edition and a rejection. */
  public record Read(Optional<Edition> edition, Optional<Rejection> rejection) {
    static Read of(Edition edition) {
      return new Read(Optional.of(edition), Optional.empty());
    }

    static Read rejected(String reason, String detail) {
      return new Read(Optional.empty(), Optional.of(new Rejection(reason, detail)));
    }
  }

  /** Why a record is not acted on: a stable reason code and a human detail. */
  public record Rejection(String reason, String detail) {}

  private EditionReader() {}

  /**
   * Reads one record of {@code topic}. Never throws: whatever the record holds, it is an edition or
   * a rejection.
   */
  public static Read read(String topic, byte[] key, byte[] value, Headers headers) {
    try {
      return readRecord(topic, key, value, headers);
    } catch (RuntimeException e) {
      return Read.rejected(NOT_A_DECISION, "the record cannot be read: " + e);
    }
  }

  private static Read readRecord(String topic, byte[] key, byte[] value, Headers headers) {
    if (value == null) {
      return Read.rejected(NOT_A_DECISION, "the record has no value (a tombstone)");
    }
    byte[] json = value;
    if (isCloudEvent(headers)) {
      CloudEvent event;
      try (CloudEventDeserializer deserializer = new CloudEventDeserializer()) {
        event = deserializer.deserialize(topic, headers, value);
      } catch (RuntimeException e) {
        return Read.rejected(UNSUPPORTED_EVENT, "the CloudEvents SDK cannot read it: " + e);
      }
      if (!DECISION_EVENT_TYPE.equals(event.getType())) {
        return Read.rejected(
            UNSUPPORTED_EVENT,
            "event type " + event.getType() + ", expected " + DECISION_EVENT_TYPE);
      }
      if (event.getData() == null) {
        return Read.rejected(UNSUPPORTED_EVENT, "a decision event without data");
      }
      json = event.getData().toBytes();
    }
    Read read = parse(json);
    if (read.edition().isPresent() && key != null) {
      String recordKey = new String(key, StandardCharsets.UTF_8);
      String decisionId = read.edition().get().decisionId();
      if (!recordKey.equals(decisionId)) {
        return Read.rejected(
            KEY_MISMATCH, "key " + recordKey + " but decisionId " + decisionId + " in the value");
      }
    }
    return read;
  }

  private static boolean isCloudEvent(Headers headers) {
    if (headers == null) {
      return false;
    }
    if (headers.lastHeader("ce_specversion") != null) {
      return true;
    }
    Header contentType = headers.lastHeader("content-type");
    return contentType != null
        && new String(contentType.value(), StandardCharsets.UTF_8)
            .startsWith("application/cloudevents");
  }

  /** Reads the decision JSON. */
  public static Read parse(byte[] json) {
    JsonNode node;
    try {
      node = MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      return Read.rejected(INVALID_JSON, "not JSON: " + e.getOriginalMessage());
    } catch (IOException e) {
      return Read.rejected(INVALID_JSON, "not JSON: " + e.getMessage());
    }
    if (node == null || !node.isObject()) {
      return Read.rejected(INVALID_JSON, "not a JSON object");
    }
    try {
      String decisionId = text(node, "decisionId");
      long version = count(node, "version");
      String accountId = text(node, "accountId");
      String windowStart = instant(node, "windowStart");
      String windowEnd = instant(node, "windowEnd");
      double score = number(node, "score");
      Verdict verdict = verdict(node, "decision");
      JsonNode correctionNode = node.get("correction");
      if (correctionNode == null || correctionNode.isNull()) {
        return Read.rejected(
            NO_CORRECTION,
            "no correction field: a pane of discarding accumulation mode (a delta, not a verdict"
                + " on its window) or a pipeline that does not write corrections");
      }
      Correction correction =
          Correction.parse(correctionNode.isTextual() ? correctionNode.asText() : "")
              .orElseThrow(() -> missing("correction", "none, refined or reversed"));
      Optional<Superseded> supersedes = Optional.empty();
      JsonNode before = node.get("supersedes");
      if (before != null && !before.isNull()) {
        if (!before.isObject()) {
          throw missing("supersedes", "an object");
        }
        supersedes =
            Optional.of(
                new Superseded(
                    count(before, "version"),
                    number(before, "score"),
                    verdict(before, "decision")));
      }
      Edition edition =
          new Edition(
              decisionId,
              version,
              accountId,
              windowStart,
              windowEnd,
              score,
              verdict,
              correction,
              supersedes);
      Optional<String> inconsistency = inconsistency(edition);
      if (inconsistency.isPresent()) {
        return Read.rejected(INCONSISTENT_CORRECTION, inconsistency.get());
      }
      return Read.of(edition);
    } catch (IllegalArgumentException e) {
      return Read.rejected(NOT_A_DECISION, e.getMessage());
    }
  }

  /** Why the edition's correction contradicts what it supersedes, if it does. */
  static Optional<String> inconsistency(Edition edition) {
    if (edition.correction() == Correction.NONE) {
      return edition.supersedes().isPresent()
          ? Optional.of("correction none (a first edition) with a supersedes member")
          : Optional.empty();
    }
    if (edition.supersedes().isEmpty()) {
      return Optional.of("correction " + edition.correction().json() + " without supersedes");
    }
    Superseded before = edition.supersedes().get();
    if (before.version() >= edition.version()) {
      return Optional.of(
          "version " + edition.version() + " supersedes version " + before.version());
    }
    boolean reversed = before.verdict() != edition.verdict();
    if (reversed != (edition.correction() == Correction.REVERSED)) {
      return Optional.of(
          "correction "
              + edition.correction().json()
              + " but the decision went from "
              + before.verdict().json()
              + " to "
              + edition.verdict().json());
    }
    return Optional.empty();
  }

  private static IllegalArgumentException missing(String field, String expected) {
    return new IllegalArgumentException(field + ": expected " + expected);
  }

  private static String text(JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null || !value.isTextual() || value.asText().isEmpty()) {
      throw missing(field, "a non-empty string");
    }
    if (value.asText().indexOf('\u0000') >= 0) {
      // No PostgreSQL text value can hold one; the pipeline never writes one.
      throw missing(field, "a string without NUL characters");
    }
    return value.asText();
  }

  /** An RFC 3339 timestamp, kept as written (the fingerprint covers the text). */
  private static String instant(JsonNode node, String field) {
    String value = text(node, field);
    try {
      OffsetDateTime.parse(value);
    } catch (DateTimeParseException e) {
      throw missing(field, "an RFC 3339 timestamp");
    }
    return value;
  }

  private static long count(JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null
        || !value.isIntegralNumber()
        || !value.canConvertToLong()
        || value.asLong() < 0) {
      throw missing(field, "a non-negative integer");
    }
    return value.asLong();
  }

  private static double number(JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null || !value.isNumber() || !Double.isFinite(value.asDouble())) {
      throw missing(field, "a number");
    }
    return value.asDouble();
  }

  private static Verdict verdict(JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null || !value.isTextual()) {
      throw missing(field, "allow or review");
    }
    return Verdict.parse(value.asText()).orElseThrow(() -> missing(field, "allow or review"));
  }
}
