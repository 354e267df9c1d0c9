package dev.tidemark.transforms.values;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.util.Rfc3339;
import dev.tidemark.transforms.util.Sha256;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.IOException;
import java.time.DateTimeException;
import org.apache.beam.sdk.coders.CoderProvider;
import org.apache.beam.sdk.coders.CoderProviders;
import org.apache.beam.sdk.coders.DefaultCoder;
import org.apache.beam.sdk.values.TypeDescriptor;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;

/**
 * The truth about one event, learnt after it was decided: a chargeback, a confirmed fraud report, a
 * customer's "that was me". A label is a structured-mode CloudEvent of type {@value #TYPE} with an
 * identity of its own ({@code source} + {@code id}, deduplicated like events) and its own {@code
 * time} (when the truth became known); its {@code data} names the event it is about:
 *
 * <pre>{@code
 * {"specversion":"1.0","id":"label-000001","source":"/tidemark/labels/chargebacks",
 *  "type":"tidemark.label.v1","time":"2026-01-01T03:12:09.120Z","datacontenttype":"application/json",
 *  "data":{"subject":{"source":"/tidemark/pos/eu-west","id":"txn-000123"},
 *          "key":"acct-00042","eventTime":"2026-01-01T00:03:12.345Z","value":"fraud"}}
 * }</pre>
 *
 * <p>{@code subject} is the labelled event's CloudEvents identity. {@code key} and {@code
 * eventTime} (the event's key under the spec's key field, and its event time) are optional: with
 * them a label can be matched to the windows that held its event without the event itself, as
 * training from decisions does. {@code value} is the outcome, as the spec's label values name it
 * ({@code fraud} or {@code legit} for payments).
 */
