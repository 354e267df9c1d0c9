package dev.tidemark.drill;

import dev.tidemark.cluster.ClusterSettings;
import dev.tidemark.launcher.KafkaFeed;
import dev.tidemark.launcher.LiveRun;
import dev.tidemark.launcher.check.Comparison;
import dev.tidemark.launcher.check.OutputView;
import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.pipelines.RunnerProfiles;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.flink.ClusterPaths;
import dev.tidemark.pipelines.flink.FlinkJob;
import dev.tidemark.pipelines.flink.FlinkRestClient;
import dev.tidemark.pipelines.flink.FlinkRestException;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.launch.FlinkClusterLaunch;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * Tidemark jobs on the local cluster as the drill runs them: the {@code flink-cluster} runner
 * profile pointed at the cluster's ports, one set of topics per run, submitted through the same
 * path as {@code ./tidemark run --profile=flink-cluster}, and watched through Flink's REST API.
 */
final class DrillJobs {
  /** A checkpoint every 2 s: commits (and the drill's wait for quiet outputs) come sooner. */
  static final String CHECKPOINT_INTERVAL_MILLIS = "2000";

  /** What every drill job and its batch reference share: the window and watermark settings. */
  static final List<String> PIPELINE_ARGS = List.of();

  private final ClusterSettings cluster;
  private final FlinkRestClient rest;
  private final KafkaClients clients;

  DrillJobs(ClusterSettings cluster) {
    this.cluster = cluster;
    this.rest = FlinkRestClient.of(cluster.flinkMaster());
    this.clients = KafkaClients.plaintext(cluster.kafkaBootstrapServers());
  }

  FlinkRestClient rest() {
    return rest;
  }

  KafkaClients clients() {
    return clients;
  }

  /** The topics and group names of one run, all starting with {@code prefix}. */
  record Topics(String prefix) {
    String input() {
      return prefix + ".events";
    }

    List<String> arguments() {
      return List.of(
          "--kafkaInputTopic=" + input(),
          "--kafkaDecisionsTopic=" + prefix + ".decisions",
          "--kafkaDeadLettersTopic=" + prefix + ".dead-letters",
          "--kafkaDuplicatesTopic=" + prefix + ".duplicates",
          "--kafkaTooLateTopic=" + prefix + ".too-late",
          "--kafkaConsumerGroup=" + prefix + "-source",
          "--kafkaSinkGroupId=" + prefix + "-sink");
    }
  }

  /**
   * The options of a job of this run: the {@code flink-cluster} profile, the cluster's addresses,
   * the run's topics, and {@code extra} (parallelism, sink mode, model, savepoint).
   */
  TidemarkOptions options(Topics topics, Path output, List<String> extra) {
    List<String> commandLine = new ArrayList<>();
    commandLine.add("--flinkMaster=" + cluster.flinkMaster());
    commandLine.add("--kafkaBootstrapServers=" + cluster.kafkaBootstrapServers());
    commandLine.add("--checkpointingInterval=" + CHECKPOINT_INTERVAL_MILLIS);
    commandLine.add("--jobName=" + topics.prefix() + "-" + System.currentTimeMillis());
    commandLine.add("--output=" + output);
    commandLine.addAll(PIPELINE_ARGS);
    commandLine.addAll(topics.arguments());
    commandLine.addAll(extra);
    List<String> arguments =
        RunnerProfiles.fromEnvironment().arguments("flink-cluster", commandLine);
    return PipelineOptionsFactory.fromArgs(arguments.toArray(new String[0]))
        .withValidation()
        .as(TidemarkOptions.class);
  }

  /** Creates the input topic (kept forever) and the output topics, {@code partitions} each. */
  Map<String, String> createTopics(TidemarkOptions options, int partitions) {
    return LiveRun.createTopics(options, partitions);
  }

  /** What a job committed once its input ended: the markers sent and every output topic. */
  record Finished(int markers, Map<String, List<ConsumerRecord<byte[], byte[]>>> committed) {}

