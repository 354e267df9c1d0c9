package dev.tidemark.bench.flink;

import dev.tidemark.bench.suite.BenchPart;
import dev.tidemark.bench.suite.BenchProfile;
import dev.tidemark.bench.suite.BenchResults;
import dev.tidemark.bench.suite.ExtraPipelineArgs;
import dev.tidemark.bench.suite.Stats;
import dev.tidemark.pipelines.Outputs;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.TidemarkPipeline;
import dev.tidemark.pipelines.io.BackfillSource;
import dev.tidemark.pipelines.io.Sources;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.testkit.EmbeddedKafka;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.beam.runners.flink.EmbeddedFlinkJobsShim;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PCollection;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.joda.time.Duration;

/**
 * The native Flink baselines: Tidemark on the FlinkRunner against {@link NativeFlinkJob}, the same
 * job in Flink's DataStream API, and against {@link FlinkSqlJob}, the same job with Flink SQL's
 * window aggregation for the features, on an embedded MiniCluster, as a backfill (NDJSON files,
 * bounded, batch execution on all) and streaming (the embedded Kafka broker, two partitions);
 * Tidemark on the DirectRunner against the FlinkRunner for the same backfill; and backfill
 * throughput at each parallelism of the profile.
 *
 * <p>Events/s = input lines / wall time from job submission (cluster start included, on both) to
 * the last output counted, after a {@code System.gc()} before every run. Runs alternate native, SQL
 * and Tidemark so load noise hits all; after the warm-ups, the median of the repeats. All jobs must
 * produce the same decisions (count, total transactions and amounts, reviews), duplicates and dead
 * letters; a mismatch is noted.
 */
public final class FlinkBaselinePart implements BenchPart {
  static final String NAME = "native-flink";
  static final int ACCOUNTS = 1_000;
  static final int PARTITIONS = 2;

  /**
   * The DirectRunner runs on at most this many events (it managed about 100 events/s on 2 cores:
   * 20,000 events took 205 s), a tenth of the profile's events below the full profile; the
   * FlinkRunner is then measured on the same capped input too.
   */
  static int directRunnerMaxEvents(BenchProfile profile) {
    return profile.isFull() ? 20_000 : profile.events / 10;
  }

  private static final AtomicInteger RUNS = new AtomicInteger();

  @Override
  public String name() {
    return NAME;
  }

  /** One measured run. */
  static final class Run {
    final long lines;
    final double seconds;
    final String checksum;
    final Tally tally;

    Run(long lines, double seconds, Tally tally) {
      this.lines = lines;
      this.seconds = seconds;
      this.checksum = tally.exactChecksum();
      this.tally = tally;
    }

    double eventsPerSecond() {
      return lines / seconds;
    }
  }

