package dev.tidemark.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.bench.suite.ExtraPipelineArgs;
import dev.tidemark.launcher.KafkaFeed;
import dev.tidemark.launcher.LiveRun;
import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.TidemarkPipeline;
import dev.tidemark.pipelines.io.Sources;
import dev.tidemark.pipelines.io.kafka.KafkaChecks;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.io.kafka.KafkaCloudEvents;
import dev.tidemark.pipelines.io.kafka.KafkaSinks;
import dev.tidemark.pipelines.launch.OptionChecks;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.testkit.EmbeddedKafka;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.RawRecord;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.apache.beam.runners.flink.EmbeddedFlinkJobsShim;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.values.PCollection;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;

/**
 * Benchmark of the two Kafka sinks on the FlinkRunner: an embedded broker, an embedded Flink
 * MiniCluster at parallelism 2, generated events, early firing on every element ({@code
 * --earlyFiringDelay=PT0S}), {@code --kafkaSinkMode=idempotent} and {@code transactional} side by
 * side in one run.
 *
 * <ul>
 *   <li>Throughput: {@code --events} generated events are produced into a fresh two-partition topic
 *       (record timestamps = now), followed by end-of-stream markers; then the job starts. Events/s
 *       is the number of records divided by the time from job submission to the last committed
 *       decision record's Kafka timestamp (and, second figure, from the first to the last decision
 *       record's timestamp). Repeated {@code --repeats} times, modes alternating, so load noise
 *       hits both; median, min and max are reported.
 *   <li>Latency: a fresh job per mode and rate; events are produced with record timestamp = send
 *       time, 10 a second until the job's first decision (no start-up backlog), then at the fixed
 *       rate; after the first decision and a warm-up, every committed early-pane decision whose
 *       {@code clocks.ingestionTime} is the Kafka timestamp of the event that triggered it ({@link
 *       #triggeredByLatest}: not a pane triggered by an out-of-order event) gives latency = its
 *       Kafka record timestamp minus that ingestion time, and visibility latency = the wall time a
 *       {@code read_committed} consumer first saw it minus the same ingestion time. Each is also
 *       split at the decision's wall clocks (pane fired, scored).
 * </ul>
 *
 * <p>Prints one table and writes JSON (figures, machine, command) to {@code --output} (default
 * {@value #DEFAULT_OUTPUT}). Speed depends on the machine and its load; nothing here asserts one.
 *
 * <pre>{@code
 * java --add-opens=... -cp "bench/target/tidemark-bench-0.2.0-SNAPSHOT.jar:$(cat bench/target/classpath.txt)" \
 *   dev.tidemark.bench.KafkaSinkBenchmark --events=20000 --repeats=3
 * }</pre>
 */
public final class KafkaSinkBenchmark {
  public static final int DEFAULT_EVENTS = 20_000;
  public static final int DEFAULT_ACCOUNTS = 200;
  public static final int DEFAULT_REPEATS = 3;
  public static final double DEFAULT_LATENCY_SECONDS = 30;
  public static final double DEFAULT_WARMUP_SECONDS = 5;
  public static final double DEFAULT_STEADY_CAP_SECONDS = 60;
  public static final String DEFAULT_OUTPUT = "bench-results/kafka-sinks.json";

  /** The flink profile's checkpointing (runner-profiles/flink.properties). */
  public static final long DEFAULT_CHECKPOINT_INTERVAL_MS = 2000;

  public static final long MIN_PAUSE_BETWEEN_CHECKPOINTS_MS = 500;

  /**
   * Median and 95th percentile record latency of the idempotent sink at 90 % of its sustained rate,
   * at most: half of MillWheel's figures with exactly-once (33.7 and 93.8 ms, VLDB 2013).
   */
  public static final double TARGET_IDEMPOTENT_P50_MS = 15;

  public static final double TARGET_IDEMPOTENT_P95_MS = 50;

  /** The transactional sink may cost at most this share of the idempotent throughput. */
  public static final double TARGET_TRANSACTIONAL_COST = 0.20;

  /**
   * Auto rates: these shares of the slower sink's median throughput (first to last decision), so
   * that neither sink falls behind and its latency stays a property of the sink, not of a backlog.
   */
  public static final List<Double> AUTO_RATE_SHARES = List.of(0.5, 0.9);

  static final int PARTITIONS = 2;
  static final double THROUGHPUT_EVENT_TIME_RATE = 100;
  static final long SEED = 20261129L;
  static final long MAX_DRAIN_MILLIS = 60_000;

  private static final List<KafkaOptions.KafkaSinkMode> MODES =
      List.of(KafkaOptions.KafkaSinkMode.idempotent, KafkaOptions.KafkaSinkMode.transactional);

  private KafkaSinkBenchmark() {}

  /** Command-line settings. */
  public static final class Settings {
    int events = DEFAULT_EVENTS;
    int accounts = DEFAULT_ACCOUNTS;
    int repeats = DEFAULT_REPEATS;
    List<Double> rates = new ArrayList<>();
    double latencySeconds = DEFAULT_LATENCY_SECONDS;
    double warmupSeconds = DEFAULT_WARMUP_SECONDS;

    /** The longest a latency run waits, after its warm-up, for the job to catch up. */
    double steadyCapSeconds = DEFAULT_STEADY_CAP_SECONDS;

    long checkpointIntervalMs = DEFAULT_CHECKPOINT_INTERVAL_MS;

    /** The transactional sink's {@code --kafkaSinkShards}. */
    int sinkShards = 1;

    /** Whether latency runs follow the throughput runs ({@code --rate=none}: they do not). */
    boolean latency = true;

    /** The FlinkRunner's {@code --maxBundleTimeMills}; null: Beam's default (1000). */
    @Nullable Long maxBundleTimeMills;

    /**
     * Where the jobs keep state: {@code heap} (Flink's heap backend, full checkpoints, as the flink
     * profile) or {@code rocksdb} (RocksDB, incremental checkpoints).
     */
    private String stateBackend = "heap";

    /** {@code heap} or {@code rocksdb}. */
    public String stateBackend() {
      return stateBackend;
    }

    /** Flink's network buffer timeout, ms; null: Flink's default (100). */
    @Nullable Long bufferTimeoutMillis;

    Path output = Paths.get(DEFAULT_OUTPUT);
    String command = "";

