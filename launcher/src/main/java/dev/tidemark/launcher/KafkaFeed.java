package dev.tidemark.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.pipelines.io.CloudEventTime;
import dev.tidemark.pipelines.io.ReplayFile;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.io.kafka.KafkaCloudEvents;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.util.Utf8;
import io.cloudevents.CloudEvent;
import io.cloudevents.core.format.EventFormat;
import io.cloudevents.jackson.JsonFormat;
import io.cloudevents.kafka.KafkaMessageFactory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * Moves replay files into Kafka and topics back out: the live demo feeds the bundled sample into
 * the embedded broker with it, and the tests and benchmarks produce their events with it.
 */
public final class KafkaFeed {
  /** How each valid event is encoded on the topic. */
  public enum Mode {
    /** {@code content-type: application/cloudevents+json}, the event JSON is the value. */
    STRUCTURED,
    /** {@code ce_*} headers, the data is the value. */
    BINARY,
    /** Alternating binary and structured, event by event. */
    MIXED
  }

  private static final EventFormat JSON = new JsonFormat();

  private KafkaFeed() {}

  /** What a feed produced. */
  public static final class Fed {
    public final int records;
    public final int binary;

    /** The latest event time fed, epoch millis (0 when no line had one). */
    public final long maxEventTimeMillis;

    /** The ingestion clock after the last record (epoch millis), or null when none was fed. */
    public final @Nullable Long clockMillis;

    Fed(int records, int binary, long maxEventTimeMillis, @Nullable Long clockMillis) {
      this.records = records;
      this.binary = binary;
      this.maxEventTimeMillis = maxEventTimeMillis;
      this.clockMillis = clockMillis;
    }
  }

  /**
   * Produces every event line of a replay file to {@code topic}, in file order, keyed by {@code
   * data.accountId} (so an account's events keep their order). Directives are not records: {@code
   * advanceProcessingTime} moves the record timestamps (the ingestion clock) the way it moves the
   * replay clock, starting at the first event's time. Lines that are not valid CloudEvents are sent
   * as they are, in structured mode, for the pipeline to dead-letter.
   */
  public static Fed produce(KafkaClients clients, String topic, Path replayFile, Mode mode)
      throws IOException {
    return produce(clients, topic, replayFile, mode, 0, null);
  }

