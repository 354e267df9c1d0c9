package dev.tidemark.pipelines.io.kafka;

import dev.tidemark.pipelines.OutputOptions;
import dev.tidemark.pipelines.Runners;
import dev.tidemark.pipelines.TidemarkOptions;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.beam.runners.flink.FlinkPipelineOptions;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RetriableException;

/**
 * Checks at pipeline construction that refuse unsafe Kafka/Flink combinations, each with a message
 * that says what to change. The guarantee matrix in the README lists what each allowed combination
 * gives.
 */
public final class KafkaChecks {
  private KafkaChecks() {}

  /**
   * Refuses unsafe combinations that need no broker to detect, and an {@code --outputFormat} other
   * than json without {@code --sink=kafka}: only the Kafka sink writes CloudEvents.
   */
  public static void checkOptions(TidemarkOptions options) {
    boolean kafkaIn = options.getSource() == TidemarkOptions.SourceKind.kafka;
    boolean kafkaOut = options.getSink() == TidemarkOptions.SinkKind.kafka;
    OutputOptions.OutputFormat format = OutputOptions.OutputFormat.parse(options.getOutputFormat());
    if (format.isCloudEvent() && !kafkaOut) {
      throw new IllegalArgumentException(
          "--outputFormat="
              + format.value()
              + " needs --sink=kafka: only the Kafka decisions topic is written as CloudEvents;"
              + " --sink="
              + options.getSink()
              + " writes the decision JSON (leave --outputFormat unset, or json)");
    }
    if (kafkaOut) {
      DecisionRecords.of(options); // refuses an --outputEventSource that is no URI reference
    }
    if (!kafkaIn && !kafkaOut) {
      return;
    }
    boolean transactional =
        kafkaOut && options.getKafkaSinkMode() == TidemarkOptions.KafkaSinkMode.transactional;
    if (kafkaOut) {
      Set<String> topics = new TreeSet<>(KafkaSinks.topics(options).values());
      if (topics.size() != 4) {
        throw new IllegalArgumentException(
            "the four output topics must differ, got " + KafkaSinks.topics(options));
      }
      if (kafkaIn && topics.contains(options.getKafkaInputTopic())) {
        throw new IllegalArgumentException(
            "--kafkaInputTopic=" + options.getKafkaInputTopic() + " is also an output topic");
      }
      if (options.getKafkaSinkShards() < 1) {
        throw new IllegalArgumentException("--kafkaSinkShards must be at least 1");
      }
    }
    if (transactional && KafkaSinks.sinkGroupId(options).equals(options.getKafkaConsumerGroup())) {
      throw new IllegalArgumentException(
          "--kafkaSinkGroupId must differ from --kafkaConsumerGroup: the sink stores its"
              + " transaction sequence as that group's offsets");
    }
    if (!Runners.isFlink(options)) {
      return;
    }
    FlinkPipelineOptions flink = options.as(FlinkPipelineOptions.class);
    boolean checkpointing = checkpointing(flink);
    if (transactional && !checkpointing) {
      throw new IllegalArgumentException(
          "--kafkaSinkMode=transactional on Flink needs checkpointing (--checkpointingInterval=MS):"
              + " its transactions commit when a checkpoint completes, so without one nothing is"
              + " ever visible to read_committed consumers");
    }
    if (transactional && !flink.getFinishBundleBeforeCheckpointing()) {
      throw new IllegalArgumentException(
          "--kafkaSinkMode=transactional on Flink needs --finishBundleBeforeCheckpointing=true"
              + " (the Flink profiles set it): the sink numbers its records in a stateful step,"
              + " and with bundles open across a checkpoint a restore re-emits records under new"
              + " numbers, so some are written twice and some never");
    }
    if (kafkaIn && !checkpointing) {
      throw new IllegalArgumentException(
          "--source=kafka on Flink needs checkpointing (--checkpointingInterval=MS): offsets are"
              + " committed only when a checkpoint finalizes, and without one a failure loses the"
              + " dedup and window state");
    }
    if (transactional
        && flink.getCheckpointingMode() != null
        && !flink.getCheckpointingMode().equals("EXACTLY_ONCE")) {
      throw new IllegalArgumentException(
          "--kafkaSinkMode=transactional needs --checkpointingMode=EXACTLY_ONCE, got "
              + flink.getCheckpointingMode());
    }
    Integer retries = flink.getNumberOfExecutionRetries();
    if (checkpointing && (retries == null || retries < 0)) {
      throw new IllegalArgumentException(
          "set --numberOfExecutionRetries=N (N >= 0): with checkpointing Flink otherwise restarts"
              + " a failing job forever, and a record that always fails would stall the pipeline"
              + " without ever failing it");
    }
  }