  /**
   * Ends the job's input: sends end-of-stream markers past {@code maxEventTimeMillis} to every
   * partition of its input topic, then waits until the committed outputs are final, failing if the
   * job ends first. Final means: every marker is dead-lettered and the outputs stopped changing
   * ({@link LiveRun#awaitQuiet}), they account for all {@code fed} records ({@link
   * Comparison#accountsFor}: a window whose final pane is still on its way, behind a slow sink or a
   * restart, does not), and two more checkpoints completed without a change (the transactional sink
   * commits at checkpoints). At {@code timeout} it returns what was committed.
   */
  Finished finish(
      String jobId,
      TidemarkOptions options,
      Map<String, String> outputs,
      long fed,
      long maxEventTimeMillis,
      Duration timeout)
      throws InterruptedException {
    int markers =
        LiveRun.sendEndMarkers(
            clients,
            options.getKafkaInputTopic(),
            maxEventTimeMillis,
            org.joda.time.Duration.standardDays(1));
    long deadline = System.nanoTime() + timeout.toNanos();
    org.joda.time.Duration windowSize =
        org.joda.time.Duration.millis(java.time.Duration.parse(options.getWindowSize()).toMillis());
    Comparison.Delivery delivery = delivery(options.getKafkaSinkMode());
    while (true) {
      Map<String, List<ConsumerRecord<byte[], byte[]>>> committed =
          LiveRun.awaitQuiet(
              clients,
              outputs,
              markers,
              org.joda.time.Duration.millis(
                  Math.max(1, (deadline - System.nanoTime()) / 1_000_000)),
              () -> checkRunning(jobId));
      if (!Comparison.accountsFor(
              OutputView.fromRecords(committed), fed, markers, windowSize, delivery)
          && System.nanoTime() < deadline) {
        Thread.sleep(2000);
        continue;
      }
      long completed = completedCheckpoints(jobId);
      while (completedCheckpoints(jobId) < completed + 2 && System.nanoTime() < deadline) {
        checkRunning(jobId);
        Thread.sleep(500);
      }
      Map<String, Integer> sizes = new java.util.TreeMap<>();
      outputs.forEach((name, topic) -> sizes.put(name, KafkaFeed.readAll(clients, topic).size()));
      Map<String, Integer> seen = new java.util.TreeMap<>();
      committed.forEach((name, records) -> seen.put(name, records.size()));
      if (sizes.equals(seen) || System.nanoTime() > deadline) {
        return new Finished(markers, committed);
      }
    }
  }

  /** How the comparison reads a sink mode's outputs. */
  static Comparison.Delivery delivery(KafkaOptions.KafkaSinkMode sink) {
    return sink == KafkaOptions.KafkaSinkMode.transactional
        ? Comparison.Delivery.EXACTLY_ONCE
        : Comparison.Delivery.AT_LEAST_ONCE;
  }