  /**
   * As {@link #produce(KafkaClients, String, Path, Mode)}, at a fixed rate: record {@code i} is
   * sent no earlier than {@code i / recordsPerSecond} seconds after the first ({@code 0}: as fast
   * as the producer takes them). The rate is of the wall clock; the record timestamps still follow
   * the replay clock. While the broker is down the producer buffers and retries (delivery within
   * its default two minutes), and the pace resumes where the schedule stands. {@code startClock}
   * (epoch millis) continues the ingestion clock of an earlier feed ({@link Fed#clockMillis}) for a
   * file that carries on where that one stopped; null starts it at the first event's time.
   */
  public static Fed produce(
      KafkaClients clients,
      String topic,
      Path replayFile,
      Mode mode,
      double recordsPerSecond,
      @Nullable Long startClock)
      throws IOException {
    if (recordsPerSecond < 0) {
      throw new IllegalArgumentException("recordsPerSecond must be >= 0, got " + recordsPerSecond);
    }
    long started = System.nanoTime();
    List<byte[]> lines = ReplayFile.splitLines(Files.readAllBytes(replayFile));
    Map<String, Object> config = clients.merged(new HashMap<>());
    config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    config.put(ProducerConfig.ACKS_CONFIG, "all");
    config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    int records = 0;
    int binary = 0;
    long maxEventTime = 0;
    Long clock = startClock;
    List<Future<RecordMetadata>> sent = new ArrayList<>();
    try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(config)) {
      for (byte[] bytes : lines) {
        // Bytes that are not UTF-8 are a malformed record like any other: sent as they are.
        String line = Utf8.decodeOrNull(bytes);
        if (line != null && line.isBlank()) {
          continue;
        }
        JsonNode node = line == null ? null : tryParse(line);
        if (node != null && node.isObject() && node.has("advanceProcessingTime")) {
          clock = advance(clock, node.get("advanceProcessingTime").asText());
          continue;
        }
        if (node != null && node.isObject() && !node.has("specversion") && isDirective(node)) {
          continue;
        }
        Long eventTime = eventTimeMillis(node);
        if (eventTime != null) {
          maxEventTime = Math.max(maxEventTime, eventTime);
        }
        if (clock == null) {
          clock = eventTime;
        }
        String key = node == null ? null : textAt(node, "data", "accountId");
        ProducerRecord<String, byte[]> record = null;
        boolean asBinary = mode == Mode.BINARY || (mode == Mode.MIXED && records % 2 == 1);
        // Binary mode re-encodes the event into headers; a line without a source and id then has
        // no identity its dead letter could be matched by, so it goes as it is, structured.
        if (asBinary && line != null && hasText(node, "source") && hasText(node, "id")) {
          record = binaryRecord(topic, clock, key, line);
        }
        if (record == null) {
          record = structuredRecord(topic, clock, key, bytes);
        } else {
          binary++;
        }
        if (recordsPerSecond > 0) {
          long due = started + (long) (records * 1e9 / recordsPerSecond);
          long wait = due - System.nanoTime();
          if (wait > 0) {
            Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
          }
        }
        sent.add(producer.send(record));
        records++;
      }
      producer.flush();
      for (Future<RecordMetadata> future : sent) {
        future.get();
      }
    } catch (ExecutionException e) {
      throw new IOException("cannot produce to " + topic + ": " + e.getCause(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while producing to " + topic, e);
    }
    return new Fed(records, binary, maxEventTime, clock);
  }

  private static boolean hasText(@Nullable JsonNode node, String field) {
    return node != null && node.path(field).isTextual() && !node.path(field).asText().isEmpty();
  }

  /**
   * The topic's partitions, in order. Waits up to 30 s for them: a topic created a moment ago can
   * have no partitions in the client's metadata yet, and assigning none would fail the first poll.
   */
  public static List<TopicPartition> partitions(KafkaConsumer<?, ?> consumer, String topic) {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (true) {
      List<TopicPartition> partitions = new ArrayList<>();
      consumer
          .partitionsFor(topic, java.time.Duration.ofSeconds(30))
          .forEach(p -> partitions.add(new TopicPartition(topic, p.partition())));
      if (!partitions.isEmpty()) {
        partitions.sort(java.util.Comparator.comparingInt(TopicPartition::partition));
        return partitions;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("topic " + topic + " has no partitions after 30 s");
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for topic " + topic, e);
      }
    }
  }

  /** A record as it is, in structured mode ({@code content-type} says so). */
  public static ProducerRecord<String, byte[]> structuredRecord(
      String topic, @Nullable Long timestamp, @Nullable String key, byte[] value) {
    return structuredRecord(topic, null, timestamp, key, value);
  }

  /** As {@link #structuredRecord(String, Long, String, byte[])}, to {@code partition}. */
  public static ProducerRecord<String, byte[]> structuredRecord(
      String topic,
      @Nullable Integer partition,
      @Nullable Long timestamp,
      @Nullable String key,
      byte[] value) {
    ProducerRecord<String, byte[]> record =
        new ProducerRecord<>(topic, partition, timestamp, key, value);
    record
        .headers()
        .add(
            "content-type",
            KafkaCloudEvents.STRUCTURED_CONTENT_TYPE.getBytes(StandardCharsets.UTF_8));
    return record;
  }

  /** A valid structured event line as a binary-mode record; null when the SDK cannot read it. */
  public static @Nullable ProducerRecord<String, byte[]> binaryRecord(
      String topic, @Nullable Long timestamp, @Nullable String key, String line) {
    try {
      CloudEvent event = JSON.deserialize(line.getBytes(StandardCharsets.UTF_8));
      ProducerRecord<String, byte[]> record =
          KafkaMessageFactory.<String>createWriter(topic, null, timestamp, key).writeBinary(event);
      return record;
    } catch (RuntimeException e) {
      return null;
    }
  }

  /**
   * Every record of {@code topic} committed up to now, partition by partition in offset order, read
   * {@code read_committed} (only committed transactions).
   */
  public static List<ConsumerRecord<byte[], byte[]>> readAll(KafkaClients clients, String topic) {
    try (TopicReader reader = new TopicReader(clients, topic)) {
      reader.readToEnd();
      return reader.records();
    }
  }

  /**
   * Reads a topic's committed records ({@code read_committed}) from its beginning, incrementally:
   * each {@link #readToEnd()} reads only what was committed since the last one, so polling a
   * growing topic costs its size once, not once per poll.
   */
  public static final class TopicReader implements AutoCloseable {
    private final String topic;
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final List<TopicPartition> partitions = new ArrayList<>();
    private final List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();

    public TopicReader(KafkaClients clients, String topic) {
      this.topic = topic;
      Map<String, Object> config = clients.merged(new HashMap<>());
      config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
      config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
      config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
      config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
      consumer = new KafkaConsumer<>(config);
      try {
        partitions.addAll(partitions(consumer, topic));
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
      } catch (RuntimeException e) {
        consumer.close();
        throw e;
      }
    }

    /** Reads up to the topic's current end (its last stable offset) and returns the count read. */
    public int readToEnd() {
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
      long deadline = System.nanoTime() + 120_000_000_000L;
      while (!caughtUp(consumer, end)) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("timed out reading " + topic + " to " + end);
        }
        consumer.poll(java.time.Duration.ofMillis(200)).forEach(records::add);
      }
      return records.size();
    }

    /** The records read so far, by partition and offset. */
    public List<ConsumerRecord<byte[], byte[]>> records() {
      List<ConsumerRecord<byte[], byte[]>> sorted = new ArrayList<>(records);
      sorted.sort(
          java.util.Comparator.<ConsumerRecord<byte[], byte[]>>comparingInt(
                  ConsumerRecord::partition)
              .thenComparingLong(ConsumerRecord::offset));
      return sorted;
    }

    @Override
    public void close() {
      consumer.close();
    }
  }

  private static boolean caughtUp(KafkaConsumer<?, ?> consumer, Map<TopicPartition, Long> end) {
    for (Map.Entry<TopicPartition, Long> entry : end.entrySet()) {
      if (consumer.position(entry.getKey()) < entry.getValue()) {
        return false;
      }
    }
    return true;
  }

  private static boolean isDirective(JsonNode node) {
    return node.has("advanceWatermarkTo") || node.has("advanceWatermarkToInfinity");
  }

  private static @Nullable JsonNode tryParse(String line) {
    try {
      return Json.MAPPER.readTree(line);
    } catch (IOException e) {
      return null;
    }
  }

  private static @Nullable String textAt(JsonNode node, String object, String field) {
    JsonNode value = node.path(object).path(field);
    return value.isTextual() ? value.asText() : null;
  }

  private static @Nullable Long eventTimeMillis(@Nullable JsonNode node) {
    if (node == null || !node.path("time").isTextual()) {
      return null;
    }
    org.joda.time.Instant time = CloudEventTime.parseTime(node.get("time").asText());
    return time == null ? null : time.getMillis();
  }

  private static @Nullable Long advance(@Nullable Long clock, String duration) {
    if (clock == null) {
      return null;
    }
    try {
      return clock + java.time.Duration.parse(duration).toMillis();
    } catch (RuntimeException e) {
      return clock;
    }
  }
}
