package dev.tidemark.launcher.check;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.io.ReplayFile;
import dev.tidemark.pipelines.io.Sources;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.RawRecord;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Duration;

/**
 * The expected outputs of a replay file: a batch run of the real Tidemark pipeline on the
 * DirectRunner ({@code --source=replay}, the file sink) with the windowing, lateness, watermark,
 * parsing, dedup and scoring options of the streaming job it is compared with. The replay's
 * watermark is the bounded out-of-orderness policy over the whole file in arrival order, the one
 * the generator aims its late and too-late events at; its ingestion clock is the one {@link
 * dev.tidemark.launcher.KafkaFeed#produce} sets as record timestamps.
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
   * writing each part's files and {@code summary.json} under {@code workDirectory/part-N}, and the
   * summary of the whole in {@code workDirectory/summary.json}.
   *
   * <p>A long replay runs in parts of about {@value #RECORDS_PER_PART} records, as many at once as
   * there are processors. The DirectRunner's work per bundle grows with the keys that hold pending
   * timers (the dedup step keeps one per identity for its horizon), so one run of 100,000 records
   * slows to a crawl while parts of a few thousand do not. The parts split the records, never the
   * clock: each part replays the whole file's watermark and processing-time steps, and gets every
   * record of the accounts assigned to it (see {@link #split}).
   *
   * @throws IllegalStateException when the batch run's own accounting identity does not hold
   */
  public static Reference compute(Path replayFile, TidemarkOptions streaming, Path workDirectory) {
    ReplayFile replay;
    try {
      replay = Sources.readReplay(replayFile, streaming);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read replay file " + replayFile, e);
    }
    int parts = Math.max(1, (replay.records() + RECORDS_PER_PART - 1) / RECORDS_PER_PART);
    return compute(replayFile, replay, parts, streaming, workDirectory);
  }

  /** As {@link #compute(Path, TidemarkOptions, Path)}, in {@code parts} parts. */
  static Reference compute(
      Path replayFile,
      ReplayFile replay,
      int parts,
      TidemarkOptions streaming,
      Path workDirectory) {
    List<TestStream<RawRecord>> streams = split(replay.stream(), parts);
    List<Path> directories = new ArrayList<>();
    List<Callable<Summary>> runs = new ArrayList<>();
    for (int part = 0; part < streams.size(); part++) {
      Path directory = workDirectory.resolve("part-" + part);
      TestStream<RawRecord> stream = streams.get(part);
      TidemarkOptions batch =
          PipelineOptionsFactory.fromArgs(batchArgs(replayFile, streaming, directory))
              .withValidation()
              .as(TidemarkOptions.class);
      directories.add(directory);
      runs.add(() -> Launch.run(batch, stream));
    }
    long started = System.nanoTime();
    List<Summary> summaries = runAll(runs);
    Summary summary =
        Summary.sum(summaries, Duration.millis((System.nanoTime() - started) / 1_000_000));
    summary.writeTo(workDirectory.resolve("summary.json"));
    if (!summary.identityHolds()) {
      throw new IllegalStateException(
          "the batch reference of "
              + replayFile
              + " does not account for its input: "
              + summary.identityViolations());
    }
    return new Reference(
        OutputView.fromFiles(directories), summary, duration(streaming.getWindowSize()));
  }

  private static Duration duration(String iso) {
    return Duration.millis(java.time.Duration.parse(iso).toMillis());
  }

  /** Runs {@code runs} on as many threads as there are processors, in order of submission. */
  private static List<Summary> runAll(List<Callable<Summary>> runs) {
    int threads = Math.min(runs.size(), Runtime.getRuntime().availableProcessors());
    ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, threads));
    try {
      List<Summary> summaries = new ArrayList<>();
      for (Future<Summary> run : pool.invokeAll(runs)) {
        summaries.add(run.get());
      }
      return summaries;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while the batch reference ran", e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("a part of the batch reference failed", e.getCause());
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * Splits a replay into {@code parts} streams whose outputs together are the whole replay's. Each
   * part keeps every watermark and processing-time step, and the records of the accounts it owns
   * (account {@code a} belongs to part {@code hash(a) mod parts}): features and decisions are per
   * account. Dedup is per identity ({@code source}+{@code id}), and only an identity's first valid
   * record reaches the features, so every record of an identity follows its first record that names
   * an account, even where a conflicting copy names another. Records that name neither (dead
   * letters to be) go to part 0.
   */
  static List<TestStream<RawRecord>> split(TestStream<RawRecord> stream, int parts) {
    if (parts == 1) {
      return List.of(stream);
    }
    Map<String, Integer> partOfIdentity = new HashMap<>();
    List<List<TestStream.Event<RawRecord>>> events = new ArrayList<>();
    for (int part = 0; part < parts; part++) {
      events.add(new ArrayList<>());
    }
    for (TestStream.Event<RawRecord> event : stream.getEvents()) {
      if (!(event instanceof TestStream.ElementEvent)) {
        events.forEach(part -> part.add(event));
        continue;
      }
      List<List<TimestampedValue<RawRecord>>> batches = new ArrayList<>();
      for (int part = 0; part < parts; part++) {
        batches.add(new ArrayList<>());
      }
      for (TimestampedValue<RawRecord> record :
          ((TestStream.ElementEvent<RawRecord>) event).getElements()) {
        batches.get(partOf(record.getValue(), parts, partOfIdentity)).add(record);
      }
      for (int part = 0; part < parts; part++) {
        if (!batches.get(part).isEmpty()) {
          events.get(part).add(TestStream.ElementEvent.add(batches.get(part)));
        }
      }
    }
    List<TestStream<RawRecord>> streams = new ArrayList<>();
    for (List<TestStream.Event<RawRecord>> part : events) {
      streams.add(TestStream.fromRawEvents(stream.getValueCoder(), part));
    }
    return streams;
  }

  private static int partOf(RawRecord record, int parts, Map<String, Integer> partOfIdentity) {
    JsonNode event;
    try {
      event = Json.MAPPER.readTree(record.payload());
    } catch (IOException e) {
      return 0;
    }
    if (event == null || !event.isObject()) {
      return 0;
    }
    String identity =
        event.path("source").isTextual() && event.path("id").isTextual()
            ? event.get("source").asText() + "\n" + event.get("id").asText()
            : null;
    Integer known = identity == null ? null : partOfIdentity.get(identity);
    if (known != null) {
      return known;
    }
    JsonNode account = event.path("data").path("accountId");
    if (!account.isTextual()) {
      return 0;
    }
    int part = Math.floorMod(account.asText().hashCode(), parts);
    if (identity != null) {
      partOfIdentity.put(identity, part);
    }
    return part;
  }

  /** Records per part of a long reference; see {@link #compute(Path, TidemarkOptions, Path)}. */
  static final int RECORDS_PER_PART = 5_000;

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
    // The same spec, so the reference's start checks hold its model to the same features.
    args.add("--specUri=" + streaming.getSpecUri());
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
    if (streaming.getModelEngine() != null) {
      args.add("--modelEngine=" + streaming.getModelEngine());
    }
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
