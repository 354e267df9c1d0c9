package org.apache.beam.runners.flink;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.MetricResults;
import org.apache.beam.sdk.metrics.MetricsEnvironment;
import org.apache.beam.sdk.util.construction.SplittableParDo;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.checkpoint.CheckpointStatsSnapshot;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.util.OptionalFailure;
import org.apache.flink.util.SerializedValue;
import org.joda.time.Duration;

/**
 * Runs a streaming Beam pipeline on an embedded Flink MiniCluster that Tidemark owns, and returns
 * while it runs. Beam's FlinkRunner with {@code --flinkMaster=[local]} blocks in {@code run()}
 * until a streaming job ends (it ignores {@code --attachedMode=false} locally), and a running job's
 * counters are not reported. The live demo, the exactly-once tests and the benchmarks need to watch
 * a running job, stop it, and then read its final counters: {@link Job#stop} ends it and returns
 * them (Flink keeps the tasks' accumulators in the job result).
 *
 * <p>It lives in Beam's package because the pieces FlinkRunner.run uses are package-private; it
 * translates the pipeline exactly as FlinkRunner.run does.
 */
public final class EmbeddedFlinkJobsShim {
  private EmbeddedFlinkJobsShim() {}

  /** Translates {@code pipeline} and submits it to a new embedded cluster. */
  public static Job start(Pipeline pipeline) throws Exception {
    FlinkPipelineOptions options = pipeline.getOptions().as(FlinkPipelineOptions.class);
    if (!"[local]".equals(options.getFlinkMaster())) {
      throw new IllegalArgumentException(
          "EmbeddedFlinkJobsShim runs on the embedded cluster only (--flinkMaster=[local]); for a"
              + " remote cluster use --runner=FlinkRunner directly");
    }
    FlinkRunner.fromOptions(options);
    SplittableParDo.convertReadBasedSplittableDoFnsToPrimitiveReadsIfNecessary(pipeline);
    MetricsEnvironment.setMetricsSupported(true);
    FlinkPipelineExecutionEnvironment environment = new FlinkPipelineExecutionEnvironment(options);
    JobGraph graph = environment.getJobGraph(pipeline);
    if (options.getSavepointPath() != null) {
      // allowNonRestoredState off: state that no operator of this job takes (an operator uid that
      // changed) fails the restore instead of being dropped silently.
      graph.setSavepointRestoreSettings(
          SavepointRestoreSettings.forPath(options.getSavepointPath(), false));
    }
    Configuration configuration = new Configuration();
    // Any free port for the REST endpoint: 8081 may be taken (another cluster, another test).
    configuration.set(RestOptions.BIND_PORT, "0");
    MiniCluster cluster =
        new MiniCluster(
            new MiniClusterConfiguration.Builder()
                .setConfiguration(configuration)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(Math.max(1, options.getParallelism()))
                .build());
    cluster.start();
    try {
      JobID id = cluster.submitJob(graph).get(1, TimeUnit.MINUTES).getJobID();
      return new Job(cluster, id);
    } catch (Exception e) {
      cluster.close();
      throw e;
    }
  }

  /** A job running on its own embedded cluster. */
  public static final class Job implements PipelineResult {
    private final MiniCluster cluster;
    private final JobID id;
    private final long started = System.nanoTime();
    private State state = State.RUNNING;

    Job(MiniCluster cluster, JobID id) {
      this.cluster = cluster;
      this.id = id;
    }

    /**
     * Ends the job, shuts its cluster down and returns the job's final counters. A running job is
     * stopped as Flink's {@code flink stop} does, with a savepoint (into a temporary directory,
     * removed afterwards) and without draining: its sources stop between records instead of being
     * interrupted mid-read (a cancel makes Beam's Kafka reader log an {@code InterruptedException}
     * for every split), and no window fires because of the stop. If that fails the job is
     * cancelled. Flink keeps the tasks' accumulators in the job result either way.
     */
    public PipelineResult stop(Duration timeout) throws Exception {
      return end(timeout, true);
    }

