package dev.tidemark.transforms.util;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import io.cloudevents.jackson.JsonFormat;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;
import org.joda.time.format.DateTimeFormatter;
import org.joda.time.format.ISODateTimeFormat;

/**
 * The one JSON configuration Tidemark uses: a shared {@link ObjectMapper} that keeps decimals exact
 * and knows CloudEvents, and the RFC 3339 UTC rendering of instants used in every output record.
 */
public final class Json {
  /** Thread-safe once configured; decimals stay {@link java.math.BigDecimal}. */
  public static final ObjectMapper MAPPER =
      new ObjectMapper()
          .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .registerModule(JsonFormat.getCloudEventJacksonModule());

  /**
   * {@link #MAPPER}'s reader for untrusted records: it also rejects an object that repeats a member
   * name, at any depth ({@code {"id": "a", "id": "b"}}), where a lenient parser keeps one copy of
   * its own choosing.
   */
  public static final ObjectReader STRICT_READER =
      MAPPER.reader().with(StreamReadFeature.STRICT_DUPLICATE_DETECTION);

  private static final JsonFactory FACTORY = MAPPER.getFactory();
  private static final DateTimeFormatter RFC3339 = ISODateTimeFormat.dateTime().withZoneUTC();

  private Json() {}

  /** An instant as RFC 3339 in UTC with milliseconds, e.g. {@code 2026-01-01T00:05:00.000Z}. */
  public static String instant(Instant instant) {
    return RFC3339.print(instant);
  }

  /** Writes one JSON object; the callback writes its fields. */
  public static String object(FieldWriter fields) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
    try (JsonGenerator out = FACTORY.createGenerator(bytes)) {
      out.writeStartObject();
      fields.write(out);
      out.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }

  /** Writes a string field only when the value is present. */
  public static void optionalString(JsonGenerator out, String name, @Nullable String value)
      throws IOException {
    if (value != null) {
      out.writeStringField(name, value);
    }
  }

  /**
   * The canonical form of a JSON value: object fields sorted by name, no insignificant whitespace,
   * numbers as written. Two records with the same content in a different field order have the same
   * canonical form.
   *
   * <p>One generator writes the whole value: writing each name and scalar through {@link
   * JsonNode#toString()} would create a generator for each, a large part of the parser's cost.
   */
  public static String canonical(JsonNode node) {
    StringWriter text = new StringWriter(128);
    try (JsonGenerator out = FACTORY.createGenerator(text)) {
      writeCanonical(node, out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return text.toString();
  }

  private static void writeCanonical(JsonNode node, JsonGenerator out) throws IOException {
    if (node.isObject()) {
      List<String> names = new ArrayList<>(node.size());
      node.fieldNames().forEachRemaining(names::add);
      Collections.sort(names);
      out.writeStartObject();
      for (String name : names) {
        out.writeFieldName(name);
        writeCanonical(node.get(name), out);
      }
      out.writeEndObject();
    } else if (node.isArray()) {
      out.writeStartArray();
      for (JsonNode element : node) {
        writeCanonical(element, out);
      }
      out.writeEndArray();
    } else if (node.isNumber()) {
      // Scientific form, never expanded: 100, 100.0 and 1E+2 are one value; 1E+999999999 stays
      // short.
      out.writeNumber(node.decimalValue().stripTrailingZeros().toString());
    } else if (node.isTextual()) {
      out.writeString(node.textValue());
    } else if (node.isBoolean()) {
      out.writeBoolean(node.booleanValue());
    } else if (node.isNull()) {
      out.writeNull();
    } else {
      out.writeRawValue(node.toString()); // no such node comes from parsing JSON text
    }
  }

  /** Writes the fields of one JSON object. */
  @FunctionalInterface
  public interface FieldWriter {
    void write(JsonGenerator out) throws IOException;
  }
}
