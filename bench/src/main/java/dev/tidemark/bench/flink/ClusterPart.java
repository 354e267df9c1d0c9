package dev.tidemark.bench.flink;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.bench.suite.BenchPart;
import dev.tidemark.bench.suite.BenchProfile;
import dev.tidemark.bench.suite.BenchResults;
import dev.tidemark.bench.suite.Stats;
import dev.tidemark.cluster.ClusterSettings;
import dev.tidemark.cluster.LocalCluster;
import dev.tidemark.launcher.LiveRun;
import dev.tidemark.pipelines.RunnerProfiles;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.flink.FlinkJob;
import dev.tidemark.pipelines.flink.FlinkRestClient;
import dev.tidemark.pipelines.flink.FlinkRestException;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.launch.FlinkClusterLaunch;
import dev.tidemark.testkit.EmbeddedKafka;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.CheckpointingMode;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * Tidemark against {@link NativeFlinkJob} and {@link FlinkSqlJob} on the local multi-process
 * cluster ({@code ./tidemark cluster up}): the jobs submitted to the same JobManager and
 * TaskManagers, each reading the same generated input from a Kafka topic of its own (two
 * partitions) and writing its four outputs to Kafka; exactly-once checkpoints every 5 s on both;
 * state in RocksDB with incremental checkpoints (the cluster's configuration) or on the heap (set
 * per job); parallelism 2 and 1. Tidemark runs with the {@code flink-cluster} profile, early
 * firings off as in the native job, and its idempotent sink; the transactional sink is measured
 * against it on the same input. The Flink SQL job runs at parallelism 2 on both backends; Flink's
 * table runtime, which the cluster's class path lacks (Flink's distribution keeps it in {@code
 * lib/}), goes with its job jars.
 *
 * <p>Events/s = input lines / (submission to the moment a consumer of the output topics saw the
 * last output record; {@code read_committed} for the transactional sink). Job start-up is included
 * on both. Runs alternate native and Tidemark. Every run must produce the counts of the first
 * (decisions, dead letters, duplicates, too late); a mismatch is noted. While Tidemark runs at
 * parallelism 2 on RocksDB, the part samples each job vertex's {@code busyTimeMsPerSecond} from
 * Flink's REST API once a second: the share of busy time by stage.
 */
public final class ClusterPart implements BenchPart {
  static final String NAME = "flink-cluster";
  static final int ACCOUNTS = FlinkBaselinePart.ACCOUNTS;
  static final int PARTITIONS = 2;
  static final long CHECKPOINT_INTERVAL_MILLIS = 5_000;

  /** Tidemark's side of the throughput ratios, and the transactional sink's cost against it. */
  static final String TIDEMARK = "tidemark";

  static final String NATIVE = "native";

  /** The Flink SQL job ({@link FlinkSqlJob}: slices its hopping windows). */
  static final String SQL = "sql";

  private static final AtomicInteger RUNS = new AtomicInteger();

  /**
   * At least 100,000 events in the full profile, where start-up no longer dominates a run; below
   * it, the profile's events, at most 20,000.
   */
  static int events(BenchProfile profile) {
    return profile.isFull() ? 100_000 : Math.min(20_000, profile.events);
  }

  @Override
  public String name() {
    return NAME;
  }

  /** How state is kept. */
  enum Backend {
    ROCKSDB("rocksdb", "EmbeddedRocksDBStateBackend"),
    HEAP("heap", "HashMapStateBackend");

    final String label;
    final String flinkName;

    Backend(String label, String flinkName) {
      this.label = label;
      this.flinkName = flinkName;
    }
  }

  /** What one run produced: records per output. */
  record Counts(long decisions, long deadLetters, long duplicates, long tooLate) {
    @Override
    public String toString() {
      return String.format(
          Locale.ROOT,
          "decisions=%d deadLetters=%d duplicates=%d tooLate=%d",
          decisions,
          deadLetters,
          duplicates,
          tooLate);
    }
  }

  /**
   * One measured run: {@code seconds} from the first output record seen to the last (the job
   * reading and processing its input), {@code withStartUp} from submission to the last.
   */
  record Run(long lines, double seconds, double withStartUp, Counts counts) {
    double eventsPerSecond() {
      return lines / seconds;
    }

    double eventsPerSecondWithStartUp() {
      return lines / withStartUp;
    }
  }

