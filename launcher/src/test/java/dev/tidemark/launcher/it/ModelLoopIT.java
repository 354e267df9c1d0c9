package dev.tidemark.launcher.it;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.launcher.KafkaFeed;
import dev.tidemark.launcher.LiveRun;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.io.Sinks;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.OutputDirectory;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.testkit.EmbeddedKafka;
import dev.tidemark.testkit.OutputFiles;
import dev.tidemark.testkit.Poll;
import dev.tidemark.testkit.generate.CardTestingStyle;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.testkit.generate.LabelStream;
import dev.tidemark.tools.report.ReportSettings;
import dev.tidemark.tools.report.RunReport;
import dev.tidemark.tools.train.DecisionTrainModel;
import dev.tidemark.tools.train.SpecTrainModel;
import dev.tidemark.tools.train.TrainConfig;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.apache.beam.runners.flink.EmbeddedFlinkJobsShim;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The model's loop closed in one running job, on the DirectRunner and on the embedded Flink
 * profile: a Kafka stream whose card testing moves, part way, from tiny payments at many merchants
 * (what the bundled model learnt) to small ones at one merchant (which it never flags). Drift
 * alarms come after the shift and never before; a model trained from the decisions and labels of
 * the shifted period ({@link DecisionTrainModel}) is copied into the directory the job watches and
 * decides from then on, without a restart, with the old model as the shadow; on the labels of what
 * the new model decided, its precision and recall beat the old model's. Both are read from {@code
 * summary.json}'s evaluation per model version, which the run report shows.
 */
@RunWith(JUnit4.class)
public class ModelLoopIT {
  @ClassRule public static final TemporaryFolder TEMP = new TemporaryFolder();

  private static final int ACCOUNTS = 50;
  private static final double EVENTS_PER_SECOND = 0.5;

  /** Events before the shift, of the shifted period the new model learns from, and after it. */
  private static final int STEADY = 200;

  private static final int SHIFTED = 500;
  private static final int LATER = 300;

  /**
   * The events up to the training and the later ones are fed in this many slices each, each once
   * the previous one is decided. The new model's training and evaluation examples are split by
   * decision time: decided slice by slice, that order follows event time on every worker, where a
   * backlog decided in one burst would order the examples by which worker ran first.
   */
  private static final int FIRST_SLICES = 4;

  private static final int LATER_SLICES = 3;

  /** Card-testing bursts per thousand events after the shift: enough for a model to learn. */
  private static final double SHIFTED_BURSTS = 16;

  private static final String OLD_MODEL = "tidemark-fraud-xgb";

  /** How far behind the last event fed the on-time decisions may stop: see awaitDecided. */
  private static final Duration DECIDED_LAG = Duration.ofMinutes(8);

  /** The length of the run's evaluation windows (tumbling). */
  private static final int EVALUATION_HOURS = 2;

  /** The payments spec's window size plus the run's {@code --allowedLateness}. */
  private static final Duration WINDOW_AND_LATENESS = Duration.ofMinutes(10);

  /** The payments spec's {@code clocks.maxOutOfOrderness}, by which the watermark trails. */
  private static final Duration MAX_OUT_OF_ORDERNESS = Duration.ofSeconds(30);

  private static final Duration WAIT =
      Duration.ofMillis(Long.getLong("tidemark.it.waitMillis", 240_000));

  private static EmbeddedKafka broker;

  @BeforeClass
  public static void start() {
    broker = EmbeddedKafka.start();
  }

  @AfterClass
  public static void stop() {
    broker.close();
  }

  @Test
  public void theLoopClosesOnTheDirectRunner() throws Exception {
    loop("direct", List.of("--runner=DirectRunner", "--blockOnRun=false", "--targetParallelism=2"));
  }

  @Test
  public void theLoopClosesOnEmbeddedFlink() throws Exception {
    loop(
        "flink",
        List.of(
            "--runner=FlinkRunner",
            "--flinkMaster=[local]",
            "--parallelism=2",
            "--checkpointingInterval=1000",
            "--finishBundleBeforeCheckpointing=true"));
  }