  @Override
  public void run(BenchProfile profile, BenchResults results) throws Exception {
    int events = profile.events;
    int parallelism = profile.parallelisms.get(profile.parallelisms.size() - 1);
    Path work = Files.createTempDirectory("bench-flink");
    Workload workload = Workload.generate(events, ACCOUNTS);
    List<Path> files = workload.writeFiles(work.resolve("backfill"), PARTITIONS);
    String glob = work.resolve("backfill").resolve("*.ndjson").toString();
    Map<String, List<Run>> runs = new LinkedHashMap<>();
    String expected = null;
    List<String> mismatches = new ArrayList<>();

    // Backfill, native, SQL and Tidemark alternating. The smoke profile leaves out the SQL
    // backfill (NativeFlinkJobIT checks its outputs) to keep the smoke test short.
    boolean sqlBackfill = !profile.isSmoke();
    for (int i = 0; i < profile.warmups + profile.repeats; i++) {
      boolean measured = i >= profile.warmups;
      Run nativeRun = nativeBackfill(files, workload, parallelism, false);
      Run sqlRun = sqlBackfill ? nativeBackfill(files, workload, parallelism, true) : null;
      Run tidemarkRun = tidemarkBackfill("FlinkRunner", glob, workload, parallelism);
      expected = check(expected, nativeRun, "native backfill", mismatches);
      if (sqlRun != null) {
        check(expected, sqlRun, "Flink SQL backfill", mismatches);
      }
      check(expected, tidemarkRun, "Tidemark backfill", mismatches);
      if (measured) {
        add(runs, "native-backfill", nativeRun);
        if (sqlRun != null) {
          add(runs, "sql-backfill", sqlRun);
        }
        add(runs, "tidemark-backfill", tidemarkRun);
      }
    }

    // Streaming from the embedded broker.
    try (EmbeddedKafka broker = EmbeddedKafka.start()) {
      // Below the full profile, no streaming warm-up: the backfill runs warmed this JVM.
      int warmups = profile.isFull() ? profile.warmups : 0;
      for (int i = 0; i < warmups + profile.repeats; i++) {
        boolean measured = i >= warmups;
        Run nativeRun = nativeStreaming(broker, workload, parallelism, expected, false);
        Run sqlRun = nativeStreaming(broker, workload, parallelism, expected, true);
        Run tidemarkRun = tidemarkStreaming(broker, workload, parallelism, expected);
        // Streaming also dead-letters one end-of-stream marker per partition.
        String withMarkers =
            expected.replace(
                "deadLetters=" + expectedDeadLetters(expected),
                "deadLetters=" + (expectedDeadLetters(expected) + PARTITIONS));
        check(withMarkers, nativeRun, "native streaming", mismatches);
        check(withMarkers, sqlRun, "Flink SQL streaming", mismatches);
        check(withMarkers, tidemarkRun, "Tidemark streaming", mismatches);
        if (measured) {
          add(runs, "native-streaming", nativeRun);
          add(runs, "sql-streaming", sqlRun);
          add(runs, "tidemark-streaming", tidemarkRun);
        }
      }
    }

    // Parallelism: the backfill at the other parallelisms (the last one was measured above).
    int parallelismRepeats = profile.isFull() ? profile.repeats : 1;
    for (int p : profile.parallelisms.subList(0, profile.parallelisms.size() - 1)) {
      for (int i = 0; i < parallelismRepeats; i++) {
        add(runs, "native-backfill-p" + p, nativeBackfill(files, workload, p, false));
        add(runs, "tidemark-backfill-p" + p, tidemarkBackfill("FlinkRunner", glob, workload, p));
      }
    }

    // DirectRunner against FlinkRunner, same backfill (capped for the full profile).
    int directEvents = Math.min(events, directRunnerMaxEvents(profile));
    String directGlob = glob;
    Workload directWorkload = workload;
    if (directEvents < events) {
      directWorkload = workload.head(directEvents + (workload.lines.size() - events));
      directWorkload.writeFiles(work.resolve("direct"), PARTITIONS);
      directGlob = work.resolve("direct").resolve("*.ndjson").toString();
      for (int i = 0; i < profile.repeats; i++) {
        add(
            runs,
            "tidemark-flink-direct-input",
            tidemarkBackfill("FlinkRunner", directGlob, directWorkload, parallelism));
      }
    }
    for (int i = 0; i < Math.max(1, profile.repeats - 1); i++) {
      add(runs, "tidemark-direct", tidemarkBackfill("DirectRunner", directGlob, directWorkload, 0));
    }

    record(profile, results, runs, parallelism, workload, directWorkload, directEvents < events);
    if (!mismatches.isEmpty()) {
      mismatches.forEach(m -> results.note(NAME, m));
    } else {
      results.note(
          NAME,
          "equivalence: every native (DataStream and Flink SQL) and Tidemark run (backfill and"
              + " streaming) produced the same outputs: "
              + expected);
    }
  }

  private static void add(Map<String, List<Run>> runs, String name, Run run) {
    runs.computeIfAbsent(name, k -> new ArrayList<>()).add(run);
    System.out.printf(
        Locale.ROOT,
        "  %s: %d lines in %.2f s = %.0f events/s; %s%n",
        name,
        run.lines,
        run.seconds,
        run.eventsPerSecond(),
        run.checksum);
  }

  private static String check(String expected, Run run, String what, List<String> mismatches) {
    if (expected != null && !expected.equals(run.checksum)) {
      mismatches.add(
          "MISMATCH: " + what + " produced " + run.checksum + ", the first run " + expected);
    }
    return expected == null ? run.checksum : expected;
  }

  private static double median(List<Run> runs) {
    return Stats.of(runs.stream().mapToDouble(Run::eventsPerSecond).toArray()).median();
  }

