package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.pipelines.generate.AdversarialCorpus;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * Three thousand hostile lines (every kind about thirty times) through the whole pipeline (a
 * backfill on the DirectRunner): the run ends, the accounting identity holds, every bad line is a
 * dead letter with the reason its kind calls for, every good line is not, and the same seed gives
 * the same outputs.
 */
@RunWith(JUnit4.class)
public class AdversarialCorpusIT {
  @ClassRule public static final TemporaryFolder FOLDER = new TemporaryFolder();

  private static final long SEED = 20261203L;
  private static final int LINES = 3_000;
  private static final int MAX_EVENT_BYTES = 65_536;

  @Test
  public void hostileLinesAreDeadLetteredByReasonAndTheRunIsReproducible() throws IOException {
    Path root = FOLDER.getRoot().toPath();
    List<AdversarialCorpus.Line> lines = new AdversarialCorpus(SEED, MAX_EVENT_BYTES).lines(LINES);
    Path corpus = root.resolve("corpus.ndjson");
    AdversarialCorpus.write(lines, corpus);

    Summary first = Launch.run(options(corpus, root.resolve("first")));
    Summary second = Launch.run(options(corpus, root.resolve("second")));

    assertThat(first.identityViolations(), is(empty()));
    long valid = lines.stream().filter(l -> l.expected.equals(AdversarialCorpus.VALID)).count();
    assertThat(first.read, is((long) LINES));
    assertThat(first.valid, is(valid));
    assertThat(first.deadLetters, is(LINES - valid));

    Map<Integer, String> reasons = deadLetterReasonsByLine(root.resolve("first"));
    List<String> wrong = new ArrayList<>();
    TreeSet<String> kinds = new TreeSet<>();
    for (int i = 0; i < lines.size(); i++) {
      AdversarialCorpus.Line line = lines.get(i);
      kinds.add(line.kind);
      String actual = reasons.getOrDefault(i + 1, AdversarialCorpus.VALID);
      if (!actual.equals(line.expected)) {
        wrong.add("line " + (i + 1) + " (" + line.kind + "): " + actual + ", not " + line.expected);
      }
    }
    assertThat(wrong.toString(), wrong.size(), is(0));
    assertThat(
        "every hostile kind was generated: " + kinds, kinds.size(), greaterThanOrEqualTo(40));

    for (String name : Outputs.NAMES) {
      assertThat(
          name + " is the same for the same seed",
          TestReplays.stableLines(root.resolve("second"), name),
          is(TestReplays.stableLines(root.resolve("first"), name)));
    }
    assertThat(second.toJsonWithoutWallClock(), is(first.toJsonWithoutWallClock()));
  }

  private static TidemarkOptions options(Path input, Path output) {
    return PipelineOptionsFactory.fromArgs(
            "--runner=DirectRunner",
            "--enforceImmutability=false", // a graph walk per bundle
            "--targetParallelism=1",
            "--source=backfill",
            "--input=" + input,
            "--output=" + output,
            "--maxEventBytes=" + MAX_EVENT_BYTES,
            "--windowSize=PT1H",
            "--windowPeriod=PT1H",
            "--earlyFiringDelay=none")
        .withValidation()
        .as(TidemarkOptions.class);
  }

  /** The reason of each dead letter, by the corpus line number its origin names. */
  private static Map<Integer, String> deadLetterReasonsByLine(Path output) throws IOException {
    Map<Integer, String> reasons = new TreeMap<>();
    try (Stream<Path> files = Files.list(output.resolve(Outputs.NAMES.get(1)))) {
      for (Path file : (Iterable<Path>) files::iterator) {
        for (String text : Files.readAllLines(file, StandardCharsets.UTF_8)) {
          JsonNode deadLetter = Json.MAPPER.readTree(text);
          String origin = deadLetter.get("origin").asText();
          int line = Integer.parseInt(origin.substring(origin.lastIndexOf(':') + 1));
          String previous = reasons.put(line, deadLetter.get("reason").asText());
          assertThat("one dead letter per line: " + origin, previous, is((String) null));
        }
      }
    }
    return reasons;
  }
}
