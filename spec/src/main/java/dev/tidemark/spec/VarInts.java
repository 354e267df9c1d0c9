package dev.tidemark.spec;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.beam.sdk.coders.CoderException;

/**
 * The compact encodings of the spec's coders: variable-length integers (7 bits a byte, zig-zag for
 * signed values, so small magnitudes take one byte) and length-prefixed UTF-8 strings.
 */
final class VarInts {
  private VarInts() {}

  /** The largest string a coder reads back, in bytes. */
  private static final int MAX_STRING_BYTES = 64 << 20;

  static void writeUnsigned(long value, DataOutput out) throws IOException {
    while ((value & ~0x7FL) != 0) {
      out.writeByte((int) ((value & 0x7F) | 0x80));
      value >>>= 7;
    }
    out.writeByte((int) value);
  }

  static long readUnsigned(DataInput in) throws IOException {
    long value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      int b = in.readUnsignedByte();
      value |= (long) (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        return value;
      }
    }
    throw new CoderException("a variable-length integer longer than 10 bytes");
  }

  static void writeSigned(long value, DataOutput out) throws IOException {
    writeUnsigned((value << 1) ^ (value >> 63), out);
  }

  static long readSigned(DataInput in) throws IOException {
    long zigzag = readUnsigned(in);
    return (zigzag >>> 1) ^ -(zigzag & 1);
  }

  static void writeString(String value, DataOutput out) throws IOException {
    byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
    writeUnsigned(bytes.length, out);
    out.write(bytes);
  }

  static String readString(DataInput in) throws IOException {
    long length = readUnsigned(in);
    if (length > MAX_STRING_BYTES) {
      throw new CoderException("a string of " + length + " bytes is not a valid encoding");
    }
    byte[] bytes = new byte[(int) length];
    in.readFully(bytes);
    return new String(bytes, StandardCharsets.UTF_8);
  }

  /** A count read back, checked against its bound. */
  static int readCount(DataInput in, int bound, String what) throws IOException {
    long count = readUnsigned(in);
    if (count > bound) {
      throw new CoderException(
          count + " " + what + " is not a valid encoding (at most " + bound + ")");
    }
    return (int) count;
  }
}
