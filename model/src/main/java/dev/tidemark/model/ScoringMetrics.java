package dev.tidemark.model;

import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Distribution;
import org.apache.beam.sdk.metrics.Metrics;

/**
 * The Beam metrics of {@link ScoreFeatures}, named like Beam Python's {@code RunInference} so the
 * same dashboards read both, in namespace {@value #NAMESPACE}.
 */
public final class ScoringMetrics {
  public static final String NAMESPACE = "BeamML_ScoreFeatures";

  /**
   * Rows the model scored (a row retried alone after a failed batch counts once, if scored), rows
   * that took the answer of an equal row of their batch included.
   */
  public static final String NUM_INFERENCES = "num_inferences";

  /**
   * Rows not sent to the engine because an equal row of the same batch was (Tidemark's own): they
   * share its answer. {@code num_inferences} minus this is what the engine computed.
   */
  public static final String NUM_REPEATED_ROWS = "num_repeated_rows";

  /** Engine calls that threw (a whole batch, or a single-row retry). */
  public static final String FAILED_BATCHES = "failed_batches_counter";

  /** Rows sent to {@code failures()} (non-finite features, or the engine failed on the row). */
  public static final String NUM_FAILED_ROWS = "num_failed_inferences";

  /** Rows per engine call (distinct rows: equal rows of a batch are sent once). */
  public static final String BATCH_SIZE = "inference_request_batch_size";

  /** Wall time of one engine call (translate, predict, read back), microseconds. */
  public static final String BATCH_LATENCY_MICROS = "inference_batch_latency_micro_secs";

  /** Time to fetch, check and load the model, milliseconds; once per load per JVM. */
  public static final String LOAD_LATENCY_MILLIS = "load_model_latency_milli_secs";

  /** Size of the model file, bytes; once per load per JVM. */
  public static final String MODEL_BYTE_SIZE = "model_byte_size";

  /**
   * Model files of a watched pattern that were refused (no sidecar, a bad sidecar, features other
   * than the spec's features, or the engine could not load them); each file once per change.
   */
  public static final String MODEL_REFUSED = "model_refused";

  /** Times a scoring DoFn instance moved to another model of a watched pattern. */
  public static final String MODEL_SWAPS = "model_swaps";

  /**
   * Per model version: the distribution of scores, in millionths (Beam distributions hold
   * integers), named {@code score_millionths/<name>:<version>}.
   */
  public static final String SCORE_MILLIONTHS = "score_millionths";

  /** Per model version and tenth of [0, 1]: {@code score_decile_<0..9>/<name>:<version>}. */
  public static final String SCORE_DECILE = "score_decile_";

  /**
   * Per model version and decision label: {@code decisions_<label>/<name>:<version>}, the label
   * being the spec's ({@code review} or {@code allow} for payments, {@code challenge} or {@code
   * allow} for logins).
   */
  public static final String DECISIONS_PREFIX = "decisions_";

  /** {@link #DECISIONS_PREFIX} of payments' label at or above the threshold, {@code review}. */
  public static final String DECISIONS_REVIEW = decisions("review");

  /** {@link #DECISIONS_PREFIX} of payments' label below the threshold, {@code allow}. */
  public static final String DECISIONS_ALLOW = decisions("allow");

  /** The name of the per-version count of decisions labelled {@code label}. */
  public static String decisions(String label) {
    return DECISIONS_PREFIX + label;
  }

  /** The prefix of the shadow model's metrics: {@code shadow_num_inferences} and so on. */
  public static final String SHADOW_PREFIX = "shadow_";

  /** The name of a per-version metric: {@code <metric>/<name>:<version>}. */
  public static String perVersion(String metric, String modelName, String modelVersion) {
    return metric + "/" + modelName + ":" + modelVersion;
  }

  private final String prefix;
  final Counter inferences;
  final Counter repeatedRows;
  final Counter failedBatches;
  final Counter failedRows;
  final Distribution batchSize;
  final Distribution batchLatencyMicros;
  final Distribution loadLatencyMillis;
  final Distribution modelByteSize;

  ScoringMetrics() {
    this("");
  }

  /** The metrics with every name prefixed: {@link #SHADOW_PREFIX} for the shadow model. */
  ScoringMetrics(String prefix) {
    this.prefix = prefix;
    inferences = Metrics.counter(NAMESPACE, prefix + NUM_INFERENCES);
    repeatedRows = Metrics.counter(NAMESPACE, prefix + NUM_REPEATED_ROWS);
    failedBatches = Metrics.counter(NAMESPACE, prefix + FAILED_BATCHES);
    failedRows = Metrics.counter(NAMESPACE, prefix + NUM_FAILED_ROWS);
    batchSize = Metrics.distribution(NAMESPACE, prefix + BATCH_SIZE);
    batchLatencyMicros = Metrics.distribution(NAMESPACE, prefix + BATCH_LATENCY_MICROS);
    loadLatencyMillis = Metrics.distribution(NAMESPACE, prefix + LOAD_LATENCY_MILLIS);
    modelByteSize = Metrics.distribution(NAMESPACE, prefix + MODEL_BYTE_SIZE);
  }

  /** The score metrics of one model version; made once per loaded model. */
  final class PerVersion {
    private final Distribution scores;
    private final Counter[] deciles = new Counter[10];
    private final Counter atOrAbove;
    private final Counter below;

    /** The metrics of one version, counting decisions under the labels they get. */
    PerVersion(String modelName, String modelVersion, String atOrAboveLabel, String belowLabel) {
      scores =
          Metrics.distribution(
              NAMESPACE, prefix + perVersion(SCORE_MILLIONTHS, modelName, modelVersion));
      for (int d = 0; d < deciles.length; d++) {
        deciles[d] =
            Metrics.counter(
                NAMESPACE, prefix + perVersion(SCORE_DECILE + d, modelName, modelVersion));
      }
      atOrAbove =
          Metrics.counter(
              NAMESPACE, prefix + perVersion(decisions(atOrAboveLabel), modelName, modelVersion));
      below =
          Metrics.counter(
              NAMESPACE, prefix + perVersion(decisions(belowLabel), modelName, modelVersion));
    }

    void record(double score, boolean isAtOrAbove) {
      scores.update(Math.round(score * 1_000_000));
      deciles[Math.max(0, Math.min(9, (int) Math.floor(score * 10)))].inc();
      (isAtOrAbove ? atOrAbove : below).inc();
    }
  }
}
