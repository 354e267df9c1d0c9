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
import dev.tidemark.pipelines.io.kafka.KafkaSinks;
import dev.tidemark.pipelines.launch.FlinkClusterLaunch;
import dev.tidemark.testkit.HostedTopics;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.TopicExistsException;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * Tidemark jobs on the local cluster as the drill runs them: the {@code flink-cluster} runner
 * profile pointed at the cluster's ports, one set of topics per run, submitted through the same
 * path as {@code ./tidemark run --profile=flink-cluster}, and watched through Flink's REST API.
 */
final class DrillJobs {
  /** A checkpoint every 2 s: commits (and the drill's wait for quiet outputs) come sooner. */
  static final String CHECKPOINT_INTERVAL_MILLIS = "2000";

  /** What every drill job and its recomputation share: the window and watermark settings. */
  static final List<String> PIPELINE_ARGS = List.of();

  private final ClusterSettings cluster;
  private final List<FlinkRestClient> masters = new ArrayList<>();
  private int current;
  private final KafkaClients clients;

  DrillJobs(ClusterSettings cluster) {
    this.cluster = cluster;
    for (int i = 0; i < cluster.jobManagers(); i++) {
      masters.add(FlinkRestClient.of(cluster.flinkMaster(i)));
    }
    this.clients = KafkaClients.plaintext(cluster.kafkaBootstrapServers());
  }