  private static void record(
      BenchProfile profile,
      BenchResults results,
      Map<String, List<Run>> runs,
      int parallelism,
      Workload workload,
      Workload directWorkload,
      boolean capped) {
    runs.forEach(
        (name, list) ->
            results.measure(
                NAME,
                name,
                Stats.of(list.stream().mapToDouble(Run::eventsPerSecond).toArray()),
                "events/s"));
    results.ratio(
        "tidemarkVsNativeFlinkBackfill",
        median(runs.get("tidemark-backfill")) / median(runs.get("native-backfill")));
    results.ratio(
        "tidemarkVsNativeFlinkStreaming",
        median(runs.get("tidemark-streaming")) / median(runs.get("native-streaming")));
    if (runs.containsKey("sql-backfill")) {
      results.ratio(
          "tidemarkVsFlinkSqlBackfill",
          median(runs.get("tidemark-backfill")) / median(runs.get("sql-backfill")));
    } else {
      results.note(
          NAME,
          "ratios.tidemarkVsFlinkSqlBackfill is null: the smoke profile runs the Flink SQL"
              + " baseline in streaming only");
    }
    results.ratio(
        "tidemarkVsFlinkSqlStreaming",
        median(runs.get("tidemark-streaming")) / median(runs.get("sql-streaming")));
    results.note(
        NAME,
        "tidemarkVsFlinkSqlBackfill and tidemarkVsFlinkSqlStreaming: Tidemark against the second"
            + " native baseline, FlinkSqlJob: the DataStream job's parse, dedup and scoring"
            + " operators with the features from Flink SQL's window aggregation"
            + " (TABLE(HOP(...)) GROUP BY account, window_start, window_end: in streaming the"
            + " planner slices the hopping windows; in batch it runs its batch window"
            + " aggregation); no allowed lateness and no late panes in SQL (the input has no late"
            + " events), every pane marked first and last");
    for (int p : profile.parallelisms) {
      String suffix = p == parallelism ? "" : "-p" + p;
      results.point(
          "throughput-vs-parallelism",
          "native Flink backfill",
          p,
          median(runs.get("native-backfill" + suffix)));
      results.point(
          "throughput-vs-parallelism",
          "Tidemark FlinkRunner backfill",
          p,
          median(runs.get("tidemark-backfill" + suffix)));
    }
    double flink = median(runs.get(capped ? "tidemark-flink-direct-input" : "tidemark-backfill"));
    double direct = median(runs.get("tidemark-direct"));
    results.note(
        NAME,
        String.format(
            Locale.ROOT,
            "DirectRunner vs FlinkRunner (same backfill, %d lines%s): DirectRunner %.0f events/s,"
                + " FlinkRunner (embedded MiniCluster, parallelism %d) %.0f events/s, ratio"
                + " %.2f; DirectRunner with its defaults (immutability and encodability checks"
                + " on)",
            directWorkload.lines.size(),
            capped
                ? ", capped at " + directRunnerMaxEvents(profile) + " events for the DirectRunner"
                : "",
            direct,
            parallelism,
            flink,
            direct / flink));
    results.note(
        NAME,
        String.format(
            Locale.ROOT,
            "what ran: %d generated events (seed %d, %d accounts, %.0f events/s of event time,"
                + " 3%% identical duplicates, 1%% malformed, no late events) = %d input lines;"
                + " events/s = input lines / (submission to last output counted), cluster"
                + " start-up included on both, System.gc() before every run; parallelism %d"
                + " unless -pN; %d warm-up(s) + %d repeat(s), native and Tidemark alternating;"
                + " backfill = %d NDJSON files, both"
                + " in batch execution (Tidemark: FlinkRunner batch, native: DataStream BATCH"
                + " mode); streaming = embedded Kafka, %d partitions, Flink STREAMING, no"
                + " checkpoints on either; windows 5 min / 30 s, allowed lateness 1 h, dedup"
                + " horizon 24 h, watermark bound 30 s, early firings OFF on both (one on-time"
                + " pane per window, late panes per late element), the shipped XGBoost model,"
                + " batch size 256",
            profile.events,
            Workload.SEED,
            ACCOUNTS,
            Workload.EVENTS_PER_SECOND,
            workload.lines.size(),
            parallelism,
            profile.warmups,
            profile.repeats,
            PARTITIONS,
            PARTITIONS));
  }

  // ------------------------------------------------------------------ native

