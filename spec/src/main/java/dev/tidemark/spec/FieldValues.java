package dev.tidemark.spec;

import java.io.ByteArrayOutputStream;
import java.io.DataInput;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.coders.CustomCoder;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * The typed fields of one event's {@code data}, as {@link FieldParser} read them, and the event's
 * two clocks. Field {@code i} of the spec's {@code events.fields} is at index {@code i}: numbers,
 * booleans (0 or 1) and timestamps (epoch milliseconds) in {@link #getLong}, decimals unscaled
 * (12.34 with scale 2 is 1234), strings, enums and countries in {@link #getString}. An absent
 * optional field is not {@link #isPresent present}. No value is boxed.
 */
public final class FieldValues {
  private static final String[] NO_STRINGS = new String[0];

  final long[] longs;
  final String[] strings;
  long present;
  final long eventTimeMillis;
  final long ingestionTimeMillis;

  FieldValues(int fields, boolean hasStrings, long eventTimeMillis, long ingestionTimeMillis) {
    this.longs = new long[fields];
    this.strings = hasStrings ? new String[fields] : NO_STRINGS;
    this.eventTimeMillis = eventTimeMillis;
    this.ingestionTimeMillis = ingestionTimeMillis;
  }

  /**
   * Values laid out as a spec's {@code events.fields}: field {@code i}'s number in {@code longs[i]}
   * or its string in {@code strings[i]}, present when bit {@code i} of {@code present} is set. The
   * arrays are kept, not copied; {@code strings} may be empty when no field is a string.
   */
  public static FieldValues of(
      long[] longs,
      String[] strings,
      long present,
      long eventTimeMillis,
      long ingestionTimeMillis) {
    if (strings.length != 0 && strings.length != longs.length) {
      throw new IllegalArgumentException(
          longs.length + " numbers but " + strings.length + " strings: give one slot per field");
    }
    return new FieldValues(longs, strings, present, eventTimeMillis, ingestionTimeMillis);
  }

  /** These values with another event time (the arrays are shared, not copied). */
  FieldValues withEventTime(long eventTimeMillis) {
    return new FieldValues(longs, strings, present, eventTimeMillis, ingestionTimeMillis);
  }

  private FieldValues(
      long[] longs,
      String[] strings,
      long present,
      long eventTimeMillis,
      long ingestionTimeMillis) {
    this.longs = longs;
    this.strings = strings;
    this.present = present;
    this.eventTimeMillis = eventTimeMillis;
    this.ingestionTimeMillis = ingestionTimeMillis;
  }

  /** Whether field {@code index} has a value. */
  public boolean isPresent(int index) {
    return (present & (1L << index)) != 0;
  }

  /** The value of a number, boolean or timestamp field (0 when absent). */
  public long getLong(int index) {
    return longs[index];
  }

  /** The value of a string, enum or country field, or null when absent. */
  public @Nullable String getString(int index) {
    return strings.length == 0 ? null : strings[index];
  }

  public long eventTimeMillis() {
    return eventTimeMillis;
  }

  public long ingestionTimeMillis() {
    return ingestionTimeMillis;
  }

  /** How many fields these values are laid out for. */
  public int size() {
    return longs.length;
  }

  /**
   * Writes these values without their spec: the number of fields, the presence mask, the mask of
   * present fields that hold strings (all variable-length integers), each present field in order (a
   * string as its UTF-8 length and bytes, a number as a zig-zag variable-length integer), then the
   * event time and the ingestion time less the event time. An event's coder writes its fields this
   * way, so one coder serves every spec.
   */
  public void writeTo(DataOutput out) throws IOException {
    VarInts.writeUnsigned(longs.length, out);
    VarInts.writeUnsigned(present, out);
    long stringMask = 0;
    for (int i = 0; i < strings.length; i++) {
      if ((present & (1L << i)) != 0 && strings[i] != null) {
        stringMask |= 1L << i;
      }
    }
    VarInts.writeUnsigned(stringMask, out);
    for (int i = 0; i < longs.length; i++) {
      if ((present & (1L << i)) != 0) {
        if ((stringMask & (1L << i)) != 0) {
          VarInts.writeString(strings[i], out);
        } else {
          VarInts.writeSigned(longs[i], out);
        }
      }
    }
    VarInts.writeSigned(eventTimeMillis, out);
    VarInts.writeSigned(ingestionTimeMillis - eventTimeMillis, out);
  }

  /** Reads what {@link #writeTo} wrote. */
  public static FieldValues readFrom(DataInput in) throws IOException {
    int size = VarInts.readCount(in, 64, "fields");
    long present = VarInts.readUnsigned(in);
    long stringMask = VarInts.readUnsigned(in);
    if (size < 64 && ((present | stringMask) >>> size) != 0) {
      throw new CoderException("a presence mask beyond " + size + " fields");
    }
    if ((stringMask & ~present) != 0) {
      throw new CoderException("a string mask beyond the present fields");
    }
    FieldValues values = new FieldValues(size, stringMask != 0, 0, 0);
    for (int i = 0; i < size; i++) {
      if ((present & (1L << i)) != 0) {
        if ((stringMask & (1L << i)) != 0) {
          values.strings[i] = VarInts.readString(in);
        } else {
          values.longs[i] = VarInts.readSigned(in);
        }
      }
    }
    long event = VarInts.readSigned(in);
    long ingestion = event + VarInts.readSigned(in);
    return new FieldValues(values.longs, values.strings, present, event, ingestion);
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof FieldValues)) {
      return false;
    }
    FieldValues that = (FieldValues) o;
    return present == that.present
        && eventTimeMillis == that.eventTimeMillis
        && ingestionTimeMillis == that.ingestionTimeMillis
        && Arrays.equals(longs, that.longs)
        && Arrays.equals(strings, that.strings);
  }

  @Override
  public int hashCode() {
    return Objects.hash(present, eventTimeMillis, Arrays.hashCode(longs));
  }

  @Override
  public String toString() {
    return "FieldValues{present="
        + Long.toBinaryString(present)
        + ", longs="
        + Arrays.toString(longs)
        + ", strings="
        + Arrays.toString(strings)
        + ", event="
        + eventTimeMillis
        + ", ingestion="
        + ingestionTimeMillis
        + "}";
  }

  /**
   * Deterministic coder of the values of one spec's fields, or of the fields a feature combine
   * reads ({@link SpecFeaturesFn#inputCoder}): other fields are not written and decode as absent.
   * Format version 1: a version byte; the presence mask of the written fields (a variable-length
   * integer); each of them in field order, a number as a zig-zag variable-length integer, a string
   * as its UTF-8 length and bytes; the event time, then the ingestion time less the event time,
   * both zig-zag variable-length integers.
   */
  public static final class Coder extends CustomCoder<FieldValues> {
    private static final long serialVersionUID = 1L;
    static final int VERSION = 1;

    private final boolean[] isString;
    private final boolean hasStrings;
    private final long written;

    /** The coder of the values of {@code fields}. */
    public static Coder of(List<PipelineSpec.Field> fields) {
      return of(fields, -1L);
    }

    /** The coder of the fields of {@code fields} whose bit is set in {@code written}. */
    static Coder of(List<PipelineSpec.Field> fields, long written) {
      boolean[] isString = new boolean[fields.size()];
      for (int i = 0; i < isString.length; i++) {
        isString[i] = !fields.get(i).type().isLong();
      }
      return new Coder(isString, written);
    }

    private Coder(boolean[] isString, long written) {
      this.isString = isString;
      this.written = written;
      boolean any = false;
      for (boolean s : isString) {
        any |= s;
      }
      this.hasStrings = any;
    }

    @Override
    public void encode(FieldValues value, OutputStream outStream) throws IOException {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream(48);
      DataOutputStream out = new DataOutputStream(bytes);
      out.writeByte(VERSION);
      long present = value.present & written;
      VarInts.writeUnsigned(present, out);
      for (int i = 0; i < isString.length; i++) {
        if ((present & (1L << i)) != 0) {
          if (isString[i]) {
            VarInts.writeString(value.strings[i], out);
          } else {
            VarInts.writeSigned(value.longs[i], out);
          }
        }
      }
      VarInts.writeSigned(value.eventTimeMillis, out);
      VarInts.writeSigned(value.ingestionTimeMillis - value.eventTimeMillis, out);
      bytes.writeTo(outStream);
    }

    @Override
    public FieldValues decode(InputStream inStream) throws IOException {
      DataInputStream in = new DataInputStream(inStream);
      checkVersion(in.readUnsignedByte(), "FieldValues.Coder");
      long present = VarInts.readUnsigned(in);
      if (isString.length < 64 && (present >>> isString.length) != 0) {
        throw new CoderException("a presence mask beyond " + isString.length + " fields");
      }
      long[] longs = new long[isString.length];
      String[] strings = hasStrings ? new String[isString.length] : NO_STRINGS;
      for (int i = 0; i < isString.length; i++) {
        if ((present & (1L << i)) != 0) {
          if (isString[i]) {
            strings[i] = VarInts.readString(in);
          } else {
            longs[i] = VarInts.readSigned(in);
          }
        }
      }
      long event = VarInts.readSigned(in);
      long ingestion = event + VarInts.readSigned(in);
      FieldValues values = new FieldValues(isString.length, hasStrings, event, ingestion);
      System.arraycopy(longs, 0, values.longs, 0, longs.length);
      System.arraycopy(strings, 0, values.strings, 0, strings.length);
      values.present = present;
      return values;
    }

    @Override
    public void verifyDeterministic() {}

    @Override
    public boolean equals(@Nullable Object o) {
      return o instanceof Coder
          && written == ((Coder) o).written
          && Arrays.equals(isString, ((Coder) o).isString);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(isString) * 31 + Long.hashCode(written);
    }
  }

  static void checkVersion(int version, String coder) throws CoderException {
    if (version != 1) {
      throw new CoderException(
          coder
              + " cannot read format version "
              + version
              + ": this build reads version 1 (the bytes are another release's or not this"
              + " coder's)");
    }
  }
}
