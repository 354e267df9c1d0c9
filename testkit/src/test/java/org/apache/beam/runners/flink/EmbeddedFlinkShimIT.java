package org.apache.beam.runners.flink;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.MetricNameFilter;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.metrics.MetricsFilter;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.util.ReleaseInfo;
import org.joda.time.Duration;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The shims that reach into the FlinkRunner's package-private translation, held to the Beam release
 * they copy: a Beam upgrade fails here first, by name, instead of somewhere in the demo or bench.
 *
 * <p>A streaming job that fails for good is reported, with its cause, to whoever waits on it,
 * instead of being waited on until a timeout: the live demo and the benchmarks poll {@code
 * checkRunning}.
 */
@RunWith(JUnit4.class)
public class EmbeddedFlinkShimIT {

  /** Fails on element 5. */
  static final class FailFn extends DoFn<Long, Long> {
    @ProcessElement
    public void processElement(@Element Long n, OutputReceiver<Long> out) {
      if (n == 5) {
        throw new IllegalStateException("element 5 is poison");
      }
      out.output(n);
    }
  }

  @Test
  public void checkRunningThrowsWithTheCauseOnceTheJobHasFailed() throws Exception {
    FlinkPipelineOptions options =
        PipelineOptionsFactory.fromArgs(
                "--runner=FlinkRunner",
                "--flinkMaster=[local]",
                "--streaming=true",
                "--parallelism=1",
                "--numberOfExecutionRetries=1",
                "--executionRetryDelay=100")
            .as(FlinkPipelineOptions.class);
    Pipeline pipeline = Pipeline.create(options);
    pipeline
        .apply(GenerateSequence.from(0).withRate(10, Duration.standardSeconds(1)))
        .apply(ParDo.of(new FailFn()));
    EmbeddedFlinkJobsShim.Job job = EmbeddedFlinkJobsShim.start(pipeline);
    try {
      long deadline = System.nanoTime() + 120_000_000_000L;
      IllegalStateException failure =
          assertThrows(
              IllegalStateException.class,
              () -> {
                while (System.nanoTime() < deadline) {
                  job.checkRunning();
                  Thread.sleep(200);
                }
              });
      assertThat(failure.getMessage(), containsString("FAILED"));
      Throwable root = failure;
      while (root.getCause() != null && root.getCause() != root) {
        root = root.getCause();
      }
      assertThat(root.getMessage(), containsString("element 5 is poison"));
    } finally {
      // Stopping a job that already failed closes its cluster without cancelling it.
      job.stop(Duration.standardMinutes(1));
    }
  }

  /** The Beam release whose {@code FlinkRunner.run} the shims translate as. */
  static final String SHIMMED_BEAM_VERSION = "2.70.0";

  @Test
  public void theShimsMatchTheBeamReleaseOnTheClassPath() {
    assertThat(
        "EmbeddedFlinkJobsShim and EmbeddedFlinkBatchShim copy FlinkRunner.run of Beam "
            + SHIMMED_BEAM_VERSION
            + "; after an upgrade, re-read FlinkRunner.run and FlinkPipelineExecutionEnvironment"
            + " of the new release, update the shims, then this constant",
        ReleaseInfo.getReleaseInfo().getVersion(),
        is(SHIMMED_BEAM_VERSION));
  }

  /** Counts what it sees in a Beam counter, which the batch shim must return. */
  static final class CountFn extends DoFn<Long, Long> {
    private final Counter seen = Metrics.counter("shim", "seen");

    @ProcessElement
    public void processElement(@Element Long n, OutputReceiver<Long> out) {
      seen.inc();
      out.output(n);
    }
  }

  @Test
  public void batchShimRunsAPipelineToItsEndAndReturnsItsCounters() throws Exception {
    FlinkPipelineOptions options =
        PipelineOptionsFactory.fromArgs(
                "--runner=FlinkRunner", "--flinkMaster=[local]", "--streaming=false")
            .as(FlinkPipelineOptions.class);
    Pipeline pipeline = Pipeline.create(options);
    pipeline.apply(GenerateSequence.from(0).to(100)).apply(ParDo.of(new CountFn()));
    try (EmbeddedFlinkBatchShim cluster = EmbeddedFlinkBatchShim.start(1)) {
      PipelineResult result = cluster.run(pipeline, Duration.standardMinutes(2));
      assertThat(result.getState(), is(PipelineResult.State.DONE));
      long seen = 0;
      for (MetricResult<Long> counter :
          result
              .metrics()
              .queryMetrics(
                  MetricsFilter.builder()
                      .addNameFilter(MetricNameFilter.named("shim", "seen"))
                      .build())
              .getCounters()) {
        seen += counter.getAttempted();
      }
      assertThat(seen, is(100L));
    }
  }
}