  /** The DataStream job's backfill, or with {@code sql} the Flink SQL job's. */
  static Run nativeBackfill(List<Path> files, Workload workload, int parallelism, boolean sql)
      throws Exception {
    String runId = (sql ? "sql-backfill-" : "native-backfill-") + RUNS.incrementAndGet();
    Tally tally = Tally.start(runId, false);
    try {
      StreamExecutionEnvironment env = NativeFlinkJob.environment(parallelism, true);
      NativeFlinkJob.Settings settings = new NativeFlinkJob.Settings();
      settings.parallelism = parallelism;
      (sql
              ? FlinkSqlJob.backfill(env, files, settings)
              : NativeFlinkJob.backfill(env, files, settings))
          .countInto(runId);
      long started = startClock();
      env.execute(runId);
      return new Run(workload.lines.size(), seconds(started, tally), tally);
    } finally {
      Tally.finish(runId);
    }
  }

  /** The DataStream job streaming from Kafka, or with {@code sql} the Flink SQL job. */
  static Run nativeStreaming(
      EmbeddedKafka broker, Workload workload, int parallelism, String expected, boolean sql)
      throws Exception {
    String runId = (sql ? "sql-kafka-" : "native-kafka-") + RUNS.incrementAndGet();
    String topic = produce(broker, runId, workload);
    Tally tally = Tally.start(runId, false);
    try {
      StreamExecutionEnvironment env = NativeFlinkJob.environment(parallelism, false);
      NativeFlinkJob.Settings settings = new NativeFlinkJob.Settings();
      (sql
              ? FlinkSqlJob.kafka(env, broker.bootstrapServers(), topic, settings)
              : NativeFlinkJob.kafka(env, broker.bootstrapServers(), topic, settings))
          .countInto(runId);
      long started = startClock();
      JobClient job = env.executeAsync(runId);
      try {
        awaitOutputs(tally, expected, PARTITIONS);
      } finally {
        job.cancel().get();
      }
      return new Run(workload.lines.size(), seconds(started, tally), tally);
    } finally {
      Tally.finish(runId);
    }
  }

  // ------------------------------------------------------------------ Tidemark

  static TidemarkOptions options(String... args) {
    return PipelineOptionsFactory.fromArgs(ExtraPipelineArgs.append(List.of(args)))
        .withValidation()
        .as(TidemarkOptions.class);
  }

  static void countInto(Outputs outputs, String runId) {
    outputs.decisions.apply(
        "CountDecisions", ParDo.of(new Tally.CountFn<>(runId, Tally.Output.DECISIONS)));
    outputs.deadLetters.apply(
        "CountDeadLetters", ParDo.of(new Tally.CountFn<>(runId, Tally.Output.DEAD_LETTERS)));
    outputs.duplicates.apply(
        "CountDuplicates", ParDo.of(new Tally.CountFn<>(runId, Tally.Output.DUPLICATES)));
    outputs.tooLate.apply(
        "CountTooLate", ParDo.of(new Tally.CountFn<>(runId, Tally.Output.TOO_LATE)));
  }

  /** Tidemark's backfill on {@code runner} (parallelism ignored on the DirectRunner). */
  static Run tidemarkBackfill(String runner, String glob, Workload workload, int parallelism)
      throws Exception {
    String runId = "tidemark-backfill-" + RUNS.incrementAndGet();
    Tally tally = Tally.start(runId, false);
    try {
      List<String> args = new ArrayList<>();
      args.add("--runner=" + runner);
      if (runner.equals("FlinkRunner")) {
        args.add("--flinkMaster=[local]");
        args.add("--parallelism=" + parallelism);
        args.add(
            "--fasterCopy=true"); // safe in batch: no snapshots (TidemarkPipeline.checkOptions)
      }
      args.add("--source=backfill");
      args.add("--input=" + glob);
      args.add("--earlyFiringDelay=none");
      TidemarkOptions options = options(args.toArray(new String[0]));
      Pipeline pipeline = Pipeline.create(options);
      PCollection<dev.tidemark.transforms.values.RawRecord> raw =
          pipeline.apply("ReadBackfill", BackfillSource.from(glob));
      countInto(TidemarkPipeline.expand(raw, options), runId);
      long started = startClock();
      pipeline.run().waitUntilFinish();
      return new Run(workload.lines.size(), seconds(started, tally), tally);
    } finally {
      Tally.finish(runId);
    }
  }

