package dev.tidemark.pipelines.io;

import java.util.Map;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.io.FileIO;
import org.apache.beam.sdk.io.TextIO;
import org.apache.beam.sdk.transforms.Contextful;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.Flatten;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.AfterPane;
import org.apache.beam.sdk.transforms.windowing.AfterProcessingTime;
import org.apache.beam.sdk.transforms.windowing.AfterWatermark;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.transforms.windowing.Repeatedly;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionList;
import org.apache.beam.sdk.values.PDone;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;

/**
 * Writes named collections of JSON lines under one directory, through one {@code
 * FileIO.writeDynamic} (one set of write steps for all outputs, which matters on the DirectRunner);
 * FileIO writes to temporary files and renames them.
 *
 * <p><b>Written once</b> (the default, for input that ends: a replay, a backfill, a Kafka read with
 * a record limit): records are gathered in the global window and written when the input ends, as
 * {@code <name>/<name>-00000-of-00001.ndjson}, so every run leaves one complete set of files per
 * output. From an input that never ends this writes nothing.
 *
 * <p><b>Rolled</b> ({@link #withRollInterval}, for a live Kafka or Pub/Sub input, which never
 * ends): the lines are re-windowed into the global window with a trigger that fires {@link
 * #withRollInterval} of processing time after the first line of a roll (and once more when the
 * input ends, if it does), discarding fired panes; each firing writes a new file per output that
 * received lines, {@code <name>/<name>-roll-<pane>-00000-of-00001.ndjson}, numbered by the pane of
 * the write. The global window never expires while the input runs, so no line is late and none is
 * dropped by the re-windowing; the lines are those a bounded run writes, spread over the rolls. A
 * reader takes every {@code *.ndjson} file of an output's directory; a file appears only once
 * complete (temporary file, then rename).
 *
 * <p>Before FileIO's own grouping (one key per output), a bounded write's lines are grouped on
 * {@value #SPREAD} keys per output and each group is joined into one multi-line element. The
 * DirectRunner copies a key's buffered state at every bundle that reaches the key, so gathering a
 * replay's decisions (tens of thousands of one-pane bundles) on one key costs bundles &times;
 * lines, which dominated a run of the bundled sample. Spread, each bundle copies one small group,
 * and FileIO's grouping receives {@value #SPREAD} elements per output when the input ends.
 */
public final class NdjsonFiles extends PTransform<PBegin, PDone> {
  /** Groups per output before the write; see the class documentation. */
  static final int SPREAD = 256;

  /** How often an unbounded write starts a new set of files, by default. */
  public static final Duration DEFAULT_ROLL_INTERVAL = Duration.standardMinutes(1);

  private final Map<String, PCollection<String>> outputs;
  private final String directory;
  private final @Nullable Duration rollInterval;

  private NdjsonFiles(
      Map<String, PCollection<String>> outputs, String directory, @Nullable Duration rollInterval) {
    this.outputs = outputs;
    this.directory = directory;
    this.rollInterval = rollInterval;
  }

  /** Writes each collection to {@code directory/<name>/}. */
  public static NdjsonFiles write(Map<String, PCollection<String>> outputs, String directory) {
    return new NdjsonFiles(Map.copyOf(outputs), directory, null);
  }

  /**
   * Rolls the files: a new set of files per output {@code interval} of processing time after the
   * first line of each roll, for input that never ends.
   */
  public NdjsonFiles withRollInterval(Duration interval) {
    if (interval == null || !interval.isLongerThan(Duration.ZERO)) {
      throw new IllegalArgumentException(
          "--fileRollInterval must be a positive ISO-8601 duration such as PT1M, got " + interval);
    }
    return new NdjsonFiles(outputs, directory, interval);
  }

  /** A line keyed by its output's name and its group ({@link SpreadFn}). */
  private static final KvCoder<KV<String, Integer>, String> GROUPED_LINE =
      KvCoder.of(KvCoder.of(StringUtf8Coder.of(), VarIntCoder.of()), StringUtf8Coder.of());

  /** The global window, fired once when the input ends. */
  private static Window<KV<KV<String, Integer>, String>> gatherUntilEnd() {
    return Window.<KV<KV<String, Integer>, String>>into(new GlobalWindows())
        .triggering(Repeatedly.forever(AfterWatermark.pastEndOfWindow()))
        .withAllowedLateness(Duration.ZERO)
        .discardingFiredPanes();
  }