  /**
   * The REST API of a JobManager that answers. With high availability every JobManager's REST
   * endpoint serves the cluster (a standby's forwards to the leader), but a killed one's does not:
   * the drill then talks to the other.
   */
  synchronized FlinkRestClient rest() {
    if (masters.size() == 1) {
      return masters.get(0);
    }
    for (int tried = 0; tried < masters.size(); tried++) {
      FlinkRestClient candidate = masters.get(current);
      try {
        candidate.get("/overview");
        return candidate;
      } catch (FlinkRestException | RuntimeException e) {
        current = (current + 1) % masters.size();
      }
    }
    return masters.get(current);
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
    commandLine.add("--flinkMaster=" + rest().master());
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

  /**
   * Creates the input topic (kept forever) and every topic the run writes ({@link
   * KafkaSinks#outputTopics}), {@code partitions} each, with the cluster's replication factor (the
   * brokers' default: 3 on a replicated cluster). The four outputs' topics are the run's own; the
   * drift topic is named by the spec, so the drill's runs share it and a later run finds it made.
   * Returns the four outputs' topics by output name.
   */
  Map<String, String> createTopics(TidemarkOptions options, int partitions) throws Exception {
    Map<String, String> outputs = KafkaSinks.topics(options);
    List<String> names = new ArrayList<>(KafkaSinks.outputTopics(options).values());
    List<NewTopic> topics = new ArrayList<>();
    topics.add(
        new NewTopic(options.getKafkaInputTopic(), Optional.of(partitions), Optional.empty())
            .configs(Map.of("retention.ms", "-1")));
    for (String topic : names) {
      topics.add(new NewTopic(topic, Optional.of(partitions), Optional.empty()));
    }
    try (Admin admin = Admin.create(clients.merged(new HashMap<>()))) {
      for (Map.Entry<String, KafkaFuture<Void>> created :
          admin.createTopics(topics).values().entrySet()) {
        try {
          created.getValue().get();
        } catch (ExecutionException e) {
          boolean shared =
              !outputs.containsValue(created.getKey())
                  && !created.getKey().equals(options.getKafkaInputTopic());
          if (!(shared && e.getCause() instanceof TopicExistsException)) {
            throw e;
          }
        }
      }
    }
    names.add(options.getKafkaInputTopic());
    awaitTopics(names, partitions, Duration.ofMinutes(1));
    return outputs;
  }

  /**
   * Waits until every one of {@code topics} has {@code partitions} partitions and every running
   * broker hosts its replicas of them ({@link HostedTopics}): a job's Kafka read listed on a broker
   * that has not applied a grown topic's metadata would miss the new partitions.
   */
  private void awaitTopics(List<String> topics, int partitions, Duration timeout) throws Exception {
    try (Admin admin = Admin.create(clients.merged(new HashMap<>()))) {
      HostedTopics.await(admin, topics, partitions, timeout);
    }
  }

  /**
   * The broker index (node id minus one) that leads each partition of {@code topic}, by partition.
   */
  Map<Integer, Integer> leaders(String topic) throws Exception {
    Map<Integer, Integer> leaders = new java.util.TreeMap<>();
    try (Admin admin = Admin.create(clients.merged(new HashMap<>()))) {
      for (TopicPartitionInfo partition :
          admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions()) {
        if (partition.leader() != null) {
          leaders.put(partition.partition(), partition.leader().id() - 1);
        }
      }
    }
    return leaders;
  }

  /**
   * The partitions of {@code topic} with a transaction open now (a producer's first record of it
   * written, its commit not yet), by Kafka's producer state.
   */
  List<Integer> openTransactions(String topic) throws Exception {
    List<Integer> open = new ArrayList<>();
    try (Admin admin = Admin.create(clients.merged(new HashMap<>()))) {
      List<TopicPartition> partitions = new ArrayList<>();
      for (TopicPartitionInfo partition :
          admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions()) {
        partitions.add(new TopicPartition(topic, partition.partition()));
      }
      admin
          .describeProducers(partitions)
          .all()
          .get()
          .forEach(
              (partition, producers) -> {
                if (producers.activeProducers().stream()
                    .anyMatch(p -> p.currentTransactionStartOffset().isPresent())) {
                  open.add(partition.partition());
                }
              });
    }
    return open;
  }

  /**
   * What a job committed once its input ended: the markers sent, every output topic, and whether
   * the outputs settled (false: the wait for them ran out, and the outputs are what was committed
   * by then).
   */
  /**
   * What {@link #finish} found: the markers sent, the committed outputs, whether they settled, and
   * why not when the job failed the same way after every restore ({@link RestoreLoop}), else null.
   */
  record Finished(
      int markers,
      Map<String, List<ConsumerRecord<byte[], byte[]>>> committed,
      boolean settled,
      @Nullable String restoreLoop) {
    Finished(
        int markers, Map<String, List<ConsumerRecord<byte[], byte[]>>> committed, boolean settled) {
      this(markers, committed, settled, null);
    }
  }

  /**
   * How long outputs that do not account for every fed record must stay unchanged, over {@value
   * #SETTLE_CHECKPOINTS} completed checkpoints, before the drill takes them as final: a window's
   * last pane held up behind a restart comes within this, a lost record never does.
   */
  static final Duration SETTLE = Duration.ofSeconds(60);

  static final int SETTLE_CHECKPOINTS = 3;

  /**
   * Ends the job's input: sends end-of-stream markers past {@code maxEventTimeMillis} to every
   * partition of its input topic, then waits until the committed outputs are final, failing only if
   * the job ends first. Final means: every marker is dead-lettered and the outputs stopped changing
   * ({@link LiveRun#awaitQuiet}), and either they account for all {@code fed} records ({@link
   * Comparison#accountsFor}) and two more checkpoints completed without a change (the transactional
   * sink commits at checkpoints), or they do not and stayed unchanged for {@link #SETTLE} and
   * {@value #SETTLE_CHECKPOINTS} checkpoints: a loss or a double count is then the comparison's to
   * report. At {@code timeout} it returns what was committed, not settled; so it does, at once,
   * when the job fails the same way after every restore ({@link RestoreLoop}) and so cannot commit
   * anything more.
   */
  Finished finish(
      String jobId,
      TidemarkOptions options,
      Map<String, String> outputs,
      long fed,
      long maxEventTimeMillis,
      Duration timeout)
      throws InterruptedException {
    long since = System.currentTimeMillis();
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
    Map<String, Integer> unchanged = null;
    long unchangedSince = 0;
    long checkpointsThen = 0;
    while (true) {
      Map<String, List<ConsumerRecord<byte[], byte[]>>> committed;
      try {
        committed =
            LiveRun.awaitQuiet(
                clients,
                outputs,
                markers,
                org.joda.time.Duration.millis(
                    Math.max(1, (deadline - System.nanoTime()) / 1_000_000)),
                // One checkpoint interval and a second: the two further checkpoints below confirm.
                org.joda.time.Duration.millis(Long.parseLong(CHECKPOINT_INTERVAL_MILLIS) + 1000),
                () -> checkProgressing(jobId, since));
      } catch (RestoreLoopException e) {
        return new Finished(markers, readAll(outputs), false, e.getMessage());
      } catch (IllegalStateException e) {
        // The job ended (checkRunning throws again), or the time ran out: a marker or an output
        // that never came is for the comparison to report.
        checkRunning(jobId);
        return new Finished(markers, readAll(outputs), false);
      }
      Map<String, Integer> seen = sizes(committed);
      if (Comparison.accountsFor(
          OutputView.fromRecords(committed), fed, markers, windowSize, delivery)) {
        long completed = completedCheckpoints(jobId);
        while (completedCheckpoints(jobId) < completed + 2 && System.nanoTime() < deadline) {
          checkRunning(jobId);
          Thread.sleep(500);
        }
        Map<String, List<ConsumerRecord<byte[], byte[]>>> now = readAll(outputs);
        if (sizes(now).equals(seen)) {
          return new Finished(markers, now, true);
        }
      } else if (!seen.equals(unchanged)) {
        unchanged = seen;
        unchangedSince = System.nanoTime();
        checkpointsThen = completedCheckpoints(jobId);
      } else if (System.nanoTime() - unchangedSince > SETTLE.toNanos()
          && completedCheckpoints(jobId) >= checkpointsThen + SETTLE_CHECKPOINTS) {
        return new Finished(markers, committed, true);
      }
      if (System.nanoTime() > deadline) {
        return new Finished(markers, readAll(outputs), false);
      }
      Thread.sleep(2000);
    }
  }

  /** Thrown when the job fails the same way after every restore since the feed ended. */
  static final class RestoreLoopException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    RestoreLoopException(String message) {
      super(message);
    }
  }