  static Run tidemarkStreaming(
      EmbeddedKafka broker, Workload workload, int parallelism, String expected) throws Exception {
    String runId = "tidemark-kafka-" + RUNS.incrementAndGet();
    String topic = produce(broker, runId, workload);
    Tally tally = Tally.start(runId, false);
    try {
      TidemarkOptions options =
          options(
              "--runner=FlinkRunner",
              "--flinkMaster=[local]",
              "--streaming=true",
              "--parallelism=" + parallelism,
              "--fasterCopy=true", // safe: no checkpoints on either side here
              "--source=kafka",
              "--kafkaBootstrapServers=" + broker.bootstrapServers(),
              "--kafkaInputTopic=" + topic,
              "--kafkaConsumerGroup=" + runId,
              "--maxOutOfOrderness=PT30S",
              "--kafkaIdleTimeout=PT10S",
              "--earlyFiringDelay=none");
      Pipeline pipeline = Pipeline.create(options);
      PCollection<dev.tidemark.transforms.values.RawRecord> raw =
          pipeline.apply("ReadKafka", Sources.kafkaSource(options));
      countInto(TidemarkPipeline.expand(raw, options), runId);
      long started = startClock();
      EmbeddedFlinkJobsShim.Job job = EmbeddedFlinkJobsShim.start(pipeline);
      try {
        awaitOutputs(tally, expected, PARTITIONS);
      } finally {
        job.stop(Duration.standardMinutes(1));
      }
      return new Run(workload.lines.size(), seconds(started, tally), tally);
    } finally {
      Tally.finish(runId);
    }
  }

  // ------------------------------------------------------------------ helpers

  /**
   * Collects the garbage of earlier runs, then starts a run's clock: no run pays for collecting
   * what another left (as the scaling part does before each job).
   */
  private static long startClock() {
    System.gc();
    return System.nanoTime();
  }

  private static double seconds(long started, Tally tally) {
    long last = tally.lastOutputNanos();
    return ((last == 0 ? System.nanoTime() : last) - started) / 1e9;
  }

  /** Produces the workload (round-robin over the partitions) and the end markers to a topic. */
  static String produce(EmbeddedKafka broker, String runId, Workload workload) throws IOException {
    String topic = runId + ".events";
    EmbeddedKafka.createTopics(
        broker.bootstrapServers(), PARTITIONS, List.of(topic), Map.of("retention.ms", "-1"));
    workload.produce(KafkaClients.plaintext(broker.bootstrapServers()), topic, PARTITIONS);
    return topic;
  }

  /**
   * Waits until the decisions reach the backfill's count and every end marker is dead-lettered, or
   * (if they never do) until nothing changed for 10 s after the markers; at most 10 minutes.
   */
  static void awaitOutputs(Tally tally, String expected, int markers) throws InterruptedException {
    awaitOutputs(tally, expectedDecisions(expected), expectedDeadLetters(expected) + markers);
  }

  /**
   * Waits until {@link Tally.Output#DECISIONS} reaches {@code expectedDecisions} and the dead
   * letters reach {@code expectedDeadLetters}, or (if they never do) until nothing changed for 10 s
   * after the dead letters; at most 10 minutes.
   */
  static void awaitOutputs(Tally tally, long expectedDecisions, long expectedDeadLetters)
      throws InterruptedException {
    long deadline = System.nanoTime() + 600_000_000_000L;
    while (System.nanoTime() < deadline) {
      boolean markersSeen = tally.count(Tally.Output.DEAD_LETTERS) >= expectedDeadLetters;
      if (markersSeen && tally.count(Tally.Output.DECISIONS) >= expectedDecisions) {
        Thread.sleep(500); // any stragglers (a mismatch) still count
        return;
      }
      if (markersSeen && System.nanoTime() - tally.lastOutputNanos() > 10_000_000_000L) {
        return;
      }
      Thread.sleep(50);
    }
    throw new IllegalStateException("the streaming run did not finish: " + tally.checksum());
  }

  static long field(String checksum, String name) {
    for (String part : checksum.split(" ")) {
      if (part.startsWith(name + "=")) {
        return Long.parseLong(part.substring(name.length() + 1));
      }
    }
    throw new IllegalArgumentException(name + " not in " + checksum);
  }

  static long expectedDecisions(String checksum) {
    return field(checksum, "decisions");
  }

  static long expectedDeadLetters(String checksum) {
    return field(checksum, "deadLetters");
  }
}
