package dev.tidemark.bench.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.launcher.KafkaFeed;
import dev.tidemark.pipelines.io.ReplayFile;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.transforms.util.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * The events a sink job reads: generated CloudEvent lines without replay directives, no late or
 * too-late events, 1 % duplicates and 0.2 % malformed lines, each keyed by its {@code
 * data.accountId}; and the producer that sends them.
 */
public final class SinkEvents {
  static final long SEED = 20261129L;

  /** Event time advances this fast through a backlog (events per second of event time). */
  static final double BACKLOG_EVENT_TIME_RATE = 100;

  private SinkEvents() {}

  /** One record to produce: the line's bytes and its key. */
  public static final class Line {
    final byte[] value;
    final @Nullable String key;

    Line(byte[] value, @Nullable String key) {
      this.value = value;
      this.key = key;
    }
  }

  /** The backlog of a throughput run: the same lines for every run of these sizes. */
  public static List<Line> backlog(int events, int accounts) throws IOException {
    return generate(events, accounts, BACKLOG_EVENT_TIME_RATE, SEED);
  }

  /** {@code events} generated events over {@code accounts}, event time at the given rate. */
  static List<Line> generate(int events, int accounts, double eventsPerSecond, long seed)
      throws IOException {
    GeneratorConfig config =
        GeneratorConfig.builder()
            .seed(seed)
            .numEvents(events)
            .numAccounts(accounts)
            .eventsPerSecond(eventsPerSecond)
            .lateFraction(0)
            .tooLateFraction(0)
            .duplicateRate(0.01)
            .malformedFraction(0.002)
            .build();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    new EventGenerator(config).writeTo(out);
    List<Line> lines = new ArrayList<>();
    for (byte[] value : ReplayFile.splitLines(out.toByteArray())) {
      if (value.length == 0) {
        continue;
      }
      JsonNode node = tryParse(value);
      if (node == null || !node.isObject() || !node.has("advanceProcessingTime")) {
        JsonNode account = node == null ? null : node.path("data").path("accountId");
        lines.add(
            new Line(value, account != null && account.isTextual() ? account.asText() : null));
      }
    }
    return lines;
  }

  private static @Nullable JsonNode tryParse(byte[] value) {
    try {
      return Json.MAPPER.readTree(value);
    } catch (IOException e) {
      return null;
    }
  }

  /** The latest event time of the lines, epoch millis. */
  static long maxEventTimeMillis(List<Line> lines) {
    long max = 0;
    for (Line line : lines) {
      JsonNode node = tryParse(line.value);
      if (node != null && node.path("time").isTextual()) {
        try {
          max = Math.max(max, Instant.parse(node.get("time").asText()).toEpochMilli());
        } catch (RuntimeException e) {
          // a malformed time: not an event time
        }
      }
    }
    return max;
  }

  /** An idempotent producer of keyed lines that waits at most {@code lingerMs} to batch. */
  static KafkaProducer<String, byte[]> producer(KafkaClients clients, int lingerMs) {
    Map<String, Object> config = clients.merged(new HashMap<>());
    config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    config.put(ProducerConfig.ACKS_CONFIG, "all");
    config.put(ProducerConfig.LINGER_MS_CONFIG, lingerMs);
    config.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 1_000_000);
    return new KafkaProducer<>(config);
  }

  /** {@code line} as a structured CloudEvent record with the given Kafka timestamp. */
  static ProducerRecord<String, byte[]> record(String topic, Line line, long timestamp) {
    return KafkaFeed.structuredRecord(topic, timestamp, line.key, line.value);
  }
}