  @Override
  public void run(BenchProfile profile, BenchResults results) throws Exception {
    Path dir =
        Paths.get(System.getProperty("tidemark.home", ".")).resolve("out/cluster").normalize();
    Optional<ClusterSettings> settings = ClusterSettings.load(dir);
    String unavailable =
        settings.isEmpty()
            ? "no local cluster in " + dir
            : notFullyUp(
                new LocalCluster(
                    settings.get(), "", new PrintStream(OutputStream.nullOutputStream())));
    if (unavailable != null) {
      notMeasured(results, unavailable + "; start it with './tidemark cluster up'");
      return;
    }
    new Session(settings.get(), profile, results).run();
  }

  private static @Nullable String notFullyUp(LocalCluster cluster) throws InterruptedException {
    LocalCluster.Status status = cluster.status();
    return status.allRunning() ? null : "the local cluster is not fully up:\n" + status.format();
  }

  private static void notMeasured(BenchResults results, String reason) {
    for (String key :
        List.of(
            "ratios.tidemarkVsNativeFlinkRocksDb",
            "ratios.tidemarkVsFlinkSqlRocksDb",
            "ratios.eosThroughputCost",
            "scaling.speedupP2VsP1.tidemark",
            "scaling.speedupP2VsP1.native")) {
      results.note(NAME, key + " is null: " + reason);
    }
  }

  /** The runs of one part on one cluster. */
  private static final class Session {
    private final ClusterSettings cluster;
    private final BenchProfile profile;
    private final BenchResults results;
    private final FlinkRestClient rest;
    private final KafkaClients clients;
    private final Workload workload;
    private final Map<String, List<Run>> runs = new LinkedHashMap<>();
    private final Map<String, double[]> busy = new TreeMap<>();
    private final List<String> mismatches = new ArrayList<>();
    private @Nullable Counts expected;

    Session(ClusterSettings cluster, BenchProfile profile, BenchResults results)
        throws IOException {
      this.cluster = cluster;
      this.profile = profile;
      this.results = results;
      this.rest = FlinkRestClient.of(cluster.flinkMaster());
      this.clients = KafkaClients.plaintext(cluster.kafkaBootstrapServers());
      this.workload = Workload.generate(events(profile), ACCOUNTS);
    }

    void run() throws Exception {
      for (int i = 0; i < profile.warmups + profile.repeats; i++) {
        boolean measured = i >= profile.warmups;
        for (Backend backend : Backend.values()) {
          add(measured, NATIVE + "-" + backend.label + "-p2", nativeRun(backend, 2, false));
          add(measured, SQL + "-" + backend.label + "-p2", nativeRun(backend, 2, true));
          add(measured, TIDEMARK + "-" + backend.label + "-p2", tidemarkRun(backend, 2, false));
        }
        add(measured, NATIVE + "-rocksdb-p1", nativeRun(Backend.ROCKSDB, 1, false));
        add(measured, TIDEMARK + "-rocksdb-p1", tidemarkRun(Backend.ROCKSDB, 1, false));
        add(
            measured,
            TIDEMARK + "-rocksdb-p2-transactional",
            tidemarkRun(Backend.ROCKSDB, 2, true));
      }
      record();
    }

    private void add(boolean measured, String name, Run run) {
      if (expected == null) {
        expected = run.counts();
      } else if (!expected.equals(run.counts())) {
        mismatches.add(
            "MISMATCH: " + name + " produced " + run.counts() + ", the first run " + expected);
      }
      System.out.printf(
          Locale.ROOT,
          "  %s%s: %d lines in %.2f s = %.0f events/s (%.2f s from submission); %s%n",
          name,
          measured ? "" : " (warm-up)",
          run.lines(),
          run.seconds(),
          run.eventsPerSecond(),
          run.withStartUp(),
          run.counts());
      if (measured) {
        runs.computeIfAbsent(name, k -> new ArrayList<>()).add(run);
      }
    }

    private double median(String name) {
      return Stats.of(runs.get(name).stream().mapToDouble(Run::eventsPerSecond).toArray()).median();
    }

