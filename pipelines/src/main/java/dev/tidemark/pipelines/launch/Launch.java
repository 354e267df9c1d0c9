package dev.tidemark.pipelines.launch;

import dev.tidemark.pipelines.Runners;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.TidemarkPipeline;
import dev.tidemark.pipelines.io.Sinks;
import dev.tidemark.transforms.values.RawRecord;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import org.apache.beam.runners.dataflow.DataflowPipelineJob;
import org.apache.beam.runners.dataflow.options.DataflowPipelineOptions;
import org.apache.beam.runners.dataflow.util.DataflowTemplateJob;
import org.apache.beam.runners.direct.DirectOptions;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;

/**
 * Runs the Tidemark job that {@link TidemarkPipeline} builds: checks the options ({@link
 * OptionChecks}), clears the previous run's outputs ({@link OutputDirectory}), runs to the end and
 * writes the checked {@link Summary}; or, on Dataflow, only submits ({@link #submit}). A streaming
 * job for a Flink cluster in other processes goes through {@link FlinkClusterLaunch}.
 */
public final class Launch {
  private Launch() {}

  /**
   * Whether a run only submits the job: on Dataflow the launcher (a Flex Template launch, the CLI)
   * must return once the job is created, and a template run ({@code --templateLocation}) only
   * writes the job specification; on a Flink cluster in other processes ({@link
   * FlinkClusterLaunch#submitsToFlinkCluster}) a streaming job runs until it is stopped. Such runs
   * have no summary.
   */
  public static boolean submitsOnly(TidemarkOptions options) {
    return Runners.isDataflow(options) || FlinkClusterLaunch.submitsToFlinkCluster(options);
  }

  /**
   * Builds the pipeline and submits it without waiting; returns the Dataflow job id, or null when
   * {@code --templateLocation} made it write the job specification instead.
   */
  public static @Nullable String submit(TidemarkOptions options) {
    OptionChecks.check(options);
    EmbeddedBroker.refuse(options);
    Pipeline pipeline = Pipeline.create(options);
    TidemarkPipeline.build(pipeline, options, null);
    PipelineResult result = pipeline.run();
    if (result instanceof DataflowTemplateJob || !(result instanceof DataflowPipelineJob)) {
      return null;
    }
    return ((DataflowPipelineJob) result).getJobId();
  }

  /**
   * {@link #submit}s the job and says what was submitted: the Dataflow job id, or where {@code
   * --templateLocation} wrote the job specification.
   */
  public static String submitAndDescribe(TidemarkOptions options) {
    String jobId = submit(options);
    return jobId == null
        ? "Wrote the job specification to "
            + options.as(DataflowPipelineOptions.class).getTemplateLocation()
        : "Submitted Dataflow job " + jobId + "; it runs until drained or cancelled.";
  }

  /**
   * Checks the options, builds the graph (source, transforms, sinks), runs it to its end, and
   * writes the checked {@link Summary} as {@code summary.json} under {@code --output}.
   */
  public static Summary run(TidemarkOptions options) {
    return run(options, null);
  }

  /**
   * As {@link #run(TidemarkOptions)}, reading {@code source} instead of the configured source when
   * it is not null: the parts of a replay that {@code dev.tidemark.launcher.check.Reference} runs
   * one by one are TestStreams cut from one file.
   */
  public static Summary run(
      TidemarkOptions options, @Nullable PTransform<PBegin, PCollection<RawRecord>> source) {
    OptionChecks.check(options);
    EmbeddedBroker.refuse(options);
    Path output = Paths.get(options.getOutput());
    if (Runners.isDirect(options)) {
      // The DirectRunner otherwise blocks in run(), and no progress could be shown.
      options.as(DirectOptions.class).setBlockOnRun(false);
    }
    Pipeline pipeline = build(options, source);
    long started = System.nanoTime();
    PipelineResult result = pipeline.run();
    Progress.await(result, System.err);
    Duration wallTime = Duration.millis((System.nanoTime() - started) / 1_000_000);
    Summary summary = Summary.from(result, wallTime).withRun(options);
    if (options.getSink() == TidemarkOptions.SinkKind.files) {
      OutputDirectory.touchEmptyOutputs(output, Sinks.fileNames(options));
      OutputDirectory.touchEmptyOutputs(output, Sinks.labelFileNames(options));
      OutputDirectory.touchEmptyOutputs(output, Sinks.driftFileNames(options));
    }
    summary.writeTo(output.resolve("summary.json"));
    return summary;
  }

  /**
   * Builds the whole pipeline (source, transforms, sinks) after clearing the previous run's file
   * outputs; the caller runs it.
   */
  public static Pipeline build(TidemarkOptions options) {
    return build(options, null);
  }

  private static Pipeline build(
      TidemarkOptions options, @Nullable PTransform<PBegin, PCollection<RawRecord>> source) {
    for (String warning : startupWarnings(options)) {
      System.err.println("tidemark: warning: " + warning);
    }
    OutputDirectory.clear(Paths.get(options.getOutput()), Sinks.fileNames(options));
    OutputDirectory.clear(Paths.get(options.getOutput()), Sinks.labelFileNames(options));
    OutputDirectory.clear(Paths.get(options.getOutput()), Sinks.driftFileNames(options));
    Pipeline pipeline = Pipeline.create(options);
    TidemarkPipeline.build(pipeline, options, source);
    return pipeline;
  }

  /**
   * What the configuration cannot guarantee, said once when the job is built. The DirectRunner
   * reading Kafka commits the consumer group's offsets as it finalizes checkpoints, while its dedup
   * and window state live only in this process: the committed offsets run ahead of anything a
   * restart could recover.
   */
  public static List<String> startupWarnings(TidemarkOptions options) {
    if (Runners.isDirect(options) && options.getSource() == TidemarkOptions.SourceKind.kafka) {
      return List.of(directKafkaWarning(options.getKafkaConsumerGroup()));
    }
    return List.of();
  }

  /** The warning of the DirectRunner reading Kafka; see {@link #startupWarnings}. */
  static String directKafkaWarning(String consumerGroup) {
    return "the DirectRunner keeps dedup and window state in this process's memory only, while"
        + " the Kafka source commits consumer group '"
        + consumerGroup
        + "' offsets as it reads. If the process stops before its input ends (a crash, a kill,"
        + " Ctrl-C), a restart resumes after the committed offsets with empty state: the events"
        + " of windows that had not fired, and results not yet written to the sink, are lost"
        + " (never re-read, in no output), and copies of events read before the restart are not"
        + " recognised as duplicates. For restarts without loss use the flink profile, which"
        + " restores offsets and state together from a checkpoint.";
  }
}
