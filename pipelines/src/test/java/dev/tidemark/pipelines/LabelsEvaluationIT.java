package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.testkit.OutputFiles;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.testkit.generate.LabelStream;
import dev.tidemark.testkit.generate.ReplayClock;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.Evaluation;
import dev.tidemark.transforms.values.Label;
import dev.tidemark.transforms.values.RawRecord;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.testing.TestStream;
import org.joda.time.Instant;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * A run with a labels stream: a generated payments stream replayed on the DirectRunner, its labels
 * (delayed hours to days, some sent twice, some about events that do not exist) read with {@code
 * --labelsInput}, and the evaluation summed over one evaluation window that holds every judgement.
 * The expected counts are recomputed here from the run's own decision files and the labels file, by
 * the documented rules: each label's first copy, the windows that hold its event time, their
 * on-time (else first late) edition, and the horizon.
 */
@RunWith(JUnit4.class)
public class LabelsEvaluationIT {
  @ClassRule public static final TemporaryFolder TMP = new TemporaryFolder();

  private static final Duration SIZE = Duration.ofMinutes(5);
  private static final Duration PERIOD = Duration.ofSeconds(30);
  private static final Duration LATENESS = Duration.ofHours(1);
  private static final Duration HORIZON = Duration.ofDays(7);

  @Test
  public void labelsAreJudgedByTheDecisionsInForceAndEveryLabelIsAccountedFor() throws Exception {
    Path root = TMP.getRoot().toPath();
    Path generated = root.resolve("generated.ndjson");
    EventGenerator generator =
        new EventGenerator(
            GeneratorConfig.builder()
                .seed(23)
                .numEvents(600)
                .numAccounts(40)
                .eventsPerSecond(0.5)
                .cardTestingBurstsPerThousand(15)
                .build());
    generator.writeTo(generated);
    Path replay = root.resolve("replay.ndjson");
    ReplayClock.coarsen(generated, replay, 10);
    Path labels = root.resolve("labels.ndjson");
    LabelStream.write(generator.subjects(), LabelStream.Config.defaults(23), labels);
    // One evaluation window of a year holds every judgement of this stream.
    Path spec =
        TestSpecs.paymentsWith(
            root.resolve("payments.yaml"),
            "evaluation: {window: P1D, every: PT1H, allowedLateness: PT0S}",
            "evaluation: {window: P365D, every: P365D, allowedLateness: PT0S}");
    Path output = root.resolve("run");
    Summary summary =
        Launch.run(
            TestReplays.options(
                replay,
                output,
                "--specUri=" + spec,
                "--earlyFiringDelay=none",
                "--labelsInput=" + labels));
    assertThat(summary.toJson(), summary.identityHolds(), is(true));

    Expected expected = Expected.of(output.resolve("decisions"), labels);
    List<JsonNode> summaries = OutputFiles.records(output.resolve("evaluations"));
    assertThat(summaries.toString(), summaries.size(), is(1));
    JsonNode only = summaries.get(0);
    assertThat(only.at("/model/role").asText(), is("deciding"));
    assertThat(only.at("/model/name").asText(), is("tidemark-fraud-xgb"));
    assertThat(only.at("/pane/timing").asText(), is("ON_TIME"));
    assertThat(only.toString(), only.get("labels").asLong(), is(expected.evaluations));
    assertThat(only.toString(), only.get("positives").asLong(), is(expected.positives));
    assertThat(only.toString(), only.get("flagged").asLong(), is(expected.flagged));
    assertThat(only.toString(), only.get("truePositives").asLong(), is(expected.truePositives));
    assertThat("fraud was labelled and caught", expected.truePositives, greaterThan(0L));
    assertThat(
        OutputFiles.records(output.resolve("unmatched-labels")).size(),
        is((int) expected.unmatched));
    assertThat(
        OutputFiles.records(output.resolve("label-duplicates")).size(),
        is((int) expected.repeatedCopies));
    assertThat(expected.repeatedCopies, greaterThan(0L));
    assertThat(OutputFiles.records(output.resolve("label-dead-letters")).size(), is(0));

    // summary.json accounts for every label and sums the evaluation per model version.
    JsonNode labelCounts = Json.MAPPER.readTree(summary.toJson()).get("labels");
    long records = Files.readAllLines(labels).stream().filter(l -> !l.isBlank()).count();
    assertThat(labelCounts.toString(), labelCounts.get("read").asLong(), is(records));
    assertThat(labelCounts.get("duplicates").asLong(), is(expected.repeatedCopies));
    assertThat(
        labelCounts.get("unmatched").asLong() + labelCounts.get("withoutKeyOrTime").asLong(),
        is(expected.unmatched));
    assertThat(labelCounts.get("evaluations").asLong(), is(expected.evaluations));
    JsonNode model = labelCounts.at("/byModel/deciding/tidemark-fraud-xgb:1");
    assertThat(labelCounts.toString(), model.get("labels").asLong(), is(expected.evaluations));
    assertThat(model.get("truePositives").asLong(), is(expected.truePositives));
    assertThat(model.get("flagged").asLong(), is(expected.flagged));
  }