    private void record() {
      runs.forEach(
          (name, list) -> {
            results.measure(
                NAME,
                name,
                Stats.of(list.stream().mapToDouble(Run::eventsPerSecond).toArray()),
                "events/s");
            results.measure(
                NAME,
                name + " from submission",
                Stats.of(list.stream().mapToDouble(Run::eventsPerSecondWithStartUp).toArray()),
                "events/s");
          });
      results.ratio(
          "tidemarkVsNativeFlinkRocksDb",
          median("tidemark-rocksdb-p2") / median("native-rocksdb-p2"));
      results.ratio(
          "tidemarkVsFlinkSqlRocksDb", median("tidemark-rocksdb-p2") / median("sql-rocksdb-p2"));
      double heap = median("tidemark-heap-p2") / median("native-heap-p2");
      double tidemarkSpeedup = median("tidemark-rocksdb-p2") / median("tidemark-rocksdb-p1");
      double nativeSpeedup = median("native-rocksdb-p2") / median("native-rocksdb-p1");
      results.figure("scaling.speedupP2VsP1.tidemark", tidemarkSpeedup);
      results.figure("scaling.speedupP2VsP1.native", nativeSpeedup);
      results.ratio(
          "eosThroughputCost",
          1 - median("tidemark-rocksdb-p2-transactional") / median("tidemark-rocksdb-p2"));
      for (int p : new int[] {1, 2}) {
        results.point(
            "throughput-vs-parallelism",
            "native Flink, cluster, RocksDB",
            p,
            median("native-rocksdb-p" + p));
        results.point(
            "throughput-vs-parallelism",
            "Tidemark, cluster, RocksDB",
            p,
            median("tidemark-rocksdb-p" + p));
      }
      results.note(
          NAME,
          String.format(
              Locale.ROOT,
              "on the local cluster, heap state: Tidemark %.0f vs native %.0f events/s, ratio"
                  + " %.3f (floor 0.2), vs Flink SQL %.0f, ratio %.3f; speed-up from parallelism 1"
                  + " to 2 on RocksDB: Tidemark %.2f, native %.2f, relative %.2f (goal 0.9)",
              median("tidemark-heap-p2"),
              median("native-heap-p2"),
              heap,
              median("sql-heap-p2"),
              median("tidemark-heap-p2") / median("sql-heap-p2"),
              tidemarkSpeedup,
              nativeSpeedup,
              tidemarkSpeedup / nativeSpeedup));
      if (!busy.isEmpty()) {
        double total = busy.values().stream().mapToDouble(v -> v[0]).sum();
        StringBuilder shares = new StringBuilder();
        busy.entrySet().stream()
            .sorted((a, b) -> Double.compare(b.getValue()[0], a.getValue()[0]))
            .forEach(
                e ->
                    shares.append(
                        String.format(
                            Locale.ROOT,
                            "%s%.1f%% %s",
                            shares.length() == 0 ? "" : "; ",
                            100 * e.getValue()[0] / total,
                            e.getKey())));
        results.note(
            NAME,
            "busy time by job vertex, Tidemark at parallelism 2 on RocksDB (REST"
                + " busyTimeMsPerSecond summed over subtasks, sampled once a second): "
                + shares);
      }
      results.note(
          NAME,
          String.format(
              Locale.ROOT,
              "what ran: %d generated events (seed %d, %d accounts, 3%% identical duplicates, 1%%"
                  + " malformed, no late events) = %d input lines, %d Kafka partitions, on the"
                  + " local cluster (%d TaskManagers x %d slots, separate JVMs) with both jobs"
                  + " submitted to it; exactly-once checkpoints every %d ms on both; RocksDB ="
                  + " the cluster's EmbeddedRocksDBStateBackend with incremental checkpoints, heap"
                  + " = HashMapStateBackend set per job (each run checks the backend Flink"
                  + " reports); outputs to Kafka on both (Tidemark: the idempotent sink unless"
                  + " 'transactional'; native and SQL: a plain producer flushed at each"
                  + " checkpoint);"
                  + " events/s = input lines / (first to last output record seen; from"
                  + " submission in the '... from submission' measurements); windows 5 min / 30 s, allowed lateness 1 h, dedup"
                  + " horizon 24 h, early firings off on both; %d warm-up(s) + %d repeat(s)",
              events(profile),
              Workload.SEED,
              ACCOUNTS,
              workload.lines.size(),
              PARTITIONS,
              cluster.taskManagers(),
              cluster.slotsPerTaskManager(),
              CHECKPOINT_INTERVAL_MILLIS,
              profile.warmups,
              profile.repeats));
      if (mismatches.isEmpty()) {
        results.note(NAME, "equivalence: every run produced the same counts: " + expected);
      } else {
        mismatches.forEach(m -> results.note(NAME, m));
      }
    }

    // ---------------------------------------------------------------- the two jobs

