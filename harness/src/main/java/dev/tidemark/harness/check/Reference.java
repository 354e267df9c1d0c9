package dev.tidemark.harness.check;

import dev.tidemark.pipelines.Summary;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.TidemarkPipeline;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.joda.time.Duration;

/**
 * The expected outputs of a replay file: a batch run of the real Tidemark pipeline on the
 * DirectRunner ({@code --source=replay}, the file sink) with the windowing, lateness, watermark,
 * parsing, dedup and scoring options of the streaming job it is compared with. The replay's
 * watermark is the bounded out-of-orderness policy over the whole file in arrival order, the one
 * the generator aims its late and too-late events at; its ingestion clock is the one {@link
 * dev.tidemark.harness.KafkaFeed#produce} sets as record timestamps.
 */
public final class Reference {
  private final OutputView outputs;
  private final Summary summary;
  private final Duration windowSize;

  private Reference(OutputView outputs, Summary summary, Duration windowSize) {
    this.outputs = outputs;
    this.summary = summary;
    this.windowSize = windowSize;
  }

  /**
   * Runs the batch reference of {@code replayFile} with the pipeline options of {@code streaming}
   * (only those that shape the outputs are taken; runner, source and sink are the batch ones),
   * writing its files and {@code summary.json} under {@code workDirectory}.
   *
   * @throws IllegalStateException when the batch run's own accounting identity does not hold
   */
  public static Reference compute(Path replayFile, TidemarkOptions streaming, Path workDirectory) {
    TidemarkOptions batch =
        PipelineOptionsFactory.fromArgs(batchArgs(replayFile, streaming, workDirectory))
            .withValidation()
            .as(TidemarkOptions.class);
    Summary summary = TidemarkPipeline.run(batch);
    if (!summary.identityHolds()) {
      throw new IllegalStateException(
          "the batch reference of "
              + replayFile
              + " does not account for its input: "
              + summary.identityViolations());
    }
    return new Reference(
        OutputView.fromFiles(workDirectory),
        summary,
        Duration.millis(java.time.Duration.parse(streaming.getWindowSize()).toMillis()));
  }

  /** The command line of the batch run: the replay and file sink, and the shaping options. */
  static String[] batchArgs(Path replayFile, TidemarkOptions streaming, Path workDirectory) {
    List<String> args = new ArrayList<>();
    args.add("--runner=DirectRunner");
    // The local profile's speed settings: a replay costs per arrival batch in the DirectRunner's
    // own work, and its element checks re-encode every element.
    args.add("--enforceImmutability=false");
    args.add("--enforceEncodability=false");
    args.add("--targetParallelism=1");
    args.add("--source=replay");
    args.add("--input=" + replayFile.toAbsolutePath());
    args.add("--sink=files");
    args.add("--output=" + workDirectory.toAbsolutePath());
    args.add("--maxOutOfOrderness=" + streaming.getMaxOutOfOrderness());
    args.add("--maxFutureSkew=" + streaming.getMaxFutureSkew());
    args.add("--currency=" + streaming.getCurrency());
    args.add("--eventTypes=" + streaming.getEventTypes());
    args.add("--maxEventBytes=" + streaming.getMaxEventBytes());
    args.add("--dedupHorizon=" + streaming.getDedupHorizon());
    args.add("--windowSize=" + streaming.getWindowSize());
    args.add("--windowPeriod=" + streaming.getWindowPeriod());
    args.add("--earlyFiringDelay=" + streaming.getEarlyFiringDelay());
    args.add("--lateFiringDelay=" + streaming.getLateFiringDelay());
    args.add("--allowedLateness=" + streaming.getAllowedLateness());
    args.add("--accumulationMode=" + streaming.getAccumulationMode());
    args.add("--modelUri=" + streaming.getModelUri());
    args.add("--modelEngine=" + streaming.getModelEngine());
    args.add("--decisionThreshold=" + streaming.getDecisionThreshold());
    args.add("--scoringBatchSize=" + streaming.getScoringBatchSize());
    args.add("--maxDeadLetterPayloadBytes=" + streaming.getMaxDeadLetterPayloadBytes());
    return args.toArray(new String[0]);
  }

  /** The batch run's outputs. */
  public OutputView outputs() {
    return outputs;
  }

  /** The batch run's counters; its accounting identity holds. */
  public Summary summary() {
    return summary;
  }

  /** {@code --windowSize} of the runs compared. */
  public Duration windowSize() {
    return windowSize;
  }
}