  @Test
  public void labelsWithAnotherSinkAreRefusedNamingTheFix() {
    TidemarkOptions options =
        TestReplays.options(
            TMP.getRoot().toPath().resolve("none.ndjson"),
            TMP.getRoot().toPath().resolve("out"),
            "--sink=bigquery",
            "--labelsInput=labels/*.ndjson");
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                TidemarkPipeline.build(
                    Pipeline.create(options),
                    options,
                    TestStream.create(RawRecord.RawRecordCoder.of()).advanceWatermarkToInfinity()));
    assertThat(e.getMessage(), e.getMessage().contains("--sink=files"), is(true));
  }

  /** What the documented rules give for the run's decisions and the labels file. */
  private static final class Expected {
    long evaluations;
    long positives;
    long flagged;
    long truePositives;
    long unmatched;
    long repeatedCopies;

    static Expected of(Path decisions, Path labelsFile) throws IOException {
      // The edition in force of each decided window, by key and window start.
      Map<String, Map<Long, JsonNode>> inForce = new HashMap<>();
      for (JsonNode d : OutputFiles.records(decisions)) {
        String timing = d.at("/pane/timing").asText();
        if (!Evaluation.Edition.counts(timing)) {
          continue;
        }
        long start = Instant.parse(d.get("windowStart").asText()).getMillis();
        Map<Long, JsonNode> windows =
            inForce.computeIfAbsent(d.get("accountId").asText(), k -> new HashMap<>());
        JsonNode kept = windows.get(start);
        if (kept == null
            || Evaluation.Edition.isInForceOver(
                timing,
                d.get("version").asLong(),
                kept.at("/pane/timing").asText(),
                kept.get("version").asLong())) {
          windows.put(start, d);
        }
      }
      Expected e = new Expected();
      Set<String> seen = new HashSet<>();
      for (String line : Files.readAllLines(labelsFile)) {
        if (line.isBlank()) {
          continue;
        }
        Label label = Label.parse(line);
        if (!seen.add(label.identity())) {
          e.repeatedCopies++;
          continue;
        }
        if (label.key() == null || label.eventTime() == null) {
          e.unmatched++;
          continue;
        }
        long time = label.eventTime().getMillis();
        long period = PERIOD.toMillis();
        long lastStart = time - Math.floorMod(time, period);
        long judged =
            Math.max(label.time().getMillis(), lastStart + SIZE.toMillis() + LATENESS.toMillis());
        boolean positive = label.value().equals("fraud");
        boolean matched = false;
        Map<Long, JsonNode> windows = inForce.getOrDefault(label.key(), Map.of());
        for (long start = lastStart; start > time - SIZE.toMillis(); start -= period) {
          JsonNode edition = windows.get(start);
          if (edition == null || judged >= start + SIZE.toMillis() + HORIZON.toMillis()) {
            continue;
          }
          matched = true;
          boolean flagged = edition.get("decision").asText().equals("review");
          e.evaluations++;
          e.positives += positive ? 1 : 0;
          e.flagged += flagged ? 1 : 0;
          e.truePositives += positive && flagged ? 1 : 0;
        }
        e.unmatched += matched ? 0 : 1;
      }
      return e;
    }
  }
}
