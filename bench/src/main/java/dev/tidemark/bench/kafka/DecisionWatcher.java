package dev.tidemark.bench.kafka;

import dev.tidemark.launcher.KafkaFeed;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * Tails a decisions topic as a {@code read_committed} consumer on a thread of its own: every record
 * with the wall time it was first seen (a transactional sink's decisions become visible only when
 * their transaction commits), and, until told to stop, the lag of the newest ingestion clock.
 */
final class DecisionWatcher implements Runnable {
  /** A decision record as the watcher first saw it. */
  static final class Seen {
    final long timestamp;
    final long seenAt;
    final byte[] value;

    Seen(long timestamp, long seenAt, byte[] value) {
      this.timestamp = timestamp;
      this.seenAt = seenAt;
      this.value = value;
    }
  }

  private static final String INGESTION_FIELD = "\"ingestionTime\":\"";

  private final KafkaClients clients;
  private final String topic;
  private final List<Seen> seen = new ArrayList<>();
  private volatile long newestIngestion = Long.MIN_VALUE;
  private volatile boolean trackingLag = true;
  private volatile boolean running = true;
  private volatile @Nullable RuntimeException failure;
  private final Thread thread;

  DecisionWatcher(KafkaClients clients, String topic) {
    this.clients = clients;
    this.topic = topic;
    this.thread = new Thread(this, "decision-watcher");
    thread.setDaemon(true);
    thread.start();
  }

  @Override
  public void run() {
    Map<String, Object> config = clients.merged(new HashMap<>());
    config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    config.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 10);
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config)) {
      List<TopicPartition> partitions = KafkaFeed.partitions(consumer, topic);
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      while (running) {
        var records = consumer.poll(Duration.ofMillis(50));
        long now = System.currentTimeMillis();
        synchronized (seen) {
          for (ConsumerRecord<byte[], byte[]> record : records) {
            seen.add(new Seen(record.timestamp(), now, record.value()));
            if (trackingLag) {
              newestIngestion = Math.max(newestIngestion, ingestionClock(record.value()));
            }
          }
        }
      }
    } catch (RuntimeException e) {
      failure = e;
    }
  }

  /** The decisions seen so far; rethrows what stopped the watcher. */
  int count() {
    RuntimeException e = failure;
    if (e != null) {
      throw e;
    }
    synchronized (seen) {
      return seen.size();
    }
  }

  /** Now minus the newest ingestion clock among the decisions seen, ms. */
  long lagMillis(long now) {
    long newest = newestIngestion;
    return newest == Long.MIN_VALUE ? Long.MAX_VALUE / 2 : now - newest;
  }

  /** Stops reading the ingestion clocks: the measured span does not need them. */
  void stopTrackingLag() {
    trackingLag = false;
  }

  /** Stops tailing and hands over what it saw, keeping no reference to it. */
  List<Seen> stop() throws InterruptedException {
    running = false;
    thread.join(30_000);
    synchronized (seen) {
      List<Seen> all = new ArrayList<>(seen);
      seen.clear();
      return all;
    }
  }

  /**
   * A decision's {@code clocks.ingestionTime} in epoch ms, found without parsing the whole record
   * (the watcher sees thousands a second); {@link Long#MIN_VALUE} if it has none.
   */
  static long ingestionClock(byte[] decision) {
    String text = new String(decision, StandardCharsets.UTF_8);
    int at = text.indexOf(INGESTION_FIELD);
    if (at < 0) {
      return Long.MIN_VALUE;
    }
    int from = at + INGESTION_FIELD.length();
    return Instant.parse(text.substring(from, text.indexOf('"', from))).toEpochMilli();
  }
}
