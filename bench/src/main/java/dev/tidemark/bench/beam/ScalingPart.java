package dev.tidemark.bench.beam;

import dev.tidemark.bench.suite.BenchPart;
import dev.tidemark.bench.suite.BenchProfile;
import dev.tidemark.bench.suite.BenchResults;
import dev.tidemark.bench.suite.Stats;
import dev.tidemark.pipelines.Outputs;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.TidemarkPipeline;
import dev.tidemark.transforms.values.RawRecord;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.PCollection;

/**
 * Scaling curves: Tidemark's throughput and peak heap against the number of accounts, and its
 * throughput against the window fan-out (window size / period), with the same number of events at
 * every point.
 *
 * <p>Method: the whole Tidemark graph ({@code TidemarkPipeline.expand}: parse, dedup, features,
 * decisions, scoring with the default model; no sinks) in batch on the FlinkRunner's embedded
 * cluster, from the generated stream's raw records held in memory. At every point: a read-only job
 * and the Tidemark job, {@code repeats} times after one warm-up; events/s = records read / (job
 * wall time minus the read-only job's). Peak heap: used heap of the whole JVM (cluster, held input
 * and all) sampled every 100 ms during the Tidemark job, median of the repeats.
 */
public final class ScalingPart implements BenchPart {
  static final String NAME = "beam-scaling";
  static final long SEED = 20261207L;
  static final int PARALLELISM = 1;

  /** The fan-out of the default windows (5 min every 30 s), used on the accounts curve. */
  static final int DEFAULT_FAN_OUT = 10;

  static final int WINDOW_SIZE_SECONDS = 300;

  /** Events per point of the small profile: enough to exercise the graph in about a minute. */
  static final int SMALL_EVENTS = 10_000;

  @Override
  public String name() {
    return NAME;
  }

  /** Events per point: the profile's, at most {@link #SMALL_EVENTS} below the full profile. */
  static int events(BenchProfile profile) {
    return profile.isFull() ? profile.events : Math.min(SMALL_EVENTS, profile.events);
  }

  @Override
  public void run(BenchProfile profile, BenchResults results) throws Exception {
    int events = events(profile);
    int baseAccounts = profile.accounts.get(0);
    results.note(
        NAME,
        String.format(
            Locale.ROOT,
            "method: whole Tidemark graph (parse, dedup, features, decisions, default model; no"
                + " sinks) in batch on the FlinkRunner's embedded MiniCluster, parallelism %d,"
                + " from %d generated events (two hours of event time) held in memory as raw"
                + " records; per point one read-only job and one Tidemark job, %d time(s) after one"
                + " warm-up; events/s = records read / (Tidemark job wall time - read-only job's);"
                + " peak heap = used heap of the whole JVM (cluster, held input, everything),"
                + " sampled every 100 ms, median of the repeats%s",
            PARALLELISM,
            events,
            profile.repeats,
            events < profile.events
                ? "; the small profile uses " + events + " events per point, not " + profile.events
                : ""));
    Map<List<Integer>, Point> measured = new LinkedHashMap<>();
    try (FlinkBatchRuns runs = FlinkBatchRuns.start(PARALLELISM)) {
      boolean warm = false;
      for (int accounts : profile.accounts) {
        Point point = measure(runs, profile, events, accounts, DEFAULT_FAN_OUT, !warm);
        warm = true;
        measured.put(List.of(accounts, DEFAULT_FAN_OUT), point);
        results.measure(
            NAME, "throughput, " + accounts + " accounts", point.eventsPerSecond, "events/s");
        results.measure(NAME, "peak heap, " + accounts + " accounts", point.peakHeapMiB, "MiB");
        results.point(
            "throughput-vs-accounts", "tidemark", accounts, point.eventsPerSecond.median());
        results.point(
            "heap-vs-accounts", "tidemark (whole JVM)", accounts, point.peakHeapMiB.median());
      }
      for (int fanOut : profile.fanOuts) {
        Point point = measured.get(List.of(baseAccounts, fanOut));
        if (point == null) {
          point = measure(runs, profile, events, baseAccounts, fanOut, false);
        }
        results.measure(
            NAME,
            "throughput, fan-out " + fanOut + ", " + baseAccounts + " accounts",
            point.eventsPerSecond,
            "events/s");
        results.point("throughput-vs-fanout", "tidemark", fanOut, point.eventsPerSecond.median());
      }
    }
    int largest = profile.accounts.get(profile.accounts.size() - 1);
    double ratio =
        measured.get(List.of(largest, DEFAULT_FAN_OUT)).eventsPerSecond.median()
            / measured.get(List.of(baseAccounts, DEFAULT_FAN_OUT)).eventsPerSecond.median();
    if (largest >= 1_000_000 && baseAccounts == 1_000) {
      results.throughput1MVs1kAccounts(ratio);
    } else {
      results.throughput1MVs1kAccounts(null);
      results.note(
          NAME,
          String.format(
              Locale.ROOT,
              "scaling.throughput1MVs1kAccounts is null: this profile's accounts go from %d to %d,"
                  + " not 1k to 1M (events/s at %d accounts / at %d = %.3f)",
              baseAccounts,
              largest,
              largest,
              baseAccounts,
              ratio));
    }
  }

