package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.model.DefaultModel;
import dev.tidemark.model.ScoreFeatures;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.testkit.OutputFiles;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.testkit.generate.LabelStream;
import dev.tidemark.testkit.generate.ReplayClock;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.DriftReference;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * Drift alarms of whole runs with the bundled model and the default thresholds ({@code
 * labels.drift} of the payments spec), labels read beside the events: none on generated streams
 * without drift, and on a stream whose card-testing fraud becomes fifteen times as frequent at a
 * known moment, a score alarm after that moment and none before. Prints its figures (the false
 * alarms per seed, with the highest the score sums reached; the detection delay). Sized for CI by
 * default (one seed of {@value #CI_EVENTS} events; {@value #CI_HALF} events either side of the
 * shift); docs/labels.md's figures are from {@code -Dtidemark.drift.seeds=101,102,103
 * -Dtidemark.drift.events=1500 -Dtidemark.drift.half=1000}.
 */
@RunWith(JUnit4.class)
public class DriftAlarmsIT {
  @ClassRule public static final TemporaryFolder TMP = new TemporaryFolder();

  private static final int ACCOUNTS = 100;
  private static final double EVENTS_PER_SECOND = 0.5;
  static final int CI_EVENTS = 500;
  static final int CI_HALF = 500;

  /** The seeds of the streams without drift. */
  private static long[] seeds() {
    return java.util.Arrays.stream(System.getProperty("tidemark.drift.seeds", "101").split(","))
        .mapToLong(s -> Long.parseLong(s.trim()))
        .toArray();
  }

  private static GeneratorConfig.Builder stream(long seed, int events) {
    return GeneratorConfig.builder()
        .seed(seed)
        .numEvents(events)
        .numAccounts(ACCOUNTS)
        .eventsPerSecond(EVENTS_PER_SECOND);
  }

  @Test
  public void streamsWithoutDriftRaiseNoAlarm() throws Exception {
    PipelineSpec.Drift drift = SpecLoader.loadBundled("payments").labels().drift();
    DriftReference reference =
        ScoreFeatures.driftReferences(ScoreFeatures.DEFAULT_MODEL)
            .get(DefaultModel.XGBOOST_NAME + ":" + DefaultModel.XGBOOST_VERSION);
    long decisions = 0;
    long evaluations = 0;
    long alarms = 0;
    long[] seeds = seeds();
    int events = Integer.getInteger("tidemark.drift.events", CI_EVENTS);
    for (long seed : seeds) {
      Path dir = TMP.newFolder("steady-" + seed).toPath();
      EventGenerator generator = new EventGenerator(stream(seed, events).build());
      Path generated = dir.resolve("generated.ndjson");
      generator.writeTo(generated);
      Path labels = dir.resolve("labels.ndjson");
      LabelStream.write(generator.subjects(), LabelStream.Config.defaults(seed), labels);
      Run run = run(dir, generated, labels);

      Cusum score = Cusum.replay(run.output.resolve("decisions"), reference.score().mean(), drift);
      System.out.printf(
          Locale.ROOT,
          "drift without drift, seed %d: %d alarms; %d on-time decisions, highest score sums"
              + " %.2f up and %.2f down (threshold %.0f); %d evaluations%n",
          seed,
          run.alarms.size(),
          score.observations,
          score.maxUp,
          score.maxDown,
          drift.scoreThreshold(),
          run.evaluations);
      assertThat(run.alarms.toString(), run.alarms.size(), is(0));
      assertThat(run.summary.at("/drift/alarms").asLong(), is(0L));
      assertThat(run.summary.at("/drift/firstAlarmTime").isNull(), is(true));
      assertThat("the score test saw the decisions", score.observations, greaterThan(0L));
      decisions += score.observations;
      evaluations += run.evaluations;
      alarms += run.alarms.size();
    }
    System.out.printf(
        Locale.ROOT,
        "drift without drift, %d seeds of %d events: %d alarms in %d on-time decisions and %d"
            + " evaluations%n",
        seeds.length,
        events,
        alarms,
        decisions,
        evaluations);
  }

