package dev.tidemark.pipelines.io;

import java.util.Map;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.io.FileIO;
import org.apache.beam.sdk.io.TextIO;
import org.apache.beam.sdk.transforms.Contextful;
import org.apache.beam.sdk.transforms.Flatten;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.transforms.windowing.AfterWatermark;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.transforms.windowing.Repeatedly;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionList;
import org.apache.beam.sdk.values.PDone;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.joda.time.Duration;

/**
 * Writes named collections of JSON lines under one directory, each as {@code
 * <name>/<name>-00000-of-00001.ndjson}, through one {@code FileIO.writeDynamic} (one set of write
 * steps for all outputs, which matters on the DirectRunner). Records are gathered in the global
 * window and written once, when the input ends (a replay or a backfill), so every run leaves one
 * complete set of files per output; FileIO writes to temporary files and renames them.
 */
public final class NdjsonFiles extends PTransform<PBegin, PDone> {
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

  /** The global window, fired once when the input ends. */
  private static Window<KV<String, String>> gatherUntilEnd() {
    return Window.<KV<String, String>>into(new GlobalWindows())
        .triggering(Repeatedly.forever(AfterWatermark.pastEndOfWindow()))
        .withAllowedLateness(Duration.ZERO)
        .discardingFiredPanes();
  }

  @Override
  public PDone expand(PBegin begin) {
    PCollectionList<KV<String, String>> named = PCollectionList.empty(begin.getPipeline());
    for (Map.Entry<String, PCollection<String>> output :
        new java.util.TreeMap<>(outputs).entrySet()) {
      named =
          named.and(
              output
                  .getValue()
                  .apply(
                      "Name" + output.getKey(),
                      WithKeys.<String, String>of(output.getKey())
                          .withKeyType(TypeDescriptors.strings()))
                  .setCoder(KvCoder.of(StringUtf8Coder.of(), StringUtf8Coder.of()))
                  .apply("GatherUntilEnd" + output.getKey(), gatherUntilEnd()));
    }
    named
        .apply("AllOutputs", Flatten.pCollections())
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
}
