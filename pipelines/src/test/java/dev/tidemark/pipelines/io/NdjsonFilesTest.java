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
}
