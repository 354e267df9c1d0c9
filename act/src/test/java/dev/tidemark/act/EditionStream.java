package dev.tidemark.act;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A seeded decisions topic for the tests: decisions with one to six editions each (first editions,
 * refinements and reversals both ways), interleaved across decisions in the order a pipeline emits
 * them, and the cases a correct consumer must end with.
 */
final class EditionStream {
  /** One record: key and value. */
  record Line(String key, String value) {}

  /** The case a decision must end with. */
  record ExpectedCase(String status, Long closedVersion, int reopened, int events) {}

  final List<Line> lines = new ArrayList<>();
  final Map<String, ExpectedCase> cases = new TreeMap<>();
  int outboxEvents;

  EditionStream(long seed, int decisions) {
    Random random = new Random(seed);
    List<List<Line>> byDecision = new ArrayList<>();
    for (int d = 0; d < decisions; d++) {
      String id = String.format("d%05d-%d", d, seed);
      String account = "acct-" + (d % 97);
      int versions = 1 + random.nextInt(6);
      List<Line> editions = new ArrayList<>();
      String decision = random.nextDouble() < 0.4 ? "review" : "allow";
      double score = score(random, decision);
      editions.add(new Line(id, Editions.first(id, account, score, decision)));
      String status = decision.equals("review") ? "open" : null;
      Long closedVersion = null;
      int reopened = 0;
      int events = status == null ? 0 : 1;
      for (int v = 1; v < versions; v++) {
        String next = random.nextDouble() < 0.35 ? flip(decision) : decision;
        double nextScore = score(random, next);
        editions.add(new Line(id, Editions.next(id, account, v, nextScore, next, score, decision)));
        if (next.equals("review") && status == null) {
          status = "open";
          events++;
        } else if (next.equals("review") && status.equals("closed")) {
          status = "open";
          closedVersion = null;
          reopened++;
          events++;
        } else if (next.equals("allow") && "open".equals(status)) {
          status = "closed";
          closedVersion = (long) v;
          events++;
        }
        decision = next;
        score = nextScore;
      }
      if (status != null) {
        cases.put(id, new ExpectedCase(status, closedVersion, reopened, events));
        outboxEvents += events;
      }
      byDecision.add(editions);
    }
    // Round r holds edition r of every decision that has one, shuffled: editions of one decision
    // stay in order (one key, one partition), decisions interleave.
    for (int round = 0; round < 6; round++) {
      List<Line> batch = new ArrayList<>();
      for (List<Line> editions : byDecision) {
        if (round < editions.size()) {
          batch.add(editions.get(round));
        }
      }
      Collections.shuffle(batch, random);
      lines.addAll(batch);
    }
  }

  private static String flip(String decision) {
    return decision.equals("review") ? "allow" : "review";
  }

  private static double score(Random random, String decision) {
    double unit = Math.round(random.nextDouble() * 1000) / 1000.0 * 0.49;
    return Math.round((decision.equals("review") ? 0.5 + unit : unit) * 1000) / 1000.0;
  }

  /**
   * Produces {@code lines} in producer transactions of {@code perTransaction} records, and after
   * them one aborted transaction holding {@code aborted}: a read_committed consumer never sees it.
   */
  static void produce(
      String bootstrapServers,
      String topic,
      List<Line> lines,
      int perTransaction,
      List<Line> aborted) {
    Properties properties = new Properties();
    properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    properties.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "act-it-" + topic);
    properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
      producer.initTransactions();
      for (int start = 0; start < lines.size(); start += perTransaction) {
        producer.beginTransaction();
        for (Line line : lines.subList(start, Math.min(lines.size(), start + perTransaction))) {
          producer.send(new ProducerRecord<>(topic, line.key(), line.value()));
        }
        producer.commitTransaction();
      }
      if (!aborted.isEmpty()) {
        producer.beginTransaction();
        for (Line line : aborted) {
          producer.send(new ProducerRecord<>(topic, line.key(), line.value()));
        }
        producer.flush();
        producer.abortTransaction();
      }
    }
  }

  /** Produces without transactions, in order. */
  static void produce(String bootstrapServers, String topic, List<Line> lines) {
    Properties properties = new Properties();
    properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
      List<Future<RecordMetadata>> sent = new ArrayList<>();
      for (Line line : lines) {
        sent.add(producer.send(new ProducerRecord<>(topic, line.key(), line.value())));
      }
      // A record the broker never took fails the test here, not as a missing count later.
      for (Future<RecordMetadata> send : sent) {
        send.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while producing to " + topic, e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("a record was not produced to " + topic, e.getCause());
    }
  }

  /** The read_committed end offset of every partition of {@code topic}. */
  static Map<Integer, Long> endOffsets(String bootstrapServers, String topic) {
    Properties properties = new Properties();
    properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    properties.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(properties)) {
      List<TopicPartition> partitions = new ArrayList<>();
      consumer
          .partitionsFor(topic)
          .forEach(info -> partitions.add(new TopicPartition(topic, info.partition())));
      Map<Integer, Long> ends = new TreeMap<>();
      consumer.endOffsets(partitions).forEach((tp, end) -> ends.put(tp.partition(), end));
      return ends;
    }
  }

  /** A line whose value is not an edition, keyed {@code key}. */
  static Line garbage(String key) {
    return new Line(key, new String(new byte[] {'{', 'x'}, StandardCharsets.UTF_8));
  }

  /** Expected cases as a map of decisionId to "status closedVersion reopened". */
  Map<String, String> expectedCases() {
    Map<String, String> expected = new LinkedHashMap<>();
    cases.forEach(
        (id, c) -> expected.put(id, c.status() + " " + c.closedVersion() + " " + c.reopened()));
    return new TreeMap<>(expected);
  }
}
