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
import org.apache.beam.sdk.transforms.windowing.AfterWatermark;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.transforms.windowing.Repeatedly;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionList;
import org.apache.beam.sdk.values.PDone;
import org.joda.time.Duration;

/**
 * Writes named collections of JSON lines under one directory, each as {@code
 * <name>/<name>-00000-of-00001.ndjson}, through one {@code FileIO.writeDynamic} (one set of write
 * steps for all outputs, which matters on the DirectRunner). Records are gathered in the global
 * window and written once, when the input ends (a replay or a backfill), so every run leaves one
 * complete set of files per output; FileIO writes to temporary files and renames them.
 *
 * <p>Before FileIO's own grouping (one key per output), the lines are grouped on {@value #SPREAD}
 * keys per output and each group is joined into one multi-line element. The DirectRunner copies a
 * key's buffered state at every bundle that reaches the key, so gathering a replay's decisions
 * (tens of thousands of one-pane bundles) on one key costs bundles &times; lines, which dominated a
 * run of the bundled sample. Spread, each bundle copies one small group, and FileIO's grouping
 * receives {@value #SPREAD} elements per output when the input ends.
 */
public final class NdjsonFiles extends PTransform<PBegin, PDone> {
  /** Groups per output before the write; see the class documentation. */
  static final int SPREAD = 256;

  private final Map<String, PCollection<String>> outputs;
  private final String directory;

  private NdjsonFiles(Map<String, PCollection<String>> outputs, String directory) {
    this.outputs = outputs;
    this.directory = directory;
  }

  /** Writes each collection to {@code directory/<name>/}. */
  public static NdjsonFiles write(Map<String, PCollection<String>> outputs, String directory) {
    return new NdjsonFiles(Map.copyOf(outputs), directory);
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

  @Override
  public PDone expand(PBegin begin) {
    PCollectionList<KV<KV<String, Integer>, String>> named =
        PCollectionList.empty(begin.getPipeline());
    for (Map.Entry<String, PCollection<String>> output :
        new java.util.TreeMap<>(outputs).entrySet()) {
      named =
          named.and(
              output
                  .getValue()
                  .apply("Name" + output.getKey(), ParDo.of(new SpreadFn(output.getKey())))
                  .setCoder(GROUPED_LINE)
                  .apply("GatherUntilEnd" + output.getKey(), gatherUntilEnd()));
    }
    named
        .apply("AllOutputs", Flatten.pCollections())
        .apply("GatherGroups", GroupByKey.create())
        .apply("JoinGroups", ParDo.of(new JoinFn()))
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
                            String.format(
                                "%s/%s-%05d-of-%05d.ndjson", name, name, shardIndex, numShards))
                .withNumShards(1));
    return PDone.in(begin.getPipeline());
  }

  /** Keys a line by its output's name and one of {@value #SPREAD} groups, by the line's hash. */
  static final class SpreadFn extends DoFn<String, KV<KV<String, Integer>, String>> {
    private final String name;

    SpreadFn(String name) {
      this.name = name;
    }

    @ProcessElement
    public void processElement(
        @Element String line, OutputReceiver<KV<KV<String, Integer>, String>> out) {
      out.output(KV.of(KV.of(name, Math.floorMod(line.hashCode(), SPREAD)), line));
    }
  }

  /** Joins a group's lines into one element of lines, which {@code TextIO.sink()} writes as is. */
  static final class JoinFn
      extends DoFn<KV<KV<String, Integer>, Iterable<String>>, KV<String, String>> {
    @ProcessElement
    public void processElement(
        @Element KV<KV<String, Integer>, Iterable<String>> group,
        OutputReceiver<KV<String, String>> out) {
      out.output(KV.of(group.getKey().getKey(), String.join("\n", group.getValue())));
    }
  }
}