  /**
   * The input topic's partitions and how many of them the source's consumer group has committed
   * offsets for (a job commits its source's positions when a checkpoint or savepoint completes).
   *
   * @param partitions the topic's partition count now
   * @param committed partitions with an offset committed by {@code --kafkaConsumerGroup}
   */
  public record SourcePartitions(int partitions, int committed) {
    /**
     * Whether partitions were added after a job of this group started: it committed offsets for
     * some partitions but not all. Beam's Kafka source keeps the partitions it found when its job
     * first started, also when restored from a savepoint, and would never read the new ones.
     */
    public boolean added() {
      return committed > 0 && committed < partitions;
    }
  }

  /**
   * Lists the input topic's partitions and the source group's committed ones. A retriable error (a
   * topic or a group coordinator a broker does not know yet, moments after the topic was created or
   * a broker restarted) is retried for up to 15 seconds.
   */
  public static SourcePartitions sourcePartitions(TidemarkOptions options, KafkaClients clients) {
    String topic = options.getKafkaInputTopic();
    Properties properties = new Properties();
    properties.putAll(clients.connectionConfig());
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    try (Admin admin = Admin.create(properties)) {
      while (true) {
        try {
          return sourcePartitions(admin, topic, options.getKafkaConsumerGroup());
        } catch (ExecutionException e) {
          if (!(e.getCause() instanceof RetriableException) || System.nanoTime() > deadline) {
            throw e;
          }
          Thread.sleep(250);
        }
      }
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException(
          "cannot list the partitions of --kafkaInputTopic="
              + topic
              + " on "
              + clients.bootstrapServers()
              + " (does the topic exist?): "
              + e,
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while listing the input partitions", e);
    }
  }

  private static SourcePartitions sourcePartitions(Admin admin, String topic, String group)
      throws ExecutionException, InterruptedException, TimeoutException {
    int partitions =
        admin
            .describeTopics(List.of(topic))
            .allTopicNames()
            .get(30, TimeUnit.SECONDS)
            .get(topic)
            .partitions()
            .size();
    int committed = 0;
    for (Map.Entry<TopicPartition, OffsetAndMetadata> offset :
        admin
            .listConsumerGroupOffsets(group)
            .partitionsToOffsetAndMetadata()
            .get(30, TimeUnit.SECONDS)
            .entrySet()) {
      if (offset.getKey().topic().equals(topic) && offset.getValue() != null) {
        committed++;
      }
    }
    return new SourcePartitions(partitions, committed);
  }

  /**
   * Refuses a transactional sink whose group already holds sink state this run cannot own: state
   * for another topic (the group id is used by another pipeline) or, on a fresh start (no
   * savepoint), state for this topic (an earlier run, or another pipeline writing the same topic).
   * The sink's writer would otherwise fail on the worker, once per restart.
   */
  public static void checkSinkGroups(TidemarkOptions options, KafkaClients clients) {
    if (options.getSink() != TidemarkOptions.SinkKind.kafka
        || options.getKafkaSinkMode() != TidemarkOptions.KafkaSinkMode.transactional) {
      return;
    }
    boolean resuming =
        Runners.isFlink(options)
            && options.as(FlinkPipelineOptions.class).getSavepointPath() != null;
    Properties properties = new Properties();
    properties.putAll(clients.connectionConfig());
    try (Admin admin = Admin.create(properties)) {
      for (Map.Entry<String, String> output : KafkaSinks.outputTopics(options).entrySet()) {
        String group = KafkaSinks.sinkGroupId(options) + "." + output.getKey();
        Map<TopicPartition, OffsetAndMetadata> offsets =
            admin
                .listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata()
                .get(30, TimeUnit.SECONDS);
        for (TopicPartition partition : offsets.keySet()) {
          if (!partition.topic().equals(output.getValue())) {
            throw new IllegalArgumentException(
                "sink group '"
                    + group
                    + "' already holds offsets for topic '"
                    + partition.topic()
                    + "', not '"
                    + output.getValue()
                    + "': another pipeline uses it. Give this pipeline its own"
                    + " --kafkaSinkGroupId");
          }
          if (!resuming) {
            throw new IllegalArgumentException(
                "sink group '"
                    + group
                    + "' already holds transactional sink state for '"
                    + output.getValue()
                    + "' from an earlier run or another pipeline. Resume that run from its"
                    + " savepoint (--savepointPath), or start fresh with a new --kafkaSinkGroupId");
          }
        }
      }
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException(
          "cannot check the sink groups on " + clients.bootstrapServers() + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while checking the sink groups", e);
    }
  }

  /** Whether the Flink job checkpoints: {@code --checkpointingInterval} set and positive. */
  public static boolean checkpointing(FlinkPipelineOptions flink) {
    Long interval = flink.getCheckpointingInterval();
    return interval != null && interval > 0;
  }
}
