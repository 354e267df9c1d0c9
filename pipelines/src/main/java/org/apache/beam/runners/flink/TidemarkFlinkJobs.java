package org.apache.beam.runners.flink;

import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.MetricsEnvironment;
import org.apache.beam.sdk.util.construction.SplittableParDo;
import org.apache.flink.core.execution.JobClient;

/**
 * Starts a streaming Beam pipeline on Flink and returns while it runs, also on the embedded
 * MiniCluster ({@code --flinkMaster=[local]}), where Beam's FlinkRunner ignores {@code
 * --attachedMode=false} and blocks until the job ends. The live demo, the exactly-once tests and
 * the benchmarks need a running job's metrics and a way to cancel it; the returned result gives
 * both.
 *
 * <p>It lives in Beam's package because the pieces FlinkRunner.run uses are package-private; it
 * does what FlinkRunner.run does, with {@code executeAsync} instead of {@code execute}.
 */
public final class TidemarkFlinkJobs {
  private TidemarkFlinkJobs() {}

  /** Translates and submits {@code pipeline}; the result reports live metrics and can cancel. */
  public static PipelineResult start(Pipeline pipeline) throws Exception {
    FlinkPipelineOptions options = pipeline.getOptions().as(FlinkPipelineOptions.class);
    FlinkRunner.fromOptions(options);
    SplittableParDo.convertReadBasedSplittableDoFnsToPrimitiveReadsIfNecessary(pipeline);
    MetricsEnvironment.setMetricsSupported(true);
    FlinkPipelineExecutionEnvironment environment = new FlinkPipelineExecutionEnvironment(options);
    environment.translate(pipeline);
    JobClient client =
        environment.getStreamExecutionEnvironment().executeAsync(options.getJobName());
    return new FlinkDetachedRunnerResult(client, 1);
  }
}
