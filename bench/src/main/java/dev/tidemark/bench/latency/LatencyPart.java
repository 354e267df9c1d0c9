package dev.tidemark.bench.latency;

import dev.tidemark.bench.kafka.CatchUp;
import dev.tidemark.bench.kafka.LatencyRun;
import dev.tidemark.bench.kafka.LatencySpan;
import dev.tidemark.bench.kafka.SinkEvents;
import dev.tidemark.bench.kafka.SinkJobSettings;
import dev.tidemark.bench.kafka.SinkRuns;
import dev.tidemark.bench.kafka.StateBackend;
import dev.tidemark.bench.kafka.ThroughputRun;
import dev.tidemark.bench.kafka.Workspace;
import dev.tidemark.bench.suite.BenchPart;
import dev.tidemark.bench.suite.BenchProfile;
import dev.tidemark.bench.suite.BenchResults;
import dev.tidemark.bench.suite.Stats;
import dev.tidemark.pipelines.KafkaOptions.KafkaSinkMode;
import dev.tidemark.testkit.EmbeddedKafka;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * Latency of the idempotent Kafka sink: streaming on the FlinkRunner (embedded MiniCluster,
 * parallelism 2), Kafka in and out through the embedded broker, early firing on every element,
 * exactly-once checkpoints every 2 s, with the latency settings {@link #MAX_BUNDLE_TIME_MILLIS} and
 * {@link #BUFFER_TIMEOUT_MILLIS}, on one state backend: Flink's heap backend ({@link #heap}, part
 * {@value #NAME}) or RocksDB with incremental checkpoints ({@link #rocksDb}, part {@value
 * #ROCKSDB_NAME}), in {@link SinkRuns}' jobs:
 *
 * <ol>
 *   <li>The backlog throughput: {@code warmups} discarded runs, then {@code repeats} runs of a
 *       pre-produced backlog; events per second between the first and the last decision record's
 *       timestamps, median of the repeats.
 *   <li>The maximum sustained rate: fixed-rate probes, each a run like the measured ones, from that
 *       median down by {@value #PROBE_STEP} a step until the job keeps up ({@link
 *       LatencyRun#keptUp}), then one halfway back up ({@link #search}).
 *   <li>Latency at {@link LatencyRun#RATE_SHARES} (50 % and 90 %) of the sustained rate: a fresh
 *       job per rate fed at a fixed rate; after the first decision, a warm-up and once the job has
 *       caught up (a cold job falls seconds behind its first full-rate feed and would otherwise
 *       spend the measured span catching up), every committed early decision triggered by its
 *       latest event gives latency = its Kafka record timestamp minus the Kafka record timestamp of
 *       that event.
 * </ol>
 *
 * <p>The contract's {@code latencyMs} (heap) and {@code latencyMs.rocksDb} are the p50, p95 and p99
 * of the 90 % rate; both rates are measurements, and both cumulative distributions go to the
 * {@value #CDF_CHART} chart. Targets (for the idempotent sink): p50 at most {@value #TARGET_P50_MS}
 * ms and p95 at most {@value #TARGET_P95_MS} ms, half of MillWheel's figures with exactly-once
 * (VLDB 2013). Nothing here asserts a speed.
 */
public final class LatencyPart implements BenchPart {
  /** The part on Flink's heap state backend. */
  public static final String NAME = "latency";

  /** The part on RocksDB with incremental checkpoints. */
  public static final String ROCKSDB_NAME = "latency-rocksdb";

  /** The chart of the latency distributions: x latency in ms, y the fraction at or below it. */
  public static final String CDF_CHART = "latency-cdf";

  /** Points per distribution in {@value #CDF_CHART} (evenly spaced fractions). */
  public static final int CDF_POINTS = 100;

  private static final KafkaSinkMode MODE = KafkaSinkMode.idempotent;

  /**
   * Median and 95th percentile record latency of the idempotent sink at 90 % of its sustained rate,
   * at most: half of MillWheel's figures with exactly-once (33.7 and 93.8 ms, VLDB 2013).
   */
  public static final double TARGET_P50_MS = 15;

  public static final double TARGET_P95_MS = 50;

  /** The accounts the generated events are spread over. */
  static final int ACCOUNTS = 200;

  /**
   * The latency settings the part runs with (the throughput runs too, so the rates are shares of
   * the same job's maximum): a FlinkRunner bundle, and so a scoring batch, ends after 20 ms instead
   * of Beam's 1000, and a network buffer between two Flink tasks waits at most 5 ms instead of
   * Flink's 100. Measured in docs/benchmarks.md against the defaults.
   */
  static final long MAX_BUNDLE_TIME_MILLIS = 20;

  static final long BUFFER_TIMEOUT_MILLIS = 5;

  /** Each probe for the sustained rate is this share below the previous one. */
  static final double PROBE_STEP = 0.2;

  static final int MAX_PROBES = 8;

  /** The sizes of one profile: the backlog of a throughput run and the latency spans. */
  static final class Sizes {
    final int throughputEvents;
    final int accounts;
    final double latencySeconds;
    final double warmupSeconds;
    final int latencyRepeats;

    /** The longest a run waits after its warm-up for the job to catch up before measuring. */
    final double steadyCapSeconds;

    Sizes(
        int throughputEvents,
        int accounts,
        double latencySeconds,
        double warmupSeconds,
        int latencyRepeats,
        double steadyCapSeconds) {
      this.steadyCapSeconds = steadyCapSeconds;
      this.throughputEvents = throughputEvents;
      this.accounts = accounts;
      this.latencySeconds = latencySeconds;
      this.warmupSeconds = warmupSeconds;
      this.latencyRepeats = latencyRepeats;
    }

    /**
     * Every event costs the job about 13.5 records of output at early firing on every element, so a
     * backlog of the profile's {@code events} would take minutes per run on 2 cores; these sizes
     * keep {@code small} near two minutes. The backlog must last a few seconds at the backlog rate
     * (1,000-2,500 events/s on 2 cores; the sustained rate is 800-1,100): 500 events lasted under a
     * second, and their first-to-last rate overestimated the sustainable one so much that "90 %" of
     * it overloaded the job (p50 3.5 s).
     */
    static Sizes of(BenchProfile profile, StateBackend backend) {
      if (!profile.isFull()) {
        return new Sizes(3_000, ACCOUNTS, 8, 2, 1, 20);
      }
      // On RocksDB the backlog drains about ten times slower (under 100 events/s), so a tenth of
      // the heap's backlog lasts as long.
      int backlog = backend == StateBackend.ROCKSDB ? 3_000 : 20_000;
      return new Sizes(backlog, ACCOUNTS, 60, 10, profile.repeats, 30);
    }

    /** The phases of every latency run: the probes' and the measured ones'. */
    LatencySpan span() {
      return new LatencySpan(warmupSeconds, steadyCapSeconds, latencySeconds);
    }
  }

  private final String name;

  private final StateBackend backend;

  private LatencyPart(String name, StateBackend backend) {
    this.name = name;
    this.backend = backend;
  }

  /** The part on Flink's heap state backend ({@value #NAME}). */
  public static LatencyPart heap() {
    return new LatencyPart(NAME, StateBackend.HEAP);
  }

  /** The part on RocksDB with incremental checkpoints ({@value #ROCKSDB_NAME}). */
  public static LatencyPart rocksDb() {
    return new LatencyPart(ROCKSDB_NAME, StateBackend.ROCKSDB);
  }

  @Override
  public String name() {
    return name;
  }

  /** What a measurement is of: the idempotent sink, and the state backend unless the heap. */
  private String side() {
    return backend == StateBackend.ROCKSDB ? "idempotent on RocksDB" : "idempotent";
  }

  @Override
  public void run(BenchProfile profile, BenchResults results) throws Exception {
    Sizes sizes = Sizes.of(profile, backend);
    SinkJobSettings settings =
        SinkJobSettings.of(backend)
            .withLatencySettings(MAX_BUNDLE_TIME_MILLIS, BUFFER_TIMEOUT_MILLIS);
    Path work = Files.createTempDirectory("tidemark-bench-latency");
    try (EmbeddedKafka broker = EmbeddedKafka.start()) {
      SinkRuns runs = new SinkRuns(broker, settings, sizes.accounts, work);
      Stats burst = measureThroughput(runs, profile, sizes, results);
      double sustained = sustainedMaximum(runs, burst.median(), sizes, results);
      List<Double> shares = LatencyRun.RATE_SHARES;
      List<Double> rates = LatencyRun.ratesAt(sustained, shares);
      List<double[]> perRate = new ArrayList<>();
      for (int i = 0; i < rates.size(); i++) {
        perRate.add(
            measureLatency(
                runs, LatencyRun.shareLabel(shares.get(i)), rates.get(i), sizes, results));
      }
      double[] last = perRate.get(perRate.size() - 1);
      String key = backend == StateBackend.HEAP ? "latencyMs" : "latencyMs.rocksDb";
      results.figure(key + ".p50", last[0]);
      results.figure(key + ".p95", last[1]);
      results.figure(key + ".p99", last[2]);
      results.note(
          name,
          String.format(
              Locale.ROOT,
              "%s.p50/p95/p99 are the %s sink's at %s of its measured maximum"
                  + " sustained rate (%.0f events/s, median of %d run(s)): Kafka record timestamp of the event to"
                  + " that of its early decision, for the decisions whose ingestion clock is their"
                  + " trigger's (not those triggered by out-of-order events); --maxBundleTimeMills=%d,"
                  + " Flink buffer timeout %d ms, exactly-once checkpoints every %d ms; targets"
                  + " p50 <= %.0f ms (%s), p95 <= %.0f ms (%s), half of MillWheel's with"
                  + " exactly-once (VLDB 2013)",
              key,
              side(),
              LatencyRun.shareLabel(shares.get(shares.size() - 1)),
              rates.get(rates.size() - 1),
              sizes.latencyRepeats,
              MAX_BUNDLE_TIME_MILLIS,
              BUFFER_TIMEOUT_MILLIS,
              settings.checkpointIntervalMs(),
              TARGET_P50_MS,
              metOrMissed(last[0], TARGET_P50_MS),
              TARGET_P95_MS,
              metOrMissed(last[1], TARGET_P95_MS)));
    } finally {
      Workspace.delete(work);
    }
  }

  /** One probe of {@link #search}: whether a run at {@code rate} events/s kept up. */
  @FunctionalInterface
  interface Probe {
    boolean keptUp(double rate) throws Exception;
  }

  /** What {@link #search} found: the rate, whether a probe kept up at it, and every rate tried. */
  static final class Search {
    final double rate;
    final boolean found;
    final List<Double> tried;

    Search(double rate, boolean found, List<Double> tried) {
      this.rate = rate;
      this.found = found;
      this.tried = List.copyOf(tried);
    }
  }

  /**
   * The highest fixed rate {@code probe} keeps up with: from {@code start} down by {@value
   * #PROBE_STEP} a step, at most {@value #MAX_PROBES} probes, then one more probe halfway to the
   * rate above the first that kept up (the probe that fell behind before it, or a step above {@code
   * start}), kept if it keeps up too. A 20 % step alone leaves the maximum anywhere in the 25 %
   * above the rate found; the refinement halves that. When no probe keeps up, the lowest rate tried
   * and {@code found == false}.
   */
  static Search search(double start, Probe probe) throws Exception {
    List<Double> tried = new ArrayList<>();
    double rate = start;
    for (int i = 0; i < MAX_PROBES; i++) {
      tried.add(rate);
      if (probe.keptUp(rate)) {
        double halfway = (rate + rate / (1 - PROBE_STEP)) / 2;
        tried.add(halfway);
        return new Search(probe.keptUp(halfway) ? halfway : rate, true, tried);
      }
      rate *= 1 - PROBE_STEP;
    }
    return new Search(tried.get(tried.size() - 1), false, tried);
  }

  /**
   * The highest fixed rate the job keeps up with ({@link LatencyRun#keptUp}), by {@link #search}
   * from the backlog's rate. A backlog drains faster than a steady feed is served (full bundles and
   * scoring batches, one burst), so its rate overestimates what the job sustains: 90 % of it
   * overloaded the job. Each probe is a run like the measured ones, as long and after the same
   * warm-up, so the rate is found under the conditions it is used in: the dedup state and the
   * checkpoints accumulate through a run.
   */
  private double sustainedMaximum(
      SinkRuns runs, double burstRate, Sizes sizes, BenchResults results) throws Exception {
    int[] probes = {0};
    Search search =
        search(
            burstRate,
            rate -> {
              int i = probes[0]++;
              LatencyRun run = runs.latency(MODE, "latency-probe-" + i, rate, sizes.span());
              System.out.println("probe " + (i + 1) + ": " + run.describe());
              return run.keptUp();
            });
    String tried =
        search.tried.stream()
            .map(rate -> String.format(Locale.ROOT, "%.0f", rate))
            .collect(Collectors.joining(", "));
    if (search.found) {
      results.note(
          name,
          String.format(
              Locale.ROOT,
              "maximum sustained rate %.0f events/s: the highest probe that kept up (probes at %s"
                  + " events/s: from the backlog's rate down by %.0f %% a step, then one halfway"
                  + " back up; each a %.0f s run after a %.0f s warm-up, as the measured runs) that"
                  + " caught up within %.0f s of its warm-up, with a p95 latency under %.0f ms, a"
                  + " median latency that grew by less than %.0f ms over its span, and every"
                  + " decision drained",
              search.rate,
              tried,
              PROBE_STEP * 100,
              sizes.latencySeconds,
              sizes.warmupSeconds,
              sizes.steadyCapSeconds,
              LatencyRun.KEPT_UP_P95_MS,
              LatencyRun.KEPT_UP_LAG_GROWTH_MS));
      results.measure(name, side() + " max sustained rate", Stats.of(search.rate), "events/s");
    } else {
      results.note(
          name,
          String.format(
              Locale.ROOT,
              "no probe kept up (%s events/s, %.0f s each: p95 over %.0f ms or a growing lag);"
                  + " the latency rates are shares of the lowest probe, so they include whatever"
                  + " made it fall behind",
              tried,
              sizes.latencySeconds,
              LatencyRun.KEPT_UP_P95_MS));
    }
    return search.rate;
  }

  /** The idempotent sink's maximum throughput, events/s (first to last decision). */
  private Stats measureThroughput(
      SinkRuns runs, BenchProfile profile, Sizes sizes, BenchResults results) throws Exception {
    List<SinkEvents.Line> lines = runs.backlog(sizes.throughputEvents);
    for (int i = 0; i < profile.warmups; i++) {
      ThroughputRun run = runs.throughput(MODE, "latency-warmup" + i, lines);
      System.out.println(run.describe("warm-up " + (i + 1) + " (discarded)"));
    }
    double[] firstToLast = new double[profile.repeats];
    double[] submitToLast = new double[profile.repeats];
    for (int i = 0; i < profile.repeats; i++) {
      ThroughputRun run = runs.throughput(MODE, "latency-throughput" + i, lines);
      System.out.println(run.describe("repeat " + (i + 1)));
      firstToLast[i] = run.eventsPerSecondFirstToLast();
      submitToLast[i] = run.eventsPerSecond();
    }
    Stats capacity = Stats.of(firstToLast);
    results.measure(name, side() + " max throughput (first->last decision)", capacity, "events/s");
    results.measure(
        name, side() + " throughput (submit->last decision)", Stats.of(submitToLast), "events/s");
    results.note(
        name,
        String.format(
            Locale.ROOT,
            "maximum throughput: a backlog of %d events (%d accounts) per run, early firing on every"
                + " element, events/s between the first and the last decision record (job"
                + " start-up excluded), %d warm-up run(s) discarded, median of %d",
            lines.size(),
            sizes.accounts,
            profile.warmups,
            profile.repeats));
    return capacity;
  }

  /** One rate: p50, p95 and p99 (medians over the repeats), measurements and the CDF series. */
  private double[] measureLatency(
      SinkRuns runs, String share, double rate, Sizes sizes, BenchResults results)
      throws Exception {
    double[][] percentiles = new double[3][sizes.latencyRepeats];
    double[] sent = new double[sizes.latencyRepeats];
    double[] warmups = new double[sizes.latencyRepeats];
    List<long[]> latencies = new ArrayList<>();
    String label = side() + " @" + share;
    for (int i = 0; i < sizes.latencyRepeats; i++) {
      LatencyRun run =
          runs.latency(MODE, "latency-" + share.replace("%", "pct") + "-" + i, rate, sizes.span());
      System.out.println(run.describe());
      if (run.decisions() == 0) {
        throw new IllegalStateException(label + ": no early decision was measured");
      }
      if (!run.drained()) {
        results.note(
            name,
            label
                + ": decisions were still arriving at the drain cap, the slowest are missing from"
                + " the percentiles");
      }
      percentiles[0][i] = run.recordLatencyMs(0.50);
      percentiles[1][i] = run.recordLatencyMs(0.95);
      percentiles[2][i] = run.recordLatencyMs(0.99);
      sent[i] = run.achievedRate();
      warmups[i] = run.warmupSeconds();
      if (!run.steady()) {
        results.note(
            name,
            String.format(
                Locale.ROOT,
                "%s: run %d had not caught up %.0f s after its warm-up and was measured behind",
                label,
                i + 1,
                sizes.steadyCapSeconds));
      }
      latencies.add(run.recordLatenciesMs());
    }
    String rateText = String.format(Locale.ROOT, "%s, %.0f events/s", label, rate);
    String[] names = {"p50", "p95", "p99"};
    double[] medians = new double[3];
    for (int p = 0; p < 3; p++) {
      Stats stats = Stats.of(percentiles[p]);
      results.measure(name, rateText + " latency " + names[p], stats, "ms");
      medians[p] = stats.median();
    }
    results.measure(name, rateText + " sent", Stats.of(sent), "events/s");
    results.measure(name, rateText + " first decision -> measured span", Stats.of(warmups), "s");
    long[] pooled = pool(latencies);
    for (double[] point : cdf(pooled, CDF_POINTS)) {
      results.point(CDF_CHART, label, point[0], point[1]);
    }
    results.note(
        name,
        String.format(
            Locale.ROOT,
            "%s: %d early decisions over %d run(s) of %.0f s, each measured from when the job had"
                + " caught up after a warm-up of at least %.0f s (the lag, now minus the newest"
                + " ingestion clock seen in a decision, had gone flat: its median over %d s within"
                + " %d ms + 10 %% of the %d s before; %.1f s from the first decision, median; a cold"
                + " job falls seconds behind its first full-rate feed);"
                + " percentiles nearest-rank per run, median over runs",
            rateText,
            pooled.length,
            sizes.latencyRepeats,
            sizes.latencySeconds,
            sizes.warmupSeconds,
            CatchUp.HOLD_MS / 1000,
            CatchUp.TOLERANCE_MS,
            CatchUp.HOLD_MS / 1000,
            Stats.of(warmups).median()));
    return medians;
  }

  /**
   * The empirical distribution of {@code values} at {@code points} evenly spaced fractions: {@code
   * {latency, fraction}} pairs, the nearest-rank latency at each fraction.
   */
  static List<double[]> cdf(long[] values, int points) {
    List<double[]> cdf = new ArrayList<>();
    if (values.length == 0) {
      return cdf;
    }
    long[] sorted = values.clone();
    Arrays.sort(sorted);
    for (int i = 1; i <= points; i++) {
      double fraction = (double) i / points;
      cdf.add(new double[] {Stats.percentile(sorted, fraction), fraction});
    }
    return cdf;
  }

  private static long[] pool(List<long[]> runs) {
    return runs.stream().flatMapToLong(Arrays::stream).sorted().toArray();
  }

  private static String metOrMissed(double value, double target) {
    return Double.isNaN(value) ? "not measured" : value <= target ? "met" : "missed";
  }
}
