package dev.tidemark.testkit;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import kafka.testkit.KafkaClusterTestKit;
import kafka.testkit.TestKitNodes;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A real one-node Kafka (KRaft, broker and controller combined) inside this JVM: the broker of the
 * local live demo ({@code --kafkaBootstrapServers=embedded}), the tests and the benchmarks. It
 * listens on a free loopback port and keeps its log in a temporary directory removed on {@link
 * #close}.
 */
public final class EmbeddedKafka implements AutoCloseable {
  private final KafkaClusterTestKit cluster;

  private EmbeddedKafka(KafkaClusterTestKit cluster) {
    this.cluster = cluster;
  }

  /** Formats and starts the broker; returns once it accepts clients. */
  public static EmbeddedKafka start() {
    KafkaClusterTestKit cluster = null;
    try {
      cluster =
          new KafkaClusterTestKit.Builder(
                  new TestKitNodes.Builder()
                      .setCombined(true)
                      .setNumBrokerNodes(1)
                      .setNumControllerNodes(1)
                      .build())
              // One node: the internal topics cannot have more than one replica.
              .setConfigProp("offsets.topic.replication.factor", "1")
              .setConfigProp("offsets.topic.num.partitions", "2")
              .setConfigProp("transaction.state.log.replication.factor", "1")
              .setConfigProp("transaction.state.log.min.isr", "1")
              .setConfigProp("transaction.state.log.num.partitions", "2")
              .setConfigProp("group.initial.rebalance.delay.ms", "0")
              .setConfigProp("auto.create.topics.enable", "false")
              // Records keep their events' times, often months old: the default 7-day retention
              // would delete them at its first check, 30 s after the start.
              .setConfigProp("log.retention.ms", "-1")
              .build();
      cluster.format();
      cluster.startup();
      EmbeddedKafka broker = new EmbeddedKafka(cluster);
      broker.awaitReady();
      return broker;
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      if (cluster != null) {
        try {
          cluster.close();
        } catch (Exception suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      throw new IllegalStateException("cannot start the embedded Kafka broker: " + e, e);
    }
  }

  /** Waits until the broker is registered and answers metadata requests. */
  private void awaitReady() throws InterruptedException {
    Properties properties = new Properties();
    properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    long deadline = System.nanoTime() + 60_000_000_000L;
    try (Admin admin = Admin.create(properties)) {
      while (true) {
        try {
          if (!admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).isEmpty()) {
            return;
          }
        } catch (ExecutionException | TimeoutException e) {
          if (System.nanoTime() > deadline) {
            throw new IllegalStateException("the embedded broker did not become ready", e);
          }
        }
        Thread.sleep(100);
      }
    }
  }

  /** {@code host:port} of the broker. */
  public String bootstrapServers() {
    return cluster.bootstrapServers();
  }

  /**
   * Every committed record of {@code topic} on the broker at {@code bootstrapServers}, read from
   * the beginning to the partitions' current end ({@code read_committed}), in partition order.
   */
  public static List<ConsumerRecord<byte[], byte[]>> readCommitted(
      String bootstrapServers, String topic) {
    Properties config = new Properties();
    config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> partitions = new ArrayList<>();
      consumer
          .partitionsFor(topic, java.time.Duration.ofSeconds(30))
          .forEach(p -> partitions.add(new TopicPartition(topic, p.partition())));
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (partitions.stream().anyMatch(p -> consumer.position(p) < end.get(p))) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("could not read " + topic + " to its end in 60 s");
        }
        consumer.poll(java.time.Duration.ofMillis(200)).forEach(records::add);
      }
    }
    return records;
  }

  /** Creates each topic with {@code partitions} partitions unless it exists. */
  public void createTopics(int partitions, List<String> topics) {
    createTopics(bootstrapServers(), partitions, topics, Map.of());
  }

  /** Creates topics on any broker; existing topics are left as they are. */
  public static void createTopics(
      String bootstrapServers, int partitions, List<String> topics, Map<String, String> configs) {
    Properties properties = new Properties();
    properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    try (Admin admin = Admin.create(properties)) {
      List<NewTopic> create = new ArrayList<>();
      for (String topic : topics) {
        create.add(new NewTopic(topic, partitions, (short) 1).configs(configs));
      }
      for (var entry : admin.createTopics(create).values().entrySet()) {
        try {
          entry.getValue().get();
        } catch (ExecutionException e) {
          if (!(e.getCause() instanceof TopicExistsException)) {
            throw new IllegalStateException(
                "cannot create topic " + entry.getKey() + ": " + e.getCause(), e.getCause());
          }
        }
      }
      HostedTopics.await(admin, topics, HostedTopics.ANY_COUNT, java.time.Duration.ofSeconds(30));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while creating topics", e);
    }
  }

  @Override
  public void close() {
    try {
      cluster.close();
    } catch (Exception e) {
      throw new IllegalStateException("cannot stop the embedded Kafka broker", e);
    }
  }
}