    /**
     * Parses {@code --events=N --accounts=K --repeats=R --rate=auto|none|R[,R...]
     * --latencySeconds=S --warmupSeconds=S --steadyCapSeconds=S --checkpointingInterval=MS
     * --maxBundleTimeMills=MS --bufferTimeout=MS --stateBackend=heap|rocksdb --kafkaSinkShards=N
     * --output=FILE}.
     */
    public static Settings parse(String... args) {
      Settings settings = new Settings();
      for (String arg : args) {
        int eq = arg.indexOf('=');
        if (!arg.startsWith("--") || eq < 0) {
          throw new IllegalArgumentException("expected --name=value, got " + arg);
        }
        String name = arg.substring(2, eq);
        String value = arg.substring(eq + 1);
        switch (name) {
          case "events":
            settings.events = positive(name, Integer.parseInt(value));
            break;
          case "accounts":
            settings.accounts = positive(name, Integer.parseInt(value));
            break;
          case "repeats":
            settings.repeats = positive(name, Integer.parseInt(value));
            break;
          case "rate":
            settings.rates.clear();
            settings.latency = !value.equals("none");
            if (settings.latency && !value.equals("auto")) {
              for (String rate : value.split(",", -1)) {
                settings.rates.add((double) positive(name, (int) Double.parseDouble(rate)));
              }
            }
            break;
          case "latencySeconds":
            settings.latencySeconds = Double.parseDouble(value);
            break;
          case "warmupSeconds":
            settings.warmupSeconds = Double.parseDouble(value);
            break;
          case "steadyCapSeconds":
            settings.steadyCapSeconds = Double.parseDouble(value);
            break;
          case "checkpointingInterval":
            settings.checkpointIntervalMs = positive(name, Integer.parseInt(value));
            break;
          case "maxBundleTimeMills":
            settings.maxBundleTimeMills = (long) positive(name, Integer.parseInt(value));
            break;
          case "bufferTimeout":
            settings.bufferTimeoutMillis = (long) positive(name, Integer.parseInt(value));
            break;
          case "stateBackend":
            if (!value.equals("heap") && !value.equals("rocksdb")) {
              throw new IllegalArgumentException(
                  "--stateBackend must be heap or rocksdb, got " + value);
            }
            settings.stateBackend = value;
            break;
          case "kafkaSinkShards":
            settings.sinkShards = positive(name, Integer.parseInt(value));
            break;
          case "output":
            settings.output = Paths.get(value);
            break;
          default:
            throw new IllegalArgumentException(
                "unknown option --"
                    + name
                    + "; use --events, --accounts, --repeats, --rate, --latencySeconds,"
                    + " --warmupSeconds, --steadyCapSeconds, --checkpointingInterval,"
                    + " --maxBundleTimeMills, --bufferTimeout, --stateBackend, --kafkaSinkShards,"
                    + " --output");
        }
      }
      settings.command = "java ... dev.tidemark.bench.KafkaSinkBenchmark " + String.join(" ", args);
      return settings;
    }

    private static int positive(String name, int value) {
      if (value <= 0) {
        throw new IllegalArgumentException("--" + name + " must be positive, got " + value);
      }
      return value;
    }
  }

  public static void main(String[] args) {
    int status = 0;
    try {
      Report report = run(Settings.parse(args));
      System.out.println(report.table());
      System.out.println("JSON: " + report.settings.output.toAbsolutePath());
    } catch (Exception e) {
      e.printStackTrace();
      status = 1;
    }
    // Kafka and Flink leave non-daemon threads behind, after a failed run too.
    System.exit(status);
  }

  /** Runs both phases and writes the JSON report. */
  public static Report run(Settings settings) throws Exception {
    Report report = new Report(settings);
    report.loadBefore = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    Path work = Files.createTempDirectory("kafka-sink-bench");
    try (EmbeddedKafka broker = EmbeddedKafka.start()) {
      List<Line> bulk = throughputLines(settings);
      int run = 0;
      for (int repeat = 0; repeat < settings.repeats; repeat++) {
        for (KafkaOptions.KafkaSinkMode mode : MODES) {
          ThroughputRun result = throughputRun(broker, mode, "tp" + run++, bulk, settings, work);
          System.out.println(result.describe("repeat " + (repeat + 1)));
          report.throughput.computeIfAbsent(mode, m -> new ArrayList<>()).add(result);
        }
      }
      List<Double> rates = new ArrayList<>(settings.rates);
      if (settings.latency && rates.isEmpty()) {
        // Shares of the slower sink's capacity, so that both sinks can keep up at every rate.
        double capacity = Double.MAX_VALUE;
        for (List<ThroughputRun> runs : report.throughput.values()) {
          capacity = Math.min(capacity, median(eventsPerSecondFirstToLast(runs)));
        }
        rates.addAll(ratesAt(capacity));
      }
      for (double rate : rates) {
        for (KafkaOptions.KafkaSinkMode mode : MODES) {
          LatencyRun result = latencyRun(broker, mode, "lat" + run++, rate, settings, work);
          System.out.println(result.describe());
          report.latency.add(result);
        }
      }
    }
    report.loadAfter = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    report.write();
    return report;
  }

  /**
   * The rates of the latency runs: {@link #AUTO_RATE_SHARES} of {@code capacity} (events/s), at
   * least 1 event/s each.
   */
  public static List<Double> ratesAt(double capacity) {
    List<Double> rates = new ArrayList<>();
    for (double share : AUTO_RATE_SHARES) {
      rates.add((double) Math.max(1, Math.round(share * capacity)));
    }
    return rates;
  }

  // ---------------------------------------------------------------- events

  /** One produced record: the replay line's bytes and its key ({@code data.accountId}). */
  public static final class Line {
    final byte[] value;
    final @Nullable String key;

    Line(byte[] value, @Nullable String key) {
      this.value = value;
      this.key = key;
    }
  }

  /** The lines every throughput run of {@code settings} produces (the same lines for every run). */
  public static List<Line> throughputLines(Settings settings) throws IOException {
    return generate(settings.events, settings.accounts, THROUGHPUT_EVENT_TIME_RATE, SEED);
  }