  private long completedCheckpoints(String jobId) {
    try {
      return rest.get("/jobs/" + jobId + "/checkpoints").path("counts").path("completed").asLong();
    } catch (FlinkRestException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  /** Submits the job, optionally restored from {@code savepoint}, and waits until it all runs. */
  String submit(TidemarkOptions options, @Nullable String savepoint) throws Exception {
    if (savepoint != null) {
      options
          .as(org.apache.beam.runners.flink.FlinkPipelineOptions.class)
          .setSavepointPath(ClusterPaths.forCluster(savepoint));
    }
    String jobId = FlinkClusterLaunch.submitToFlinkCluster(options).jobId();
    awaitFullyRunning(jobId, Duration.ofMinutes(3));
    return jobId;
  }

  /** Waits until every task of the job runs; throws if it ended or the time ran out. */
  void awaitFullyRunning(String jobId, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      FlinkJob job = rest.job(jobId);
      if (job.fullyRunning()) {
        return;
      }
      checkNotEnded(job);
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "job " + jobId + " is " + job.state() + " and not fully running after " + timeout);
      }
      Thread.sleep(500);
    }
  }

  /** Throws when the job has ended: a drill job runs until the drill stops it. */
  void checkRunning(String jobId) {
    try {
      checkNotEnded(rest.job(jobId));
    } catch (FlinkRestException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  private void checkNotEnded(FlinkJob job) {
    if (job.ended()) {
      throw new IllegalStateException(
          "job "
              + job.id()
              + " ended "
              + job.state()
              + "; its exceptions: "
              + rest.webUi(job.id()).replace("/overview", "/exceptions"));
    }
  }

  /**
   * Waits until the job's source has read the whole input topic: the consumer group's committed
   * offsets (the source commits them when a checkpoint completes) reach every partition's end.
   */
  void awaitConsumed(String jobId, TidemarkOptions options, Duration timeout) throws Exception {
    String topic = options.getKafkaInputTopic();
    String group = options.getKafkaConsumerGroup();
    long deadline = System.nanoTime() + timeout.toNanos();
    try (Admin admin = Admin.create(clients.merged(new HashMap<>()))) {
      while (true) {
        checkRunning(jobId);
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (TopicPartitionInfo partition :
            admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions()) {
          latest.put(new TopicPartition(topic, partition.partition()), OffsetSpec.latest());
        }
        Map<TopicPartition, Long> ends = new HashMap<>();
        admin.listOffsets(latest).all().get().forEach((tp, info) -> ends.put(tp, info.offset()));
        Map<TopicPartition, OffsetAndMetadata> committed =
            admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
        boolean done =
            ends.entrySet().stream()
                .allMatch(
                    end ->
                        end.getValue() == 0
                            || (committed.get(end.getKey()) != null
                                && committed.get(end.getKey()).offset() >= end.getValue()));
        if (done) {
          return;
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "job "
                  + jobId
                  + " did not read "
                  + topic
                  + " to its end "
                  + ends
                  + " within "
                  + timeout
                  + "; committed: "
                  + committed);
        }
        Thread.sleep(1000);
      }
    }
  }

  /** Waits until {@code topic} holds at least {@code count} committed records. */
  void awaitRecords(String jobId, String topic, int count, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (KafkaFeed.readAll(clients, topic).size() < count) {
      checkRunning(jobId);
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "job " + jobId + " committed fewer than " + count + " records to " + topic);
      }
      Thread.sleep(1000);
    }
  }

  /** Raises the partition count of {@code topic} to {@code partitions}. */
  void raisePartitions(String topic, int partitions) throws Exception {
    try (Admin admin = Admin.create(clients.merged(new HashMap<>()))) {
      admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(partitions))).all().get();
    }
  }

  /**
   * Stops the job with a savepoint into {@code directory}; returns the savepoint's path. A job that
   * is restarting cannot take one ("not being executed at the moment"): each of three attempts
   * waits until every task runs.
   */
  String stopWithSavepoint(String jobId, Path directory) throws Exception {
    for (int attempt = 1; ; attempt++) {
      awaitFullyRunning(jobId, Duration.ofMinutes(3));
      try {
        return rest.stopWithSavepoint(jobId, directory.toUri().toString(), Duration.ofMinutes(3));
      } catch (FlinkRestException e) {
        if (attempt == 3) {
          throw e;
        }
        System.err.println("drill: savepoint attempt " + attempt + " failed, retrying: " + e);
      }
    }
  }

  /** Cancels the job if it still runs (a drill leaves no job behind). */
  void cancelQuietly(@Nullable String jobId) {
    if (jobId == null) {
      return;
    }
    try {
      rest.cancelIfRunning(jobId, Duration.ofMinutes(2));
    } catch (FlinkRestException e) {
      System.err.println("drill: could not cancel job " + jobId + ": " + e.getMessage());
    }
  }

  /** The {@code --kafkaSinkMode} argument. */
  static String sinkMode(KafkaOptions.KafkaSinkMode mode) {
    return "--kafkaSinkMode=" + mode;
  }
}
