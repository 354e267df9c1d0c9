package org.apache.beam.runners.flink;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.MetricsEnvironment;
import org.apache.beam.sdk.util.construction.SplittableParDo;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.Plan;
import org.apache.flink.client.FlinkPipelineTranslationUtil;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.util.OptionalFailure;
import org.apache.flink.util.SerializedValue;
import org.joda.time.Duration;

/**
 * Runs batch Beam pipelines one after another on one embedded Flink MiniCluster that stays up
 * between them, for benchmarks: Beam's FlinkRunner with {@code --flinkMaster=[local]} starts and
 * stops a cluster for every batch job, which costs seconds and varies more than the jobs being
 * compared. Each pipeline is translated exactly as FlinkRunner.run translates a batch pipeline
 * (Beam's DataSet translation), then its job graph is submitted to the shared cluster; {@link #run}
 * blocks until the job ends and returns its counters.
 *
 * <p>It lives in Beam's package because the translation entry points are package-private (as for
 * {@link EmbeddedFlinkJobsShim}).
 */
public final class EmbeddedFlinkBatchShim implements AutoCloseable {
  private final MiniCluster cluster;

  private EmbeddedFlinkBatchShim(MiniCluster cluster) {
    this.cluster = cluster;
  }

  /** Starts an embedded cluster with one task manager of {@code slots} slots. */
  public static EmbeddedFlinkBatchShim start(int slots) throws Exception {
    Configuration configuration = new Configuration();
    // Any free port for the REST endpoint: 8081 may be taken (another cluster, another test).
    configuration.set(RestOptions.BIND_PORT, "0");
    MiniCluster cluster =
        new MiniCluster(
            new MiniClusterConfiguration.Builder()
                .setConfiguration(configuration)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(Math.max(1, slots))
                .build());
    cluster.start();
    return new EmbeddedFlinkBatchShim(cluster);
  }

  /**
   * Translates the batch {@code pipeline}, runs it on this cluster to its end and returns its
   * result (state {@code DONE}, counters from the job's accumulators).
   */
  public PipelineResult run(Pipeline pipeline, Duration timeout) throws Exception {
    FlinkPipelineOptions options = pipeline.getOptions().as(FlinkPipelineOptions.class);
    if (options.isStreaming() || !"[local]".equals(options.getFlinkMaster())) {
      throw new IllegalArgumentException(
          "EmbeddedFlinkBatchShim runs batch pipelines (--streaming=false) on its embedded cluster"
              + " (--flinkMaster=[local]); use EmbeddedFlinkJobsShim for streaming ones");
    }
    FlinkRunner.fromOptions(options);
    SplittableParDo.convertReadBasedSplittableDoFnsToPrimitiveReadsIfNecessary(pipeline);
    MetricsEnvironment.setMetricsSupported(true);
    FlinkPipelineExecutionEnvironment environment = new FlinkPipelineExecutionEnvironment(options);
    JobGraph graph;
    if (options.getUseDataStreamForBatch()) {
      // Beam's DataStream translation in Flink's batch execution mode, as FlinkRunner.run does.
      graph = environment.getJobGraph(pipeline);
    } else {
      environment.translate(pipeline);
      Plan plan =
          environment.getBatchExecutionEnvironment().createProgramPlan(options.getJobName());
      graph =
          FlinkPipelineTranslationUtil.getJobGraph(
              getClass().getClassLoader(), plan, new Configuration(), options.getParallelism());
    }
    long started = System.nanoTime();
    JobID id = cluster.submitJob(graph).get(timeout.getMillis(), TimeUnit.MILLISECONDS).getJobID();
    JobResult result = cluster.requestJobResult(id).get(timeout.getMillis(), TimeUnit.MILLISECONDS);
    if (!result.isSuccess()) {
      throw new IllegalStateException(
          "batch job " + id + " failed",
          result.getSerializedThrowable().map(t -> (Throwable) t).orElse(null));
    }
    Map<String, Object> accumulators = new HashMap<>();
    for (Map.Entry<String, SerializedValue<OptionalFailure<Object>>> entry :
        result.getAccumulatorResults().entrySet()) {
      accumulators.put(
          entry.getKey(),
          entry.getValue().deserializeValue(getClass().getClassLoader()).getUnchecked());
    }
    return new FlinkRunnerResult(accumulators, (System.nanoTime() - started) / 1_000_000);
  }

  @Override
  public void close() {
    try {
      cluster.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while stopping the embedded Flink cluster", e);
    } catch (Exception e) {
      throw new IllegalStateException("cannot stop the embedded Flink cluster", e);
    }
  }
}
