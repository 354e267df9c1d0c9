package dev.tidemark.transforms.values;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * Writes a coder's bytes by hand, field by field, independently of the coders: the fixed formats
 * that state written by earlier releases holds.
 */
public final class FormatBytes {
  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
  private final DataOutputStream out = new DataOutputStream(bytes);

  private FormatBytes() {}

  /** Bytes that start with the format version byte {@code version}. */
  public static FormatBytes version(int version) {
    return new FormatBytes().u8(version);
  }

  public FormatBytes u8(int value) {
    return io(() -> out.writeByte(value));
  }

  public FormatBytes bool(boolean value) {
    return io(() -> out.writeBoolean(value));
  }

  public FormatBytes i32(int value) {
    return io(() -> out.writeInt(value));
  }

  public FormatBytes i64(long value) {
    return io(() -> out.writeLong(value));
  }

  public FormatBytes f64(double value) {
    return io(() -> out.writeDouble(value));
  }

  /** A length-prefixed byte array: the length as four bytes, then the bytes. */
  public FormatBytes bytes(byte[] value) {
    return i32(value.length).raw(value);
  }

  /** Bytes without a length. */
  public FormatBytes raw(byte[] value) {
    return io(() -> out.write(value));
  }

  /** A string: its UTF-8 bytes, length-prefixed. */
  public FormatBytes str(String value) {
    return bytes(value.getBytes(StandardCharsets.UTF_8));
  }

  /** A nullable string: a presence byte, then the string when present. */
  public FormatBytes nullableStr(String value) {
    return value == null ? bool(false) : bool(true).str(value);
  }

  public byte[] toBytes() {
    return bytes.toByteArray();
  }

  private interface Write {
    void run() throws IOException;
  }

  private FormatBytes io(Write write) {
    try {
      write.run();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return this;
  }
}
