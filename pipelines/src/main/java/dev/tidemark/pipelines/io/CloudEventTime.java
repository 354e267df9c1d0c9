package dev.tidemark.pipelines.io;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.spec.PipelineSpec;
import java.io.IOException;
import java.io.Serializable;
import java.time.OffsetDateTime;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;

/**
 * Where a source reads an event's time to order its stream and move its watermark, as the spec's
 * {@code clocks.eventTime} says: the CloudEvents attribute {@code time}, or a timestamp field of
 * {@code data}. The parser ({@code ParseCloudEvents#withEventTime}) reads the same place, so the
 * timestamp a source gives a record is the event time the parser finds in it. Lenient: a record
 * without a readable time gives null, and the parser dead-letters it with the precise reason.
 */
public final class CloudEventTime implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final JsonFactory JSON_FACTORY = new JsonFactory();

  /** The attribute {@code time}, the default. */
  public static final CloudEventTime ATTRIBUTE = new CloudEventTime(null);

  /** The {@code data} member, or null for the attribute {@code time}. */
  private final @Nullable String dataField;

  private CloudEventTime(@Nullable String dataField) {
    this.dataField = dataField;
  }

  /** {@code time} (the attribute) or the name of a timestamp field of {@code data}. */
  public static CloudEventTime of(@Nullable String eventTime) {
    return eventTime == null || eventTime.equals(PipelineSpec.Clocks.TIME_ATTRIBUTE)
        ? ATTRIBUTE
        : new CloudEventTime(eventTime);
  }

  /** Where the spec's {@code clocks.eventTime} reads the event time. */
  public static CloudEventTime of(PipelineSpec spec) {
    return of(spec.clocks().eventTime());
  }

  /** Whether the event time is the attribute {@code time}. */
  public boolean isAttribute() {
    return dataField == null;
  }

  /** The event time of a structured-mode event as a JSON tree; null when it has none. */
  public @Nullable Instant of(@Nullable JsonNode event) {
    if (event == null || !event.isObject()) {
      return null;
    }
    JsonNode time = dataField == null ? event.get("time") : event.path("data").get(dataField);
    return time != null && time.isTextual() ? parseTime(time.asText()) : null;
  }

  /**
   * The event time of a structured-mode event's bytes, read without building a tree; null when it
   * has none.
   */
  public @Nullable Instant ofStructured(byte @Nullable [] event) {
    if (event == null) {
      return null;
    }
    try (JsonParser parser = JSON_FACTORY.createParser(event)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        return null;
      }
      String member = dataField == null ? "time" : "data";
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String name = parser.currentName();
        JsonToken token = parser.nextToken();
        if (member.equals(name)) {
          if (dataField == null) {
            return token == JsonToken.VALUE_STRING ? parseTime(parser.getText()) : null;
          }
          return token == JsonToken.START_OBJECT ? member(parser, dataField) : null;
        }
        parser.skipChildren();
      }
      return null;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /**
   * The event time of a binary-mode event: the {@code ce_time} header's value ({@code timeHeader})
   * for the attribute, else the field of the record's value, which is the event's data; null when
   * it has none.
   */
  public @Nullable Instant ofBinary(@Nullable String timeHeader, byte @Nullable [] data) {
    if (dataField == null) {
      return parseTime(timeHeader);
    }
    if (data == null) {
      return null;
    }
    try (JsonParser parser = JSON_FACTORY.createParser(data)) {
      return parser.nextToken() == JsonToken.START_OBJECT ? member(parser, dataField) : null;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** The time in member {@code name} of the object the parser has just entered. */
  private static @Nullable Instant member(JsonParser parser, String name) throws IOException {
    while (parser.nextToken() == JsonToken.FIELD_NAME) {
      String field = parser.currentName();
      JsonToken token = parser.nextToken();
      if (name.equals(field)) {
        return token == JsonToken.VALUE_STRING ? parseTime(parser.getText()) : null;
      }
      parser.skipChildren();
    }
    return null;
  }

  /** An RFC 3339 timestamp as an instant; null when absent or unreadable. */
  public static @Nullable Instant parseTime(@Nullable String text) {
    if (text == null) {
      return null;
    }
    try {
      return new Instant(OffsetDateTime.parse(text).toInstant().toEpochMilli());
    } catch (RuntimeException e) {
      return null;
    }
  }

  @Override
  public String toString() {
    return dataField == null ? "the attribute time" : "data." + dataField;
  }
}
