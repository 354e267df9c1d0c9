package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.pipelines.io.ReplayFile;
import dev.tidemark.pipelines.io.kafka.KafkaSinks;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.testkit.EmbeddedKafka;
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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.checkerframework.checker.nullness.qual.Nullable;
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
    Inputs in = inputs();
    Path output = TMP.getRoot().toPath().resolve("run");
    Summary summary = Launch.run(in.options(output));
    assertThat(summary.toJson(), summary.identityHolds(), is(true));
    assertJudgedInFiles(summary, output, in.labels);
    assertThat(
        OutputFiles.records(output.resolve("drift")).size(),
        is(Json.MAPPER.readTree(summary.toJson()).at("/drift/alarms").asInt()));
  }

  /**
   * The same labels carried by the replay itself ({@code --labelsInReplay}), each arriving on the
   * replay's clock within an hour after its own time: split off the events, judged by the same
   * rules, every label and every event accounted for.
   */
  @Test
  public void labelsInTheReplayArriveOnItsClockAndAreJudgedTheSameWay() throws Exception {
    Inputs in = inputs();
    Path root = TMP.getRoot().toPath();
    Path merged = root.resolve("replay-with-labels.ndjson");
    ReplayClock.withLabels(in.replay, in.labels, merged, Duration.ofHours(1));
    Path output = root.resolve("replay-labels-run");
    Summary summary =
        Launch.run(
            TestReplays.options(
                merged,
                output,
                "--specUri=" + in.spec,
                "--earlyFiringDelay=none",
                "--labelsInReplay=true"));
    assertThat(summary.toJson(), summary.identityHolds(), is(true));
    // The events' side reads every record of the replay without its labels, and no more.
    assertThat(
        summary.read, is((long) ReplayFile.read(in.replay, org.joda.time.Duration.ZERO).records()));
    assertJudgedInFiles(summary, output, in.labels);
  }

  /**
   * The same run with the Kafka sink (transactional): every label output lands in its topic, as the
   * spec names it, and holds what the file sink's directories hold; the evaluations are keyed per
   * model version and window, the pane index in their {@code version} header.
   */
  @Test
  public void withTheKafkaSinkTheLabelOutputsLandInTheirTopics() throws Exception {
    Inputs in = inputs();
    Path output = TMP.getRoot().toPath().resolve("kafka-run");
    try (EmbeddedKafka broker = EmbeddedKafka.start()) {
      TidemarkOptions options =
          in.options(
              output,
              "--sink=kafka",
              "--kafkaSinkMode=transactional",
              "--kafkaBootstrapServers=" + broker.bootstrapServers());
      Map<String, String> topics = KafkaSinks.outputTopics(options);
      assertThat(
          topics.get("evaluations") + " " + topics.get("drift"),
          is("tidemark.evaluations tidemark.drift"));
      broker.createTopics(2, List.copyOf(topics.values()));
      Summary summary = Launch.run(options);
      assertThat(summary.toJson(), summary.identityHolds(), is(true));

      // The decisions as the file sink would hold them: the documented rules apply to them.
      Path decisions = Files.createDirectories(output.resolve("decisions"));
      List<String> lines = new ArrayList<>();
      for (ConsumerRecord<byte[], byte[]> record : read(broker, topics.get("decisions"))) {
        lines.add(new String(record.value(), StandardCharsets.UTF_8));
      }
      Files.write(decisions.resolve("part-0.ndjson"), lines);
      List<ConsumerRecord<byte[], byte[]>> evaluations = read(broker, topics.get("evaluations"));
      for (ConsumerRecord<byte[], byte[]> record : evaluations) {
        JsonNode json = Json.MAPPER.readTree(record.value());
        assertThat(
            new String(record.key(), StandardCharsets.UTF_8),
            is(
                json.at("/model/role").asText()
                    + "/"
                    + json.at("/model/name").asText()
                    + ":"
                    + json.at("/model/version").asText()
                    + "/"
                    + json.get("windowStart").asText()
                    + "/"
                    + json.get("windowEnd").asText()));
        assertThat(
            new String(record.headers().lastHeader("version").value(), StandardCharsets.UTF_8),
            is(json.at("/pane/index").asText()));
      }
      assertJudged(
          summary,
          Expected.of(decisions, in.labels),
          in.labels,
          values(evaluations),
          values(read(broker, topics.get("unmatched-labels"))),
          values(read(broker, topics.get("label-duplicates"))),
          values(read(broker, topics.get("label-dead-letters"))));
      assertThat(
          values(read(broker, topics.get("drift"))).size(),
          is(Json.MAPPER.readTree(summary.toJson()).at("/drift/alarms").asInt()));
    }
  }

  /** {@link #assertJudged} on the file outputs under {@code output}. */
  private static void assertJudgedInFiles(Summary summary, Path output, Path labels)
      throws IOException {
    assertJudged(
        summary,
        Expected.of(output.resolve("decisions"), labels),
        labels,
        OutputFiles.records(output.resolve("evaluations")),
        OutputFiles.records(output.resolve("unmatched-labels")),
        OutputFiles.records(output.resolve("label-duplicates")),
        OutputFiles.records(output.resolve("label-dead-letters")));
  }

  /** The evaluation and the label outputs against the documented rules ({@link Expected}). */
  private static void assertJudged(
      Summary summary,
      Expected expected,
      Path labels,
      List<JsonNode> summaries,
      List<JsonNode> unmatched,
      List<JsonNode> duplicates,
      List<JsonNode> deadLetters)
      throws IOException {
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
    assertThat(unmatched.size(), is((int) expected.unmatched));
    assertThat(duplicates.size(), is((int) expected.repeatedCopies));
    assertThat(expected.repeatedCopies, greaterThan(0L));
    assertThat(deadLetters.size(), is(0));

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

  /** A generated replay and its labels, and a spec whose one evaluation window holds them all. */
  private record Inputs(Path replay, Path labels, Path spec) {
    TidemarkOptions options(Path output, String... extra) {
      List<String> args =
          new ArrayList<>(
              List.of("--specUri=" + spec, "--earlyFiringDelay=none", "--labelsInput=" + labels));
      args.addAll(List.of(extra));
      return TestReplays.options(replay, output, args.toArray(new String[0]));
    }
  }

  private static @Nullable Inputs inputs;

  private static synchronized Inputs inputs() throws IOException {
    if (inputs == null) {
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
      inputs = new Inputs(replay, labels, spec);
    }
    return inputs;
  }

  private static List<ConsumerRecord<byte[], byte[]>> read(EmbeddedKafka broker, String topic) {
    return EmbeddedKafka.readCommitted(broker.bootstrapServers(), topic);
  }

  private static List<JsonNode> values(List<ConsumerRecord<byte[], byte[]>> records)
      throws IOException {
    List<JsonNode> values = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> record : records) {
      values.add(Json.MAPPER.readTree(record.value()));
    }
    return values;
  }

  /**
   * With the BigQuery sink the run writes every model-loop output to its table: the graph has a
   * write step for each (built, not run: no BigQuery is contacted before the run).
   */
  @Test
  public void labelsWithTheBigQuerySinkAreWrittenToItsTables() {
    TidemarkOptions options =
        TestReplays.options(
            TMP.getRoot().toPath().resolve("none.ndjson"),
            TMP.getRoot().toPath().resolve("out"),
            "--sink=bigquery",
            "--bigQueryDataset=p:d",
            "--bigQueryValidate=false",
            "--labelsInput=labels/*.ndjson");
    Pipeline pipeline = Pipeline.create(options);
    TidemarkPipeline.build(
        pipeline,
        options,
        TestStream.create(RawRecord.RawRecordCoder.of()).advanceWatermarkToInfinity());
    Set<String> steps = new HashSet<>();
    pipeline.traverseTopologically(
        new Pipeline.PipelineVisitor.Defaults() {
          @Override
          public CompositeBehavior enterCompositeTransform(TransformHierarchy.Node node) {
            steps.add(node.getFullName());
            return CompositeBehavior.ENTER_TRANSFORM;
          }
        });
    for (String step :
        List.of(
            "WriteEvaluationsToBigQuery",
            "WriteUnmatchedLabelsToBigQuery",
            "WriteLabelDuplicatesToBigQuery",
            "WriteLabelDeadLettersToBigQuery",
            "WriteDriftToBigQuery",
            "WriteDecisionsToBigQuery")) {
      assertThat(step, steps.contains(step), is(true));
    }
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
