package dev.tidemark.transforms.util;

import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Distribution;
import org.apache.beam.sdk.metrics.Gauge;
import org.apache.beam.sdk.metrics.Metrics;

/**
 * The names of Tidemark's Beam metrics, one place for the transforms that count and the summary
 * that reads them. All live in namespace {@value #NAMESPACE}. docs/operations.md says what each
 * means, what a healthy value looks like and what to alert on.
 */
public final class TidemarkMetrics {
  public static final String NAMESPACE = "tidemark";

  public static final String READ = "read";
  public static final String VALID = "valid";
  public static final String DEAD_LETTERS = "deadLetters";

  /** Prefix of the per-reason dead-letter counters, e.g. {@code deadLetters.invalid_json}. */
  public static final String DEAD_LETTERS_PREFIX = "deadLetters.";

  /**
   * Dead letters whose payload {@link dev.tidemark.transforms.BoundDeadLetters} cut to the limit.
   * Not a reason: outside the accounting identity (its name must not start with {@link
   * #DEAD_LETTERS_PREFIX}).
   */
  public static final String TRUNCATED_DEAD_LETTERS = "truncatedDeadLetters";

  public static final String UNIQUE = "unique";
  public static final String DUPLICATES = "duplicates";
  public static final String CONFLICTS = "conflicts";

  public static final String WINDOWED = "windowed";
  public static final String TOO_LATE = "tooLate";
  public static final String PARTIALLY_LATE = "partiallyLate";

  public static final String DECISIONS = "decisions";

  /**
   * Empty first panes {@link dev.tidemark.transforms.ComputeFeatures} dropped: windows fired again
   * by a runner after their state was cleared (seen on the FlinkRunner). Not records: outside the
   * accounting identity.
   */
  public static final String EMPTY_FIRST_PANES = "emptyFirstPanesDropped";

  /** Prefix of the per-timing decision counters, e.g. {@code decisions.ON_TIME}. */
  public static final String DECISIONS_PREFIX = "decisions.";

  /**
   * Prefix of the counters of decisions that revise an earlier edition: {@code corrections.refined}
   * (the verdict stayed) and {@code corrections.reversed} (the verdict changed).
   */
  public static final String CORRECTIONS_PREFIX = "corrections.";

  /**
   * A gauge: the end of the latest window whose on-time pane fired, in epoch milliseconds. An
   * on-time pane fires once the watermark passes its window's end, so the input watermark of the
   * windowing step is at least this; progress lines show it.
   */
  public static final String ON_TIME_WINDOW_END = "onTimeWindowEndMillis";

  /**
   * A counter that rises when the dedup step stores an identity and falls when the identity's state
   * expires: the identities held in state right now (summed over workers), which is what the dedup
   * state's size grows with.
   */
  public static final String LIVE_IDENTITIES = "dedup.liveIdentities";

  /**
   * Prefixed to the counters of the labels stream, which count as the events' do: {@code
   * labels.read}, {@code labels.valid}, {@code labels.deadLetters}, {@code labels.unique}, {@code
   * labels.duplicates}, {@code labels.conflicts}, and, once judged, {@code labels.matched}, {@code
   * labels.unmatched}, {@code labels.withoutKeyOrTime}, {@code labels.evaluations}.
   */
  public static final String LABELS_PREFIX = "labels.";

  /**
   * Prefix of the drift alarm counters, one per role, model version and test: {@code
   * drift.alarms/deciding/tidemark-fraud-xgb:1/score} ({@code score} or {@code error}).
   */
  public static final String DRIFT_ALARMS_PREFIX = "drift.alarms/";

  /**
   * A distribution of each drift alarm's time ({@link
   * dev.tidemark.transforms.values.DriftAlarm#at()}) in epoch milliseconds: its minimum is the
   * first alarm's.
   */
  public static final String DRIFT_ALARM_TIME = "drift.alarmTimeMillis";

  public static final String LABELS_MATCHED = LABELS_PREFIX + "matched";
  public static final String LABELS_UNMATCHED = LABELS_PREFIX + "unmatched";
  public static final String LABELS_WITHOUT_KEY_OR_TIME = LABELS_PREFIX + "withoutKeyOrTime";
  public static final String LABELS_EVALUATIONS = LABELS_PREFIX + "evaluations";

  /**
   * Counters of the evaluations per model version, named {@code
   * labels.byModel/<role>/<name>:<version>/<figure>} with role {@code deciding} or {@code shadow}
   * and figure {@code labels}, {@code positives}, {@code flagged} or {@code truePositives}.
   */
  public static final String EVALUATIONS_BY_MODEL_PREFIX = LABELS_PREFIX + "byModel/";

  /**
   * A counter that rises with a window's first edition and falls when the window expires: windows
   * that fired and can still be revised (accumulating panes only).
   */
  public static final String OPEN_WINDOWS = "windows.open";

  /**
   * A distribution of ingestion time minus event time of each valid event, in milliseconds: how
   * late the source delivers. With a gauge of the same name plus {@value #BUNDLE_MAX}.
   */
  public static final String INGESTION_LAG = "lag.ingestionMinusEventMillis";

  /**
   * A distribution of decision time minus the ingestion time of the pane's latest event, in
   * milliseconds: how long an arrival takes to become a decision. With a gauge of the same name
   * plus {@value #BUNDLE_MAX}.
   */
  public static final String DECISION_LAG = "lag.decisionMinusIngestionMillis";

  /**
   * Suffix of the gauge beside each lag distribution: the largest value of the latest bundle.
   * Flink's metric reporters (Prometheus among them) export Beam's counters and gauges, not its
   * distributions.
   */
  public static final String BUNDLE_MAX = ".bundleMax";

  /**
   * A gauge: processing time minus the too-late gate's bound when a probe last moved it, in
   * milliseconds. The bound trails the gate's input watermark by less than a window period, so this
   * is how far the watermark into the windowing step trails the wall clock.
   */
  public static final String GATE_WATERMARK_LAG = "watermarkLag.gateMillis";

  /**
   * A gauge: processing time minus the end of the latest window whose on-time pane fired, in
   * milliseconds: how far the windowing step's output trails the wall clock.
   */
  public static final String WINDOWS_WATERMARK_LAG = "watermarkLag.windowsMillis";

  /**
   * Names of the counters Beam's runners increment when they drop data behind the watermark: the
   * GroupByKey late-data filter and the stateful ParDo runner.
   */
  public static final String RUNNER_DROPPED_DUE_TO_LATENESS = "droppedDueToLateness";

  public static final String RUNNER_STATEFUL_PARDO_DROPPED = "StatefulParDoDropped";

  private TidemarkMetrics() {}

  /** A gauge in namespace {@value #NAMESPACE}. */
  public static Gauge gauge(String name) {
    return Metrics.gauge(NAMESPACE, name);
  }

  /** A counter in namespace {@value #NAMESPACE}. */
  public static Counter counter(String name) {
    return Metrics.counter(NAMESPACE, name);
  }

  /** A distribution in namespace {@value #NAMESPACE}. */
  public static Distribution distribution(String name) {
    return Metrics.distribution(NAMESPACE, name);
  }
}
