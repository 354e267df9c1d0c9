package dev.tidemark.pipelines;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.joda.time.Duration;
import org.joda.time.Instant;

/** Hand-written replay files and the outputs a run of one writes, for end-to-end tests. */
final class TestReplays {
  private final List<String> lines = new ArrayList<>();

  /** A payment of {@code amount} GBP by {@code account} at {@code time}, at {@code merchant}. */
  TestReplays event(String id, String account, String amount, String merchant, Instant time) {
    return event(id, account, amount, merchant, "GB", time);
  }

  /** As above, in {@code country}. */
  TestReplays event(
      String id, String account, String amount, String merchant, String country, Instant time) {
    lines.add(
        "{\"specversion\":\"1.0\",\"id\":\""
            + id
            + "\",\"source\":\"/test\",\"type\":\"payments.transaction.v1\",\"time\":\""
            + time
            + "\",\"data\":{\"accountId\":\""
            + account
            + "\",\"amount\":"
            + new BigDecimal(amount).toPlainString()
            + ",\"currency\":\"GBP\",\"merchantId\":\""
            + merchant
            + "\",\"country\":\""
            + country
            + "\"}}");
    return this;
  }

  TestReplays advanceWatermarkTo(Instant time) {
    lines.add("{\"advanceWatermarkTo\":\"" + time + "\"}");
    return this;
  }

  TestReplays advanceProcessingTime(Duration step) {
    lines.add("{\"advanceProcessingTime\":\"" + step + "\"}");
    return this;
  }

  TestReplays advanceWatermarkToInfinity() {
    lines.add("{\"advanceWatermarkToInfinity\":true}");
    return this;
  }

  Path writeTo(Path file) throws IOException {
    Files.write(file, (String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8));
    return file;
  }

  static TidemarkOptions options(Path input, Path output, String... extra) {
    List<String> args = new ArrayList<>();
    if (List.of(extra).stream().noneMatch(a -> a.startsWith("--runner="))) {
      args.add("--runner=DirectRunner");
    }
    args.add("--source=replay");
    // The DirectRunner's immutability check walks the whole graph for every bundle, which costs
    // more than the run itself on these graphs; the transforms' unit tests keep it on, and the
    // encodability check (every output encoded) stays on here. One worker thread contends less
    // with the DirectRunner's own driver.
    args.add("--enforceImmutability=false");
    args.add("--targetParallelism=1");
    args.add("--input=" + input);
    args.add("--output=" + output);
    args.addAll(List.of(extra));
    return PipelineOptionsFactory.fromArgs(args.toArray(new String[0]))
        .withValidation()
        .as(TidemarkOptions.class);
  }

  /** The lines of one output, with the wall-clock fields removed and sorted. */
  static TreeSet<String> stableLines(Path output, String name) throws IOException {
    return new TreeSet<>(sortedLines(output, name));
  }

  /**
   * Every line of one output, as canonical JSON without the wall-clock fields ({@code
   * clocks.processingTime}, {@code clocks.decisionTime}), sorted, repeated lines kept.
   */
  static List<String> sortedLines(Path output, String name) throws IOException {
    List<String> lines = new ArrayList<>();
    try (Stream<Path> files = Files.list(output.resolve(name))) {
      for (Path file : (Iterable<Path>) files::iterator) {
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
          JsonNode node = Json.MAPPER.readTree(line);
          if (node.has("clocks")) {
            ObjectNode clocks = (ObjectNode) node.get("clocks");
            clocks.remove("processingTime");
            clocks.remove("decisionTime");
          }
          lines.add(Json.canonical(node));
        }
      }
    }
    Collections.sort(lines);
    return lines;
  }
}