@DefaultCoder(Label.LabelCoder.class)
public record Label(
    String source,
    String id,
    Instant time,
    String subjectSource,
    String subjectId,
    @Nullable String key,
    @Nullable Instant eventTime,
    String value) {

  /** The CloudEvent type of a label. */
  public static final String TYPE = "tidemark.label.v1";

  /** The label's own identity, {@code source} and {@code id} joined as dedup keys are. */
  public String identity() {
    return source + "\u0000" + id;
  }

  /** The labelled event's identity, in the same form. */
  public String subject() {
    return subjectSource + "\u0000" + subjectId;
  }

  /**
   * A 128-bit digest of the label's whole content ({@link Sha256#prefix128} of its JSON line): two
   * copies of one label identity with other digests are a conflict, as with events.
   */
  public byte[] fingerprint() {
    return Sha256.prefix128(Sha256.threadDigest(), toJsonLine());
  }

  /** The label as one line of a labels stream. */
  public String toJsonLine() {
    return Json.object(
        out -> {
          out.writeStringField("specversion", "1.0");
          out.writeStringField("id", id);
          out.writeStringField("source", source);
          out.writeStringField("type", TYPE);
          out.writeStringField("time", Json.instant(time));
          out.writeStringField("datacontenttype", "application/json");
          out.writeObjectFieldStart("data");
          out.writeObjectFieldStart("subject");
          out.writeStringField("source", subjectSource);
          out.writeStringField("id", subjectId);
          out.writeEndObject();
          Json.optionalString(out, "key", key);
          if (eventTime != null) {
            out.writeStringField("eventTime", Json.instant(eventTime));
          }
          out.writeStringField("value", value);
          out.writeEndObject();
        });
  }

  /**
   * Reads one line of a labels stream.
   *
   * @throws Invalid (an {@link IllegalArgumentException}) with its dead-letter reason, naming the
   *     first defect: not JSON, not a label CloudEvent, a missing or empty member, a time that is
   *     not RFC 3339
   */
  public static Label parse(String line) {
    JsonNode node;
    try {
      node = Json.STRICT_READER.readTree(line);
    } catch (JsonProcessingException e) {
      throw new Invalid(DeadLetterReason.INVALID_JSON, "not JSON: " + e.getOriginalMessage(), e);
    }
    if (node == null || !node.isObject()) {
      throw new Invalid(DeadLetterReason.NOT_A_CLOUDEVENT, "not a JSON object", null);
    }
    if (!"1.0".equals(text(node, "specversion"))) {
      throw new Invalid(DeadLetterReason.UNSUPPORTED_SPECVERSION, "specversion is not 1.0", null);
    }
    String type = required(node, "type");
    if (!TYPE.equals(type)) {
      throw new Invalid(
          DeadLetterReason.UNSUPPORTED_TYPE, "type is " + type + ", not " + TYPE, null);
    }
    JsonNode data = node.get("data");
    if (data == null || !data.isObject()) {
      throw new Invalid(DeadLetterReason.INVALID_DATA, "data is not an object", null);
    }
    JsonNode subject = data.get("subject");
    if (subject == null || !subject.isObject()) {
      throw new Invalid(DeadLetterReason.INVALID_DATA, "data.subject is not an object", null);
    }
    String eventTime = text(data, "eventTime");
    return new Label(
        required(node, "source"),
        required(node, "id"),
        time(required(node, "time"), "time"),
        required(subject, "source", "data.subject.source"),
        required(subject, "id", "data.subject.id"),
        text(data, "key"),
        eventTime == null ? null : time(eventTime, "data.eventTime"),
        required(data, "value", "data.value"));
  }

  /** A line that is not a label, with the dead-letter reason that says why. */
  public static final class Invalid extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final DeadLetterReason reason;

    Invalid(DeadLetterReason reason, String message, @Nullable Throwable cause) {
      super(message, cause);
      this.reason = reason;
    }

    public DeadLetterReason reason() {
      return reason;
    }
  }

  private static @Nullable String text(JsonNode node, String name) {
    JsonNode value = node.get(name);
    return value != null && value.isTextual() ? value.asText() : null;
  }

  private static String required(JsonNode node, String name) {
    return required(node, name, name);
  }

  private static String required(JsonNode node, String name, String path) {
    String value = text(node, name);
    if (value == null || value.isEmpty()) {
      throw new Invalid(
          path.startsWith("data.")
              ? DeadLetterReason.INVALID_DATA
              : DeadLetterReason.MISSING_ATTRIBUTE,
          path + " is missing, empty or not a string",
          null);
    }
    return value;
  }

  private static Instant time(String text, String path) {
    try {
      return new Instant(Rfc3339.epochMillis(text));
    } catch (DateTimeException e) {
      throw new Invalid(
          path.startsWith("data.") ? DeadLetterReason.INVALID_DATA : DeadLetterReason.INVALID_TIME,
          path + " is not an RFC 3339 time: " + text,
          e);
    }
  }

  /** Compact, deterministic coder. */
  public static final class LabelCoder extends Codec.DataCoder<Label> {
    private static final long serialVersionUID = 1L;

    private static final LabelCoder INSTANCE = new LabelCoder();

    public static LabelCoder of() {
      return INSTANCE;
    }

    /** Makes {@code @DefaultCoder} work for {@link Label}. */
    public static CoderProvider getCoderProvider() {
      return CoderProviders.forCoder(TypeDescriptor.of(Label.class), INSTANCE);
    }

    /** Version 1: the fields {@link #write} writes, in its order. */
    @Override
    protected int version() {
      return 1;
    }

    @Override
    protected void write(Label value, DataOutput out) throws IOException {
      Codec.writeString(value.source, out);
      Codec.writeString(value.id, out);
      Codec.writeInstant(value.time, out);
      Codec.writeString(value.subjectSource, out);
      Codec.writeString(value.subjectId, out);
      Codec.writeNullableString(value.key, out);
      Codec.writeNullableInstant(value.eventTime, out);
      Codec.writeString(value.value, out);
    }

    @Override
    protected Label read(int version, DataInputStream in) throws IOException {
      return new Label(
          Codec.readString(in),
          Codec.readString(in),
          Codec.readInstant(in),
          Codec.readString(in),
          Codec.readString(in),
          Codec.readNullableString(in),
          Codec.readNullableInstant(in),
          Codec.readString(in));
    }
  }
}
