package dev.tidemark.transforms;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
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
 */
final class Codec {
  private Codec() {}

  /**
   * Reads and writes one value type on data streams; the base of every Tidemark coder. A value is
   * written into a buffer of the encoding thread and handed to the runner's stream in one call: the
   * runners' streams (Flink's {@code DataOutputViewWrapper}) take each of {@link
   * DataOutputStream}'s single-byte writes as a call of their own (issue 6: 22 % of the decision
   * step's thread at 1M accounts).
   */
  abstract static class DataCoder<T> extends AtomicCoder<T> {
    abstract void write(T value, DataOutputStream out) throws IOException;

    abstract T read(DataInputStream in) throws IOException;

    @Override
    public final void encode(T value, OutputStream outStream) throws IOException {
      if (value == null) {
        throw new CoderException("cannot encode a null " + getClass().getSimpleName() + " value");
      }
      EncodeBuffer buffer = EncodeBuffer.THREAD.get();
      if (buffer.inUse) {
        // A coder writing another through encode(): the nested one writes straight through.
        DataOutputStream out = new DataOutputStream(outStream);
        write(value, out);
        out.flush();
        return;
      }
      buffer.inUse = true;
      try {
        buffer.reset();
        write(value, buffer.data);
        buffer.writeTo(outStream);
      } finally {
        buffer.release();
      }
    }

    @Override
    public final T decode(InputStream inStream) throws IOException {
      return read(new DataInputStream(inStream));
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
   * The encoding buffer of one thread, reused value after value. Not synchronized, unlike {@link
   * java.io.ByteArrayOutputStream} and {@link DataOutputStream}'s own byte writes: {@link
   * DataOutputStream#writeInt} is four single-byte writes, and taking a lock for each was 40 % of
   * the decision step's thread at 1M accounts (issue 6).
   */
  private static final class EncodeBuffer extends OutputStream {
    static final ThreadLocal<EncodeBuffer> THREAD = ThreadLocal.withInitial(EncodeBuffer::new);

    /** Larger buffers are dropped after use rather than kept by the thread. */
    private static final int KEPT_BYTES = 64 * 1024;

    final DataOutputStream data = new UnlockedDataOutput(this);
    boolean inUse;
    private byte[] buf = new byte[512];
    private int count;

    @Override
    public void write(int b) {
      if (count == buf.length) {
        grow(1);
      }
      buf[count++] = (byte) b;
    }

    @Override
    public void write(byte[] b, int off, int len) {
      Objects.checkFromIndexSize(off, len, b.length);
      if (len > buf.length - count) {
        grow(len);
      }
      System.arraycopy(b, off, buf, count, len);
      count += len;
    }

    private void grow(int more) {
      buf = Arrays.copyOf(buf, Math.max(buf.length * 2, Math.addExact(count, more)));
    }

    void reset() {
      count = 0;
    }

    void writeTo(OutputStream out) throws IOException {
      out.write(buf, 0, count);
    }

    void release() {
      inUse = false;
      if (buf.length > KEPT_BYTES) {
        THREAD.remove();
      }
    }
  }

  /** A {@link DataOutputStream} whose byte writes go straight through, without its lock. */
  private static final class UnlockedDataOutput extends DataOutputStream {
    UnlockedDataOutput(OutputStream out) {
      super(out);
    }

    @Override
    public void write(int b) throws IOException {
      out.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      out.write(b, off, len);
    }
  }

  static void writeString(String value, DataOutputStream out) throws IOException {
    writeBytes(value.getBytes(java.nio.charset.StandardCharsets.UTF_8), out);
  }

  static String readString(DataInputStream in) throws IOException {
    return new String(readBytes(in), java.nio.charset.StandardCharsets.UTF_8);
  }

  static void writeNullableString(@Nullable String value, DataOutputStream out) throws IOException {
    out.writeBoolean(value != null);
    if (value != null) {
      writeString(value, out);
    }
  }

  static @Nullable String readNullableString(DataInputStream in) throws IOException {
    return in.readBoolean() ? readString(in) : null;
  }

  static void writeBytes(byte[] value, DataOutputStream out) throws IOException {
    out.writeInt(value.length);
    out.write(value);
  }

  static byte[] readBytes(DataInputStream in) throws IOException {
    int length = in.readInt();
    if (length < 0) {
      throw new CoderException("negative length " + length);
    }
    byte[] bytes = new byte[length];
    in.readFully(bytes);
    return bytes;
  }

  static void writeInstant(Instant value, DataOutputStream out) throws IOException {
    out.writeLong(value.getMillis());
  }

  static Instant readInstant(DataInputStream in) throws IOException {
    return Instant.ofEpochMilli(in.readLong());
  }

  static void writeNullableInstant(@Nullable Instant value, DataOutputStream out)
      throws IOException {
    out.writeBoolean(value != null);
    if (value != null) {
      writeInstant(value, out);
    }
  }

  static @Nullable Instant readNullableInstant(DataInputStream in) throws IOException {
    return in.readBoolean() ? readInstant(in) : null;
  }

  static void writeStrings(List<String> values, DataOutputStream out) throws IOException {
    out.writeInt(values.size());
    for (String value : values) {
      writeString(value, out);
    }
  }

  static List<String> readStrings(DataInputStream in) throws IOException {
    int size = in.readInt();
    List<String> values = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      values.add(readString(in));
    }
    return values;
  }
}