    private Run tidemarkRun(Backend backend, int parallelism, boolean transactional)
        throws Exception {
      String prefix = prefix(TIDEMARK);
      Map<String, String> topics = topics(prefix);
      List<String> commandLine = new ArrayList<>();
      commandLine.add("--flinkMaster=" + cluster.flinkMaster());
      commandLine.add("--kafkaBootstrapServers=" + cluster.kafkaBootstrapServers());
      commandLine.add("--parallelism=" + parallelism);
      commandLine.add("--checkpointingInterval=" + CHECKPOINT_INTERVAL_MILLIS);
      commandLine.add("--kafkaSinkMode=" + (transactional ? "transactional" : "idempotent"));
      commandLine.add("--earlyFiringDelay=none");
      commandLine.add("--jobName=" + prefix);
      commandLine.add("--output=" + Files.createTempDirectory("bench-cluster"));
      commandLine.add("--kafkaInputTopic=" + topics.get("input"));
      commandLine.add("--kafkaDecisionsTopic=" + topics.get("decisions"));
      commandLine.add("--kafkaDeadLettersTopic=" + topics.get("dead-letters"));
      commandLine.add("--kafkaDuplicatesTopic=" + topics.get("duplicates"));
      commandLine.add("--kafkaTooLateTopic=" + topics.get("too-late"));
      commandLine.add("--kafkaConsumerGroup=" + prefix + "-source");
      commandLine.add("--kafkaSinkGroupId=" + prefix + "-sink");
      if (backend == Backend.HEAP) {
        commandLine.add("--stateBackendFactory=" + HeapStateBackendFactory.class.getName());
      }
      List<String> arguments =
          RunnerProfiles.fromEnvironment().arguments("flink-cluster", commandLine);
      TidemarkOptions options =
          PipelineOptionsFactory.fromArgs(arguments.toArray(new String[0]))
              .withValidation()
              .as(TidemarkOptions.class);
      LiveRun.createTopics(options, PARTITIONS);
      int markers = workload.produce(clients, topics.get("input"), PARTITIONS);
      long started = startClock();
      String jobId = FlinkClusterLaunch.submitToFlinkCluster(options).jobId();
      try {
        boolean sample = backend == Backend.ROCKSDB && parallelism == 2 && !transactional;
        return await(jobId, backend, topics, markers, transactional, started, sample);
      } finally {
        cancel(jobId);
      }
    }

    /** The DataStream job, or with {@code sql} the Flink SQL one. */
    private Run nativeRun(Backend backend, int parallelism, boolean sql) throws Exception {
      String prefix = prefix(sql ? SQL : NATIVE);
      Map<String, String> topics = topics(prefix);
      createTopics(topics);
      int markers = workload.produce(clients, topics.get("input"), PARTITIONS);
      Configuration configuration = new Configuration();
      if (backend == Backend.HEAP) {
        configuration.set(StateBackendOptions.STATE_BACKEND, "hashmap");
      }
      StreamExecutionEnvironment env =
          StreamExecutionEnvironment.createRemoteEnvironment(
              ClusterSettings.HOST, cluster.restPort(), configuration, jobJars(sql));
      env.setRuntimeMode(RuntimeExecutionMode.STREAMING);
      env.setParallelism(parallelism);
      env.enableCheckpointing(CHECKPOINT_INTERVAL_MILLIS, CheckpointingMode.EXACTLY_ONCE);
      env.getCheckpointConfig().setMinPauseBetweenCheckpoints(1000);
      NativeFlinkJob.Settings settings = new NativeFlinkJob.Settings();
      settings.parallelism = parallelism;
      (sql
              ? FlinkSqlJob.kafka(
                  env, cluster.kafkaBootstrapServers(), topics.get("input"), settings)
              : NativeFlinkJob.kafka(
                  env, cluster.kafkaBootstrapServers(), topics.get("input"), settings))
          .writeTo(cluster.kafkaBootstrapServers(), topics);
      long started = startClock();
      JobClient job = env.executeAsync(prefix);
      String jobId = job.getJobID().toHexString();
      try {
        return await(jobId, backend, topics, markers, false, started, false);
      } finally {
        cancel(jobId);
      }
    }

    // ---------------------------------------------------------------- measuring