  /** Generated lines without directives: no late or too-late events, few duplicates, malformed. */
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
    byte[] bytes = out.toByteArray();
    List<Line> lines = new ArrayList<>();
    int start = 0;
    for (int i = 0; i <= bytes.length; i++) {
      if (i == bytes.length || bytes[i] == '\n') {
        if (i > start) {
          byte[] value = Arrays.copyOfRange(bytes, start, i);
          JsonNode node = tryParse(value);
          if (node == null || !node.isObject() || !node.has("advanceProcessingTime")) {
            JsonNode account = node == null ? null : node.path("data").path("accountId");
            lines.add(
                new Line(value, account != null && account.isTextual() ? account.asText() : null));
          }
        }
        start = i + 1;
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

  private static KafkaProducer<String, byte[]> producer(String bootstrapServers, int lingerMs) {
    Map<String, Object> config = new HashMap<>();
    config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    config.put(ProducerConfig.ACKS_CONFIG, "all");
    config.put(ProducerConfig.LINGER_MS_CONFIG, lingerMs);
    config.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 1_000_000);
    return new KafkaProducer<>(config);
  }

  private static ProducerRecord<String, byte[]> record(String topic, Line line, long timestamp) {
    ProducerRecord<String, byte[]> record =
        new ProducerRecord<>(topic, null, timestamp, line.key, line.value);
    record
        .headers()
        .add(
            "content-type",
            KafkaCloudEvents.STRUCTURED_CONTENT_TYPE.getBytes(StandardCharsets.UTF_8));
    return record;
  }

  // ---------------------------------------------------------------- jobs

  static TidemarkOptions options(
      String bootstrapServers,
      String name,
      KafkaOptions.KafkaSinkMode mode,
      Settings settings,
      Path work)
      throws IOException {
    Path output = Files.createDirectories(work.resolve(name));
    long checkpointIntervalMs = settings.checkpointIntervalMs;
    List<String> args =
        new ArrayList<>(
            List.of(
                "--runner=FlinkRunner",
                "--flinkMaster=[local]",
                "--streaming=true",
                "--parallelism=2",
                "--fasterCopy=false", // with checkpoints: TidemarkPipeline.checkOptions
                settings.stateBackend.equals("rocksdb")
                    ? "--stateBackendFactory="
                        + dev.tidemark.bench.beam.IncrementalRocksDbFactory.class.getName()
                    : "--stateBackend=filesystem", // as the flink profile
                "--stateBackendStoragePath=" + work.resolve("checkpoints-" + name).toUri(),
                "--checkpointingInterval=" + checkpointIntervalMs,
                "--checkpointingMode=EXACTLY_ONCE",
                "--minPauseBetweenCheckpoints=" + MIN_PAUSE_BETWEEN_CHECKPOINTS_MS,
                "--numberOfExecutionRetries=3",
                "--executionRetryDelay=2000",
                "--source=kafka",
                "--sink=kafka",
                "--kafkaBootstrapServers=" + bootstrapServers,
                "--kafkaInputTopic=" + name + ".events",
                "--kafkaDecisionsTopic=" + name + ".decisions",
                "--kafkaDeadLettersTopic=" + name + ".dead-letters",
                "--kafkaDuplicatesTopic=" + name + ".duplicates",
                "--kafkaTooLateTopic=" + name + ".too-late",
                "--kafkaConsumerGroup=" + name + "-source",
                "--kafkaSinkGroupId=" + name + "-sink",
                "--kafkaSinkMode=" + mode,
                "--kafkaSinkShards=" + settings.sinkShards,
                "--maxOutOfOrderness=PT30S",
                "--kafkaIdleTimeout=PT10S",
                "--earlyFiringDelay=PT0S",
                "--output=" + output));
    if (settings.maxBundleTimeMills != null) {
      args.add("--maxBundleTimeMills=" + settings.maxBundleTimeMills);
    }
    if (settings.bufferTimeoutMillis != null) {
      args.add("--flinkConfDir=" + flinkConfDir(work, settings.bufferTimeoutMillis));
    }
    return PipelineOptionsFactory.fromArgs(ExtraPipelineArgs.append(args))
        .withValidation()
        .as(TidemarkOptions.class);
  }

  /**
   * A Flink configuration directory setting only the network buffer timeout: how long a partly
   * filled buffer between two tasks may wait before it is sent (Flink's default 100 ms). Beam has
   * no pipeline option for it; {@code --flinkConfDir} is how a FlinkRunner job gets it.
   */
  static Path flinkConfDir(Path work, long bufferTimeoutMillis) throws IOException {
    Path dir = Files.createDirectories(work.resolve("flink-conf-buffer-" + bufferTimeoutMillis));
    Files.writeString(
        dir.resolve("flink-conf.yaml"),
        "execution.buffer-timeout.interval: " + bufferTimeoutMillis + " ms\n");
    return dir;
  }

  private static Map<String, String> createTopics(
      String bootstrapServers, TidemarkOptions options) {
    EmbeddedKafka.createTopics(
        bootstrapServers,
        PARTITIONS,
        List.of(options.getKafkaInputTopic()),
        Map.of("retention.ms", "-1"));
    Map<String, String> topics = KafkaSinks.topics(options);
    EmbeddedKafka.createTopics(
        bootstrapServers, PARTITIONS, new ArrayList<>(topics.values()), Map.of());
    return topics;
  }

  private static EmbeddedFlinkJobsShim.Job start(TidemarkOptions options, KafkaClients clients)
      throws Exception {
    OptionChecks.check(options);
    Pipeline pipeline = Pipeline.create(options);
    PCollection<RawRecord> raw = pipeline.apply("ReadKafka", Sources.kafkaSource(options));
    KafkaChecks.checkSinkGroups(options, clients);
    KafkaSinks.write(TidemarkPipeline.expand(raw, options), options, clients);
    return EmbeddedFlinkJobsShim.start(pipeline);
  }

  // ---------------------------------------------------------------- throughput

  /** One throughput run. */
  public static final class ThroughputRun {
    final KafkaOptions.KafkaSinkMode mode;
    final int records;
    final long submittedMillis;
    final long firstDecisionMillis;
    final long lastDecisionMillis;
    final int decisions;
    final long jobDecisions;

    ThroughputRun(
        KafkaOptions.KafkaSinkMode mode,
        int records,
        long submittedMillis,
        long firstDecisionMillis,
        long lastDecisionMillis,
        int decisions,
        long jobDecisions) {
      this.mode = mode;
      this.records = records;
      this.submittedMillis = submittedMillis;
      this.firstDecisionMillis = firstDecisionMillis;
      this.lastDecisionMillis = lastDecisionMillis;
      this.decisions = decisions;
      this.jobDecisions = jobDecisions;
    }

    /** Records divided by the time from job submission to the last decision's timestamp. */
    public double eventsPerSecond() {
      return records * 1000.0 / Math.max(1, lastDecisionMillis - submittedMillis);
    }

    /** Records divided by the time between the first and the last decision's timestamps. */
    public double eventsPerSecondFirstToLast() {
      return records * 1000.0 / Math.max(1, lastDecisionMillis - firstDecisionMillis);
    }

    /** The progress line of this run. */
    public String describe(String which) {
      return String.format(
          Locale.ROOT,
          "throughput %s %s: %d records, %.0f events/s (submit->last), %.0f events/s"
              + " (first->last decision), %d decisions",
          mode,
          which,
          records,
          eventsPerSecond(),
          eventsPerSecondFirstToLast(),
          decisions);
    }
  }

  /**
   * Produces {@code lines} into a fresh topic (timestamps = now) with end-of-stream markers, then
   * runs the job in {@code mode} until its committed output is quiet.
   */
  public static ThroughputRun throughputRun(
      EmbeddedKafka broker,
      KafkaOptions.KafkaSinkMode mode,
      String name,
      List<Line> lines,
      Settings settings,
      Path work)
      throws Exception {
    String servers = broker.bootstrapServers();
    TidemarkOptions options = options(servers, name, mode, settings, work);
    KafkaClients clients = KafkaClients.from(options);
    Map<String, String> topics = createTopics(servers, options);
    try (KafkaProducer<String, byte[]> producer = producer(servers, 5)) {
      long now = System.currentTimeMillis();
      for (Line line : lines) {
        producer.send(record(options.getKafkaInputTopic(), line, now));
      }
      producer.flush();
    }
    int markers =
        LiveRun.sendEndMarkers(
            clients,
            options.getKafkaInputTopic(),
            maxEventTimeMillis(lines),
            Duration.standardDays(1));
    long submitted = System.currentTimeMillis();
    EmbeddedFlinkJobsShim.Job job = start(options, clients);
    Map<String, List<ConsumerRecord<byte[], byte[]>>> committed;
    try {
      committed =
          LiveRun.awaitQuiet(
              clients, topics, markers, Duration.standardMinutes(10), job::checkRunning);
    } catch (Exception e) {
      job.cancel();
      throw e;
    }
    Summary summary = Summary.from(job.stop(Duration.standardMinutes(1)), Duration.ZERO);
    List<ConsumerRecord<byte[], byte[]>> decisions = committed.get("decisions");
    long first = Long.MAX_VALUE;
    long last = Long.MIN_VALUE;
    for (ConsumerRecord<byte[], byte[]> record : decisions) {
      first = Math.min(first, record.timestamp());
      last = Math.max(last, record.timestamp());
    }
    if (decisions.isEmpty()) {
      throw new IllegalStateException("run " + name + " committed no decisions");
    }
    return new ThroughputRun(
        mode, lines.size(), submitted, first, last, decisions.size(), summary.decisions());
  }

  // ---------------------------------------------------------------- latency

  /** Events are sent this far apart until a latency run's first decision (10 events/s). */
  static final long STARTUP_TRICKLE_NANOS = 100_000_000L;

  /**
   * Whether a job has caught up with its feed: the lag (now minus the newest ingestion clock among
   * the decisions seen) is flat, its median over the last {@value #HOLD_MS} ms within {@value
   * #TOLERANCE_MS} ms and 10 % of its median over the {@value #HOLD_MS} ms before. A cold JVM falls
   * seconds behind its first full-rate feed and then catches up at a few hundred ms a second;
   * measured in that phase, the latencies would be the catch-up's. Relative, so it also settles at
   * a settings-bound lag (a one-second bundle). A job whose lag keeps growing never settles: it is
   * measured at the run's steady cap, and {@link LatencyRun#keptUp} rejects it.
   */
  public static final class CatchUp {
    public static final long HOLD_MS = 3_000;
    public static final long TOLERANCE_MS = 50;

    /** Samples closer together are dropped: the feed asks once per event, thousands a second. */
    static final long SAMPLE_EVERY_MS = 100;

    private final ArrayDeque<long[]> samples = new ArrayDeque<>();
    private long firstSample = Long.MAX_VALUE;

    void add(long at, long lagMillis) {
      if (!samples.isEmpty() && at - samples.peekLast()[0] < SAMPLE_EVERY_MS) {
        return;
      }
      firstSample = Math.min(firstSample, at);
      samples.addLast(new long[] {at, lagMillis});
      while (samples.peekFirst()[0] < at - 2 * HOLD_MS) {
        samples.removeFirst();
      }
    }

    int samples() {
      return samples.size();
    }

    boolean settled(long now) {
      if (now - firstSample < 2 * HOLD_MS) {
        return false;
      }
      List<Long> before = new ArrayList<>();
      List<Long> last = new ArrayList<>();
      for (long[] sample : samples) {
        (sample[0] < now - HOLD_MS ? before : last).add(sample[1]);
      }
      if (before.isEmpty() || last.isEmpty()) {
        return false;
      }
      double earlier = percentile(sorted(before), 0.5);
      return Math.abs(earlier - percentile(sorted(last), 0.5)) <= TOLERANCE_MS + 0.1 * earlier;
    }
  }

  /** {@link LatencyRun#keptUp}: the most the median latency may grow over a measured span. */
  public static final double KEPT_UP_LAG_GROWTH_MS = 100;

  /** {@link LatencyRun#keptUp}: the highest p95 latency of a job that keeps up. */
  public static final double KEPT_UP_P95_MS = 1000;

  /** One latency run at a fixed rate. */
  public static final class LatencyRun {
    final KafkaOptions.KafkaSinkMode mode;
    final double rate;
    final double achievedRate;
    final long[] recordLatencies;
    final long[] visibilityLatencies;
    final Map<String, Integer> paneTimings;

    /**
     * The record latency split at the decision's wall clocks, per measured decision, sorted: event
     * record → pane fired ({@code clocks.processingTime}), → scored ({@code clocks.decisionTime}),
     * → decision record timestamp.
     */
    final long[][] stages;

    /**
     * Early decisions of the measured span left out: triggered by an out-of-order event, so their
     * clock is another event's ({@link #triggeredByLatest}).
     */
    final int unattributable;

    /**
     * Median latency of the last quarter of the measured span minus that of the first quarter, ms
     * (NaN without decisions in both): a job that does not keep up with the rate falls further
     * behind, and this grows with the span.
     */
    final double lagGrowthMs;

    /**
     * False when decisions were still arriving at the drain cap: the latencies miss the slowest.
     */
    final boolean drained;

    /**
     * From the first decision to the start of the measured span, ms: the warm-up, longer while the
     * job was still catching up (a cold JVM falls seconds behind its first full-rate feed).
     */
    final long warmupMillis;

    /**
     * Whether the job caught up before the measured span ({@link CatchUp}); false: it was measured
     * at the settings' steady cap while still behind.
     */
    final boolean steady;

    LatencyRun(
        KafkaOptions.KafkaSinkMode mode,
        double rate,
        double achievedRate,
        long[] recordLatencies,
        long[] visibilityLatencies,
        Map<String, Integer> paneTimings,
        long[][] stages,
        int unattributable,
        double lagGrowthMs,
        boolean drained,
        long warmupMillis,
        boolean steady) {
      this.drained = drained;
      this.warmupMillis = warmupMillis;
      this.steady = steady;
      this.lagGrowthMs = lagGrowthMs;
      this.unattributable = unattributable;
      this.stages = stages;
      this.mode = mode;
      this.rate = rate;
      this.achievedRate = achievedRate;
      this.recordLatencies = recordLatencies;
      this.visibilityLatencies = visibilityLatencies;
      this.paneTimings = paneTimings;
    }

    public KafkaOptions.KafkaSinkMode mode() {
      return mode;
    }

    /** The rate aimed at, events/s. */
    public double rate() {
      return rate;
    }

    /** The rate sent during the measured span, events/s. */
    public double achievedRate() {
      return achievedRate;
    }

    /** Whether the decisions stopped arriving before the drain cap. */
    public boolean drained() {
      return drained;
    }

    /** Whether the job had caught up when the measured span began. */
    public boolean steady() {
      return steady;
    }

    /** From the first decision to the measured span, seconds. */
    public double warmupSeconds() {
      return warmupMillis / 1000.0;
    }

    /**
     * Whether the job kept up with the rate: it caught up after its warm-up, the producer sent at
     * least 90 % of the rate, the decisions drained, the p95 latency stayed under {@value
     * #KEPT_UP_P95_MS} ms (no standing backlog) and the median latency grew by less than {@value
     * #KEPT_UP_LAG_GROWTH_MS} ms from the first quarter of the measured span to the last (no
     * growing one).
     */
    public boolean keptUp() {
      return steady
          && drained
          && achievedRate >= 0.9 * rate
          && recordLatencyMs(0.95) < KEPT_UP_P95_MS
          && !Double.isNaN(lagGrowthMs)
          && lagGrowthMs < KEPT_UP_LAG_GROWTH_MS;
    }

    /** Early decisions measured. */
    public int decisions() {
      return recordLatencies.length;
    }

    /**
     * Nearest-rank percentile of the record latencies (decision record timestamp minus the
     * triggering event's record timestamp), ms; NaN when none was measured.
     */
    public double recordLatencyMs(double quantile) {
      return percentile(recordLatencies, quantile);
    }

    /** The record latencies of the measured early decisions, ms, sorted ascending (a copy). */
    public long[] recordLatenciesMs() {
      return recordLatencies.clone();
    }

    /** The progress line of this run. */
    public String describe() {
      return String.format(
          Locale.ROOT,
          "latency %s at %.0f events/s: %s after %.1f s, %d early decisions measured (%d"
              + " triggered by out-of-order events left out), p50 %.1f ms, p99 %.1f ms,"
              + " lag growth %.0f ms (%s);"
              + " p50/p95 ms by stage: event record → pane fired %.0f/%.0f, → scored %.0f/%.0f,"
              + " → decision record %.0f/%.0f",
          mode,
          rate,
          steady ? "caught up" : "still behind",
          warmupSeconds(),
          recordLatencies.length,
          unattributable,
          recordLatencyMs(0.5),
          recordLatencyMs(0.99),
          lagGrowthMs,
          keptUp() ? "kept up" : "fell behind",
          percentile(stages[0], 0.5),
          percentile(stages[0], 0.95),
          percentile(stages[1], 0.5),
          percentile(stages[1], 0.95),
          percentile(stages[2], 0.5),
          percentile(stages[2], 0.95));
    }
  }

  /** A decision record as a {@code read_committed} consumer first saw it. */
  private static final class Seen {
    final long timestamp;
    final long seenAt;
    final byte[] value;

    Seen(long timestamp, long seenAt, byte[] value) {
      this.timestamp = timestamp;
      this.seenAt = seenAt;
      this.value = value;
    }
  }

  /** Tails the decisions topic ({@code read_committed}) on its own thread. */
  private static final class Watcher implements Runnable {
    private final String servers;
    private final String topic;
    private final List<Seen> seen = new ArrayList<>();
    private volatile long newestIngestion = Long.MIN_VALUE;
    private volatile boolean trackingLag = true;
    private volatile boolean running = true;
    private volatile @Nullable RuntimeException failure;
    private final Thread thread;

    Watcher(String servers, String topic) {
      this.servers = servers;
      this.topic = topic;
      this.thread = new Thread(this, "decision-watcher");
      thread.setDaemon(true);
      thread.start();
    }

    @Override
    public void run() {
      Map<String, Object> config = committedReaderConfig(servers);
      config.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 10);
      try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config)) {
        List<TopicPartition> partitions = KafkaFeed.partitions(consumer, topic);
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
        while (running) {
          var records = consumer.poll(java.time.Duration.ofMillis(50));
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
  }

  /** A consumer's settings for reading committed records as bytes, offsets never committed. */
  static Map<String, Object> committedReaderConfig(String servers) {
    Map<String, Object> config = new HashMap<>();
    config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
    config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    return config;
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

  private static final String INGESTION_FIELD = "\"ingestionTime\":\"";

  /**
   * Starts the job in {@code mode} and produces events at {@code rate} per second (timestamp = send
   * time), a trickle until the first decision. After {@code settings}' warm-up, and once the job
   * has caught up ({@link CatchUp}) or at {@code settings}' steady cap, measures every committed
   * early decision's latency for {@code settings}' latency seconds.
   */
  public static LatencyRun latencyRun(
      EmbeddedKafka broker,
      KafkaOptions.KafkaSinkMode mode,
      String name,
      double rate,
      Settings settings,
      Path work)
      throws Exception {
    String servers = broker.bootstrapServers();
    // Enough distinct events for start-up, warm-up and measurement; event time moves at the rate.
    double seconds =
        settings.latencySeconds + settings.warmupSeconds + settings.steadyCapSeconds + 90;
    List<Line> lines =
        generate((int) Math.ceil(rate * seconds), settings.accounts, rate, SEED + name.hashCode());
    TidemarkOptions options = options(servers, name, mode, settings, work);
    KafkaClients clients = KafkaClients.from(options);
    Map<String, String> topics = createTopics(servers, options);
    Watcher watcher = new Watcher(servers, topics.get("decisions"));
    EmbeddedFlinkJobsShim.Job job = start(options, clients);
    CatchUp catchUp = new CatchUp();
    long firstDecision = Long.MAX_VALUE;
    boolean steady = false;
    long measureFrom = Long.MAX_VALUE;
    long measureTo = Long.MAX_VALUE;
    int measuredSent = 0;
    boolean drained = true;
    try {
      try (KafkaProducer<String, byte[]> producer = producer(servers, 0)) {
        long due = System.nanoTime();
        long deadline = System.currentTimeMillis() + 180_000;
        for (int i = 0; i < lines.size(); i++) {
          long wait = due - System.nanoTime();
          if (wait > 0) {
            LockSupport.parkNanos(wait);
          }
          long now = System.currentTimeMillis();
          if (firstDecision == Long.MAX_VALUE && watcher.count() > 0) {
            firstDecision = now;
          }
          if (measureFrom == Long.MAX_VALUE && firstDecision != Long.MAX_VALUE) {
            catchUp.add(now, watcher.lagMillis(now));
            long warm = firstDecision + (long) (settings.warmupSeconds * 1000);
            steady = now >= warm && catchUp.settled(now);
            if (steady || now >= warm + (long) (settings.steadyCapSeconds * 1000)) {
              measureFrom = now;
              measureTo = measureFrom + (long) (settings.latencySeconds * 1000);
              watcher.stopTrackingLag();
            }
          }
          if (now >= measureTo) {
            break;
          }
          if (firstDecision == Long.MAX_VALUE && now > deadline) {
            throw new IllegalStateException("run " + name + ": no decision within 3 minutes");
          }
          producer.send(record(options.getKafkaInputTopic(), lines.get(i), now));
          if (now >= measureFrom) {
            measuredSent++;
          }
          // Until the job's first decision, a trickle: the full rate from submission on would
          // build a start-up backlog that the measured span then spent catching up (seconds).
          due += firstDecision == Long.MAX_VALUE ? STARTUP_TRICKLE_NANOS : (long) (1e9 / rate);
        }
        producer.flush();
      }
      if (measureTo == Long.MAX_VALUE) {
        throw new IllegalStateException("run " + name + ": ran out of events before measuring");
      }
      measureTo = Math.min(measureTo, System.currentTimeMillis());
      // Drained: no new decision over two polls a checkpoint interval apart, or the cap.
      int previous = -1;
      int stable = 0;
      long drainDeadline = System.currentTimeMillis() + MAX_DRAIN_MILLIS;
      while (stable < 2) {
        Thread.sleep(Math.max(1000, settings.checkpointIntervalMs + 500));
        int now = watcher.count();
        stable = now == previous ? stable + 1 : 0;
        previous = now;
        if (System.currentTimeMillis() > drainDeadline) {
          drained = false;
          break;
        }
      }
    } finally {
      job.stop(Duration.standardMinutes(1));
    }
    List<Seen> seen = watcher.stop();
    // One compact pane per record, each record's bytes dropped once read: a tree per record at
    // once would not fit the heap at the rates a fast machine sustains (1M decisions a span).
    List<Pane> panes = new ArrayList<>(seen.size());
    for (int i = 0; i < seen.size(); i++) {
      Seen decision = seen.set(i, null);
      panes.add(
          new Pane(Json.MAPPER.readTree(decision.value), decision.timestamp, decision.seenAt));
    }
    seen.clear();
    boolean[] attributable = triggeredByLatest(panes);
    List<Long> record = new ArrayList<>();
    List<Long> visible = new ArrayList<>();
    List<List<Long>> stages = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
    Map<String, Integer> timings = new LinkedHashMap<>();
    int unattributable = 0;
    long quarter = Math.max(1, (measureTo - measureFrom) / 4);
    List<Long> firstQuarter = new ArrayList<>();
    List<Long> lastQuarter = new ArrayList<>();
    for (int i = 0; i < panes.size(); i++) {
      Pane decision = panes.get(i);
      long ingestion = decision.ingestion;
      if (ingestion < measureFrom || ingestion >= measureTo) {
        continue;
      }
      timings.merge(decision.timing, 1, Integer::sum);
      if (!decision.timing.equals("EARLY")) {
        continue;
      }
      if (!attributable[i]) {
        unattributable++;
        continue;
      }
      record.add(decision.timestamp - ingestion);
      visible.add(decision.seenAt - ingestion);
      if (ingestion < measureFrom + quarter) {
        firstQuarter.add(decision.timestamp - ingestion);
      } else if (ingestion >= measureTo - quarter) {
        lastQuarter.add(decision.timestamp - ingestion);
      }
      stages.get(0).add(decision.fired - ingestion);
      stages.get(1).add(decision.scored - decision.fired);
      stages.get(2).add(decision.timestamp - decision.scored);
    }
    double achieved = measuredSent * 1000.0 / Math.max(1, measureTo - measureFrom);
    long[][] split = stages.stream().map(KafkaSinkBenchmark::sorted).toArray(long[][]::new);
    return new LatencyRun(
        mode,
        rate,
        achieved,
        sorted(record),
        sorted(visible),
        timings,
        split,
        unattributable,
        percentile(sorted(lastQuarter), 0.5) - percentile(sorted(firstQuarter), 0.5),
        drained,
        measureFrom - firstDecision,
        steady);
  }

  /**
   * What the latency figures need of one decision record: its Kafka timestamp, when the watcher saw
   * it, and a few of its fields, the clocks as epoch millis ({@link Long#MIN_VALUE} when absent).
   */
  static final class Pane {
    final long timestamp;
    final long seenAt;
    final String decisionId;
    final long index;
    final String timing;
    final long txnCount;
    final String eventTime;
    final long ingestion;
    final long fired;
    final long scored;

    Pane(JsonNode decision, long timestamp, long seenAt) {
      this.timestamp = timestamp;
      this.seenAt = seenAt;
      this.decisionId = decision.path("decisionId").asText();
      this.index = decision.path("pane").path("index").asLong();
      this.timing = decision.path("pane").path("timing").asText().intern();
      this.txnCount = decision.path("features").path("txnCount").asLong();
      this.eventTime = decision.path("clocks").path("eventTime").asText();
      this.ingestion = clock(decision, "ingestionTime");
      this.fired = clock(decision, "processingTime");
      this.scored = clock(decision, "decisionTime");
    }

    private static long clock(JsonNode decision, String name) {
      JsonNode clock = decision.path("clocks").path(name);
      return clock.isTextual() ? Instant.parse(clock.asText()).toEpochMilli() : Long.MIN_VALUE;
    }
  }

  /**
   * Which decisions carry, in {@code clocks.ingestionTime}, the Kafka timestamp of the event that
   * triggered them. That clock belongs to the pane's latest event by event time (README, clocks).
   * With early firing on every element each pane adds one event, so the clock names the trigger
   * exactly when the trigger became the latest event: a window's first pane ({@code txnCount} 1),
   * or a pane whose {@code txnCount} is one more than the previous pane's and whose {@code
   * clocks.eventTime} differs from it. A pane triggered by an out-of-order event keeps the previous
   * latest event's clock, which would add the time between the two arrivals to its latency: those
   * (and panes whose previous pane was not seen) are not attributable. Accumulating panes only.
   */
  static boolean[] triggeredByLatest(List<Pane> decisions) {
    Map<String, Map<Long, Pane>> byWindow = new HashMap<>();
    for (Pane decision : decisions) {
      byWindow
          .computeIfAbsent(decision.decisionId, id -> new HashMap<>())
          .put(decision.index, decision);
    }
    boolean[] attributable = new boolean[decisions.size()];
    for (int i = 0; i < decisions.size(); i++) {
      Pane decision = decisions.get(i);
      if (decision.index == 0) {
        attributable[i] = decision.txnCount == 1;
        continue;
      }
      Pane previous = byWindow.get(decision.decisionId).get(decision.index - 1);
      attributable[i] =
          previous != null
              && decision.txnCount == previous.txnCount + 1
              && !decision.eventTime.equals(previous.eventTime);
    }
    return attributable;
  }

  // ---------------------------------------------------------------- statistics and report

  private static long[] sorted(List<Long> values) {
    long[] array = values.stream().mapToLong(Long::longValue).toArray();
    Arrays.sort(array);
    return array;
  }

  /** Nearest-rank percentile of sorted values; NaN when there are none. */
  public static double percentile(long[] sortedValues, double quantile) {
    if (sortedValues.length == 0) {
      return Double.NaN;
    }
    int rank = (int) Math.ceil(quantile * sortedValues.length);
    return sortedValues[Math.max(0, Math.min(sortedValues.length - 1, rank - 1))];
  }

  static double median(double[] values) {
    double[] copy = values.clone();
    Arrays.sort(copy);
    int n = copy.length;
    return n % 2 == 1 ? copy[n / 2] : (copy[n / 2 - 1] + copy[n / 2]) / 2;
  }

  private static double[] eventsPerSecond(List<ThroughputRun> runs) {
    return runs.stream().mapToDouble(ThroughputRun::eventsPerSecond).toArray();
  }

  private static double[] eventsPerSecondFirstToLast(List<ThroughputRun> runs) {
    return runs.stream().mapToDouble(ThroughputRun::eventsPerSecondFirstToLast).toArray();
  }

  /** Everything measured in one benchmark run. */
  public static final class Report {
    final Settings settings;
    final Map<KafkaOptions.KafkaSinkMode, List<ThroughputRun>> throughput = new LinkedHashMap<>();
    final List<LatencyRun> latency = new ArrayList<>();
    double loadBefore;
    double loadAfter;

    Report(Settings settings) {
      this.settings = settings;
    }

    /** Median events/s (submission to last decision) of a mode. */
    public double medianEventsPerSecond(KafkaOptions.KafkaSinkMode mode) {
      return median(eventsPerSecond(throughput.get(mode)));
    }

    /** 1 - transactional/idempotent median throughput. */
    public double transactionalCost() {
      return 1
          - medianEventsPerSecond(KafkaOptions.KafkaSinkMode.transactional)
              / medianEventsPerSecond(KafkaOptions.KafkaSinkMode.idempotent);
    }

    double transactionalCostFirstToLast() {
      return 1
          - median(
                  eventsPerSecondFirstToLast(
                      throughput.get(KafkaOptions.KafkaSinkMode.transactional)))
              / median(
                  eventsPerSecondFirstToLast(
                      throughput.get(KafkaOptions.KafkaSinkMode.idempotent)));
    }

    /** The latency runs, in run order. */
    public List<LatencyRun> latencyRuns() {
      return latency;
    }

    /** The printed table. */
    public String table() {
      StringBuilder out = new StringBuilder();
      out.append(
          String.format(
              Locale.ROOT,
              "%nKafka sinks on Flink MiniCluster (parallelism 2, checkpoints every %d ms),"
                  + " %d records, %d repeats, %d cores, load %.1f -> %.1f%n",
              settings.checkpointIntervalMs,
              throughput.values().iterator().next().get(0).records,
              settings.repeats,
              Runtime.getRuntime().availableProcessors(),
              loadBefore,
              loadAfter));
      out.append(
          "| sink | events/s median (submit->last) | min | max | events/s median (first->last"
              + " decision) | decisions/run |\n|---|---:|---:|---:|---:|---:|\n");
      for (var entry : throughput.entrySet()) {
        double[] eps = eventsPerSecond(entry.getValue());
        double[] ftl = eventsPerSecondFirstToLast(entry.getValue());
        out.append(
            String.format(
                Locale.ROOT,
                "| %s | %.0f | %.0f | %.0f | %.0f | %d |%n",
                entry.getKey(),
                median(eps),
                Arrays.stream(eps).min().orElse(Double.NaN),
                Arrays.stream(eps).max().orElse(Double.NaN),
                median(ftl),
                entry.getValue().get(0).decisions));
      }
      out.append(
          String.format(
              Locale.ROOT,
              "transactional throughput cost 1 - tx/idem: %.1f %% (submit->last), %.1f %%"
                  + " (first->last); target < %.0f %%: %s%n%n",
              100 * transactionalCost(),
              100 * transactionalCostFirstToLast(),
              100 * TARGET_TRANSACTIONAL_COST,
              transactionalCost() < TARGET_TRANSACTIONAL_COST ? "met" : "missed"));
      out.append(
          "| sink | rate target | rate sent | early decisions | record p50 ms | p95 | p99 |"
              + " visible p50 ms | p95 | p99 |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
      for (LatencyRun run : latency) {
        out.append(
            String.format(
                Locale.ROOT,
                "| %s%s | %.0f | %.0f | %d | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |%n",
                run.mode,
                run.drained ? "" : " (not drained)",
                run.rate,
                run.achievedRate,
                run.recordLatencies.length,
                percentile(run.recordLatencies, 0.5),
                percentile(run.recordLatencies, 0.95),
                percentile(run.recordLatencies, 0.99),
                percentile(run.visibilityLatencies, 0.5),
                percentile(run.visibilityLatencies, 0.95),
                percentile(run.visibilityLatencies, 0.99)));
      }
      for (LatencyRun run : latency) {
        if (run.mode == KafkaOptions.KafkaSinkMode.idempotent) {
          double p50 = percentile(run.recordLatencies, 0.5);
          double p95 = percentile(run.recordLatencies, 0.95);
          out.append(
              String.format(
                  Locale.ROOT,
                  "idempotent at %.0f events/s: p50 %.0f ms (target <= %.0f: %s), p95 %.0f ms"
                      + " (target <= %.0f: %s)%n",
                  run.rate,
                  p50,
                  TARGET_IDEMPOTENT_P50_MS,
                  p50 <= TARGET_IDEMPOTENT_P50_MS ? "met" : "missed",
                  p95,
                  TARGET_IDEMPOTENT_P95_MS,
                  p95 <= TARGET_IDEMPOTENT_P95_MS ? "met" : "missed"));
        }
      }
      return out.toString();
    }

    /** Writes the JSON report to {@code settings.output}. */
    void write() throws IOException {
      ObjectNode root = Json.MAPPER.createObjectNode();
      root.put("benchmark", "kafka-sinks-on-flink");
      root.put("command", settings.command);
      root.put("jvmCommand", System.getProperty("sun.java.command", ""));
      root.put("measuredAt", Instant.now().toString());
      ObjectNode machine = root.putObject("machine");
      machine.put("cores", Runtime.getRuntime().availableProcessors());
      machine.put("maxHeapBytes", Runtime.getRuntime().maxMemory());
      machine.put(
          "jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
      machine.put("os", System.getProperty("os.name") + " " + System.getProperty("os.arch"));
      machine.put("loadAverageBefore", loadBefore);
      machine.put("loadAverageAfter", loadAfter);
      ObjectNode setup = root.putObject("setup");
      setup.put("runner", "FlinkRunner, embedded MiniCluster, parallelism 2");
      setup.put("broker", "embedded Kafka (KRaft, one node), topics with 2 partitions");
      setup.put("checkpointingIntervalMs", settings.checkpointIntervalMs);
      setup.put("stateBackend", settings.stateBackend);
      setup.put("earlyFiringDelay", "PT0S");
      setup.put("records", settings.events);
      setup.put("accounts", settings.accounts);
      setup.put("repeats", settings.repeats);
      setup.put("latencySeconds", settings.latencySeconds);
      setup.put("kafkaSinkShards", settings.sinkShards);
      setup.put("warmupSeconds", settings.warmupSeconds);
      ObjectNode tp = root.putObject("throughput");
      for (var entry : throughput.entrySet()) {
        ObjectNode mode = tp.putObject(entry.getKey().toString());
        double[] eps = eventsPerSecond(entry.getValue());
        mode.put("recordsPerRun", entry.getValue().get(0).records);
        mode.put("eventsPerSecondMedian", median(eps));
        mode.put("eventsPerSecondMin", Arrays.stream(eps).min().orElse(Double.NaN));
        mode.put("eventsPerSecondMax", Arrays.stream(eps).max().orElse(Double.NaN));
        mode.put(
            "eventsPerSecondFirstToLastMedian",
            median(eventsPerSecondFirstToLast(entry.getValue())));
        ArrayNode runs = mode.putArray("runs");
        for (ThroughputRun run : entry.getValue()) {
          ObjectNode r = runs.addObject();
          r.put("eventsPerSecond", run.eventsPerSecond());
          r.put("eventsPerSecondFirstToLast", run.eventsPerSecondFirstToLast());
          r.put("submitToLastDecisionMs", run.lastDecisionMillis - run.submittedMillis);
          r.put("submitToFirstDecisionMs", run.firstDecisionMillis - run.submittedMillis);
          r.put("committedDecisions", run.decisions);
          r.put("jobCountedDecisions", run.jobDecisions);
        }
      }
      tp.put("transactionalCost", transactionalCost());
      tp.put("transactionalCostFirstToLast", transactionalCostFirstToLast());
      ArrayNode lat = root.putArray("latency");
      for (LatencyRun run : latency) {
        ObjectNode r = lat.addObject();
        r.put("mode", run.mode.toString());
        r.put("rateTarget", run.rate);
        r.put("rateSent", run.achievedRate);
        r.put("earlyDecisions", run.recordLatencies.length);
        r.put("drained", run.drained);
        ObjectNode timings = r.putObject("decisionsByPaneTiming");
        run.paneTimings.forEach(timings::put);
        for (String kind : List.of("record", "visible")) {
          long[] values = kind.equals("record") ? run.recordLatencies : run.visibilityLatencies;
          ObjectNode p = r.putObject(kind + "LatencyMs");
          p.put("p50", percentile(values, 0.5));
          p.put("p95", percentile(values, 0.95));
          p.put("p99", percentile(values, 0.99));
          p.put("max", values.length == 0 ? Double.NaN : values[values.length - 1]);
        }
      }
      ObjectNode targets = root.putObject("targets");
      targets.put("idempotentP50Ms", TARGET_IDEMPOTENT_P50_MS);
      targets.put("idempotentP95Ms", TARGET_IDEMPOTENT_P95_MS);
      targets.put("transactionalCost", TARGET_TRANSACTIONAL_COST);
      targets.put("source", "MillWheel with exactly-once, VLDB 2013");
      Path parent = settings.output.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      Files.writeString(
          settings.output,
          Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n",
          StandardCharsets.UTF_8);
    }
  }
}
