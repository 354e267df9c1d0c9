package dev.tidemark.transforms.values;

import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.apache.beam.sdk.coders.AtomicCoder;
import org.apache.beam.sdk.coders.CoderException;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;

/**
 * The field encodings shared by Tidemark's compact coders: length-prefixed UTF-8 strings, nullable
 * values behind a presence byte, instants as epoch milliseconds.
 *
 * <p>Every coder built on it is deterministic: equal values encode to equal bytes, so the types can
 * be used as keys and compared across replays.
 *
 * <p>{@link DataCoder} and the string, byte and list helpers are public for coders outside this
 * package (the Kafka sink's record coder); the other helpers serve the value coders here.
 */
public final class Codec {
  private Codec() {}

  /**
   * Reads and writes one value type on data streams; the base of every Tidemark coder. A value is
   * written into a buffer of the encoding thread and handed to the runner's stream in one call: the
   * runners' streams (Flink's {@code DataOutputViewWrapper}) take each of {@link
   * DataOutputStream}'s single-byte writes as a call of their own, so writing fields to them
   * directly costs a call per byte. The buffer takes every field straight into its array, without a
   * stream in between.
   *
   * <p>Format versions: every encoding starts with one byte, the format version its fields were
   * written in ({@link #version()}, from 1), so bytes a runner kept in state (a Flink savepoint, a
   * Dataflow job's state) can be read by later releases. A coder reads every version from {@link
   * #oldestVersion()} to {@link #version()} ({@link #read(int, DataInputStream)} gets the version);
   * any other version fails with a {@link CoderException} naming the coder and the version.
   * Changing what {@link #write} writes means a new version and a {@code read} that still reads the
   * old ones. A value written inside another ({@link #writeVersioned}) carries its own version
   * byte, so it can change without its container changing.
   *
   * <p>Flink also keeps every coder object in a savepoint (Java-serialized, in its state
   * serializer's snapshot), so each coder class declares a fixed {@code serialVersionUID}.
   */
  public abstract static class DataCoder<T> extends AtomicCoder<T> {
    private static final long serialVersionUID = 1L;

    /** The format version {@link #write} writes: the newest this coder reads. */
    protected abstract int version();

    /** The oldest format version this coder still reads; every version up to it fails. */
    protected int oldestVersion() {
      return 1;
    }

    /** Writes the fields of {@code value} in format {@link #version()}. */
    protected abstract void write(T value, DataOutput out) throws IOException;

    /** Reads the fields of a value written in format {@code version}, one this coder reads. */
    protected abstract T read(int version, DataInputStream in) throws IOException;

    /** Writes the format version, then the fields: a value inside another coder's encoding. */
    public final void writeVersioned(T value, DataOutput out) throws IOException {
      out.writeByte(version());
      write(value, out);
    }

    /** Reads what {@link #writeVersioned} wrote, in any format version this coder reads. */
    public final T readVersioned(DataInputStream in) throws IOException {
      int version = in.readUnsignedByte();
      if (version < oldestVersion() || version > version()) {
        throw new CoderException(unknownVersion(version));
      }
      return read(version, in);
    }

    private String unknownVersion(int version) {
      String coder = getClass().getName().substring(getClass().getPackageName().length() + 1);
      return coder.replace('$', '.')
          + " cannot read format version "
          + version
          + ": this build reads versions "
          + oldestVersion()
          + " to "
          + version()
          + ". The bytes were written by another Tidemark release (restore that state with a"
          + " release that reads it, or drain the job and start fresh) or are not this coder's";
    }

    @Override
    public final void encode(T value, OutputStream outStream) throws IOException {
      if (value == null) {
        throw new CoderException("cannot encode a null " + getClass().getSimpleName() + " value");
      }
      EncodeBuffer shared = EncodeBuffer.THREAD.get();
      // A coder writing another through encode() gives the nested one a buffer of its own.
      EncodeBuffer buffer = shared.inUse ? new EncodeBuffer() : shared;
      buffer.inUse = true;
      try {
        buffer.reset();
        writeVersioned(value, buffer);
        buffer.writeTo(outStream);
      } finally {
        buffer.release(buffer == shared);
      }
    }