  /** One point of the curves. */
  static final class Point {
    final Stats eventsPerSecond;
    final Stats peakHeapMiB;

    Point(Stats eventsPerSecond, Stats peakHeapMiB) {
      this.eventsPerSecond = eventsPerSecond;
      this.peakHeapMiB = peakHeapMiB;
    }
  }

  private static Point measure(
      FlinkBatchRuns runs,
      BenchProfile profile,
      int events,
      int accounts,
      int fanOut,
      boolean warmUp)
      throws Exception {
    // Only the raw records stay reachable: the parsed events the generator also builds (as large
    // again) would otherwise stay live in this frame and take heap from the measured job.
    List<RawRecord> raw =
        BenchInputs.generate(BenchInputs.config(events, accounts, SEED + accounts)).records;
    List<Double> rates = new ArrayList<>();
    List<Double> heaps = new ArrayList<>();
    try (BenchInputs.Held<RawRecord> records =
        BenchInputs.hold(raw, RawRecord.RawRecordCoder.of())) {
      int rounds = (warmUp ? profile.warmups : 0) + profile.repeats;
      for (int round = 0; round < rounds; round++) {
        System.gc(); // each job starts from a collected heap, so peaks are comparable
        FlinkBatchRuns.Run read = runs.run(pipeline(records, fanOut, false));
        System.gc();
        FlinkBatchRuns.Run tidemark = runs.run(pipeline(records, fanOut, true));
        long decisions = tidemark.counter(FlinkBatchRuns.NAMESPACE, "Decisions");
        if (decisions == 0) {
          throw new IllegalStateException("the Tidemark job made no decisions");
        }
        if (round >= rounds - profile.repeats) {
          double net = tidemark.seconds - read.seconds;
          rates.add(net > 0 ? records.size() / net : Double.NaN);
          heaps.add(tidemark.peakHeapBytes / (1024.0 * 1024.0));
        }
      }
    }
    return new Point(Stats.of(toArray(rates)), Stats.of(toArray(heaps)));
  }

  private static Pipeline pipeline(
      BenchInputs.Held<RawRecord> records, int fanOut, boolean tidemark) {
    TidemarkOptions options =
        FlinkBatchRuns.options(
            TidemarkOptions.class,
            PARALLELISM,
            "--windowSize=PT" + WINDOW_SIZE_SECONDS + "S",
            "--windowPeriod=PT" + WINDOW_SIZE_SECONDS / fanOut + "S");
    Pipeline pipeline = Pipeline.create(options);
    PCollection<RawRecord> raw =
        pipeline.apply(
            "ReadHeld", records.read(PARALLELISM, r -> BoundedWindow.TIMESTAMP_MIN_VALUE));
    FlinkBatchRuns.count(raw, "Read");
    if (tidemark) {
      Outputs outputs = TidemarkPipeline.expand(raw, options);
      FlinkBatchRuns.count(outputs.decisions, "Decisions");
      FlinkBatchRuns.count(outputs.deadLetters, "DeadLetters");
      FlinkBatchRuns.count(outputs.duplicates, "Duplicates");
      FlinkBatchRuns.count(outputs.tooLate, "TooLate");
    }
    return pipeline;
  }

  private static double[] toArray(List<Double> values) {
    return values.stream().mapToDouble(Double::doubleValue).toArray();
  }
}