  @Test
  public void moreFraudAfterAKnownMomentAlarmsAfterItAndNotBefore() throws Exception {
    Path dir = TMP.newFolder("shifted").toPath();
    int events = Integer.getInteger("tidemark.drift.half", CI_HALF);
    EventGenerator before = new EventGenerator(stream(201, events).build());
    Instant shift =
        GeneratorConfig.DEFAULT_START.plusMillis((long) (events / EVENTS_PER_SECOND * 1000));
    EventGenerator after =
        new EventGenerator(
            stream(202, events)
                .start(shift)
                .cardTestingBurstsPerThousand(
                    15 * GeneratorConfig.DEFAULT_CARD_TESTING_BURSTS_PER_THOUSAND)
                .build());
    Path generated = dir.resolve("generated.ndjson");
    before.writeTo(generated);
    // The second stream's event ids renamed so that they are not repeats of the first's.
    Path second = dir.resolve("second.ndjson");
    after.writeTo(second);
    Files.writeString(
        generated,
        Files.readString(second, StandardCharsets.UTF_8).replace("\"id\":\"txn-", "\"id\":\"txs-"),
        StandardCharsets.UTF_8,
        java.nio.file.StandardOpenOption.APPEND);
    List<LabelStream.Subject> subjects = new ArrayList<>(before.subjects());
    for (LabelStream.Subject s : after.subjects()) {
      subjects.add(
          new LabelStream.Subject(
              s.source(), s.id().replace("txn-", "txs-"), s.key(), s.eventTimeMs(), s.value()));
    }
    Path labels = dir.resolve("labels.ndjson");
    LabelStream.write(subjects, LabelStream.Config.defaults(201), labels);

    Run run = run(dir, generated, labels);

    List<JsonNode> score =
        run.alarms.stream().filter(a -> a.get("kind").asText().equals("score")).toList();
    assertThat(run.alarms.toString(), score.size(), greaterThan(0));
    for (JsonNode alarm : run.alarms) {
      assertThat(
          alarm.toString(), Instant.parse(alarm.get("at").asText()).isBefore(shift), is(false));
    }
    Instant first = Instant.parse(score.get(0).get("at").asText());
    System.out.printf(
        Locale.ROOT,
        "drift after a shift at %s (card testing x15): %d alarms (%d score), first score alarm at"
            + " %s, %d s of event time after the shift, its sum over %d decisions since the"
            + " start; first alarm of each kind: %s%n",
        shift,
        run.alarms.size(),
        score.size(),
        first,
        (first.toEpochMilli() - shift.toEpochMilli()) / 1000,
        score.get(0).get("observations").asLong(),
        run.alarms.stream()
            .filter(a -> a == score.get(0) || a.get("kind").asText().equals("error"))
            .limit(2)
            .map(a -> a.get("kind").asText() + " at " + a.get("at").asText())
            .toList());
    assertThat(run.summary.at("/drift/alarms").asLong(), is((long) run.alarms.size()));
    assertThat(
        run.summary.at("/drift/firstAlarmTime").asText(), is(run.alarms.get(0).get("at").asText()));
    assertThat(
        run.summary.at("/drift/byModel/deciding/tidemark-fraud-xgb:1/score").asLong(),
        is((long) score.size()));
    assertThat(run.summary.at("/drift/byModel").toString(), not(is("{}")));
  }

  /** A run's drift alarms (in time order), summary and evaluations. */
  private record Run(Path output, List<JsonNode> alarms, JsonNode summary, long evaluations) {}

  private static Run run(Path dir, Path generated, Path labels) throws Exception {
    Path replay = dir.resolve("replay.ndjson");
    ReplayClock.coarsen(generated, replay, 10);
    Path output = dir.resolve("run");
    Summary summary =
        Launch.run(
            TestReplays.options(
                replay, output, "--earlyFiringDelay=none", "--labelsInput=" + labels));
    assertThat(summary.toJson(), summary.identityHolds(), is(true));
    JsonNode json = Json.MAPPER.readTree(summary.toJson());
    List<JsonNode> alarms = OutputFiles.records(output.resolve("drift"));
    alarms.sort(Comparator.comparing(a -> a.get("at").asText()));
    return new Run(output, alarms, json, json.at("/labels/evaluations").asLong());
  }

  /** The score test's sums replayed from a run's decisions, without resets: their highest. */
  private static final class Cusum {
    long observations;
    double maxUp;
    double maxDown;

    static Cusum replay(Path decisions, double mean, PipelineSpec.Drift drift) throws IOException {
      List<JsonNode> onTime = new ArrayList<>();
      for (JsonNode d : OutputFiles.records(decisions)) {
        if (d.at("/pane/timing").asText().equals("ON_TIME") && d.get("score").isNumber()) {
          onTime.add(d);
        }
      }
      onTime.sort(
          Comparator.comparing((JsonNode d) -> Instant.parse(d.get("windowEnd").asText()))
              .thenComparing(d -> d.get("decisionId").asText()));
      Cusum c = new Cusum();
      double up = 0;
      double down = 0;
      for (JsonNode d : onTime) {
        double x = d.get("score").asDouble();
        up = Math.max(0, up + x - mean - drift.scoreDelta());
        down = Math.max(0, down + mean - x - drift.scoreDelta());
        c.maxUp = Math.max(c.maxUp, up);
        c.maxDown = Math.max(c.maxDown, down);
        c.observations++;
      }
      return c;
    }
  }
}
