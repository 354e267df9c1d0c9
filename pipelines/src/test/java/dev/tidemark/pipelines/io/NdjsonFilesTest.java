package dev.tidemark.pipelines.io;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.is;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** The NDJSON writer: every line in its output's one file, none lost or repeated by the spread. */
@RunWith(JUnit4.class)
public class NdjsonFilesTest {
  @Rule public final transient TestPipeline p = TestPipeline.create();
  @Rule public final transient TemporaryFolder folder = new TemporaryFolder();

  private static List<String> sortedLines(Path file) throws IOException {
    return Files.readAllLines(file, StandardCharsets.UTF_8).stream()
        .sorted()
        .collect(Collectors.toList());
  }

  @Test
  public void eachOutputGetsOneFileWithExactlyItsLines() throws IOException {
    // More lines than groups, arriving one bundle each as a replay's panes do, with repeats (two
    // equal lines hash to the same group) and non-ASCII text.
    List<String> many = new ArrayList<>();
    TestStream.Builder<String> stream = TestStream.create(StringUtf8Coder.of());
    for (int i = 0; i < 2 * NdjsonFiles.SPREAD; i++) {
      String line = "{\"n\":" + (i % 400) + ",\"text\":\"caf\u00e9 \u20ac" + i % 400 + "\"}";
      many.add(line);
      stream = stream.addElements(TimestampedValue.of(line, new Instant(i)));
    }
    PCollection<String> manyLines = p.apply("Many", stream.advanceWatermarkToInfinity());
    PCollection<String> fewLines = p.apply("Few", Create.of(List.of("{\"b\":1}", "{\"b\":2}")));
    Path out = folder.getRoot().toPath();

    p.apply("Write", NdjsonFiles.write(Map.of("many", manyLines, "few", fewLines), out.toString()));
    p.run().waitUntilFinish();

    for (String name : List.of("many", "few")) {
      try (Stream<Path> files = Files.list(out.resolve(name))) {
        assertThat(
            files.map(f -> f.getFileName().toString()).collect(Collectors.toList()),
            contains(name + "-00000-of-00001.ndjson"));
      }
    }
    assertThat(
        sortedLines(out.resolve("many/many-00000-of-00001.ndjson")),
        is(many.stream().sorted().collect(Collectors.toList())));
    assertThat(
        sortedLines(out.resolve("few/few-00000-of-00001.ndjson")),
        contains("{\"b\":1}", "{\"b\":2}"));
  }

  /** Every line of an output's {@code *.ndjson} files, sorted, and the files' names. */
  private static List<String> allLines(Path dir, List<String> names) throws IOException {
    List<String> lines = new ArrayList<>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path file : (Iterable<Path>) files.sorted()::iterator) {
        names.add(file.getFileName().toString());
        lines.addAll(Files.readAllLines(file, StandardCharsets.UTF_8));
      }
    }
    return lines.stream().sorted().collect(Collectors.toList());
  }

  /**
   * A stream that never ends by itself (until the last step here) writes a new file per output for
   * each roll of processing time, and the files together hold exactly the lines, once each: a line
   * far behind the watermark is written too, not dropped as late by the re-windowing.
   */
  @Test
  public void rolledFilesHoldEveryLineOnceAcrossRolls() throws IOException {
    Duration roll = Duration.standardMinutes(1);
    TestStream<String> stream =
        TestStream.create(StringUtf8Coder.of())
            .addElements(
                TimestampedValue.of("{\"a\":1}", new Instant(0)),
                TimestampedValue.of("{\"a\":2}", new Instant(1)))
            .advanceWatermarkTo(new Instant(0).plus(Duration.standardHours(1)))
            .advanceProcessingTime(roll.multipliedBy(2))
            .addElements(
                // Behind the watermark by an hour.
                TimestampedValue.of("{\"a\":3}", new Instant(2)),
                TimestampedValue.of("{\"a\":4}", new Instant(0).plus(Duration.standardHours(2))))
            .advanceProcessingTime(roll.multipliedBy(2))
            .addElements(TimestampedValue.of("{\"a\":5}", new Instant(3)))
            .advanceProcessingTime(roll.multipliedBy(2))
            .advanceWatermarkToInfinity();
    PCollection<String> lines = p.apply("Stream", stream);
    Path out = folder.getRoot().toPath();

    p.apply(
        "Write", NdjsonFiles.write(Map.of("rolled", lines), out.toString()).withRollInterval(roll));
    p.run().waitUntilFinish();

    List<String> names = new ArrayList<>();
    assertThat(
        allLines(out.resolve("rolled"), names),
        contains("{\"a\":1}", "{\"a\":2}", "{\"a\":3}", "{\"a\":4}", "{\"a\":5}"));
    assertThat(names.toString(), names.size(), is(3));
    for (String name : names) {
      assertThat(name, name.matches("rolled-roll-\\d{6}-00000-of-00001\\.ndjson"), is(true));
    }
  }

  @Test
  public void rollIntervalMustBePositive() {
    IllegalArgumentException e =
        org.junit.Assert.assertThrows(
            IllegalArgumentException.class,
            () -> NdjsonFiles.write(Map.of(), "out").withRollInterval(Duration.ZERO));
    assertThat(e.getMessage().startsWith("--fileRollInterval must be a positive"), is(true));
  }
}
