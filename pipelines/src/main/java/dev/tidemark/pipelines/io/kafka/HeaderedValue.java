package dev.tidemark.pipelines.io.kafka;

import dev.tidemark.transforms.values.Codec;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.Serializer;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * A Kafka record value with the headers to send with it. KafkaIO's exactly-once sink drops {@code
 * ProducerRecord} headers; carrying them in the value and adding them in the {@link
 * HeaderedValue.ValueSerializer} (which Kafka calls with the record's headers) keeps them in both
 * sink modes.
 */
public final class HeaderedValue {
  private final byte[] value;
  private final Map<String, String> headers;

  public HeaderedValue(byte[] value, Map<String, String> headers) {
    this.value = value;
    this.headers = new LinkedHashMap<>(headers);
  }

  /** A value with no headers; the record is written as is. */
  public static HeaderedValue of(String json) {
    return new HeaderedValue(json.getBytes(StandardCharsets.UTF_8), Map.of());
  }

  public byte[] value() {
    return value;
  }

  public Map<String, String> headers() {
    return headers;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    return o instanceof HeaderedValue
        && Arrays.equals(value, ((HeaderedValue) o).value)
        && headers.equals(((HeaderedValue) o).headers);
  }

  @Override
  public int hashCode() {
    return 31 * Arrays.hashCode(value) + headers.hashCode();
  }

  /** Writes the value and adds the headers to the outgoing record. */
  public static final class ValueSerializer implements Serializer<HeaderedValue> {
    @Override
    public byte[] serialize(String topic, HeaderedValue data) {
      return data == null ? null : data.value;
    }

    @Override
    public byte[] serialize(String topic, Headers headers, HeaderedValue data) {
      if (data == null) {
        return null;
      }
      data.headers.forEach(
          (name, value) -> headers.add(name, value.getBytes(StandardCharsets.UTF_8)));
      return data.value;
    }
  }

  /**
   * Deterministic coder, versioned ({@link Codec.DataCoder}): the transactional sink keeps records
   * in Flink state until their turn to be written. Version 1: the value's length and bytes, then
   * the header count and each header's name and value, in order.
   */
  public static final class Coder extends Codec.DataCoder<HeaderedValue> {
    private static final long serialVersionUID = 1L;
    private static final Coder INSTANCE = new Coder();

    public static Coder of() {
      return INSTANCE;
    }

    @Override
    protected int version() {
      return 1;
    }

    @Override
    protected void write(HeaderedValue value, DataOutput out) throws IOException {
      Codec.writeBytes(value.value, out);
      out.writeInt(value.headers.size());
      for (Map.Entry<String, String> header : value.headers.entrySet()) {
        Codec.writeString(header.getKey(), out);
        Codec.writeString(header.getValue(), out);
      }
    }

    @Override
    protected HeaderedValue read(int version, DataInputStream in) throws IOException {
      byte[] value = Codec.readBytes(in);
      int count = in.readInt();
      Map<String, String> headers = new LinkedHashMap<>();
      for (int i = 0; i < count; i++) {
        headers.put(Codec.readString(in), Codec.readString(in));
      }
      return new HeaderedValue(value, headers);
    }
  }
}
