package dev.tidemark.act;

import dev.tidemark.act.CaseStore.Position;
import java.io.IOException;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The consumer: reads the decisions topic and keeps its side effect (the {@code cases} table)
 * exactly once.
 *
 * <p>It assigns itself every partition of the topic (no consumer group, no rebalancing) and seeks
 * each to the next offset stored in PostgreSQL, or to the beginning when none is. Each poll batch
 * is one database transaction: the records' inbox rows, decisions, case changes and outbox events,
 * conflicts and rejections, the purge of expired inbox keys, and the next offset of every partition
 * the batch moved. A crash before the commit leaves the database as it was before the batch, with
 * the old offsets, so the batch is read again; after the commit, the new offsets are there, so it
 * is not. Kafka's group offsets are never committed or read; {@code read_committed} hides the
 * records of aborted producer transactions.
 *
 * <p>One consumer per consumer name at a time: a run holds a PostgreSQL advisory lock on its name
 * for as long as it runs.
 */
public final class ActConsumer {
  private static final Duration POLL = Duration.ofMillis(200);
  private static final Duration LOCK_WAIT = Duration.ofSeconds(20);

  private final ActSettings settings;
  private final PrintStream log;
  private final CountDownLatch done = new CountDownLatch(1);
  private volatile boolean stopping;
  private volatile KafkaConsumer<byte[], byte[]> consumer;

  public ActConsumer(ActSettings settings, PrintStream log) {
    this.settings = settings;
    this.log = log;
  }

  /**
   * Runs to the end: starts PostgreSQL unless {@code --jdbcUrl} names a database, creates the
   * tables, consumes until idle (or stopped), and stops the PostgreSQL it started.
   */
  public ActSummary run() throws IOException, InterruptedException, SQLException {
    try {
      if (settings.jdbcUrl().isPresent()) {
        return consume(settings.jdbcUrl().get());
      }
      try (LocalPostgres postgres = LocalPostgres.start(settings.stateDir(), log)) {
        log.println(
            "act: PostgreSQL on 127.0.0.1:"
                + postgres.port()
                + ", data in "
                + LocalPostgres.dataDir(settings.stateDir()));
        return consume(postgres.jdbcUrl());
      }
    } finally {
      done.countDown();
    }
  }

  /**
   * Asks a running consumer to stop after its current batch, and waits until it has (and has
   * stopped its PostgreSQL), at most {@code timeout}.
   */
  public void stop(Duration timeout) throws InterruptedException {
    stopping = true;
    KafkaConsumer<byte[], byte[]> current = consumer;
    if (current != null) {
      current.wakeup();
    }
    done.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  private ActSummary consume(String jdbcUrl) throws SQLException, InterruptedException {
    Properties jdbc = new Properties();
    jdbc.setProperty("ApplicationName", settings.consumerName());
    try (Connection connection = DriverManager.getConnection(jdbcUrl, jdbc)) {
      Schema.create(connection);
      lock(connection);
      connection.setAutoCommit(false);
      try (KafkaConsumer<byte[], byte[]> kafka = new KafkaConsumer<>(kafkaProperties())) {
        consumer = kafka;
        if (stopping) {
          return new ActSummary();
        }
        return consume(connection, kafka);
      } catch (WakeupException e) {
        // Stopped before the first poll (while finding the topic): nothing was read.
        log.println("act: stopped before reading " + settings.topic());
        return new ActSummary();
      } finally {
        consumer = null;
      }
    }
  }

  /**
   * The consumer's settings, on the connection the pipeline's Kafka options describe (security and
   * the client properties file included, secrets read here).
   */
  Properties kafkaProperties() {
    Map<String, Object> properties = new HashMap<>();
    properties.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    // Where a stored offset no longer exists (deleted by the topic's retention): the oldest left.
    properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    properties.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, settings.maxPollRecords());
    // A missing topic is an error to report, not one for the broker to create.
    properties.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
    properties.put(ConsumerConfig.CLIENT_ID_CONFIG, settings.consumerName());
    properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    Properties merged = new Properties();
    merged.putAll(settings.kafka().merged(properties));
    return merged;
  }