  /** The generated stream: events before and after the moment the new model is trained. */
  private record Stream(
      Path first, Path later, Path firstLabels, Path laterLabels, Instant shift, Instant trained) {}

  private static Stream stream(Path dir) throws IOException {
    GeneratorConfig.Builder base =
        GeneratorConfig.builder()
            .numAccounts(ACCOUNTS)
            .eventsPerSecond(EVENTS_PER_SECOND)
            .lateFraction(0)
            .tooLateFraction(0)
            .inlineLabels(false);
    Instant shift =
        GeneratorConfig.DEFAULT_START.plusMillis((long) (STEADY / EVENTS_PER_SECOND * 1000));
    Instant trained = shift.plusMillis((long) (SHIFTED / EVENTS_PER_SECOND * 1000));
    List<EventGenerator> parts =
        List.of(
            new EventGenerator(base.seed(501).numEvents(STEADY).build()),
            new EventGenerator(
                base.seed(502)
                    .numEvents(SHIFTED)
                    .start(shift)
                    .cardTestingStyle(CardTestingStyle.ONE_MERCHANT)
                    .cardTestingBurstsPerThousand(SHIFTED_BURSTS)
                    .takeoverBurstsPerThousand(0)
                    .build()),
            new EventGenerator(
                base.seed(503)
                    .numEvents(LATER)
                    .start(trained)
                    .cardTestingStyle(CardTestingStyle.ONE_MERCHANT)
                    .cardTestingBurstsPerThousand(SHIFTED_BURSTS)
                    .takeoverBurstsPerThousand(0)
                    .build()));
    Path first = dir.resolve("first.ndjson");
    Path later = dir.resolve("later.ndjson");
    List<LabelStream.Subject> subjects = new ArrayList<>();
    for (int i = 0; i < parts.size(); i++) {
      Path part = dir.resolve("part-" + i + ".ndjson");
      parts.get(i).writeTo(part);
      // Each part's ids renamed so that no part repeats another's.
      String prefix = "t" + i + "x-";
      String lines =
          Files.readString(part, StandardCharsets.UTF_8)
              .replace("\"id\":\"txn-", "\"id\":\"" + prefix);
      Path target = i < 2 ? first : later;
      Files.writeString(
          target,
          lines,
          StandardCharsets.UTF_8,
          java.nio.file.StandardOpenOption.CREATE,
          java.nio.file.StandardOpenOption.APPEND);
      for (LabelStream.Subject s : parts.get(i).subjects()) {
        subjects.add(
            new LabelStream.Subject(
                s.source(), s.id().replace("txn-", prefix), s.key(), s.eventTimeMs(), s.value()));
      }
    }
    // Labels within minutes (a tail of ten): the error test's evidence arrives while the shifted
    // period is still being fed.
    Path labels = dir.resolve("labels.ndjson");
    LabelStream.write(
        subjects,
        new LabelStream.Config(
            504, Duration.ofMinutes(2), Duration.ofMinutes(10), 0.2, 0.02, 0.005),
        labels);
    // The labels known when the new model is trained, and those that come after.
    List<String> known = new ArrayList<>();
    List<String> after = new ArrayList<>();
    for (String line : Files.readAllLines(labels, StandardCharsets.UTF_8)) {
      Instant time = Instant.parse(Json.MAPPER.readTree(line).get("time").asText());
      (time.isAfter(trained) ? after : known).add(line);
    }
    Path firstLabels = Files.write(dir.resolve("labels-first.ndjson"), known);
    Path laterLabels = Files.write(dir.resolve("labels-later.ndjson"), after);
    return new Stream(first, later, firstLabels, laterLabels, shift, trained);
  }

  /** A running job on either runner, ended by {@link #end}, which returns its final counters. */
  private interface Job {
    void check();

    /**
     * Waits until the job's counters account for the drift alarms in {@code output}, where ending
     * the job does not drain it: the DirectRunner's cancel drops a bundle's uncommitted counters.
     */
    void settle(Path output) throws InterruptedException;

    PipelineResult end() throws Exception;
  }

