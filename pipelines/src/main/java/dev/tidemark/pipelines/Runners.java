package dev.tidemark.pipelines;

import org.apache.beam.sdk.PipelineRunner;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * Which runner the options name, decided by class name. Each production jar carries one runner's
 * classes only (the Dataflow jar has no FlinkRunner, the Flink job jar no DataflowRunner), so code
 * that every runner executes must not touch a runner class: {@code FlinkRunner.class} would fail
 * with {@code NoClassDefFoundError} in the Dataflow jar. Runner-specific code runs behind these
 * checks.
 */
public final class Runners {
  static final String DIRECT = "org.apache.beam.runners.direct.DirectRunner";
  static final String FLINK = "org.apache.beam.runners.flink.FlinkRunner";
  static final String DATAFLOW = "org.apache.beam.runners.dataflow.DataflowRunner";

  private Runners() {}

  public static boolean isDirect(PipelineOptions options) {
    return is(options, DIRECT);
  }

  public static boolean isFlink(PipelineOptions options) {
    return is(options, FLINK);
  }

  /** The DataflowRunner or a subclass (the test runner), as Beam's own checks treat it. */
  public static boolean isDataflow(PipelineOptions options) {
    for (Class<?> c = options.getRunner(); c != null; c = c.getSuperclass()) {
      if (DATAFLOW.equals(c.getName())) {
        return true;
      }
    }
    return false;
  }

  /**
   * The job's parallelism as its runner's options give it: {@code --parallelism} on Flink, {@code
   * --targetParallelism} on the DirectRunner, {@code --maxNumWorkers} (else {@code --numWorkers})
   * on Dataflow; 0 where the options leave it to the runner.
   */
  public static int parallelism(PipelineOptions options) {
    if (isFlink(options)) {
      return flinkParallelism(options);
    }
    if (isDirect(options)) {
      return options.as(org.apache.beam.runners.direct.DirectOptions.class).getTargetParallelism();
    }
    if (isDataflow(options)) {
      return dataflowWorkers(options);
    }
    return 0;
  }

  private static int flinkParallelism(PipelineOptions options) {
    Integer parallelism =
        options.as(org.apache.beam.runners.flink.FlinkPipelineOptions.class).getParallelism();
    return parallelism == null ? 0 : parallelism;
  }

  private static int dataflowWorkers(PipelineOptions options) {
    org.apache.beam.runners.dataflow.options.DataflowPipelineWorkerPoolOptions workers =
        options.as(
            org.apache.beam.runners.dataflow.options.DataflowPipelineWorkerPoolOptions.class);
    return workers.getMaxNumWorkers() > 0 ? workers.getMaxNumWorkers() : workers.getNumWorkers();
  }

  private static boolean is(PipelineOptions options, String runner) {
    Class<? extends PipelineRunner<?>> chosen = options.getRunner();
    return chosen != null && runner.equals(chosen.getName());
  }
}