  /** Holds the advisory lock of this consumer name for the connection's life. */
  private void lock(Connection connection) throws SQLException, InterruptedException {
    long deadline = System.nanoTime() + LOCK_WAIT.toNanos();
    try (PreparedStatement lock =
        connection.prepareStatement("SELECT pg_try_advisory_lock(hashtextextended(?, 0))")) {
      lock.setString(1, "tidemark-act:" + settings.consumerName());
      while (true) {
        try (ResultSet rows = lock.executeQuery()) {
          rows.next();
          if (rows.getBoolean(1)) {
            return;
          }
        }
        // A consumer that was just killed holds it until its server process notices.
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "another consumer named "
                  + settings.consumerName()
                  + " is running on this database; stop it or pass another --consumerName");
        }
        Thread.sleep(250);
      }
    }
  }

  private ActSummary consume(Connection connection, KafkaConsumer<byte[], byte[]> kafka)
      throws SQLException {
    String topic = settings.topic();
    List<PartitionInfo> infos = kafka.partitionsFor(topic, Duration.ofSeconds(60));
    if (infos == null || infos.isEmpty()) {
      throw new IllegalStateException(
          "topic " + topic + " does not exist on " + settings.bootstrapServers());
    }
    List<TopicPartition> partitions = new ArrayList<>();
    for (PartitionInfo info : infos) {
      partitions.add(new TopicPartition(topic, info.partition()));
    }
    kafka.assign(partitions);

    CaseStore store = new CaseStore(connection);
    Map<Integer, Long> committed;
    try {
      if (settings.replay()) {
        int forgotten = store.resetOffsets(settings.consumerName(), topic);
        log.println(
            "act: --replay: forgot "
                + forgotten
                + " stored offsets of "
                + settings.consumerName()
                + "; reading "
                + topic
                + " from the beginning");
      }
      committed = store.offsets(settings.consumerName(), topic);
      connection.commit();
    } catch (SQLException | RuntimeException e) {
      connection.rollback();
      throw e;
    }
    for (TopicPartition partition : partitions) {
      Long next = committed.get(partition.partition());
      if (next == null) {
        kafka.seekToBeginning(List.of(partition));
      } else {
        kafka.seek(partition, next);
      }
    }

    ActSummary summary = new ActSummary();
    committed.forEach(summary::offset);
    long lastRecord = System.nanoTime();
    while (!stopping) {
      ConsumerRecords<byte[], byte[]> records;
      Map<Integer, Long> moved = new HashMap<>();
      try {
        records = kafka.poll(POLL);
        // The next offset of each partition: past the records polled, and past the markers of
        // producer transactions, which take offsets too.
        for (TopicPartition partition : partitions) {
          long next = kafka.position(partition);
          if (!Optional.ofNullable(committed.get(partition.partition()))
              .equals(Optional.of(next))) {
            moved.put(partition.partition(), next);
          }
        }
      } catch (WakeupException e) {
        // Asked to stop: the records of this poll were neither applied nor their offsets stored.
        break;
      }
      if (records.isEmpty() && moved.isEmpty()) {
        if (!settings.follow()
            && System.nanoTime() - lastRecord >= settings.idleTimeout().toNanos()
            && caughtUp(kafka, partitions)) {
          break;
        }
        continue;
      }
      Instant now = Instant.now();
      ActSummary batch;
      try {
        batch = applyBatch(connection, store, records, moved, now, false);
      } catch (SQLException e) {
        connection.rollback();
        if (!CaseStore.isUnstorable(e)) {
          throw e;
        }
        // A record PostgreSQL cannot store: the batch again, each record behind a savepoint, so
        // that such a record becomes a rejection in the same transaction as the offsets.
        try {
          batch = applyBatch(connection, store, records, moved, now, true);
        } catch (SQLException | RuntimeException again) {
          connection.rollback();
          throw again;
        }
      } catch (RuntimeException e) {
        connection.rollback();
        throw e;
      }
      committed.putAll(moved);
      moved.forEach(summary::offset);
      summary.addAll(batch);
      if (!records.isEmpty()) {
        lastRecord = System.nanoTime();
      }
    }
    return summary;
  }

  /**
   * Applies one poll batch and its offsets, and commits. With {@code savepoints}, each record is
   * applied behind a savepoint, and one that PostgreSQL refuses to store ({@link
   * CaseStore#isUnstorable}) is rolled back to it and recorded as a rejection instead; without,
   * such a record fails the batch (the caller rolls back and calls again with savepoints, so the
   * common batch pays no savepoints).
   */
  private ActSummary applyBatch(
      Connection connection,
      CaseStore store,
      ConsumerRecords<byte[], byte[]> records,
      Map<Integer, Long> moved,
      Instant now,
      boolean savepoints)
      throws SQLException {
    ActSummary batch = new ActSummary();
    for (ConsumerRecord<byte[], byte[]> record : records) {
      Position position = new Position(record.topic(), record.partition(), record.offset());
      EditionReader.Read read =
          EditionReader.read(record.topic(), record.key(), record.value(), record.headers());
      if (!savepoints) {
        batch.add(store.apply(position, read, now));
        continue;
      }
      Savepoint savepoint = connection.setSavepoint();
      try {
        batch.add(store.apply(position, read, now));
        connection.releaseSavepoint(savepoint);
      } catch (SQLException e) {
        if (!CaseStore.isUnstorable(e)) {
          throw e;
        }
        connection.rollback(savepoint);
        log.println(
            "act: "
                + position.topic()
                + "/"
                + position.partition()
                + "@"
                + position.offset()
                + " rejected, PostgreSQL cannot store it: "
                + e.getSQLState()
                + " "
                + e.getMessage());
        batch.add(store.unstorable(position, read, e, now));
      }
    }
    store.saveOffsets(settings.consumerName(), settings.topic(), moved, now);
    batch.purged(store.purgeKeys(settings.keyRetention(), now));
    connection.commit();
    return batch;
  }

  /**
   * Whether every partition's position has reached its end (for a {@code read_committed} consumer,
   * the last stable offset): idle means nothing left to read, not a slow fetch on a busy machine.
   */
  private static boolean caughtUp(
      KafkaConsumer<byte[], byte[]> kafka, List<TopicPartition> partitions) {
    Map<TopicPartition, Long> ends = kafka.endOffsets(partitions);
    for (TopicPartition partition : partitions) {
      if (kafka.position(partition) < ends.getOrDefault(partition, 0L)) {
        return false;
      }
    }
    return true;
  }
}