    @Override
    public final T decode(InputStream inStream) throws IOException {
      return readVersioned(new DataInputStream(inStream));
    }

    @Override
    public final void verifyDeterministic() {}

    /**
     * True for the value types with value equality (all but the feature accumulator): Beam then
     * uses the value itself as its structural value instead of its encoding.
     */
    @Override
    public boolean consistentWithEquals() {
      return true;
    }
  }

  /**
   * The encoding buffer of one thread, reused value after value: a {@link DataOutput} that writes
   * each field straight into its array, big-endian as {@link DataOutputStream} does. Not
   * synchronized, unlike {@link java.io.ByteArrayOutputStream} and {@link DataOutputStream}'s own
   * byte writes ({@link DataOutputStream#writeInt} is four single-byte writes, each taking a lock:
   * a lock per byte encoded, though the buffer never leaves its thread).
   */
  private static final class EncodeBuffer implements DataOutput {
    static final ThreadLocal<EncodeBuffer> THREAD = ThreadLocal.withInitial(EncodeBuffer::new);

    /** Larger buffers are dropped after use rather than kept by the thread. */
    private static final int KEPT_BYTES = 64 * 1024;

    private static final VarHandle INT =
        MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle LONG =
        MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    boolean inUse;
    private byte[] buf = new byte[512];
    private int count;

    /** Room for {@code more} bytes after {@code count}. */
    private void ensure(int more) {
      if (more > buf.length - count) {
        buf = Arrays.copyOf(buf, Math.max(buf.length * 2, Math.addExact(count, more)));
      }
    }

    @Override
    public void write(int b) {
      ensure(1);
      buf[count++] = (byte) b;
    }

    @Override
    public void write(byte[] b) {
      write(b, 0, b.length);
    }

    @Override
    public void write(byte[] b, int off, int len) {
      Objects.checkFromIndexSize(off, len, b.length);
      ensure(len);
      System.arraycopy(b, off, buf, count, len);
      count += len;
    }

    @Override
    public void writeBoolean(boolean v) {
      write(v ? 1 : 0);
    }

    @Override
    public void writeByte(int v) {
      write(v);
    }

    @Override
    public void writeShort(int v) {
      ensure(2);
      buf[count++] = (byte) (v >>> 8);
      buf[count++] = (byte) v;
    }

    @Override
    public void writeChar(int v) {
      writeShort(v);
    }

    @Override
    public void writeInt(int v) {
      ensure(4);
      INT.set(buf, count, v);
      count += 4;
    }

    @Override
    public void writeLong(long v) {
      ensure(8);
      LONG.set(buf, count, v);
      count += 8;
    }

    @Override
    public void writeFloat(float v) {
      writeInt(Float.floatToIntBits(v));
    }

    @Override
    public void writeDouble(double v) {
      writeLong(Double.doubleToLongBits(v));
    }

    @Override
    public void writeBytes(String s) {
      ensure(s.length());
      for (int i = 0; i < s.length(); i++) {
        buf[count++] = (byte) s.charAt(i);
      }
    }

    @Override
    public void writeChars(String s) {
      for (int i = 0; i < s.length(); i++) {
        writeChar(s.charAt(i));
      }
    }

    /** Not used by Tidemark's coders, which write strings as length-prefixed UTF-8. */
    @Override
    public void writeUTF(String s) {
      throw new UnsupportedOperationException("Tidemark coders write strings with writeString");
    }

