package dev.tidemark.bench.flink;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.util.function.SerializableFunction;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The native job's Kafka sink: each element's JSON as one record, flushed before every checkpoint
 * barrier (at least once, as Tidemark's idempotent sink). The Flink Kafka connector is not served
 * here, so the baseline writes with the plain producer, configured like Tidemark's sink.
 */
final class KafkaOutputSink<T> implements Sink<T> {
  private static final long serialVersionUID = 1L;

  private final String bootstrapServers;
  private final String topic;
  private final SerializableFunction<T, byte[]> encode;

  KafkaOutputSink(String bootstrapServers, String topic, SerializableFunction<T, byte[]> encode) {
    this.bootstrapServers = bootstrapServers;
    this.topic = topic;
    this.encode = encode;
  }

  // Flink 1.19 still declares this variant abstract; the WriterInitContext one delegates to it.
  @SuppressWarnings("deprecation")
  @Override
  public SinkWriter<T> createWriter(InitContext context) {
    return new Writer<>(bootstrapServers, topic, encode);
  }

  private static final class Writer<T> implements SinkWriter<T> {
    private final String topic;
    private final SerializableFunction<T, byte[]> encode;
    private final KafkaProducer<byte[], byte[]> producer;
    private final AtomicReference<Exception> failure = new AtomicReference<>();

    Writer(String bootstrapServers, String topic, SerializableFunction<T, byte[]> encode) {
      this.topic = topic;
      this.encode = encode;
      Map<String, Object> config = new HashMap<>();
      config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
      config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
      config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
      config.put(ProducerConfig.ACKS_CONFIG, "all");
      config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
      this.producer = new KafkaProducer<>(config);
    }

    @Override
    public void write(T element, Context context) throws IOException {
      check();
      producer.send(
          new ProducerRecord<>(topic, encode.apply(element)),
          (metadata, e) -> {
            if (e != null) {
              failure.compareAndSet(null, e);
            }
          });
    }

    @Override
    public void flush(boolean endOfInput) throws IOException {
      producer.flush();
      check();
    }

    private void check() throws IOException {
      Exception e = failure.get();
      if (e != null) {
        throw new IOException("writing to " + topic + " failed", e);
      }
    }

    @Override
    public void close() {
      producer.close();
    }
  }
}
