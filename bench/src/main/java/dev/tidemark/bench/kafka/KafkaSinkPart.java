package dev.tidemark.bench.kafka;

import dev.tidemark.bench.suite.BenchPart;
import dev.tidemark.bench.suite.BenchProfile;
import dev.tidemark.bench.suite.BenchResults;
import dev.tidemark.bench.suite.Stats;
import dev.tidemark.pipelines.KafkaOptions.KafkaSinkMode;
import dev.tidemark.testkit.EmbeddedKafka;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The two Kafka sinks side by side ({@code --kafkaSinkMode=idempotent} and {@code transactional}):
 * streaming on the FlinkRunner (embedded MiniCluster, parallelism 2), Kafka in and out through the
 * embedded broker, early firing on every element, exactly-once checkpoints every 2 s, Beam's and
 * Flink's default bundle and buffer timeouts; on Flink's heap state backend and on RocksDB with
 * incremental checkpoints.
 *
 * <ul>
 *   <li>Throughput: a backlog of generated events produced into a fresh two-partition topic (record
 *       timestamps = now), with end-of-stream markers, then the job starts; events/s = records /
 *       (job submission to the last committed decision record's Kafka timestamp), and from the
 *       first decision record to the last. Warm-ups discarded, then the repeats, the modes
 *       alternating so that load noise hits both; the transactional sink's cost is 1 - its median
 *       throughput / the idempotent sink's.
 *   <li>Latency: a fresh job per mode and rate ({@link SinkRuns#latency}), at {@link
 *       LatencyRun#RATE_SHARES} of the slower sink's first-to-last throughput; every committed
 *       early decision triggered by its latest event gives the record latency (its Kafka timestamp
 *       minus the event's) and the visibility latency (when a {@code read_committed} consumer first
 *       saw it minus the same): a transactional sink's decision is visible only once the checkpoint
 *       after it commits its transaction.
 * </ul>
 *
 * <p>No contract figure: the transactional sink's cost at the target's size ({@code
 * ratios.eosThroughputCost}, at least 100,000 events) is measured on the local cluster by {@code
 * flink-cluster}, and the latency target, with latency settings, by {@code latency}. Nothing here
 * asserts a speed.
 */
public final class KafkaSinkPart implements BenchPart {
  public static final String NAME = "kafka-sink";

  /** The transactional sink may cost at most this share of the idempotent throughput. */
  public static final double TARGET_TRANSACTIONAL_COST = 0.20;

  /** The chart of the visibility latencies at the highest rate. */
  public static final String CDF_CHART = "kafka-sink-visible-latency-cdf";

  static final List<KafkaSinkMode> MODES =
      List.of(KafkaSinkMode.idempotent, KafkaSinkMode.transactional);

  /** The sizes of one profile. */
  static final class Sizes {
    /** The state backends measured, in order. */
    final List<StateBackend> backends;

    /** Events of a throughput run's backlog, on the heap and on RocksDB. */
    final int heapBacklog;

    final int rocksDbBacklog;
    final int accounts;
    final LatencySpan span;

    /** The shares of the slower sink's capacity the latency runs are fed at. */
    final List<Double> shares;

    /** The highest rate a latency run is fed at, events/s. */
    final double maxRate;

    final long checkpointIntervalMs;

    Sizes(
        List<StateBackend> backends,
        int heapBacklog,
        int rocksDbBacklog,
        int accounts,
        LatencySpan span,
        List<Double> shares,
        double maxRate,
        long checkpointIntervalMs) {
      this.backends = List.copyOf(backends);
      this.heapBacklog = heapBacklog;
      this.rocksDbBacklog = rocksDbBacklog;
      this.accounts = accounts;
      this.span = span;
      this.shares = List.copyOf(shares);
      this.maxRate = maxRate;
      this.checkpointIntervalMs = checkpointIntervalMs;
    }

    /**
     * Each event costs the job about 13 decision records at early firing on every element, and on
     * RocksDB a backlog drains about ten times slower than on the heap (under 100 events/s on 2
     * cores), so its backlog is smaller. The smoke profile runs each kind of job once, on the heap
     * (a sink job on RocksDB differs by one pipeline option): a 50-event backlog, which drains too
     * fast to estimate a capacity from, so its latency runs are fed at 5 events/s.
     */
    static Sizes of(BenchProfile profile) {
      if (profile.isSmoke()) {
        return new Sizes(
            List.of(StateBackend.HEAP),
            50,
            50,
            20,
            new LatencySpan(0, 0, 3),
            List.of(0.9),
            5,
            1000);
      }
      List<StateBackend> backends = List.of(StateBackend.HEAP, StateBackend.ROCKSDB);
      long checkpoints = SinkJobSettings.CHECKPOINT_INTERVAL_MS;
      List<Double> shares = LatencyRun.RATE_SHARES;
      if (!profile.isFull()) {
        return new Sizes(
            backends,
            3_000,
            1_000,
            200,
            new LatencySpan(2, 20, 8),
            shares,
            Double.MAX_VALUE,
            checkpoints);
      }
      return new Sizes(
          backends,
          20_000,
          3_000,
          200,
          new LatencySpan(5, 60, 30),
          shares,
          Double.MAX_VALUE,
          checkpoints);
    }

    int backlog(StateBackend backend) {
      return backend == StateBackend.ROCKSDB ? rocksDbBacklog : heapBacklog;
    }
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public void run(BenchProfile profile, BenchResults results) throws Exception {
    Sizes sizes = Sizes.of(profile);
    Path work = Files.createTempDirectory("tidemark-bench-kafka-sink");
    try (EmbeddedKafka broker = EmbeddedKafka.start()) {
      for (StateBackend backend : sizes.backends) {
        SinkJobSettings settings =
            SinkJobSettings.of(backend).withCheckpointInterval(sizes.checkpointIntervalMs);
        SinkRuns runs = new SinkRuns(broker, settings, sizes.accounts, work);
        double capacity = measureThroughput(runs, profile, sizes, results);
        measureLatency(runs, capacity, sizes, results);
      }
    } finally {
      Workspace.delete(work);
    }
    results.note(
        NAME,
        String.format(
            Locale.ROOT,
            "what ran: Tidemark streaming on the FlinkRunner (embedded MiniCluster, parallelism 2),"
                + " the embedded broker (2 partitions a topic), early firing on every element,"
                + " state on %s, exactly-once checkpoints every %d ms, one transactional shard,"
                + " Beam's 1 s"
                + " bundles and Flink's 100 ms buffer timeout; generated events over %d accounts"
                + " (1%% duplicates, 0.2%% malformed, no late events); latency runs fed at %s of"
                + " the slower sink's first-to-last throughput, measured for %.0f s after a %.0f s"
                + " warm-up and up to %.0f s of catching up",
            sizes.backends.stream().map(b -> b.label).collect(Collectors.joining(" and ")),
            sizes.checkpointIntervalMs,
            sizes.accounts,
            shares(sizes.shares),
            sizes.span.latencySeconds(),
            sizes.span.warmupSeconds(),
            sizes.span.steadyCapSeconds()));
  }

  /**
   * The throughput of both sinks on one backend, and the transactional sink's cost; returns the
   * slower sink's median first-to-last throughput.
   */
  private static double measureThroughput(
      SinkRuns runs, BenchProfile profile, Sizes sizes, BenchResults results) throws Exception {
    StateBackend backend = runs.settings().stateBackend();
    List<SinkEvents.Line> lines = runs.backlog(sizes.backlog(backend));
    Map<KafkaSinkMode, List<ThroughputRun>> measured = new LinkedHashMap<>();
    int run = 0;
    for (int round = 0; round < profile.warmups + profile.repeats; round++) {
      boolean warmUp = round < profile.warmups;
      for (KafkaSinkMode mode : MODES) {
        String name = "sink-tp-" + backend.label + "-" + mode + "-" + run++;
        ThroughputRun result = runs.throughput(mode, name, lines);
        System.out.println(
            result.describe(
                backend.label
                    + (warmUp
                        ? " warm-up " + (round + 1)
                        : " repeat " + (round + 1 - profile.warmups))));
        if (!warmUp) {
          measured.computeIfAbsent(mode, m -> new ArrayList<>()).add(result);
        }
      }
    }
    Map<KafkaSinkMode, Stats> submitToLast = new LinkedHashMap<>();
    Map<KafkaSinkMode, Stats> firstToLast = new LinkedHashMap<>();
    for (KafkaSinkMode mode : MODES) {
      List<ThroughputRun> list = measured.get(mode);
      submitToLast.put(
          mode, Stats.of(list.stream().mapToDouble(ThroughputRun::eventsPerSecond).toArray()));
      firstToLast.put(
          mode,
          Stats.of(list.stream().mapToDouble(ThroughputRun::eventsPerSecondFirstToLast).toArray()));
      String side = side(mode, backend);
      results.measure(
          NAME, side + " throughput (submit->last decision)", submitToLast.get(mode), "events/s");
      results.measure(
          NAME, side + " throughput (first->last decision)", firstToLast.get(mode), "events/s");
    }
    double cost = cost(submitToLast);
    double costFirstToLast = cost(firstToLast);
    results.measure(
        NAME,
        "transactional cost on " + backend.label + " (submit->last)",
        Stats.of(100 * cost),
        "%");
    results.measure(
        NAME,
        "transactional cost on " + backend.label + " (first->last)",
        Stats.of(100 * costFirstToLast),
        "%");
    results.note(
        NAME,
        String.format(
            Locale.ROOT,
            "throughput on %s: a backlog of %d records (%d decisions a run), %d warm-up round(s)"
                + " discarded, median of %d, idempotent and transactional alternating; the"
                + " transactional sink costs %.1f %% of the idempotent throughput from submission"
                + " (%.1f %% first to last decision), target < %.0f %% (%s at this size; the"
                + " target's own figure is ratios.eosThroughputCost, flink-cluster)",
            backend.label,
            lines.size(),
            measured.get(KafkaSinkMode.idempotent).get(0).decisions(),
            profile.warmups,
            profile.repeats,
            100 * cost,
            100 * costFirstToLast,
            100 * TARGET_TRANSACTIONAL_COST,
            cost < TARGET_TRANSACTIONAL_COST ? "met" : "missed"));
    return Math.min(
        firstToLast.get(KafkaSinkMode.idempotent).median(),
        firstToLast.get(KafkaSinkMode.transactional).median());
  }

  /** 1 - transactional / idempotent median. */
  private static double cost(Map<KafkaSinkMode, Stats> throughput) {
    return 1
        - throughput.get(KafkaSinkMode.transactional).median()
            / throughput.get(KafkaSinkMode.idempotent).median();
  }

  /** Both sinks' record and visibility latencies at each share of {@code capacity}. */
  private static void measureLatency(
      SinkRuns runs, double capacity, Sizes sizes, BenchResults results) throws Exception {
    StateBackend backend = runs.settings().stateBackend();
    List<Double> rates = LatencyRun.ratesAt(capacity, sizes.shares);
    for (int i = 0; i < rates.size(); i++) {
      double rate = Math.min(rates.get(i), sizes.maxRate);
      if (rate < rates.get(i)) {
        results.note(
            NAME,
            String.format(
                Locale.ROOT,
                "latency on %s: fed at %.0f events/s, not %.0f (%s of %.0f): this profile's cap",
                backend.label,
                rate,
                rates.get(i),
                LatencyRun.shareLabel(sizes.shares.get(i)),
                capacity));
      }
      for (KafkaSinkMode mode : MODES) {
        LatencyRun run =
            runs.latency(
                mode, "sink-lat-" + backend.label + "-" + mode + "-" + i, rate, sizes.span);
        System.out.println(run.describe());
        String label =
            String.format(
                Locale.ROOT,
                "%s @%s, %.0f events/s",
                side(mode, backend),
                LatencyRun.shareLabel(sizes.shares.get(i)),
                rate);
        if (run.decisions() == 0) {
          throw new IllegalStateException(label + ": no early decision was measured");
        }
        record(results, label, run);
        if (i == rates.size() - 1) {
          for (int k = 1; k <= 100; k++) {
            double fraction = k / 100.0;
            results.point(CDF_CHART, side(mode, backend), run.visibleLatencyMs(fraction), fraction);
          }
        }
      }
    }
  }

  /** One latency run's percentiles, rate and how it went. */
  private static void record(BenchResults results, String label, LatencyRun run) {
    for (double q : new double[] {0.5, 0.95, 0.99}) {
      String p = "p" + Math.round(q * 100);
      results.measure(NAME, label + " record latency " + p, Stats.of(run.recordLatencyMs(q)), "ms");
      results.measure(
          NAME, label + " visible latency " + p, Stats.of(run.visibleLatencyMs(q)), "ms");
    }
    results.measure(NAME, label + " sent", Stats.of(run.achievedRate()), "events/s");
    results.note(
        NAME,
        String.format(
            Locale.ROOT,
            "%s: %d early decisions measured, decisions by pane %s, %s after %.1f s%s, %s",
            label,
            run.decisions(),
            run.paneTimings(),
            run.steady() ? "caught up" : "not caught up",
            run.warmupSeconds(),
            run.drained() ? "" : ", decisions still arriving at the drain cap",
            run.keptUp() ? "kept up" : "fell behind"));
  }

  /** What a measurement is of: the sink and the state backend. */
  static String side(KafkaSinkMode mode, StateBackend backend) {
    return mode + " on " + backend.label;
  }

  private static String shares(List<Double> shares) {
    List<String> labels = new ArrayList<>();
    shares.forEach(s -> labels.add(LatencyRun.shareLabel(s)));
    return String.join(" and ", labels);
  }
}