    /**
     * Reads the output topics until the decisions and dead letters reach the first run's counts
     * (the end markers included), or, without a first run, until nothing arrived for 15 s after the
     * markers; at most 15 minutes. The run ends at the last record seen.
     */
    private Run await(
        String jobId,
        Backend backend,
        Map<String, String> topics,
        int markers,
        boolean committed,
        long started,
        boolean sampleBusyTime)
        throws Exception {
      Map<String, Object> config = clients.merged(new HashMap<>());
      config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
      config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
      config.put(
          ConsumerConfig.ISOLATION_LEVEL_CONFIG, committed ? "read_committed" : "read_uncommitted");
      config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
      Map<String, String> outputs = new LinkedHashMap<>(topics);
      outputs.remove("input");
      Map<String, Long> counts = new LinkedHashMap<>();
      outputs.keySet().forEach(name -> counts.put(name, 0L));
      Map<String, String> byTopic = new HashMap<>();
      outputs.forEach((name, topic) -> byTopic.put(topic, name));
      long deadline = System.nanoTime() + Duration.ofMinutes(15).toNanos();
      long firstArrival = 0;
      long lastArrival = 0;
      long nextSample = System.nanoTime() + 1_000_000_000L;
      boolean backendChecked = false;
      try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config)) {
        List<TopicPartition> partitions = new ArrayList<>();
        for (String topic : outputs.values()) {
          for (int p = 0; p < PARTITIONS; p++) {
            partitions.add(new TopicPartition(topic, p));
          }
        }
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
        while (true) {
          ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
          if (!records.isEmpty()) {
            lastArrival = System.nanoTime();
            firstArrival = firstArrival == 0 ? lastArrival : firstArrival;
            records.forEach(r -> counts.merge(byTopic.get(r.topic()), 1L, Long::sum));
          }
          long now = System.nanoTime();
          if (now >= nextSample) {
            nextSample = now + 1_000_000_000L;
            FlinkJob job = rest.job(jobId);
            if (job.ended()) {
              throw new IllegalStateException(
                  "job " + jobId + " ended " + job.state() + ": " + rest.webUi(jobId));
            }
            if (!backendChecked && job.fullyRunning()) {
              checkBackend(jobId, backend);
              backendChecked = true;
            }
            if (sampleBusyTime && job.fullyRunning()) {
              sampleBusyTime(jobId);
            }
          }
          long deadLetters = counts.get("dead-letters");
          long decisions = counts.get("decisions");
          Counts first = expected;
          if (first != null
              && decisions >= first.decisions()
              && deadLetters >= first.deadLetters()) {
            Thread.sleep(500); // stragglers (a mismatch) still count
            consumer
                .poll(Duration.ofMillis(200))
                .forEach(r -> counts.merge(byTopic.get(r.topic()), 1L, Long::sum));
            break;
          }
          if (first == null
              && deadLetters >= markers
              && decisions > 0
              && now - lastArrival > 15_000_000_000L) {
            break;
          }
          if (now > deadline) {
            throw new IllegalStateException(
                "job " + jobId + " did not finish within 15 minutes: " + counts);
          }
        }
      }
      return new Run(
          workload.lines.size(),
          (lastArrival - firstArrival) / 1e9,
          (lastArrival - started) / 1e9,
          new Counts(
              counts.get("decisions"),
              counts.get("dead-letters"),
              counts.get("duplicates"),
              counts.get("too-late")));
    }

    /** Fails the run unless Flink reports the state backend it was meant to use. */
    private void checkBackend(String jobId, Backend backend) throws FlinkRestException {
      String reported =
          rest.get("/jobs/" + jobId + "/checkpoints/config").path("state_backend").asText();
      if (!reported.equals(backend.flinkName)) {
        throw new IllegalStateException(
            "job " + jobId + " runs on " + reported + ", not " + backend.flinkName);
      }
    }

    /** Adds each vertex's busy milliseconds of the last second, summed over its subtasks. */
    private void sampleBusyTime(String jobId) throws FlinkRestException {
      for (JsonNode vertex : rest.get("/jobs/" + jobId).path("vertices")) {
        JsonNode metrics =
            rest.get(
                "/jobs/"
                    + jobId
                    + "/vertices/"
                    + vertex.path("id").asText()
                    + "/subtasks/metrics?get=busyTimeMsPerSecond&agg=sum");
        for (JsonNode metric : metrics) {
          double value = metric.path("sum").asDouble(Double.NaN);
          if (!Double.isNaN(value)) {
            busy.computeIfAbsent(shortName(vertex.path("name").asText()), k -> new double[1])[0] +=
                value;
          }
        }
      }
    }

    /** A vertex by the head of its chain ({@code "A -> (B, C)"} is {@code "A -> ..."}). */
    private static String shortName(String vertex) {
      int chained = vertex.indexOf(" -> ");
      String head = chained < 0 ? vertex : vertex.substring(0, chained) + " -> ...";
      return head.length() <= 120 ? head : head.substring(0, 117) + "...";
    }

    private void cancel(String jobId) {
      try {
        rest.cancelIfRunning(jobId, Duration.ofMinutes(2));
      } catch (FlinkRestException e) {
        System.err.println("bench: could not cancel job " + jobId + ": " + e.getMessage());
      }
    }

    // ---------------------------------------------------------------- input and topics

    private static String prefix(String side) {
      return "bench-" + side + "-" + RUNS.incrementAndGet() + "-" + System.currentTimeMillis();
    }

    /** The input topic and the four output topics of one run, by Tidemark's output names. */
    private static Map<String, String> topics(String prefix) {
      Map<String, String> topics = new LinkedHashMap<>();
      topics.put("input", prefix + ".events");
      for (String output : List.of("decisions", "dead-letters", "duplicates", "too-late")) {
        topics.put(output, prefix + "." + output);
      }
      return topics;
    }

    private void createTopics(Map<String, String> topics) {
      EmbeddedKafka.createTopics(
          cluster.kafkaBootstrapServers(),
          PARTITIONS,
          List.of(topics.get("input")),
          Map.of("retention.ms", "-1"));
      List<String> outputs = new ArrayList<>(topics.values());
      outputs.remove(topics.get("input"));
      EmbeddedKafka.createTopics(cluster.kafkaBootstrapServers(), PARTITIONS, outputs, Map.of());
    }

    /** Collects the garbage of earlier runs, then starts a run's clock. */
    private static long startClock() {
      System.gc();
      return System.nanoTime();
    }
  }

  // ------------------------------------------------------------------ the native job's jars

  /**
   * The native job's classes for the cluster: the Flink job jar (Tidemark's transforms, model and
   * Beam coders, Flink provided), and this module's and the harness's classes (the source's
   * partition listing), each as a jar; with {@code sql} also Flink's table runtime (its operators
   * and the Janino compiler of the planner's generated code), the table API and the CEP library the
   * runtime links to. The planner itself stays in this JVM, which plans the query.
   */
  static String[] jobJars(boolean sql) throws IOException, URISyntaxException {
    Path home = Paths.get(System.getProperty("tidemark.home", "."));
    Path flinkJobJar = home.resolve("pipelines/target/tidemark-flink-job.jar");
    if (!Files.isRegularFile(flinkJobJar)) {
      throw new IllegalStateException(
          flinkJobJar + " is missing: build it with 'mvn -pl pipelines -am package -DskipTests'");
    }
    List<String> jars =
        new ArrayList<>(
            List.of(
                flinkJobJar.toString(),
                asJar(classesOf(ClusterPart.class)).toString(),
                asJar(classesOf(dev.tidemark.launcher.KafkaFeed.class)).toString()));
    if (sql) {
      for (Class<?> type :
          List.of(
              org.apache.flink.table.runtime.typeutils.InternalTypeInfo.class,
              org.apache.flink.table.data.RowData.class,
              org.apache.flink.table.api.Table.class,
              org.apache.flink.table.api.bridge.java.StreamTableEnvironment.class,
              org.apache.flink.table.api.bridge.internal.AbstractStreamTableEnvironmentImpl.class,
              org.apache.flink.cep.PatternStream.class)) {
        jars.add(classesOf(type).toString());
      }
    }
    return jars.toArray(new String[0]);
  }

  /** The jar or directory {@code type} was loaded from. */
  private static Path classesOf(Class<?> type) throws URISyntaxException {
    return Paths.get(type.getProtectionDomain().getCodeSource().getLocation().toURI());
  }

  /** {@code classes} itself when it is a jar, else a temporary jar of the directory. */
  private static Path asJar(Path classes) throws IOException {
    if (Files.isRegularFile(classes)) {
      return classes;
    }
    Path jar = Files.createTempFile("tidemark-bench-classes", ".jar");
    jar.toFile().deleteOnExit();
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
        Stream<Path> files = Files.walk(classes)) {
      for (Path file : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
        out.putNextEntry(new JarEntry(classes.relativize(file).toString().replace('\\', '/')));
        Files.copy(file, out);
        out.closeEntry();
      }
    }
    return jar;
  }
}