  private static Job start(Pipeline pipeline, TidemarkOptions options) throws Exception {
    if (options.getRunner().getSimpleName().equals("FlinkRunner")) {
      EmbeddedFlinkJobsShim.Job job = EmbeddedFlinkJobsShim.start(pipeline);
      return new Job() {
        @Override
        public void check() {
          job.checkRunning();
        }

        @Override
        public void settle(Path output) {
          // Stop-with-savepoint finishes every bundle and commits its counters.
        }

        @Override
        public PipelineResult end() throws Exception {
          return job.stop(org.joda.time.Duration.standardMinutes(1));
        }
      };
    }
    PipelineResult result = pipeline.run();
    return new Job() {
      @Override
      public void check() {
        PipelineResult.State state = result.getState();
        if (state.isTerminal()) {
          throw new IllegalStateException("the job ended: " + state);
        }
      }

      @Override
      public void settle(Path output) throws InterruptedException {
        awaitQuiet("the drift alarms", this, output, "drift");
        await(
            "the drift alarms' counter to match the drift output",
            this,
            () -> {
              JsonNode counted;
              try {
                counted =
                    Json.MAPPER.readTree(
                        Summary.from(result, org.joda.time.Duration.ZERO).toJson());
              } catch (IOException e) {
                throw new IllegalStateException(e);
              }
              return counted.at("/drift/alarms").asLong() == records(output, "drift").size();
            });
      }

      @Override
      public PipelineResult end() throws Exception {
        result.cancel();
        return result;
      }
    };
  }

