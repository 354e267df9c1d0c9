package dev.tidemark.launcher.check;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.everyItem;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.hasSize;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.io.ReplayFile;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.RawRecord;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.testing.TestStream;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** A reference computed in parts has exactly the outputs and counters of one run. */
@RunWith(JUnit4.class)
public class ReferenceTest {
  private static final int PARTS = 3;

  @Rule public final TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void aReplayInPartsGivesTheOutputsAndCountersOfOneRun() throws Exception {
    // Duplicates, conflicts, malformed, late and too-late records over 12 accounts and more than
    // two and a half hours of event time, so that too-late events arrive inside the stream.
    Path input = tmp.newFile("events.ndjson").toPath();
    new EventGenerator(
            GeneratorConfig.builder()
                .seed(11)
                .numEvents(300)
                .numAccounts(12)
                .eventsPerSecond(300 / 9000.0)
                .windowSize(Duration.ofMinutes(30))
                .tooLateFraction(0.05)
                .build())
        .writeTo(input);
    TidemarkOptions streaming = PipelineOptionsFactory.fromArgs().as(TidemarkOptions.class);
    ReplayFile replay =
        ReplayFile.read(
            input, org.joda.time.Duration.standardSeconds(30), ReplayFile.DEFAULT_MAX_FUTURE_SKEW);

    List<Integer> recordsPerPart = new ArrayList<>();
    for (TestStream<RawRecord> part : Reference.split(replay.stream(), PARTS)) {
      int records = 0;
      for (TestStream.Event<RawRecord> event : part.getEvents()) {
        if (event instanceof TestStream.ElementEvent<RawRecord> elements) {
          for (Object ignored : elements.getElements()) {
            records++;
          }
        }
      }
      recordsPerPart.add(records);
    }
    assertThat(recordsPerPart, hasSize(PARTS));
    assertThat(recordsPerPart, everyItem(greaterThan(0)));
    assertThat(
        recordsPerPart.stream().mapToInt(Integer::intValue).sum(), equalTo(replay.records()));

    Reference whole = Reference.compute(input, replay, 1, streaming, tmp.newFolder("one").toPath());
    Reference parts =
        Reference.compute(input, replay, PARTS, streaming, tmp.newFolder("parts").toPath());

    assertThat(whole.summary().duplicates(), greaterThan(0L));
    assertThat(whole.summary().deadLetters(), greaterThan(0L));
    assertThat(whole.summary().tooLate(), greaterThan(0L));
    assertThat(counters(parts), equalTo(counters(whole)));
    OutputView expected = whole.outputs();
    OutputView actual = parts.outputs();
    assertThat(actual.finalState(), equalTo(expected.finalState()));
    assertThat(actual.versions(), equalTo(expected.versions()));
    assertThat(actual.deadLetters(), equalTo(expected.deadLetters()));
    assertThat(actual.duplicates(), equalTo(expected.duplicates()));
    assertThat(actual.tooLate(), equalTo(expected.tooLate()));
  }

  /** summary.json without what depends on the wall clock. */
  private static ObjectNode counters(Reference reference) throws Exception {
    return (ObjectNode) Json.MAPPER.readTree(reference.summary().toJsonWithoutWallClock());
  }
}