    private PipelineResult end(Duration timeout, boolean graceful) throws Exception {
      try {
        if (!cluster
            .getJobStatus(id)
            .get(timeout.getMillis(), TimeUnit.MILLISECONDS)
            .isGloballyTerminalState()) {
          if (graceful) {
            stopWithTemporarySavepoint(timeout);
          } else {
            cluster.cancelJob(id).get(timeout.getMillis(), TimeUnit.MILLISECONDS);
          }
        }
        JobResult result =
            cluster.requestJobResult(id).get(timeout.getMillis(), TimeUnit.MILLISECONDS);
        Map<String, Object> accumulators = new HashMap<>();
        for (Map.Entry<String, SerializedValue<OptionalFailure<Object>>> entry :
            result.getAccumulatorResults().entrySet()) {
          accumulators.put(
              entry.getKey(),
              entry.getValue().deserializeValue(getClass().getClassLoader()).getUnchecked());
        }
        state = graceful ? State.STOPPED : State.CANCELLED;
        return new FlinkRunnerResult(accumulators, (System.nanoTime() - started) / 1_000_000);
      } finally {
        cluster.close();
      }
    }

    private void stopWithTemporarySavepoint(Duration timeout) throws Exception {
      Path savepoints = Files.createTempDirectory("tidemark-stop-");
      try {
        cluster
            .stopWithSavepoint(
                id, savepoints.toUri().toString(), false, SavepointFormatType.CANONICAL)
            .get(timeout.getMillis(), TimeUnit.MILLISECONDS);
      } catch (ExecutionException | TimeoutException e) {
        cluster.cancelJob(id).get(timeout.getMillis(), TimeUnit.MILLISECONDS);
      } finally {
        try (Stream<Path> paths = Files.walk(savepoints)) {
          paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
      }
    }

    /**
     * Stops the job cleanly: a savepoint (without draining, so windows stay open), then the job
     * ends. Returns the savepoint's path; start the same pipeline with {@code --savepointPath} to
     * resume from it.
     */
    public String stopWithSavepoint(Path directory, Duration timeout) throws Exception {
      try {
        String path =
            cluster
                .stopWithSavepoint(
                    id, directory.toUri().toString(), false, SavepointFormatType.CANONICAL)
                .get(timeout.getMillis(), TimeUnit.MILLISECONDS);
        state = State.STOPPED;
        return path;
      } finally {
        cluster.close();
      }
    }

    /**
     * The job's checkpoint statistics so far, as Flink's web UI shows them (sizes, trigger times);
     * its history keeps the latest few checkpoints only.
     */
    public CheckpointStatsSnapshot checkpointStats() throws Exception {
      return cluster.getExecutionGraph(id).get(1, TimeUnit.MINUTES).getCheckpointStatsSnapshot();
    }

    /**
     * Throws when the job is no longer running (it failed after its restarts, or ended), with
     * Flink's failure as the cause; a streaming job that stops on its own has failed.
     */
    public void checkRunning() {
      JobStatus status;
      try {
        status = cluster.getJobStatus(id).get(1, TimeUnit.MINUTES);
      } catch (Exception e) {
        throw new IllegalStateException("cannot read the state of the Flink job " + id, e);
      }
      if (!status.isGloballyTerminalState()) {
        return;
      }
      Throwable cause = null;
      try {
        JobResult result = cluster.requestJobResult(id).get(1, TimeUnit.MINUTES);
        if (result.getSerializedThrowable().isPresent()) {
          cause =
              result.getSerializedThrowable().get().deserializeError(getClass().getClassLoader());
        }
      } catch (Exception e) {
        cause = e;
      }
      state = State.FAILED;
      throw new IllegalStateException(
          "the Flink job " + id + " is " + status + (cause == null ? "" : ": " + cause), cause);
    }

    @Override
    public State getState() {
      return state;
    }

    @Override
    public State cancel() throws IOException {
      try {
        end(Duration.standardMinutes(1), false);
      } catch (Exception e) {
        throw new IOException("cannot cancel the Flink job " + id, e);
      }
      return state;
    }

    @Override
    public State waitUntilFinish(Duration duration) {
      throw new UnsupportedOperationException("a streaming job runs until stop()");
    }

    @Override
    public State waitUntilFinish() {
      throw new UnsupportedOperationException("a streaming job runs until stop()");
    }

    @Override
    public MetricResults metrics() {
      throw new UnsupportedOperationException(
          "a running job's counters are not reported; stop() returns the final ones");
    }
  }
}