  private void loop(String name, List<String> runner) throws Exception {
    Path dir = TEMP.newFolder(name).toPath();
    Stream stream = stream(dir);
    Path models = Files.createDirectories(dir.resolve("models"));
    Path oldModel = models.resolve(OLD_MODEL + "-v1.ubj");
    copyResource(
        "/models/" + OLD_MODEL + "-v1.ubj.json", models.resolve(OLD_MODEL + "-v1.ubj.json"));
    copyResource("/models/" + OLD_MODEL + "-v1.ubj", oldModel);
    // The payments spec with evaluation windows of two hours, every two hours: each evaluation
    // is summed once (the bundled day every hour sums it 24 times, which the DirectRunner takes
    // minutes over), and one window holds every judgement of this stream.
    String bundled;
    try (InputStream in =
        Objects.requireNonNull(
            SpecLoader.class
                .getClassLoader()
                .getResourceAsStream(SpecLoader.BUNDLED_RESOURCES + "payments.yaml"))) {
      bundled = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    String evaluation = "evaluation: {window: P1D, every: PT1H, allowedLateness: PT0S}";
    assertThat(bundled, containsString(evaluation));
    Path specFile = dir.resolve("payments.yaml");
    Files.writeString(
        specFile,
        bundled.replace(
            evaluation,
            "evaluation: {window: PT"
                + EVALUATION_HOURS
                + "H, every: PT"
                + EVALUATION_HOURS
                + "H, allowedLateness: PT0S}"));
    Path output = dir.resolve("run");
    String topic = name + ".loop.events";
    String labelsTopic = name + ".loop.labels";
    List<String> args =
        new ArrayList<>(
            List.of(
                "--streaming=true",
                "--source=kafka",
                "--sink=files",
                "--kafkaBootstrapServers=" + broker.bootstrapServers(),
                "--kafkaInputTopic=" + topic,
                "--kafkaConsumerGroup=" + name + "-loop",
                // The job waits while the new model is trained: its partitions must not follow
                // the wall clock meanwhile.
                "--kafkaIdleTimeout=PT1H",
                "--fileRollInterval=PT1S",
                "--earlyFiringDelay=none",
                "--allowedLateness=PT5M",
                "--kafkaLabelsTopic=" + labelsTopic,
                "--modelUri=" + models + "/",
                "--modelWatchInterval=PT1S",
                "--shadowModelUri=" + oldModel,
                "--specUri=" + specFile,
                "--output=" + output));
    args.addAll(runner);
    TidemarkOptions options =
        PipelineOptionsFactory.fromArgs(args.toArray(new String[0]))
            .withValidation()
            .as(TidemarkOptions.class);
    KafkaClients clients = KafkaClients.from(options);
    EmbeddedKafka.createTopics(
        broker.bootstrapServers(), 2, List.of(topic, labelsTopic), Map.of("retention.ms", "-1"));
    Pipeline pipeline = Launch.build(options);
    long started = System.nanoTime();
    Job job = start(pipeline, options);
    String newVersion;
    Instant whole;
    int labelMarkers;
    int labelsSent;
    try {
      Long clock = null;
      for (Path slice : slices(stream.first(), dir, FIRST_SLICES)) {
        KafkaFeed.Fed fed =
            KafkaFeed.produce(clients, topic, slice, KafkaFeed.Mode.STRUCTURED, 0, clock);
        clock = fed.clockMillis;
        awaitDecided(slice.getFileName().toString(), job, output, fed.maxEventTimeMillis);
      }
      LabelFeed labelFeed = new LabelFeed();
      labelFeed.send(clients, labelsTopic, stream.firstLabels());

      // What was learnt by the end of the shifted period: its labels that had arrived by then.
      Path known = dir.resolve("known-labels.ndjson");
      List<String> knownLabels = new ArrayList<>();
      for (String line : Files.readAllLines(stream.firstLabels(), StandardCharsets.UTF_8)) {
        String eventTime = Json.MAPPER.readTree(line).at("/data/eventTime").asText("");
        if (!eventTime.isEmpty() && !Instant.parse(eventTime).isBefore(stream.shift())) {
          knownLabels.add(line);
        }
      }
      Files.write(known, knownLabels, StandardCharsets.UTF_8);
      PipelineSpec spec = SpecLoader.loadBundled("payments");
      TrainConfig config = SpecTrainModel.configFor(spec);
      Path staging = Files.createDirectories(dir.resolve("staging"));
      DecisionTrainModel.Report trained =
          DecisionTrainModel.train(
              spec, output.resolve("decisions"), known, Set.of("fraud"), staging, config);
      System.out.println(name + ": " + trained.summary());
      // Sidecar first, then the model: the watch takes the pair once both are there.
      Path newModel = trained.xgboostModel();
      Path sidecar = newModel.resolveSibling(newModel.getFileName() + ".json");
      Files.copy(sidecar, models.resolve(sidecar.getFileName()));
      Files.copy(newModel, models.resolve(newModel.getFileName()));
      String version = config.xgboostName() + ":" + trained.version();
      newVersion = version;

      // The later events in slices, each waited for: the watch moves the job to the new model
      // within a listing or two, and the first slices' decisions show when it did.
      long lastEvent = 0;
      for (Path slice : slices(stream.later(), dir, LATER_SLICES)) {
        KafkaFeed.Fed fed =
            KafkaFeed.produce(clients, topic, slice, KafkaFeed.Mode.STRUCTURED, 0, clock);
        clock = fed.clockMillis;
        lastEvent = Math.max(lastEvent, fed.maxEventTimeMillis);
        awaitDecided(slice.getFileName().toString(), job, output, fed.maxEventTimeMillis);
      }
      long lastLabel = labelFeed.send(clients, labelsTopic, stream.laterLabels());
      await(
          "decisions of " + version,
          job,
          () ->
              records(output, "decisions").stream()
                  .anyMatch(d -> modelOf(d.get("model")).equals(version)));
      // Every label is judged by the last label's time or the last window's end plus the allowed
      // lateness, within the first evaluation window; its on-time pane fires once the end markers
      // pass its end.
      long lastJudgement = Math.max(lastEvent + WINDOW_AND_LATENESS.toMillis(), lastLabel);
      long evaluationMillis = EVALUATION_HOURS * 3_600_000L;
      Instant end = Instant.ofEpochMilli((lastJudgement / evaluationMillis + 1) * evaluationMillis);
      assertThat(
          "every judgement in the first evaluation window",
          end,
          is(GeneratorConfig.DEFAULT_START.plusMillis(evaluationMillis)));
      // A live stream does not stop: the too-late gate moves the watermark downstream only to
      // window boundaries of events it has seen (GateTooLateFn), so after the last event the
      // decisions' watermark stays about a window behind it, and every judgement with it. A
      // sparse heartbeat of payments (one a minute, no labels) carries event time on.
      long past = end.toEpochMilli() + 2 * WINDOW_AND_LATENESS.toMillis();
      KafkaFeed.produce(
          clients, topic, heartbeat(dir, lastEvent, past), KafkaFeed.Mode.STRUCTURED, 0, clock);
      whole = end;
      long marker = past + MAX_OUT_OF_ORDERNESS.toMillis();
      LiveRun.sendEndMarkers(clients, topic, marker, org.joda.time.Duration.millis(1));
      labelMarkers =
          LiveRun.sendEndMarkers(clients, labelsTopic, marker, org.joda.time.Duration.millis(1));
      labelsSent = labelFeed.records;
      assertThat(labelFeed.binary, greaterThan(0));
      await(
          "the evaluation window that holds every judgement, ending " + end,
          job,
          () ->
              records(output, "evaluations").stream()
                  .anyMatch(
                      e ->
                          Instant.parse(e.get("windowEnd").asText()).equals(end)
                              && e.at("/pane/timing").asText().equals("ON_TIME")
                              && modelOf(e.get("model")).equals(version)));
      job.settle(output);
    } catch (Exception | AssertionError e) {
      job.end();
      throw e;
    }
    PipelineResult result = job.end();
    Summary summary =
        Summary.from(
                result, org.joda.time.Duration.millis((System.nanoTime() - started) / 1_000_000))
            .withRun(options);
    // As Launch.run ends a run: empty outputs as empty directories, then the summary.
    OutputDirectory.touchEmptyOutputs(output, Sinks.fileNames(options));
    OutputDirectory.touchEmptyOutputs(output, Sinks.labelFileNames(options));
    OutputDirectory.touchEmptyOutputs(output, Sinks.driftFileNames(options));
    summary.writeTo(output.resolve("summary.json"));
    JsonNode json = Json.MAPPER.readTree(summary.toJson());
    Path report = RunReport.write(output, ReportSettings.DEFAULTS);

    // The alarm: after the shift, none before.
    List<JsonNode> alarms = records(output, "drift");
    assertThat(alarms.isEmpty(), is(false));
    for (JsonNode alarm : alarms) {
      assertThat(
          alarm.toString(),
          Instant.parse(alarm.get("at").asText()).isBefore(stream.shift()),
          is(false));
    }
    assertThat(json.at("/drift/alarms").asLong(), is((long) alarms.size()));

    // Every label read, binary-mode ones too: only the end markers are not labels.
    assertThat(json.at("/labels/read").asLong(), is((long) labelsSent + labelMarkers));
    assertThat(json.at("/labels/deadLetters").asLong(), is((long) labelMarkers));

    // The swap: one job decided with both versions.
    String oldVersion = OLD_MODEL + ":1";
    JsonNode byModel = json.at("/labels/byModel");
    JsonNode decidingOld = byModel.at("/deciding/" + oldVersion);
    JsonNode decidingNew = byModel.at("/deciding/" + newVersion);
    JsonNode shadowOld = byModel.at("/shadow/" + oldVersion);
    assertThat(byModel.toString(), decidingOld.path("labels").asLong(), greaterThan(0L));
    assertThat(byModel.toString(), decidingNew.path("labels").asLong(), greaterThan(0L));

    // The window that holds every judgement says what the run's counters say: one on-time pane
    // with labels per model version and role, and none without labels.
    Map<String, Integer> panes = new java.util.TreeMap<>();
    int empty = 0;
    for (JsonNode window : records(output, "evaluations")) {
      if (!Instant.parse(window.get("windowEnd").asText()).equals(whole)
          || !window.at("/pane/timing").asText().equals("ON_TIME")) {
        continue;
      }
      if (window.get("labels").asLong() == 0) {
        empty++;
        continue;
      }
      String role = window.at("/model/role").asText();
      String model = modelOf(window.get("model"));
      panes.merge(role + " " + model, 1, Integer::sum);
      JsonNode total = byModel.path(role).path(model);
      for (String figure : List.of("labels", "positives", "flagged", "truePositives")) {
        assertThat(
            role + " " + model + " " + figure,
            window.get(figure).asLong(),
            is(total.path(figure).asLong()));
      }
    }
    assertThat(
        panes.toString(),
        panes,
        is(
            Map.of(
                "deciding " + oldVersion, 1,
                "deciding " + newVersion, 1,
                "shadow " + oldVersion, 1)));
    assertThat("on-time panes of the whole window without labels", empty, is(0));

    // The old model on the labels of what the new one decided: as the shadow it judged every
    // decision, as the decider those before the swap, so the difference is the rest.
    long labels = shadowOld.path("labels").asLong() - decidingOld.path("labels").asLong();
    long tp = shadowOld.path("truePositives").asLong() - decidingOld.path("truePositives").asLong();
    long fp =
        shadowOld.path("falsePositives").asLong() - decidingOld.path("falsePositives").asLong();
    long fn =
        shadowOld.path("falseNegatives").asLong() - decidingOld.path("falseNegatives").asLong();
    assertThat(byModel.toString(), labels, is(decidingNew.path("labels").asLong()));
    assertThat(
        byModel.toString(),
        tp + fn,
        is(
            decidingNew.path("truePositives").asLong()
                + decidingNew.path("falseNegatives").asLong()));
    double oldPrecision = tp + fp == 0 ? 0 : (double) tp / (tp + fp);
    double oldRecall = tp + fn == 0 ? 0 : (double) tp / (tp + fn);
    double newPrecision = decidingNew.path("precision").asDouble(0);
    double newRecall = decidingNew.path("recall").asDouble(0);
    System.out.printf(
        Locale.ROOT,
        "%s: %d alarms, the first at %s (shift at %s); on the %d labels the new model decided:"
            + " %s precision %.3f recall %.3f, %s precision %.3f recall %.3f (%d of %d flagged)%n",
        name,
        alarms.size(),
        json.at("/drift/firstAlarmTime").asText(),
        stream.shift(),
        labels,
        newVersion,
        newPrecision,
        newRecall,
        oldVersion,
        oldPrecision,
        oldRecall,
        tp + fp,
        labels);
    assertThat(byModel.toString(), newRecall > oldRecall, is(true));
    assertThat(byModel.toString(), newPrecision > oldPrecision, is(true));

    String html = Files.readString(report, StandardCharsets.UTF_8);
    assertThat(html, containsString(newVersion));
    assertThat(html, containsString(oldVersion));
    assertThat(html, containsString("Drift alarms"));
  }

  /**
   * Sends each label as it would arrive: structured mode, its Kafka timestamp its own {@code time}
   * (the source judges a record's time against it). Returns the latest label time.
   */
  /**
   * Sends labels to their topic, each stamped with its own time, alternately in structured and
   * binary mode (as the events' feed does), and counts them.
   */
  private static final class LabelFeed {
    int records;
    int binary;

    /** Sends the labels of {@code labels}; returns the latest label time among them. */
    long send(KafkaClients clients, String topic, Path labels) throws Exception {
      Map<String, Object> config = clients.merged(new java.util.HashMap<>());
      config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
      config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
      long last = 0;
      try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(config)) {
        for (String line : Files.readAllLines(labels, StandardCharsets.UTF_8)) {
          long time = Instant.parse(Json.MAPPER.readTree(line).get("time").asText()).toEpochMilli();
          last = Math.max(last, time);
          ProducerRecord<String, byte[]> record =
              records % 2 == 1 ? KafkaFeed.binaryRecord(topic, time, null, line) : null;
          if (record == null) {
            record =
                KafkaFeed.structuredRecord(
                    topic, time, null, line.getBytes(StandardCharsets.UTF_8));
          } else {
            binary++;
          }
          producer.send(record);
          records++;
        }
        producer.flush();
      }
      return last;
    }
  }