    /**
     * {@link Codec#writeString}'s encoding (length, then UTF-8) of an ASCII string copied straight
     * into the array; other strings go through {@link String#getBytes}. Encoding each string into a
     * new array first, then copying that, would dominate a decision's encoding time.
     */
    void writeString(String value) throws IOException {
      int length = value.length();
      ensure(4 + length);
      int at = count + 4;
      for (int i = 0; i < length; i++) {
        char c = value.charAt(i);
        if (c >= 0x80) {
          Codec.writeBytes(value.getBytes(StandardCharsets.UTF_8), this);
          return;
        }
        buf[at + i] = (byte) c;
      }
      INT.set(buf, count, length);
      count = at + length;
    }

    void reset() {
      count = 0;
    }

    void writeTo(OutputStream out) throws IOException {
      out.write(buf, 0, count);
    }

    void release(boolean shared) {
      inUse = false;
      if (shared && buf.length > KEPT_BYTES) {
        THREAD.remove();
      }
    }
  }

  public static void writeString(String value, DataOutput out) throws IOException {
    if (out instanceof EncodeBuffer) {
      ((EncodeBuffer) out).writeString(value);
    } else {
      writeBytes(value.getBytes(StandardCharsets.UTF_8), out);
    }
  }

  public static String readString(DataInputStream in) throws IOException {
    return new String(readBytes(in), StandardCharsets.UTF_8);
  }

  /** Marks a string written in full by {@link #writeKnownString}. */
  private static final int UNKNOWN_STRING = 0xFF;

  /**
   * A string that is nearly always one of {@code known} (at most 255 of them, in an order that
   * never changes): one byte, its index, or {@code 0xFF} and the string. Decoding gives the
   * constant back, so repeated strings (a pane's timing, a decision's label) are neither copied nor
   * allocated for every value.
   */
  static void writeKnownString(String value, String[] known, DataOutput out) throws IOException {
    for (int i = 0; i < known.length; i++) {
      if (known[i].equals(value)) {
        out.writeByte(i);
        return;
      }
    }
    out.writeByte(UNKNOWN_STRING);
    writeString(value, out);
  }

  static String readKnownString(String[] known, DataInputStream in) throws IOException {
    int index = in.readUnsignedByte();
    if (index == UNKNOWN_STRING) {
      return readString(in);
    }
    if (index >= known.length) {
      throw new CoderException(
          "known string " + index + " is not one of the " + known.length + " this coder knows");
    }
    return known[index];
  }

  static void writeNullableString(@Nullable String value, DataOutput out) throws IOException {
    out.writeBoolean(value != null);
    if (value != null) {
      writeString(value, out);
    }
  }

  static @Nullable String readNullableString(DataInputStream in) throws IOException {
    return in.readBoolean() ? readString(in) : null;
  }

  public static void writeBytes(byte[] value, DataOutput out) throws IOException {
    out.writeInt(value.length);
    out.write(value);
  }

  public static byte[] readBytes(DataInputStream in) throws IOException {
    int length = in.readInt();
    if (length < 0) {
      throw new CoderException("negative length " + length);
    }
    byte[] bytes = new byte[length];
    in.readFully(bytes);
    return bytes;
  }

  static void writeInstant(Instant value, DataOutput out) throws IOException {
    out.writeLong(value.getMillis());
  }

  static Instant readInstant(DataInputStream in) throws IOException {
    return Instant.ofEpochMilli(in.readLong());
  }

  static void writeNullableInstant(@Nullable Instant value, DataOutput out) throws IOException {
    out.writeBoolean(value != null);
    if (value != null) {
      writeInstant(value, out);
    }
  }

  static @Nullable Instant readNullableInstant(DataInputStream in) throws IOException {
    return in.readBoolean() ? readInstant(in) : null;
  }

  public static void writeStrings(List<String> values, DataOutput out) throws IOException {
    out.writeInt(values.size());
    for (String value : values) {
      writeString(value, out);
    }
  }

  public static List<String> readStrings(DataInputStream in) throws IOException {
    int size = in.readInt();
    List<String> values = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      values.add(readString(in));
    }
    return values;
  }
}