  /**
   * The global window, fired {@code interval} of processing time after the first line of each roll,
   * and when the input ends. Nothing in the global window is late before the input ends; a line
   * that comes after (within an allowed lateness the input's windowing carries over: Beam keeps the
   * larger of the two) fires a pane of its own.
   */
  private static Window<KV<KV<String, Integer>, String>> roll(Duration interval) {
    return Window.<KV<KV<String, Integer>, String>>into(new GlobalWindows())
        .triggering(
            AfterWatermark.pastEndOfWindow()
                .withEarlyFirings(
                    AfterProcessingTime.pastFirstElementInPane().plusDelayOf(interval))
                .withLateFirings(AfterPane.elementCountAtLeast(1)))
        .withAllowedLateness(Duration.ZERO, Window.ClosingBehavior.FIRE_IF_NON_EMPTY)
        .withOnTimeBehavior(Window.OnTimeBehavior.FIRE_IF_NON_EMPTY)
        .discardingFiredPanes();
  }

  @Override
  public PDone expand(PBegin begin) {
    boolean rolled = rollInterval != null;
    PCollectionList<KV<KV<String, Integer>, String>> named =
        PCollectionList.empty(begin.getPipeline());
    for (Map.Entry<String, PCollection<String>> output :
        new java.util.TreeMap<>(outputs).entrySet()) {
      named =
          named.and(
              output
                  .getValue()
                  .apply(
                      "Name" + output.getKey(),
                      ParDo.of(new SpreadFn(output.getKey(), rolled ? 1 : SPREAD)))
                  .setCoder(GROUPED_LINE)
                  .apply(
                      (rolled ? "Roll" : "GatherUntilEnd") + output.getKey(),
                      rollInterval != null ? roll(rollInterval) : gatherUntilEnd()));
    }
    PCollection<KV<KV<String, Integer>, String>> all =
        named.apply("AllOutputs", Flatten.pCollections());
    // A rolled write leaves the grouping to FileIO, whose first grouping then fires on the roll's
    // own processing-time trigger. Grouped here first, FileIO would receive the continuation
    // trigger (synchronized processing time), which the DirectRunner did not fire during a live
    // Kafka read: no file appeared.
    PCollection<KV<String, String>> toWrite =
        rolled
            ? all.apply("DropGroups", ParDo.of(new DropGroupFn()))
            : all.apply("GatherGroups", GroupByKey.create())
                .apply("JoinGroups", ParDo.of(new JoinFn()));
    toWrite
        .setCoder(KvCoder.of(StringUtf8Coder.of(), StringUtf8Coder.of()))
        .apply(
            "WriteFiles",
            FileIO.<String, KV<String, String>>writeDynamic()
                .by(KV::getKey)
                .withDestinationCoder(StringUtf8Coder.of())
                .via(Contextful.fn(KV::getValue), TextIO.sink())
                .to(directory)
                .withNaming(
                    name ->
                        (window, pane, numShards, shardIndex, compression) ->
                            rolled
                                ? String.format(
                                    "%s/%s-roll-%06d-%05d-of-%05d.ndjson",
                                    name, name, pane.getIndex(), shardIndex, numShards)
                                : String.format(
                                    "%s/%s-%05d-of-%05d.ndjson", name, name, shardIndex, numShards))
                .withNumShards(1));
    return PDone.in(begin.getPipeline());
  }

  /**
   * Keys a line by its output's name and one of {@code groups} groups, by the line's hash: {@value
   * #SPREAD} for a bounded write, one for a rolled write (whose group is dropped again before
   * FileIO's grouping, where the roll's trigger fires once per output).
   */
  static final class SpreadFn extends DoFn<String, KV<KV<String, Integer>, String>> {
    private final String name;
    private final int groups;

    SpreadFn(String name, int groups) {
      this.name = name;
      this.groups = groups;
    }

    @ProcessElement
    public void processElement(
        @Element String line, OutputReceiver<KV<KV<String, Integer>, String>> out) {
      out.output(KV.of(KV.of(name, Math.floorMod(line.hashCode(), groups)), line));
    }
  }

  /** A line keyed by its output's name alone. */
  static final class DropGroupFn extends DoFn<KV<KV<String, Integer>, String>, KV<String, String>> {
    @ProcessElement
    public void processElement(
        @Element KV<KV<String, Integer>, String> line, OutputReceiver<KV<String, String>> out) {
      out.output(KV.of(line.getKey().getKey(), line.getValue()));
    }
  }

  /** Joins a group's lines into one element of lines, which {@code TextIO.sink()} writes as is. */
  static final class JoinFn
      extends DoFn<KV<KV<String, Integer>, Iterable<String>>, KV<String, String>> {
    @ProcessElement
    public void processElement(
        @Element KV<KV<String, Integer>, Iterable<String>> group,
        OutputReceiver<KV<String, String>> out) {
      // One pass: Flink's batch GroupByKey result can be iterated only once.
      StringBuilder lines = new StringBuilder();
      for (String line : group.getValue()) {
        if (lines.length() > 0) {
          lines.append('\n');
        }
        lines.append(line);
      }
      if (lines.length() > 0) { // An empty pane would write an empty line.
        out.output(KV.of(group.getKey().getKey(), lines.toString()));
      }
    }
  }
}
