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

  final Counter inferences = Metrics.counter(NAMESPACE, NUM_INFERENCES);
  final Counter repeatedRows = Metrics.counter(NAMESPACE, NUM_REPEATED_ROWS);
  final Counter failedBatches = Metrics.counter(NAMESPACE, FAILED_BATCHES);
  final Counter failedRows = Metrics.counter(NAMESPACE, NUM_FAILED_ROWS);
  final Distribution batchSize = Metrics.distribution(NAMESPACE, BATCH_SIZE);
  final Distribution batchLatencyMicros = Metrics.distribution(NAMESPACE, BATCH_LATENCY_MICROS);
  final Distribution loadLatencyMillis = Metrics.distribution(NAMESPACE, LOAD_LATENCY_MILLIS);
  final Distribution modelByteSize = Metrics.distribution(NAMESPACE, MODEL_BYTE_SIZE);

  ScoringMetrics() {}
}
