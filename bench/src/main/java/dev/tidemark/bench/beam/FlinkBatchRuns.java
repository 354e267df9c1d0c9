package dev.tidemark.bench.beam;

import dev.tidemark.bench.suite.ExtraPipelineArgs;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.beam.runners.flink.EmbeddedFlinkBatchShim;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.MetricNameFilter;
import org.apache.beam.sdk.metrics.MetricQueryResults;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.metrics.MetricsFilter;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Duration;

/**
 * Runs benchmark pipelines in batch on Beam's FlinkRunner translation, one after another on one
 * embedded MiniCluster in this JVM ({@link EmbeddedFlinkBatchShim}), so that no run pays for
 * starting a cluster. A run's wall time is translation, submission and the job. Parts subtract a
 * pipeline that only reads the same input to isolate the step they measure.
 */
final class FlinkBatchRuns implements AutoCloseable {
  /** The namespace of the benchmark's own counters. */
  static final String NAMESPACE = "bench";

  static final Duration TIMEOUT = Duration.standardMinutes(30);

  private final EmbeddedFlinkBatchShim cluster;

  private FlinkBatchRuns(EmbeddedFlinkBatchShim cluster) {
    this.cluster = cluster;
  }

  /** Starts the shared cluster with {@code slots} task slots. */
  static FlinkBatchRuns start(int slots) throws Exception {
    return new FlinkBatchRuns(EmbeddedFlinkBatchShim.start(slots));
  }

  @Override
  public void close() {
    cluster.close();
  }

  /**
   * Batch FlinkRunner options on an embedded cluster, plus {@code extra} flags of {@code type}
   * (registered first, so that they are parsed strictly).
   */
  static <T extends PipelineOptions> T options(Class<T> type, int parallelism, String... extra) {
    PipelineOptionsFactory.register(type);
    List<String> args = new ArrayList<>();
    args.add("--runner=FlinkRunner");
    args.add("--flinkMaster=[local]");
    args.add("--streaming=false");
    args.add("--parallelism=" + parallelism);
    args.addAll(Arrays.asList(extra));
    return PipelineOptionsFactory.fromArgs(ExtraPipelineArgs.append(args))
        .withValidation()
        .as(type);
  }

  /** One finished run. */
  static final class Run {
    final double seconds;
    final long peakHeapBytes;
    final PipelineResult result;

    Run(double seconds, long peakHeapBytes, PipelineResult result) {
      this.seconds = seconds;
      this.peakHeapBytes = peakHeapBytes;
      this.result = result;
    }

    /** A counter of the run, summed over steps; 0 if it never counted. */
    long counter(String namespace, String name) {
      MetricQueryResults metrics =
          result
              .metrics()
              .queryMetrics(
                  MetricsFilter.builder()
                      .addNameFilter(MetricNameFilter.named(namespace, name))
                      .build());
      long sum = 0;
      for (MetricResult<Long> counter : metrics.getCounters()) {
        sum += counter.getAttempted();
      }
      return sum;
    }
  }

  /** Runs {@code pipeline} to the end, timing it and sampling the heap. */
  Run run(Pipeline pipeline) throws Exception {
    try (HeapSampler heap = HeapSampler.start()) {
      long started = System.nanoTime();
      PipelineResult result = cluster.run(pipeline, TIMEOUT);
      double seconds = (System.nanoTime() - started) / 1e9;
      return new Run(seconds, heap.peakBytes(), result);
    }
  }

  /** Counts the elements of {@code collection} into the counter {@code bench/name}. */
  static <T> void count(PCollection<T> collection, String name) {
    collection.apply("Count" + name, ParDo.of(new CountFn<T>(name)));
  }

  /** Counts elements; outputs nothing. */
  static final class CountFn<T> extends DoFn<T, Void> {
    private final Counter counter;

    CountFn(String name) {
      this.counter = Metrics.counter(NAMESPACE, name);
    }

    @ProcessElement
    public void processElement() {
      counter.inc();
    }
  }
}