  /** Payments of one account, a minute apart, after {@code fromMillis} up to {@code toMillis}. */
  private static Path heartbeat(Path dir, long fromMillis, long toMillis) throws IOException {
    List<String> lines = new ArrayList<>();
    int n = 0;
    for (long t = fromMillis + 60_000; t <= toMillis; t += 60_000) {
      if (n > 0) {
        lines.add("{\"advanceProcessingTime\":\"PT60S\"}");
      }
      lines.add(
          String.format(
              Locale.ROOT,
              "{\"specversion\":\"1.0\",\"id\":\"heartbeat-%05d\",\"source\":\"/tidemark/loop\","
                  + "\"type\":\"payments.transaction.v1\",\"time\":\"%s\","
                  + "\"datacontenttype\":\"application/json\",\"data\":{\"accountId\":"
                  + "\"acct-heartbeat\",\"amount\":10.00,\"currency\":\"GBP\","
                  + "\"merchantId\":\"m-0001\",\"country\":\"GB\"}}",
              n++,
              Instant.ofEpochMilli(t)));
    }
    return Files.write(dir.resolve("heartbeat.ndjson"), lines, StandardCharsets.UTF_8);
  }

  /** {@code file}'s lines in {@code count} files of about equal length, in order. */
  private static List<Path> slices(Path file, Path dir, int count) throws IOException {
    List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    String stem = file.getFileName().toString().replaceFirst("\\.ndjson$", "");
    List<Path> slices = new ArrayList<>();
    int size = (lines.size() + count - 1) / count;
    for (int i = 0; i * size < lines.size(); i++) {
      slices.add(
          Files.write(
              dir.resolve(stem + "-" + i + ".ndjson"),
              lines.subList(i * size, Math.min(lines.size(), (i + 1) * size)),
              StandardCharsets.UTF_8));
    }
    return slices;
  }