  /**
   * {@link #checkRunning}, and throws {@link RestoreLoopException} when the job has failed {@value
   * RestoreLoop#REPEATS} times in a row with one message since {@code sinceMillis}.
   */
  private void checkProgressing(String jobId, long sinceMillis) {
    checkRunning(jobId);
    String loop;
    try {
      loop = RestoreLoop.of(rest().get("/jobs/" + jobId + "/exceptions"), sinceMillis);
    } catch (FlinkRestException e) {
      // No answer this time: the next poll asks again.
      return;
    }
    if (loop != null) {
      throw new RestoreLoopException(
          "job "
              + jobId
              + " failed "
              + RestoreLoop.REPEATS
              + " times in a row after restores since the feed ended, each time with: "
              + loop);
    }
  }

  private Map<String, List<ConsumerRecord<byte[], byte[]>>> readAll(Map<String, String> outputs) {
    Map<String, List<ConsumerRecord<byte[], byte[]>>> all = new java.util.LinkedHashMap<>();
    outputs.forEach((name, topic) -> all.put(name, KafkaFeed.readAll(clients, topic)));
    return all;
  }

  private static Map<String, Integer> sizes(Map<String, List<ConsumerRecord<byte[], byte[]>>> of) {
    Map<String, Integer> sizes = new java.util.TreeMap<>();
    of.forEach((name, records) -> sizes.put(name, records.size()));
    return sizes;
  }

  /**
   * Where the job's source stands on its input: records produced to the input topic so far (the
   * partitions' end offsets) and records its consumer group has committed (the source commits its
   * offsets when a checkpoint completes). Produced minus committed is the work a restore replays.
   */
  record InputPosition(long produced, long committed) {
    long pending() {
      return Math.max(0, produced - committed);
    }
  }

  InputPosition inputPosition(TidemarkOptions options) throws Exception {
    String topic = options.getKafkaInputTopic();
    try (Admin admin = Admin.create(clients.merged(new HashMap<>()))) {
      Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
      for (TopicPartitionInfo partition :
          admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions()) {
        latest.put(new TopicPartition(topic, partition.partition()), OffsetSpec.latest());
      }
      long produced = 0;
      for (var info : admin.listOffsets(latest).all().get().values()) {
        produced += info.offset();
      }
      long committed = 0;
      for (OffsetAndMetadata offset :
          admin
              .listConsumerGroupOffsets(options.getKafkaConsumerGroup())
              .partitionsToOffsetAndMetadata()
              .get()
              .values()) {
        if (offset != null) {
          committed += offset.offset();
        }
      }
      return new InputPosition(produced, committed);
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
      return rest()
          .get("/jobs/" + jobId + "/checkpoints")
          .path("counts")
          .path("completed")
          .asLong();
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
      FlinkJob job = rest().job(jobId);
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
      checkNotEnded(rest().job(jobId));
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
              + rest().webUi(job.id()).replace("/overview", "/exceptions"));
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
    awaitTopics(List.of(topic), partitions, Duration.ofMinutes(1));
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
        return rest().stopWithSavepoint(jobId, directory.toUri().toString(), Duration.ofMinutes(3));
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
      rest().cancelIfRunning(jobId, Duration.ofMinutes(2));
    } catch (FlinkRestException e) {
      System.err.println("drill: could not cancel job " + jobId + ": " + e.getMessage());
    }
  }

  /** The {@code --kafkaSinkMode} argument. */
  static String sinkMode(KafkaOptions.KafkaSinkMode mode) {
    return "--kafkaSinkMode=" + mode;
  }
}
