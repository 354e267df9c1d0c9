package org.apache.beam.runners.flink;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.junit.Assert.assertThrows;

import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.joda.time.Duration;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * A streaming job that fails for good is reported, with its cause, to whoever waits on it, instead
 * of being waited on until a timeout: the live demo and the benchmarks poll {@code checkRunning}.
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
}
