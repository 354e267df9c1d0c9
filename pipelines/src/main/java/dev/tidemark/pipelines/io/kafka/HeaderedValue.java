package dev.tidemark.pipelines.io.kafka;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.beam.sdk.coders.AtomicCoder;
import org.apache.beam.sdk.coders.ByteArrayCoder;
import org.apache.beam.sdk.coders.MapCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
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

  /** Deterministic coder. */
  public static final class Coder extends AtomicCoder<HeaderedValue> {
    private static final Coder INSTANCE = new Coder();
    private static final MapCoder<String, String> HEADERS =
        MapCoder.of(StringUtf8Coder.of(), StringUtf8Coder.of());

    public static Coder of() {
      return INSTANCE;
    }

    @Override
    public void encode(HeaderedValue value, OutputStream out) throws IOException {
      ByteArrayCoder.of().encode(value.value, out);
      HEADERS.encode(value.headers, out);
    }

    @Override
    public HeaderedValue decode(InputStream in) throws IOException {
      byte[] value = ByteArrayCoder.of().decode(in);
      return new HeaderedValue(value, HEADERS.decode(in));
    }

    @Override
    public void verifyDeterministic() {}
  }
}
