package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** Backfill: NDJSON files through the same transforms in batch, on-time panes only. */
@RunWith(JUnit4.class)
public class BackfillIT {
  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  /** Splits a generated replay into two NDJSON files of events (directives dropped). */
  private Path history() throws IOException {
    ByteArrayOutputStream replay = new ByteArrayOutputStream();
    new EventGenerator(GeneratorConfig.builder().seed(11).numAccounts(20).numEvents(400).build())
        .writeTo(replay);
    byte[] bytes = replay.toByteArray();
    List<byte[]> lines = new ArrayList<>();
    int start = 0;
    for (int i = 0; i < bytes.length; i++) {
      if (bytes[i] == '\n') {
        byte[] line = java.util.Arrays.copyOfRange(bytes, start, i);
        if (!new String(line, StandardCharsets.ISO_8859_1).startsWith("{\"advance")) {
          lines.add(line);
        }
        start = i + 1;
      }
    }
    Path dir = folder.newFolder("history").toPath();
    for (int part = 0; part < 2; part++) {
      ByteArrayOutputStream file = new ByteArrayOutputStream();
      for (int i = part; i < lines.size(); i += 2) {
        file.write(lines.get(i));
        file.write('\n');
      }
      Files.write(dir.resolve("part-" + part + ".ndjson"), file.toByteArray());
    }
    return dir;
  }

  @Test
  public void backfillFiresOnlyOnTimePanesAndAccountsForEveryLine() throws IOException {
    backfill("--runner=DirectRunner");
  }

  /**
   * The FlinkRunner's batch translation gives combine results no pane ({@code NO_FIRING}, timing
   * {@code UNKNOWN}); the decisions still say {@code ON_TIME}, as on the DirectRunner.
   */
  @Test
  public void flinkBatchBackfillFiresOnlyOnTimePanesToo() throws IOException {
    backfill(
        "--runner=FlinkRunner", "--flinkMaster=[local]", "--parallelism=2", "--streaming=false");
  }

  private void backfill(String... runner) throws IOException {
    Path history = history();
    Path out = folder.newFolder().toPath();
    List<String> args = new ArrayList<>(List.of(runner));
    args.add("--source=backfill");
    args.add("--input=" + history.resolve("*.ndjson"));
    args.add("--output=" + out);
    Summary summary =
        Launch.run(
            PipelineOptionsFactory.fromArgs(args.toArray(new String[0]))
                .withValidation()
                .as(TidemarkOptions.class));

    assertThat(summary.identityViolations().toString(), summary.identityHolds(), is(true));
    long lines = 0;
    for (int part = 0; part < 2; part++) {
      lines +=
          Files.readAllLines(
                  history.resolve("part-" + part + ".ndjson"), StandardCharsets.ISO_8859_1)
              .size();
    }
    assertThat(summary.read, is(lines));
    assertThat(summary.deadLetters, greaterThan(0L));
    assertThat(summary.duplicates, greaterThan(0L));
    assertThat(summary.decisionsByTiming.get("ON_TIME"), is(summary.decisions));
    assertThat(summary.decisions, greaterThan(0L));
    assertThat(summary.decisionsByTiming.get("EARLY"), is(0L));
    assertThat(summary.decisionsByTiming.get("LATE"), is(0L));
    assertThat(summary.tooLate, is(0L));
    assertThat(summary.windowed, is(summary.unique));

    // Ingestion time is the files' last-modified time (Beam's glob match reports 0 for it).
    long newest = 0;
    for (int part = 0; part < 2; part++) {
      newest =
          Math.max(
              newest,
              Files.getLastModifiedTime(history.resolve("part-" + part + ".ndjson")).toMillis());
    }
    try (var files = Files.list(out.resolve("decisions"))) {
      for (Path file : (Iterable<Path>) files::iterator) {
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
          long ingested =
              org.joda.time.Instant.parse(
                      dev.tidemark.transforms.util.Json.MAPPER
                          .readTree(line)
                          .get("clocks")
                          .get("ingestionTime")
                          .asText())
                  .getMillis();
          assertThat(line, ingested > newest - 60_000 && ingested <= newest, is(true));
          assertThat(
              line,
              dev.tidemark.transforms.util.Json.MAPPER
                  .readTree(line)
                  .get("pane")
                  .get("timing")
                  .asText(),
              is("ON_TIME"));
        }
      }
    }
  }
}
