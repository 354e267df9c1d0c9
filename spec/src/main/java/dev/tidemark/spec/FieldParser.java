package dev.tidemark.spec;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.spec.PipelineSpec.Field;
import dev.tidemark.spec.PipelineSpec.FieldType;
import java.io.Serializable;
import java.math.BigDecimal;
import java.time.DateTimeException;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * Reads the {@code data} object of a CloudEvent into {@link FieldValues} as a spec's {@code
 * events.fields} declare them. Fields are checked in the order they are declared; the first that
 * fails rejects the event with that field's dead-letter reason ({@link FieldRejection}). Members of
 * {@code data} that the spec does not declare are ignored.
 *
 * <p>Rules per type: a string is a JSON string of {@code minLength} to {@code maxLength} code
 * points, and with {@code chars: plain} holds no control character (U+0000 to U+001F, U+007F to
 * U+009F) and no unpaired surrogate; a decimal is a JSON number (never a string) within {@code
 * min}/{@code max}, with at most {@code scale} digits after the point and {@code integerDigits}
 * before it, checked before it is expanded (so {@code 1E+99999999} costs nothing); an integer is a
 * JSON integer that fits 64 bits, within {@code min}/{@code max}; a boolean is {@code true} or
 * {@code false}; an enum is one of its values; a country is an ISO 3166-1 alpha-2 code; a timestamp
 * is an RFC 3339 string ({@code 2026-01-01T00:00:00Z}, upper-case T and Z). A required field that
 * is absent or null fails; an optional one is then absent.
 *
 * <p>Serializable (it holds the spec's fields), so a DoFn can carry it; thread-safe.
 */
public final class FieldParser implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final Set<String> COUNTRIES = Set.of(Locale.getISOCountries());

  private final Field[] fields;
  private final FieldType[] types;
  private final Set<?>[] enums;
  private final boolean hasStrings;
  private final int keyIndex;

  private FieldParser(PipelineSpec.Events events) {
    List<Field> declared = events.fields();
    this.fields = declared.toArray(new Field[0]);
    this.types = new FieldType[fields.length];
    this.enums = new Set<?>[fields.length];
    boolean strings = false;
    int key = -1;
    for (int i = 0; i < fields.length; i++) {
      types[i] = fields[i].type();
      strings |= !types[i].isLong();
      if (types[i] == FieldType.ENUM) {
        enums[i] = new HashSet<>(fields[i].values());
      }
      if (fields[i].name().equals(events.key())) {
        key = i;
      }
    }
    this.hasStrings = strings;
    this.keyIndex = key;
  }

  /** The parser of a spec's events. */
  public static FieldParser of(PipelineSpec spec) {
    return new FieldParser(spec.events());
  }

  /** The parser of events as {@code events} (a spec's {@code events} section) declare them. */
  public static FieldParser of(PipelineSpec.Events events) {
    return new FieldParser(events);
  }

  /** The index of the field named {@code name}, or -1. */
  public int indexOf(String name) {
    for (int i = 0; i < fields.length; i++) {
      if (fields[i].name().equals(name)) {
        return i;
      }
    }
    return -1;
  }

  /** The name of field {@code index}. */
  public String nameOf(int index) {
    return fields[index].name();
  }

  /** The index of the spec's {@code events.key} field: where {@link #key} reads the key. */
  public int keyIndex() {
    return keyIndex;
  }

  /** The event's key: the value of the spec's {@code events.key} field. */
  public String key(FieldValues values) {
    return values.strings[keyIndex];
  }

  /** The coder of what this parser returns. */
  public FieldValues.Coder coder() {
    return FieldValues.Coder.of(List.of(fields));
  }

  /**
   * The typed fields of {@code data}, stamped with the event's clocks.
   *
   * @throws FieldRejection with the failing field's reason (or {@code invalid_data} when {@code
   *     data} is not a JSON object)
   */
  public FieldValues parse(@Nullable JsonNode data, long eventTimeMillis, long ingestionTimeMillis)
      throws FieldRejection {
    if (data == null || !data.isObject()) {
      throw new FieldRejection("invalid_data", "data is not a JSON object");
    }
    FieldValues values =
        new FieldValues(fields.length, hasStrings, eventTimeMillis, ingestionTimeMillis);
    for (int i = 0; i < fields.length; i++) {
      Field field = fields[i];
      JsonNode node = data.get(field.name());
      if (node == null || node.isNull()) {
        if (!field.optional()) {
          throw reject(field, "is missing");
        }
        continue;
      }
      switch (types[i]) {
        case STRING:
          values.strings[i] = string(field, node);
          break;
        case DECIMAL:
          values.longs[i] = decimal(field, node);
          break;
        case INTEGER:
          values.longs[i] = integer(field, node);
          break;
        case BOOLEAN:
          if (!node.isBoolean()) {
            throw reject(field, node + " is not true or false");
          }
          values.longs[i] = node.booleanValue() ? 1 : 0;
          break;
        case ENUM:
          if (!node.isTextual() || !enums[i].contains(node.textValue())) {
            throw reject(field, node + " is not one of " + field.values());
          }
          values.strings[i] = node.textValue();
          break;
        case COUNTRY:
          if (!node.isTextual() || !COUNTRIES.contains(node.textValue())) {
            throw reject(field, node + " is not an ISO 3166-1 alpha-2 code such as GB");
          }
          values.strings[i] = node.textValue();
          break;
        case TIMESTAMP:
          values.longs[i] = timestamp(field, node);
          break;
      }
      values.present |= 1L << i;
    }
    return values;
  }

  /**
   * The typed fields of {@code data}, stamped with the event time that field {@code eventTimeField}
   * holds (a required timestamp field, as a spec's {@code clocks.eventTime} names one) and {@code
   * ingestionTimeMillis}.
   *
   * @throws FieldRejection as {@link #parse}
   * @throws IllegalArgumentException when field {@code eventTimeField} is not a required timestamp
   */
  public FieldValues parseTimedBy(
      int eventTimeField, @Nullable JsonNode data, long ingestionTimeMillis) throws FieldRejection {
    if (!isEventTimeField(eventTimeField)) {
      throw new IllegalArgumentException(
          "field " + eventTimeField + " is not a required timestamp field of " + List.of(fields));
    }
    FieldValues values = parse(data, 0, ingestionTimeMillis);
    return values.withEventTime(values.longs[eventTimeField]);
  }

  /**
   * Where the event time named {@code name} (a spec's {@code clocks.eventTime}) is read: -1 for the
   * attribute {@code time}, else the index of that field, for {@link #parseTimedBy}.
   *
   * @throws IllegalArgumentException when {@code name} is neither {@code time} nor a required
   *     timestamp field
   */
  public int eventTimeIndex(String name) {
    if (name.equals(PipelineSpec.Clocks.TIME_ATTRIBUTE)) {
      return -1;
    }
    int index = indexOf(name);
    if (!isEventTimeField(index)) {
      throw new IllegalArgumentException(
          "the event time '"
              + name
              + "' is neither the attribute 'time' nor a required timestamp field of data "
              + Arrays.stream(fields).map(Field::name).toList());
    }
    return index;
  }

  private boolean isEventTimeField(int index) {
    return index >= 0
        && index < fields.length
        && types[index] == FieldType.TIMESTAMP
        && !fields[index].optional();
  }

  private static FieldRejection reject(Field field, String problem) {
    return new FieldRejection(field.reason(), "data." + field.name() + " " + problem);
  }

  private static String string(Field field, JsonNode node) throws FieldRejection {
    if (!node.isTextual()) {
      throw reject(field, "is not a string");
    }
    String text = node.textValue();
    if (text.length() < field.minLength()
        || text.codePointCount(0, text.length()) < field.minLength()) {
      throw reject(field, text.isEmpty() ? "is empty" : "is shorter than " + field.minLength());
    }
    if (field.plainText()) {
      String unsafe = unsafeCharacter(text);
      if (unsafe != null) {
        throw reject(field, "holds " + unsafe);
      }
    }
    Integer max = field.maxLength();
    if (max != null && text.length() > max) {
      int characters = text.codePointCount(0, text.length());
      if (characters > max) {
        throw reject(field, "is " + characters + " characters, over the limit of " + max);
      }
    }
    return text;
  }

  private static long decimal(Field field, JsonNode node) throws FieldRejection {
    if (!node.isNumber()) {
      throw reject(field, "is not a JSON number (strings such as \"12.34\" are rejected)");
    }
    BigDecimal value;
    try {
      value =
          node.isBigDecimal() || node.isIntegralNumber()
              ? node.decimalValue()
              : new BigDecimal(node.asText());
    } catch (NumberFormatException e) {
      throw reject(field, node.asText() + " is not a finite number");
    }
    checkRange(field, value);
    if (value.signum() == 0) {
      return 0;
    }
    BigDecimal stripped = value.stripTrailingZeros();
    if (stripped.scale() > field.scale()) {
      throw reject(field, stripped + " has more than " + field.scale() + " decimal places");
    }
    if (stripped.precision() - stripped.scale() > field.integerDigits()) {
      throw reject(field, stripped + " is too large");
    }
    return stripped.scaleByPowerOfTen(field.scale()).longValueExact();
  }

  private static long integer(Field field, JsonNode node) throws FieldRejection {
    if (!node.isIntegralNumber() || !node.canConvertToLong()) {
      throw reject(field, node + " is not an integer of at most 64 bits");
    }
    checkRange(field, node.decimalValue());
    return node.longValue();
  }

  private static void checkRange(Field field, BigDecimal value) throws FieldRejection {
    BigDecimal min = field.min();
    if (min != null && value.compareTo(min) < 0) {
      throw reject(
          field,
          min.signum() == 0 && value.signum() < 0
              ? value + " is negative"
              : value + " is below the minimum " + min.toPlainString());
    }
    BigDecimal max = field.max();
    if (max != null && value.compareTo(max) > 0) {
      throw reject(field, value + " is above the maximum " + max.toPlainString());
    }
  }

  private static long timestamp(Field field, JsonNode node) throws FieldRejection {
    if (node.isTextual()) {
      try {
        return epochMillis(node.textValue());
      } catch (DateTimeException | ArithmeticException e) {
        // reported below
      }
    }
    throw reject(field, node + " is not an RFC 3339 timestamp such as 2026-01-01T00:00:00Z");
  }

  /** Epoch milliseconds of an RFC 3339 timestamp; throws for any other text. */
  static long epochMillis(String text) {
    return OffsetDateTime.parse(text, DateTimeFormatter.ISO_OFFSET_DATE_TIME)
        .toInstant()
        .toEpochMilli();
  }

  /** Whether {@code text} is an RFC 3339 timestamp this parser accepts. */
  static boolean isTimestamp(String text) {
    try {
      epochMillis(text);
      return true;
    } catch (DateTimeException | ArithmeticException e) {
      return false;
    }
  }

  /**
   * The first character of {@code text} that is not plain text (a control character or an unpaired
   * surrogate), described with its position, or null when there is none.
   */
  public static @Nullable String unsafeCharacter(String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (Character.isISOControl(c)) {
        return String.format("the control character U+%04X at index %d", (int) c, i);
      }
      if (Character.isHighSurrogate(c)
          && i + 1 < text.length()
          && Character.isLowSurrogate(text.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return String.format("the unpaired surrogate U+%04X at index %d", (int) c, i);
      }
    }
    return null;
  }
}
