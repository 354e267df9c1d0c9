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
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.coders.CustomCoder;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * The features of one key in one window pane, as {@link SpecFeaturesFn} computed them, in the
 * spec's feature order, and the pane's two clocks (the latest event time among its events and that
 * event's ingestion time).
 *
 * <p>Each value is a {@code long}: an integer, a decimal unscaled to its field's scale, epoch
 * milliseconds, 0/1 for a boolean, or the bits of a double ({@link #getDouble}) for a mean or a
 * custom double feature. A min, max, mean or last over no value is not {@link #isPresent present}.
 * A {@link #isSaturated saturated} feature overflowed: a sum held at the 64-bit bound in the
 * direction it overflowed, a distinct count held at its {@code maxDistinct}.
 */
public final class FeatureValues {
  final long[] values;
  final long present;
  final long saturated;
  final long latestEventMillis;
  final long latestIngestionMillis;

  FeatureValues(
      long[] values,
      long present,
      long saturated,
      long latestEventMillis,
      long latestIngestionMillis) {
    this.values = values;
    this.present = present;
    this.saturated = saturated;
    this.latestEventMillis = latestEventMillis;
    this.latestIngestionMillis = latestIngestionMillis;
  }

  /**
   * Features with {@code values} in a spec's feature order; bit {@code i} of {@code present} and
   * {@code saturated} is feature {@code i}'s. The array is kept, not copied.
   */
  public static FeatureValues of(
      long[] values,
      long present,
      long saturated,
      long latestEventMillis,
      long latestIngestionMillis) {
    return new FeatureValues(values, present, saturated, latestEventMillis, latestIngestionMillis);
  }

  /** The number of features. */
  public int size() {
    return values.length;
  }

  public long getLong(int index) {
    return values[index];
  }

  public double getDouble(int index) {
    return Double.longBitsToDouble(values[index]);
  }

  public boolean isPresent(int index) {
    return (present & (1L << index)) != 0;
  }

  public boolean isSaturated(int index) {
    return (saturated & (1L << index)) != 0;
  }

  public long latestEventMillis() {
    return latestEventMillis;
  }

  public long latestIngestionMillis() {
    return latestIngestionMillis;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof FeatureValues)) {
      return false;
    }
    FeatureValues that = (FeatureValues) o;
    return present == that.present
        && saturated == that.saturated
        && latestEventMillis == that.latestEventMillis
        && latestIngestionMillis == that.latestIngestionMillis
        && Arrays.equals(values, that.values);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(values) * 31 + Long.hashCode(latestEventMillis);
  }

  @Override
  public String toString() {
    return "FeatureValues{"
        + Arrays.toString(values)
        + ", present="
        + Long.toBinaryString(present)
        + ", saturated="
        + Long.toBinaryString(saturated)
        + ", latestEvent="
        + latestEventMillis
        + ", latestIngestion="
        + latestIngestionMillis
        + "}";
  }

  /** Writes these values in {@link Coder}'s format, into another coder's encoding. */
  public void writeTo(DataOutput out) throws IOException {
    out.writeByte(1);
    out.writeByte(values.length);
    for (long v : values) {
      VarInts.writeSigned(v, out);
    }
    VarInts.writeUnsigned(present, out);
    VarInts.writeUnsigned(saturated, out);
    VarInts.writeSigned(latestEventMillis, out);
    VarInts.writeSigned(latestIngestionMillis - latestEventMillis, out);
  }

  /** Reads what {@link #writeTo} wrote. */
  public static FeatureValues readFrom(DataInput in) throws IOException {
    FieldValues.checkVersion(in.readUnsignedByte(), "FeatureValues.Coder");
    int size = in.readUnsignedByte();
    if (size > PipelineSpec.MAX_FIELDS) {
      throw new CoderException(size + " features is not a valid encoding");
    }
    long[] values = new long[size];
    for (int i = 0; i < size; i++) {
      values[i] = VarInts.readSigned(in);
    }
    long present = VarInts.readUnsigned(in);
    long saturated = VarInts.readUnsigned(in);
    long event = VarInts.readSigned(in);
    return new FeatureValues(values, present, saturated, event, event + VarInts.readSigned(in));
  }

  /**
   * Deterministic coder. Format version 1: a version byte, the number of features, the values, the
   * presence and saturation masks, the two clocks.
   */
  public static final class Coder extends CustomCoder<FeatureValues> {
    private static final long serialVersionUID = 1L;
    private static final Coder INSTANCE = new Coder();

    public static Coder of() {
      return INSTANCE;
    }

    @Override
    public void encode(FeatureValues value, OutputStream outStream) throws IOException {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream(16 + 8 * value.values.length + 32);
      value.writeTo(new DataOutputStream(bytes));
      bytes.writeTo(outStream);
    }

    @Override
    public FeatureValues decode(InputStream inStream) throws IOException {
      return readFrom(new DataInputStream(inStream));
    }

    @Override
    public void verifyDeterministic() {}

    @Override
    public boolean equals(@Nullable Object o) {
      return o instanceof Coder;
    }

    @Override
    public int hashCode() {
      return Coder.class.hashCode();
    }
  }
}