  private static String modelOf(JsonNode model) {
    return model == null ? "" : model.path("name").asText() + ":" + model.path("version").asText();
  }

  private static void copyResource(String resource, Path target) throws IOException {
    try (InputStream in =
        Objects.requireNonNull(
            ModelLoopIT.class.getResourceAsStream(resource), "no resource " + resource)) {
      Files.copy(in, target);
    }
  }

  private static List<JsonNode> records(Path output, String name) {
    Path directory = output.resolve(name);
    if (!Files.isDirectory(directory)) {
      return List.of();
    }
    try {
      return OutputFiles.records(directory);
    } catch (IOException e) {
      return List.of();
    }
  }

  private static void await(String what, Job job, BooleanSupplier condition)
      throws InterruptedException {
    Poll.until(what, WAIT, job::check, condition, () -> "the job is running");
  }

  /**
   * Waits until windows that end within {@link #DECIDED_LAG} of {@code lastEventMillis} have their
   * on-time decisions, and the decisions then stop changing. The lag covers the watermark's
   * out-of-orderness and the sources' and the too-late gate's steps, which trail the events by up
   * to a few minutes when a feed stops.
   */
  private static void awaitDecided(String what, Job job, Path output, long lastEventMillis)
      throws InterruptedException {
    Instant due = Instant.ofEpochMilli(lastEventMillis - DECIDED_LAG.toMillis());
    await(
        "the on-time decisions of " + what + " up to " + due,
        job,
        () ->
            records(output, "decisions").stream()
                .anyMatch(d -> !Instant.parse(d.get("windowEnd").asText()).isBefore(due)));
    awaitQuiet("the decisions of " + what, job, output, "decisions");
  }

  /** Waits until the output {@code name} holds records and has not changed for three seconds. */
  private static void awaitQuiet(String what, Job job, Path output, String name)
      throws InterruptedException {
    long[] last = {-1, System.nanoTime()};
    await(
        what,
        job,
        () -> {
          long count = records(output, name).size();
          if (count != last[0]) {
            last[0] = count;
            last[1] = System.nanoTime();
            return false;
          }
          return count > 0 && System.nanoTime() - last[1] >= 3_000_000_000L;
        });
  }
}
