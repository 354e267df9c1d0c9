package dev.tidemark.pipelines;

import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.DuplicateRecord;
import dev.tidemark.transforms.values.TooLateRecord;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.metrics.MetricNameFilter;
import org.apache.beam.sdk.metrics.MetricsFilter;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PInput;
import org.apache.beam.sdk.values.POutput;
import org.apache.beam.sdk.values.PValue;
import org.apache.beam.sdk.values.TupleTag;

/**
 * What {@link ScoreCloudEvents} returns: its four outputs, and the counters that account for every
 * input record. Each sink names the outputs with {@link #NAMES}: the file sink's directories, the
 * Kafka sink's topic keys, the summary's lines.
 *
 * <p>The counters are Beam metrics in namespace {@value TidemarkMetrics#NAMESPACE} ({@link
 * TidemarkMetrics} names each); {@link #counters()} selects them from a finished run's {@code
 * PipelineResult.metrics()}.
 */
public final class Outputs implements POutput {
  /** The outputs' names, in this order: decisions, dead letters, duplicates, too-late records. */
  public static final List<String> NAMES =
      List.of("decisions", "dead-letters", "duplicates", "too-late");

  public final PCollection<Decision> decisions;
  public final PCollection<DeadLetter> deadLetters;
  public final PCollection<DuplicateRecord> duplicates;
  public final PCollection<TooLateRecord> tooLate;

  public Outputs(
      PCollection<Decision> decisions,
      PCollection<DeadLetter> deadLetters,
      PCollection<DuplicateRecord> duplicates,
      PCollection<TooLateRecord> tooLate) {
    this.decisions = decisions;
    this.deadLetters = deadLetters;
    this.duplicates = duplicates;
    this.tooLate = tooLate;
  }

  /**
   * The graph's counters in a run's metrics: {@code
   * result.metrics().queryMetrics(outputs.counters())} gives {@code read}, {@code valid}, {@code
   * deadLetters}, {@code unique}, {@code duplicates}, {@code windowed}, {@code tooLate}, {@code
   * decisions} and the rest of {@link TidemarkMetrics}, by step.
   */
  public MetricsFilter counters() {
    return MetricsFilter.builder()
        .addNameFilter(MetricNameFilter.inNamespace(TidemarkMetrics.NAMESPACE))
        .build();
  }

  @Override
  public Pipeline getPipeline() {
    return decisions.getPipeline();
  }

  @Override
  public Map<TupleTag<?>, PValue> expand() {
    Map<TupleTag<?>, PValue> outputs = new LinkedHashMap<>();
    outputs.put(new TupleTag<Decision>(NAMES.get(0)), decisions);
    outputs.put(new TupleTag<DeadLetter>(NAMES.get(1)), deadLetters);
    outputs.put(new TupleTag<DuplicateRecord>(NAMES.get(2)), duplicates);
    outputs.put(new TupleTag<TooLateRecord>(NAMES.get(3)), tooLate);
    return outputs;
  }

  @Override
  public void finishSpecifyingOutput(
      String transformName, PInput input, PTransform<?, ?> transform) {}
}
