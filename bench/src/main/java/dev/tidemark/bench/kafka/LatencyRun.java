package dev.tidemark.bench.kafka;

import dev.tidemark.bench.suite.Stats;
import dev.tidemark.pipelines.KafkaOptions.KafkaSinkMode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One latency run at a fixed rate ({@link SinkRuns#latency}): for every committed early decision of
 * the measured span whose ingestion clock is its trigger's ({@link Pane#triggeredByLatest}), the
 * record latency (its Kafka timestamp minus that clock) and the visibility latency (when a {@code
 * read_committed} consumer first saw it minus the same clock), the record latency also split at the
 * decision's wall clocks.
 */
public final class LatencyRun {
  /**
   * The rates of the latency runs, as shares of the sustained rate (or of the slower sink's
   * capacity): below it, so that a job keeps up and its latency is the sink's, not a backlog's.
   */
  public static final List<Double> RATE_SHARES = List.of(0.5, 0.9);

  /** {@link #keptUp}: the most the median latency may grow over a measured span. */
  public static final double KEPT_UP_LAG_GROWTH_MS = 100;

  /** {@link #keptUp}: the highest p95 latency of a job that keeps up. */
  public static final double KEPT_UP_P95_MS = 1000;

  final KafkaSinkMode mode;
  final double rate;
  final double achievedRate;
  final long[] recordLatencies;
  final long[] visibilityLatencies;
  final Map<String, Integer> paneTimings;

  /**
   * The record latency split at the decision's wall clocks, per measured decision, sorted: event
   * record → pane fired ({@code clocks.processingTime}), → scored ({@code clocks.decisionTime}), →
   * decision record timestamp.
   */
  final long[][] stages;

  /**
   * Early decisions of the measured span left out: triggered by an out-of-order event, so their
   * clock is another event's ({@link Pane#triggeredByLatest}).
   */
  final int unattributable;

  /**
   * Median latency of the last quarter of the measured span minus that of the first quarter, ms
   * (NaN without decisions in both): a job that does not keep up with the rate falls further
   * behind, and this grows with the span.
   */
  final double lagGrowthMs;

  /** False when decisions were still arriving at the drain cap: the latencies miss the slowest. */
  final boolean drained;

  /**
   * From the first decision to the start of the measured span, ms: the warm-up, longer while the
   * job was still catching up (a cold JVM falls seconds behind its first full-rate feed).
   */
  final long warmupMillis;

  /**
   * Whether the job caught up before the measured span ({@link CatchUp}); false: it was measured at
   * the span's steady cap while still behind.
   */
  final boolean steady;

  LatencyRun(
      KafkaSinkMode mode,
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
    this.mode = mode;
    this.rate = rate;
    this.achievedRate = achievedRate;
    this.recordLatencies = recordLatencies;
    this.visibilityLatencies = visibilityLatencies;
    this.paneTimings = paneTimings;
    this.stages = stages;
    this.unattributable = unattributable;
    this.lagGrowthMs = lagGrowthMs;
    this.drained = drained;
    this.warmupMillis = warmupMillis;
    this.steady = steady;
  }

  /**
   * The run's figures from the decisions the watcher saw: those whose ingestion clock falls in the
   * measured span {@code [feed.measureFrom, feed.measureTo)}.
   */
  static LatencyRun of(
      KafkaSinkMode mode, double rate, List<Pane> panes, FixedRateFeed feed, boolean drained) {
    boolean[] attributable = Pane.triggeredByLatest(panes);
    List<Long> record = new ArrayList<>();
    List<Long> visible = new ArrayList<>();
    List<List<Long>> stages = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
    Map<String, Integer> timings = new LinkedHashMap<>();
    int unattributable = 0;
    long from = feed.measureFrom;
    long to = feed.measureTo;
    long quarter = Math.max(1, (to - from) / 4);
    List<Long> firstQuarter = new ArrayList<>();
    List<Long> lastQuarter = new ArrayList<>();
    for (int i = 0; i < panes.size(); i++) {
      Pane decision = panes.get(i);
      long ingestion = decision.ingestion;
      if (ingestion < from || ingestion >= to) {
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
      long latency = decision.timestamp - ingestion;
      record.add(latency);
      visible.add(decision.seenAt - ingestion);
      if (ingestion < from + quarter) {
        firstQuarter.add(latency);
      } else if (ingestion >= to - quarter) {
        lastQuarter.add(latency);
      }
      stages.get(0).add(decision.fired - ingestion);
      stages.get(1).add(decision.scored - decision.fired);
      stages.get(2).add(decision.timestamp - decision.scored);
    }
    double achieved = feed.measuredSent * 1000.0 / Math.max(1, to - from);
    return new LatencyRun(
        mode,
        rate,
        achieved,
        sorted(record),
        sorted(visible),
        timings,
        stages.stream().map(LatencyRun::sorted).toArray(long[][]::new),
        unattributable,
        Stats.percentile(sorted(lastQuarter), 0.5) - Stats.percentile(sorted(firstQuarter), 0.5),
        drained,
        from - feed.firstDecision,
        feed.steady);
  }

  private static long[] sorted(List<Long> values) {
    long[] array = values.stream().mapToLong(Long::longValue).toArray();
    Arrays.sort(array);
    return array;
  }

  /**
   * The rates of latency runs at {@code shares} of {@code capacity} (events/s), at least 1 each.
   */
  public static List<Double> ratesAt(double capacity, List<Double> shares) {
    List<Double> rates = new ArrayList<>();
    for (double share : shares) {
      rates.add((double) Math.max(1, Math.round(share * capacity)));
    }
    return rates;
  }

  /** A share as the measurements name it: {@code 90%}. */
  public static String shareLabel(double share) {
    return Math.round(share * 100) + "%";
  }

  public KafkaSinkMode mode() {
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
   * #KEPT_UP_LAG_GROWTH_MS} ms from the first quarter of the measured span to the last (no growing
   * one).
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
   * Nearest-rank percentile of the record latencies (decision record timestamp minus the triggering
   * event's record timestamp), ms; NaN when none was measured.
   */
  public double recordLatencyMs(double quantile) {
    return Stats.percentile(recordLatencies, quantile);
  }

  /**
   * Nearest-rank percentile of the visibility latencies (when a {@code read_committed} consumer
   * first saw the decision minus the triggering event's record timestamp), ms; NaN when none.
   */
  public double visibleLatencyMs(double quantile) {
    return Stats.percentile(visibilityLatencies, quantile);
  }

  /** The record latencies of the measured early decisions, ms, sorted ascending (a copy). */
  public long[] recordLatenciesMs() {
    return recordLatencies.clone();
  }

  /** The decisions of the measured span by pane timing ({@code EARLY}, {@code ON_TIME}, ...). */
  public Map<String, Integer> paneTimings() {
    return paneTimings;
  }

  /** The progress line of this run. */
  public String describe() {
    return String.format(
        Locale.ROOT,
        "latency %s at %.0f events/s: %s after %.1f s, %d early decisions measured (%d"
            + " triggered by out-of-order events left out), p50 %.1f ms, p99 %.1f ms, visible p50"
            + " %.1f ms, lag growth %.0f ms (%s);"
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
        visibleLatencyMs(0.5),
        lagGrowthMs,
        keptUp() ? "kept up" : "fell behind",
        Stats.percentile(stages[0], 0.5),
        Stats.percentile(stages[0], 0.95),
        Stats.percentile(stages[1], 0.5),
        Stats.percentile(stages[1], 0.95),
        Stats.percentile(stages[2], 0.5),
        Stats.percentile(stages[2], 0.95));
  }
}
