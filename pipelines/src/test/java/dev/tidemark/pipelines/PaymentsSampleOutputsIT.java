package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertEquals;

import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.Summary;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The default run (the bundled payments spec) on the bundled sample replay gives, record for
 * record, the decisions, dead letters, duplicates and too-late records, and the summary, that the
 * pipeline gave before it read a spec. The expected files under {@code
 * src/test/resources/expected/payments-sample/} were written by the code of the commit before the
 * spec was wired (the hand-written payment parser, features and coders); each holds an output's
 * records as canonical JSON, sorted, without the two wall-clock fields ({@code
 * clocks.processingTime}, {@code clocks.decisionTime}). Regenerate them, only when an output is
 * meant to change, from the project root with:
 *
 * <pre>
 * mvn -B -o -pl pipelines verify -Dit.test=PaymentsSampleOutputsIT -Dtest=none \
 *     -Dsurefire.failIfNoSpecifiedTests=false -Dtidemark.regenerate=true
 * </pre>
 */
@RunWith(JUnit4.class)
public class PaymentsSampleOutputsIT {
  @ClassRule public static final TemporaryFolder FOLDER = new TemporaryFolder();

  private static final Path HOME = Paths.get(System.getProperty("tidemark.home", ".."));
  private static final Path EXPECTED =
      HOME.resolve("pipelines/src/test/resources/expected/payments-sample");

  @Test
  public void theDefaultRunGivesTheOutputsOfTheHandWrittenPipeline() throws IOException {
    Path out = FOLDER.getRoot().toPath().resolve("out");
    // With the local profile's DirectRunner settings, as './tidemark run' runs it: its checks
    // re-encode every element (the other tests keep them on) and change no output.
    Summary summary =
        Launch.run(
            TestReplays.options(
                HOME.resolve("samples/sample-replay.ndjson"),
                out,
                "--enforceImmutability=false",
                "--enforceEncodability=false",
                "--targetParallelism=1"));
    assertThat(summary.identityViolations().toString(), summary.identityHolds(), is(true));
    boolean regenerate = Boolean.getBoolean("tidemark.regenerate");
    if (regenerate) {
      Files.createDirectories(EXPECTED);
      Files.writeString(EXPECTED.resolve("summary.json"), summary.toJsonWithoutWallClock());
    }
    for (String name : Outputs.NAMES) {
      List<String> actual = TestReplays.sortedLines(out, name);
      Path file = EXPECTED.resolve(name + ".ndjson.gz");
      if (regenerate) {
        write(file, actual);
      }
      List<String> expected = read(file);
      assertThat(name + ": number of records", actual.size(), is(expected.size()));
      for (int i = 0; i < expected.size(); i++) {
        assertEquals(name + " record " + i + " (sorted)", expected.get(i), actual.get(i));
      }
    }
    assertEquals(
        Files.readString(EXPECTED.resolve("summary.json")), summary.toJsonWithoutWallClock());
  }

  private static void write(Path file, List<String> lines) throws IOException {
    try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(file))) {
      for (String line : lines) {
        out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
      }
    }
  }

  private static List<String> read(Path file) throws IOException {
    try (InputStream in = new GZIPInputStream(Files.newInputStream(file))) {
      String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      return text.isEmpty() ? List.of() : List.of(text.split("\n"));
    }
  }
}
