package dev.tidemark.bench.flink;

import dev.tidemark.launcher.LiveRun;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The generated input of the Flink baseline: NDJSON CloudEvents from the {@link EventGenerator}
 * with a fixed seed (replay directives dropped), as backfill files and as lines to produce into
 * Kafka. No late or too-late events (a backfill has none either), 3% duplicates (all identical
 * copies: in batch mode neither runner orders the copies of one identity, so conflicting copies
 * would make "first copy" arbitrary) and 1% malformed lines.
 */
final class Workload {
  static final long SEED = 20260601L;
  static final double EVENTS_PER_SECOND = 100;

  final List<byte[]> lines;
  final long firstEventMillis;
  final long lastEventMillisBound;

  private Workload(List<byte[]> lines, long firstEventMillis, long lastEventMillisBound) {
    this.lines = lines;
    this.firstEventMillis = firstEventMillis;
    this.lastEventMillisBound = lastEventMillisBound;
  }

  static Workload generate(int events, int accounts) throws IOException {
    GeneratorConfig config =
        GeneratorConfig.builder()
            .seed(SEED)
            .numEvents(events)
            .numAccounts(accounts)
            .eventsPerSecond(EVENTS_PER_SECOND)
            .lateFraction(0)
            .tooLateFraction(0)
            .conflictFraction(0)
            .build();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    new EventGenerator(config).writeTo(out);
    byte[] bytes = out.toByteArray();
    List<byte[]> lines = new ArrayList<>();
    int start = 0;
    for (int i = 0; i < bytes.length; i++) {
      if (bytes[i] == '\n') {
        byte[] line = java.util.Arrays.copyOfRange(bytes, start, i);
        if (!new String(line, 0, Math.min(line.length, 10), StandardCharsets.ISO_8859_1)
            .startsWith("{\"advance")) {
          lines.add(line);
        }
        start = i + 1;
      }
    }
    long first = config.start().toEpochMilli();
    // The stream lasts about events / rate seconds of event time; twice that bounds it.
    long last = first + (long) (2_000 * events / EVENTS_PER_SECOND) + 600_000;
    return new Workload(lines, first, last);
  }

  /** Writes the lines round-robin into {@code files} files under {@code dir}; returns them. */
  List<Path> writeFiles(Path dir, int files) throws IOException {
    Files.createDirectories(dir);
    List<Path> paths = new ArrayList<>();
    List<OutputStream> outs = new ArrayList<>();
    try {
      for (int f = 0; f < files; f++) {
        Path path = dir.resolve("part-" + f + ".ndjson");
        paths.add(path);
        outs.add(new java.io.BufferedOutputStream(Files.newOutputStream(path), 1 << 16));
      }
      for (int i = 0; i < lines.size(); i++) {
        OutputStream out = outs.get(i % files);
        out.write(lines.get(i));
        out.write('\n');
      }
    } finally {
      for (OutputStream out : outs) {
        out.close();
      }
    }
    return paths;
  }

  /**
   * Produces the lines round-robin over {@code partitions} partitions of {@code topic}, then one
   * end-of-stream marker per partition past the last event ({@link LiveRun#sendEndMarkers}).
   * Returns the number of markers.
   */
  int produce(KafkaClients clients, String topic, int partitions) {
    Map<String, Object> config = clients.merged(new HashMap<>());
    config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config)) {
      for (int i = 0; i < lines.size(); i++) {
        producer.send(new ProducerRecord<>(topic, i % partitions, null, lines.get(i)));
      }
      producer.flush();
    }
    return LiveRun.sendEndMarkers(
        clients, topic, lastEventMillisBound, org.joda.time.Duration.standardDays(1));
  }

  /** The first {@code n} lines as a workload of their own. */
  Workload head(int n) {
    return new Workload(
        new ArrayList<>(lines.subList(0, Math.min(n, lines.size()))),
        firstEventMillis,
        lastEventMillisBound);
  }
}
