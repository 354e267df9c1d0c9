package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.api.services.bigquery.model.TableFieldSchema;
import com.google.api.services.bigquery.model.TableRow;
import dev.tidemark.pipelines.io.NdjsonFiles;
import dev.tidemark.pipelines.io.Sinks;
import dev.tidemark.pipelines.io.Sources;
import dev.tidemark.pipelines.io.bigquery.BigQuerySinks;
import dev.tidemark.pipelines.io.bigquery.BigQueryTables;
import dev.tidemark.testkit.OutputFiles;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.testkit.generate.LabelStream;
import dev.tidemark.testkit.generate.ReplayClock;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.DriftAlarm;
import dev.tidemark.transforms.values.DuplicateRecord;
import dev.tidemark.transforms.values.Evaluation;
import dev.tidemark.transforms.values.EvaluationCounts;
import dev.tidemark.transforms.values.EvaluationSummary;
import dev.tidemark.transforms.values.Label;
import java.io.IOException;
import java.io.Serializable;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.io.gcp.bigquery.BigQueryHelpers;
import org.apache.beam.sdk.io.gcp.testing.FakeBigQueryServices;
import org.apache.beam.sdk.io.gcp.testing.FakeDatasetService;
import org.apache.beam.sdk.io.gcp.testing.FakeJobService;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.joda.time.Instant;
import org.junit.Before;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The model loop's outputs in the BigQuery sink, against Beam's in-memory BigQuery fakes: one run
 * of a generated payments stream with its labels writes the evaluations, unmatched labels, label
 * duplicates and dead letters, and drift alarms both to NDJSON files and to the fake tables, and
 * the tables hold what the files hold (the evaluations' last pane per window). A later pane
 * replaces an evaluation's row, and rows a model-loop table rejects land in the label dead-letter
 * table.
 */
@RunWith(JUnit4.class)
public class BigQueryLabelsIT {
  private static final String PROJECT = "tidemark-test";
  private static final String DATASET = "tidemark";

  @ClassRule public static final TemporaryFolder FOLDER = new TemporaryFolder();

  private static Path replay;
  private static Path labels;
  private static Path spec;

  private FakeDatasetService datasets;
  private FakeBigQueryServices services;

  /**
   * A small generated stream and its labels (delayed, some sent twice, some about no event), two
   * lines that are no label, and a spec whose drift test is sensitive enough to fire on it.
   */
  @BeforeClass
  public static void generate() throws IOException {
    Path root = FOLDER.getRoot().toPath();
    Path generated = root.resolve("generated.ndjson");
    EventGenerator generator =
        new EventGenerator(
            GeneratorConfig.builder()
                .seed(31)
                .numEvents(400)
                .numAccounts(30)
                .eventsPerSecond(0.5)
                .cardTestingBurstsPerThousand(15)
                .build());
    generator.writeTo(generated);
    replay = root.resolve("replay.ndjson");
    ReplayClock.coarsen(generated, replay, 10);
    labels = root.resolve("labels.ndjson");
    LabelStream.write(generator.subjects(), LabelStream.Config.defaults(31), labels);
    Files.writeString(
        labels,
        "{not a label\n{\"specversion\":\"1.0\",\"type\":\"payments.transaction.v1\"}\n",
        StandardCharsets.UTF_8,
        StandardOpenOption.APPEND);
    spec =
        TestSpecs.paymentsWith(
            root.resolve("payments.yaml"),
            "scoreThreshold: 50",
            "scoreThreshold: 0.05",
            "errorThreshold: 30",
            "errorThreshold: 0.05");
  }

  @Before
  public void freshFakes() throws Exception {
    FakeDatasetService.setUp();
    FakeJobService.setUp();
    BigQuerySinkIT.clearBigQueryCaches();
    datasets = new FakeDatasetService();
    datasets.createDataset(PROJECT, DATASET, "", "", null);
    services =
        new FakeBigQueryServices()
            .withDatasetService(datasets)
            .withJobService(new FakeJobService());
  }

  private static TidemarkOptions options(Path output) {
    return TestReplays.options(
        replay,
        output,
        "--specUri=" + spec,
        "--labelsInput=" + labels,
        "--sink=bigquery",
        "--bigQueryDataset=" + PROJECT + ":" + DATASET,
        "--bigQueryCreateTables=true",
        "--bigQueryValidate=false");
  }

  @Test
  public void theTablesHoldWhatTheFileSinkWritesOfTheSameRun() throws Exception {
    Path output = FOLDER.getRoot().toPath().resolve("run");
    TidemarkOptions options = options(output);
    Pipeline pipeline = Pipeline.create(options);
    Outputs outputs = TidemarkPipeline.expand(Sources.read(pipeline, options), options);
    EvaluateDecisions.Result result =
        Sources.readLabels(pipeline, options)
            .apply(
                "EvaluateDecisions",
                WatchDecisions.evaluation(
                    outputs, options, WatchDecisions.driftReferences(options)));
    Sinks.writeLabelFiles(result, output.toString(), null);
    pipeline.apply(
        "WriteDriftFiles",
        NdjsonFiles.write(
            Map.of(
                "drift",
                result.drift.apply(
                    "DriftToJson",
                    MapElements.into(TypeDescriptors.strings()).via(DriftAlarm::toJsonLine))),
            output.toString()));
    BigQuerySinks.writeLabels(result, options, services);
    BigQuerySinks.writeDrift(result.drift, options, services);
    pipeline.run().waitUntilFinish();

    // Evaluations: the last pane of every window, field for field.
    Map<String, JsonNode> lastPanes = new HashMap<>();
    List<JsonNode> evaluationLines = OutputFiles.records(output.resolve("evaluations"));
    for (JsonNode line : evaluationLines) {
      lastPanes.merge(
          evaluationKey(
              line.at("/model/role").asText(),
              line.at("/model/name").asText(),
              line.at("/model/version").asText(),
              line.get("windowStart").asText(),
              line.get("windowEnd").asText()),
          line,
          (a, b) -> a.at("/pane/index").asLong() >= b.at("/pane/index").asLong() ? a : b);
    }
    assertThat(lastPanes.size(), greaterThan(5));
    Map<String, Map<String, Object>> expectedEvaluations = new TreeMap<>();
    lastPanes.forEach((key, line) -> expectedEvaluations.put(key, evaluationRow(line)));
    Map<String, Map<String, Object>> actualEvaluations = new TreeMap<>();
    for (TableRow row : rows(BigQueryTables.EVALUATIONS)) {
      Map<String, Object> normal = normalize(row, BigQueryTables.EVALUATIONS.schema().getFields());
      normal.remove("evaluation_id");
      Object previous =
          actualEvaluations.put(
              evaluationKey(
                  (String) normal.get("model_role"),
                  (String) normal.get("model_name"),
                  (String) normal.get("model_version"),
                  (String) normal.get("window_start"),
                  (String) normal.get("window_end")),
              normal);
      assertThat("two rows of one window: " + row, previous == null, is(true));
    }
    assertThat(actualEvaluations, is(expectedEvaluations));

    // Unmatched labels: one row per label, every field.
    Set<Map<String, Object>> expectedUnmatched = new HashSet<>();
    for (JsonNode line : OutputFiles.records(output.resolve("unmatched-labels"))) {
      expectedUnmatched.add(unmatchedRow(line));
    }
    assertThat(expectedUnmatched, not(empty()));
    Set<Map<String, Object>> actualUnmatched = new HashSet<>();
    for (TableRow row : rows(BigQueryTables.UNMATCHED_LABELS)) {
      Map<String, Object> normal =
          normalize(row, BigQueryTables.UNMATCHED_LABELS.schema().getFields());
      normal.remove("label_id");
      actualUnmatched.add(normal);
    }
    assertThat(actualUnmatched, is(expectedUnmatched));

    // The labels' duplicates and dead letters, and the drift alarms: the same records.
    assertThat(
        identities(rows(BigQueryTables.LABEL_DUPLICATES), "source", "id", "event_time"),
        is(identities(output.resolve("label-duplicates"), "source", "id", "eventTime")));
    assertThat(rows(BigQueryTables.LABEL_DUPLICATES), not(empty()));
    assertThat(
        identities(rows(BigQueryTables.LABEL_DEAD_LETTERS), "reason", "step", "origin"),
        is(identities(output.resolve("label-dead-letters"), "reason", "step", "origin")));
    assertThat(rows(BigQueryTables.LABEL_DEAD_LETTERS), hasSize(2));
    List<JsonNode> alarms = OutputFiles.records(output.resolve("drift"));
    assertThat("the sensitive drift test fires", alarms, not(empty()));
    Set<Map<String, Object>> expectedDrift = new HashSet<>();
    alarms.forEach(a -> expectedDrift.add(driftRow(a)));
    Set<Map<String, Object>> actualDrift = new HashSet<>();
    for (TableRow row : rows(BigQueryTables.DRIFT_ALARMS)) {
      Map<String, Object> normal = normalize(row, BigQueryTables.DRIFT_ALARMS.schema().getFields());
      normal.remove("drift_alarm_id");
      actualDrift.add(normal);
    }
    assertThat(actualDrift, is(expectedDrift));
  }

  @Test
  public void aLaterPaneReplacesTheRowAndRejectedRowsBecomeLabelDeadLetters() throws Exception {
    datasets.setShouldFailRow(
        (Function<TableRow, Boolean> & Serializable)
            row -> "rejected".equals(String.valueOf(row.get("model_version"))));
    Instant start = Instant.parse("2026-01-01T00:00:00Z");
    Instant end = start.plus(org.joda.time.Duration.standardDays(1));
    EvaluationSummary early = summary("1", start, end, "EARLY", 0, 1);
    EvaluationSummary onTime = summary("1", start, end, "ON_TIME", 1, 3);
    EvaluationSummary rejected = summary("rejected", start, end, "ON_TIME", 0, 2);
    DriftAlarm alarm = alarm("1", start);
    DriftAlarm rejectedAlarm = alarm("rejected", start);

    TidemarkOptions options = options(FOLDER.getRoot().toPath().resolve("unused"));
    Pipeline pipeline = Pipeline.create(options);
    EvaluateDecisions.Result result =
        new EvaluateDecisions.Result(
            pipeline.apply(
                "Summaries",
                Create.of(List.of(early, onTime, rejected))
                    .withCoder(EvaluationSummary.SummaryCoder.of())),
            pipeline.apply(
                "Alarms",
                Create.of(List.of(alarm, rejectedAlarm)).withCoder(DriftAlarm.AlarmCoder.of())),
            pipeline.apply("NoEvaluations", Create.empty(Evaluation.EvaluationCoder.of())),
            pipeline.apply("NoUnmatched", Create.empty(Label.LabelCoder.of())),
            pipeline.apply("NoDuplicates", Create.empty(DuplicateRecord.DuplicateRecordCoder.of())),
            pipeline.apply("NoDeadLetters", Create.empty(DeadLetter.DeadLetterCoder.of())));
    BigQuerySinks.writeLabels(result, options, services);
    BigQuerySinks.writeDrift(result.drift, options, services);
    PipelineResult run = pipeline.run();
    run.waitUntilFinish();

    List<TableRow> evaluations = rows(BigQueryTables.EVALUATIONS);
    assertThat(evaluations, hasSize(1));
    assertThat(evaluations.get(0).get("pane_timing"), is("ON_TIME"));
    assertThat(Long.parseLong(evaluations.get(0).get("pane_index").toString()), is(1L));
    assertThat(Long.parseLong(evaluations.get(0).get("labels").toString()), is(3L));
    List<TableRow> drift = rows(BigQueryTables.DRIFT_ALARMS);
    assertThat(drift, hasSize(1));
    assertThat(drift.get(0).get("model_version"), is("1"));

    Map<String, TableRow> letters = new TreeMap<>();
    for (TableRow letter : rows(BigQueryTables.LABEL_DEAD_LETTERS)) {
      letters.put((String) letter.get("step"), letter);
    }
    assertThat(
        letters.keySet(),
        is(
            Set.of(
                BigQuerySinks.STEP_PREFIX + "evaluations",
                BigQuerySinks.STEP_PREFIX + "drift_alarms")));
    for (TableRow letter : letters.values()) {
      assertThat(letter.get("reason"), is("sink_rejected"));
      assertThat((String) letter.get("payload"), containsString("\"model_version\":\"rejected\""));
      assertThat(
          (String) letter.get("origin"), containsString("bigquery:" + PROJECT + ":" + DATASET));
    }
    assertThat(rows(BigQueryTables.DEAD_LETTERS), empty());
  }

  private static EvaluationSummary summary(
      String version, Instant start, Instant end, String timing, long pane, int labelCount) {
    EvaluationCounts counts = new EvaluationCounts();
    for (int i = 0; i < labelCount; i++) {
      counts.add(0.1 * (i + 1), i == 0, i < 2, 60_000L * (i + 1));
    }
    return new EvaluationSummary(
        EvaluationSummary.DECIDING, "m", version, start, end, timing, pane, counts);
  }

  private static DriftAlarm alarm(String version, Instant at) {
    return new DriftAlarm(
        EvaluationSummary.DECIDING,
        "m",
        version,
        DriftAlarm.SCORE,
        DriftAlarm.UP,
        at,
        51.5,
        50,
        1200,
        0.013,
        0.07);
  }

  /** The rows of a table; none when nothing was written to it (the fake has no such table). */
  private List<TableRow> rows(BigQueryTables.Table<?> table) throws Exception {
    return datasets.getTable(
                BigQueryHelpers.parseTableSpec(
                    BigQuerySinks.tableSpec(PROJECT + ":" + DATASET, table)))
            == null
        ? List.of()
        : datasets.getAllRows(PROJECT, DATASET, table.name());
  }

  private static String evaluationKey(
      String role, String name, String version, String start, String end) {
    return role + "/" + name + ":" + version + "/" + instant(start) + "/" + instant(end);
  }

  /** The columns of an evaluation line, as the schema page names them. */
  private static Map<String, Object> evaluationRow(JsonNode line) {
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("model_name", line.at("/model/name").asText());
    row.put("model_version", line.at("/model/version").asText());
    row.put("model_role", line.at("/model/role").asText());
    row.put("window_start", instant(line.get("windowStart").asText()));
    row.put("window_end", instant(line.get("windowEnd").asText()));
    row.put("pane_timing", line.at("/pane/timing").asText());
    row.put("pane_index", line.at("/pane/index").asLong());
    for (String count :
        List.of(
            "labels",
            "positives",
            "flagged",
            "truePositives",
            "falsePositives",
            "falseNegatives",
            "trueNegatives")) {
      row.put(snake(count), line.get(count).asLong());
    }
    for (String rate : List.of("precision", "recall", "reviewRate")) {
      putNumber(row, snake(rate), line.get(rate));
    }
    putNumber(row, "label_delay_seconds_mean", line.at("/labelDelaySeconds/mean"));
    putNumber(row, "label_delay_seconds_max", line.at("/labelDelaySeconds/max"));
    List<Object> bins = new ArrayList<>();
    for (JsonNode bin : line.get("calibration")) {
      Map<String, Object> fields = new LinkedHashMap<>();
      putNumber(fields, "from", bin.get("from"));
      putNumber(fields, "to", bin.get("to"));
      fields.put("decisions", bin.get("decisions").asLong());
      putNumber(fields, "mean_score", bin.get("meanScore"));
      putNumber(fields, "positive_rate", bin.get("positiveRate"));
      bins.add(fields);
    }
    row.put("calibration", bins);
    return row;
  }

  private static Map<String, Object> unmatchedRow(JsonNode line) {
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("source", line.get("source").asText());
    row.put("id", line.get("id").asText());
    row.put("time", instant(line.get("time").asText()));
    row.put("subject_source", line.at("/data/subject/source").asText());
    row.put("subject_id", line.at("/data/subject/id").asText());
    if (line.at("/data/key").isTextual()) {
      row.put("account_id", line.at("/data/key").asText());
    }
    if (line.at("/data/eventTime").isTextual()) {
      row.put("event_time", instant(line.at("/data/eventTime").asText()));
    }
    row.put("value", line.at("/data/value").asText());
    return row;
  }

  private static Map<String, Object> driftRow(JsonNode line) {
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("model_name", line.at("/model/name").asText());
    row.put("model_version", line.at("/model/version").asText());
    row.put("model_role", line.at("/model/role").asText());
    row.put("kind", line.get("kind").asText());
    row.put("direction", line.get("direction").asText());
    row.put("at", instant(line.get("at").asText()));
    putNumber(row, "statistic", line.get("statistic"));
    putNumber(row, "threshold", line.get("threshold"));
    row.put("observations", line.get("observations").asLong());
    putNumber(row, "reference_mean", line.get("referenceMean"));
    putNumber(row, "observed_mean", line.get("observedMean"));
    return row;
  }

  /** A JSON number as {@link #number} shows it; a JSON null leaves the column out. */
  private static void putNumber(Map<String, Object> row, String column, JsonNode value) {
    if (value != null && value.isNumber()) {
      row.put(column, number(value.asText()));
    }
  }

  /**
   * A row of the fake as plain values by the schema's types: timestamps as instants, integers as
   * longs, floats by {@link #number}, records as lists of maps; absent values left out.
   */
  @SuppressWarnings("unchecked")
  private static Map<String, Object> normalize(
      Map<String, Object> row, List<TableFieldSchema> fields) {
    Map<String, Object> normal = new LinkedHashMap<>();
    for (TableFieldSchema field : fields) {
      Object value = row.get(field.getName());
      if (value == null) {
        continue;
      }
      switch (field.getType()) {
        case "TIMESTAMP":
          normal.put(field.getName(), instant(value.toString()));
          break;
        case "INTEGER":
          normal.put(field.getName(), Long.parseLong(value.toString()));
          break;
        case "FLOAT":
          normal.put(field.getName(), number(value.toString()));
          break;
        case "RECORD":
          List<Object> records = new ArrayList<>();
          for (Object item : (List<Object>) value) {
            records.add(normalize((Map<String, Object>) item, field.getFields()));
          }
          normal.put(field.getName(), records);
          break;
        default:
          normal.put(field.getName(), value.toString());
      }
    }
    return normal;
  }

  /** A FLOAT to nine decimals: the proto round trip of the fake may change the last digits. */
  private static String number(String text) {
    return new BigDecimal(text)
        .setScale(9, RoundingMode.HALF_UP)
        .stripTrailingZeros()
        .toPlainString();
  }

  /** A time as JSON or the fake gives it ("2026-01-01 T00:12:00", UTC), as an instant's text. */
  private static String instant(String text) {
    String compact = text.replace(" ", "");
    return Instant.parse(compact.endsWith("Z") || compact.contains("+") ? compact : compact + "Z")
        .toString();
  }

  private static String snake(String camel) {
    return camel.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toLowerCase(java.util.Locale.ROOT);
  }

  /** The given columns of each row, joined: the set of records a table holds. */
  private static Set<String> identities(List<TableRow> rows, String... columns) {
    Set<String> identities = new HashSet<>();
    for (TableRow row : rows) {
      List<String> parts = new ArrayList<>();
      for (String column : columns) {
        parts.add(
            column.endsWith("time")
                ? instant(row.get(column).toString())
                : row.get(column).toString());
      }
      identities.add(String.join("|", parts));
    }
    return identities;
  }

  /** The given fields of each record of a file output, joined as {@link #identities} does. */
  private static Set<String> identities(Path directory, String... fields) throws IOException {
    Set<String> identities = new HashSet<>();
    for (JsonNode record : OutputFiles.records(directory)) {
      List<String> parts = new ArrayList<>();
      for (String field : fields) {
        String text = record.get(field).asText();
        parts.add(field.endsWith("Time") ? instant(text) : text);
      }
      identities.add(String.join("|", parts));
    }
    return identities;
  }
}
