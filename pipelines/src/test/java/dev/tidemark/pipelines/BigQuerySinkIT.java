package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.closeTo;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.notNullValue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.api.services.bigquery.model.TableRow;
import dev.tidemark.pipelines.io.Sinks;
import dev.tidemark.pipelines.io.Sources;
import dev.tidemark.pipelines.io.bigquery.BigQuerySinks;
import dev.tidemark.pipelines.io.bigquery.BigQueryTables;
import dev.tidemark.pipelines.launch.OptionChecks;
import dev.tidemark.pipelines.launch.OutputDirectory;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.testkit.OutputFiles;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.testkit.generate.ReplayClock;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.DuplicateRecord;
import dev.tidemark.transforms.values.PaymentFeatures;
import dev.tidemark.transforms.values.TooLateRecord;
import java.io.IOException;
import java.io.Serializable;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.io.gcp.bigquery.BigQueryHelpers;
import org.apache.beam.sdk.io.gcp.testing.FakeBigQueryServices;
import org.apache.beam.sdk.io.gcp.testing.FakeDatasetService;
import org.apache.beam.sdk.io.gcp.testing.FakeJobService;
import org.apache.beam.sdk.metrics.MetricNameFilter;
import org.apache.beam.sdk.metrics.MetricQueryResults;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.MetricsFilter;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Instant;
import org.junit.Before;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The BigQuery sink against Beam's in-memory BigQuery fakes: CDC upserts keep one row per window
 * with the latest pane, a replay leaves the tables as they were, an older pane never overwrites a
 * newer one, and rows BigQuery rejects land in the dead-letter table.
 */
@RunWith(JUnit4.class)
public class BigQuerySinkIT {
  private static final String PROJECT = "tidemark-test";
  private static final String DATASET = "tidemark";

  @ClassRule public static final TemporaryFolder FOLDER = new TemporaryFolder();

  private static Path replay;

  private FakeDatasetService datasets;
  private FakeBigQueryServices services;

  /**
   * A replay made by the generator that made {@code samples/sample-replay.ndjson}, with the same
   * kinds of record (duplicates and conflicts, late and too-late events, malformed lines), at a
   * tenth of its size: the bundled sample takes about two minutes per DirectRunner run, and the
   * replay test runs twice.
   */
  @BeforeClass
  public static void generateReplay() throws IOException {
    Path generated = FOLDER.getRoot().toPath().resolve("generated.ndjson");
    new EventGenerator(
            GeneratorConfig.builder()
                .seed(11)
                .numAccounts(20)
                .numEvents(200)
                .eventsPerSecond(0.025) // 133 minutes: too-late events need over 90
                .tooLateFraction(0.03)
                .lateFraction(0.05)
                .build())
        .writeTo(generated);
    // One replay clock step per ten lines: the test compares final rows, not early panes.
    replay = FOLDER.getRoot().toPath().resolve("small.ndjson");
    ReplayClock.coarsen(generated, replay, 10);
  }

  @Before
  public void freshFakes() throws Exception {
    FakeDatasetService.setUp();
    FakeJobService.setUp();
    clearBigQueryCaches();
    datasets = new FakeDatasetService();
    datasets.createDataset(PROJECT, DATASET, "", "", null);
    services =
        new FakeBigQueryServices()
            .withDatasetService(datasets)
            .withJobService(new FakeJobService());
  }

  private static TidemarkOptions options(Path output) {
    TidemarkOptions options =
        TestReplays.options(
            replay,
            output,
            "--sink=bigquery",
            "--bigQueryDataset=" + PROJECT + ":" + DATASET,
            "--bigQueryCreateTables=true",
            "--bigQueryValidate=false");
    return options;
  }

  /** Runs the replay into the fake tables and, in the same pipeline, into NDJSON files. */
  private PipelineResult runReplay(Path output) {
    TidemarkOptions options = options(output);
    Pipeline pipeline = Pipeline.create(options);
    Outputs outputs = TidemarkPipeline.expand(Sources.read(pipeline, options), options);
    Sinks.writeFiles(outputs, output.toString());
    BigQuerySinks.write(outputs, options, services);
    PipelineResult result = pipeline.run();
    result.waitUntilFinish();
    OutputDirectory.touchEmptyOutputs(output);
    return result;
  }

  private List<TableRow> rows(BigQueryTables.Table<?> table) throws Exception {
    return datasets.getTable(BigQueryHelpers.parseTableSpec(tableSpec(table))) == null
        ? List.of()
        : datasets.getAllRows(PROJECT, DATASET, table.name());
  }

  private static String tableSpec(BigQueryTables.Table<?> table) {
    return BigQuerySinks.tableSpec(PROJECT + ":" + DATASET, table);
  }

  /** Rows by primary key, each as canonical JSON. */
  private Map<String, String> snapshot(BigQueryTables.Table<?> table) throws Exception {
    Map<String, String> rows = new TreeMap<>();
    for (TableRow row : rows(table)) {
      String key = (String) row.get(table.primaryKey());
      String previous = rows.put(key, Json.canonical(Json.MAPPER.valueToTree(row)));
      assertThat("two rows with key " + key + " in " + table.name(), previous == null, is(true));
    }
    return rows;
  }

  /** A TIMESTAMP as the fake returns it ("2026-01-01 T00:12:00", UTC). */
  private static Instant instant(Object bigQueryTimestamp) {
    String text = bigQueryTimestamp.toString().replace(" ", "");
    return Instant.parse(text.endsWith("Z") || text.contains("+") ? text : text + "Z");
  }

  @Test
  public void replayLandsOneRowPerWindowWithTheFinalPaneAndReplayingChangesNothing()
      throws Exception {
    Path output = FOLDER.getRoot().toPath().resolve("first");
    Summary summary = Summary.from(runReplay(output), org.joda.time.Duration.ZERO);
    assertThat(summary.identityViolations().toString(), summary.identityHolds(), is(true));
    assertThat(summary.toJson(), summary.tooLate, greaterThan(0L));

    // The final pane of every window, from the file sink of the same run.
    Map<String, JsonNode> finalPanes = finalPanes(output);
    assertThat(finalPanes.size(), greaterThan(50));
    assertThat(
        OutputFiles.records(output.resolve("decisions")).size(), greaterThan(finalPanes.size()));

    List<TableRow> decisions = rows(BigQueryTables.DECISIONS);
    assertThat(decisions, hasSize(finalPanes.size()));
    for (TableRow row : decisions) {
      JsonNode expected = finalPanes.get((String) row.get("decision_id"));
      assertThat("row without a decision: " + row, expected == null, is(false));
      assertThat(
          Long.parseLong(row.get("version").toString()), is(expected.get("version").asLong()));
      assertThat(row.get("pane_timing"), is(expected.get("pane").get("timing").asText()));
      assertThat(row.get("account_id"), is(expected.get("accountId").asText()));
      assertThat(
          instant(row.get("window_start")),
          is(Instant.parse(expected.get("windowStart").asText())));
      assertThat(
          instant(row.get("event_time")),
          is(Instant.parse(expected.get("clocks").get("eventTime").asText())));
      JsonNode features = expected.get("features");
      assertThat(
          Long.parseLong(row.get("txn_count").toString()), is(features.get("txnCount").asLong()));
      assertThat(
          new BigDecimal(row.get("amount_sum").toString())
              .compareTo(features.get("amountSum").decimalValue()),
          is(0));
      // The model scores in float; the fake's proto round trip keeps float precision only.
      double score = expected.get("score").asDouble();
      assertThat(
          Double.parseDouble(row.get("score").toString()), closeTo(score, Math.abs(score) * 1e-6));
      assertThat(row.get("decision"), is(expected.get("decision").asText()));
      assertThat(row.get("model_name"), is(expected.get("model").get("name").asText()));
    }

    // Dead letters, duplicates and too-late records: one row per record of the file sink.
    assertThat(
        rows(BigQueryTables.DEAD_LETTERS),
        hasSize(OutputFiles.records(output.resolve("dead-letters")).size()));
    assertThat(
        rows(BigQueryTables.DUPLICATES),
        hasSize(OutputFiles.records(output.resolve("duplicates")).size()));
    assertThat(
        rows(BigQueryTables.TOO_LATE),
        hasSize(OutputFiles.records(output.resolve("too-late")).size()));
    assertThat(rows(BigQueryTables.DUPLICATES), not(empty()));
    assertThat(rows(BigQueryTables.TOO_LATE), not(empty()));
    assertThat(rows(BigQueryTables.DEAD_LETTERS), not(empty()));

    Map<BigQueryTables.Table<?>, Map<String, String>> before = new HashMap<>();
    for (BigQueryTables.Table<?> table : BigQueryTables.ALL) {
      before.put(table, snapshot(table));
    }
    clearBigQueryCaches();
    Path second = FOLDER.getRoot().toPath().resolve("second");
    runReplay(second);
    for (BigQueryTables.Table<?> table : BigQueryTables.ALL) {
      assertThat(table.name(), snapshot(table), is(before.get(table)));
    }
    // The fake ignores an upsert whose sequence number is not above the row's, as BigQuery orders
    // them, so the table alone cannot show what the second run sent: its final panes, from its own
    // file sink, are the first run's, field for field but for the two wall clocks.
    assertThat(withoutWallClocks(finalPanes(second)), is(withoutWallClocks(finalPanes)));
  }

  /** The highest pane of every decision id in a run's {@code decisions} file output. */
  private static Map<String, JsonNode> finalPanes(Path output) throws IOException {
    Map<String, JsonNode> finalPanes = new HashMap<>();
    for (JsonNode decision : OutputFiles.records(output.resolve("decisions"))) {
      finalPanes.merge(
          decision.get("decisionId").asText(),
          decision,
          (a, b) -> a.get("version").asLong() >= b.get("version").asLong() ? a : b);
    }
    return finalPanes;
  }

  /** Decisions as canonical JSON without {@code processingTime} and {@code decisionTime}. */
  private static Map<String, String> withoutWallClocks(Map<String, JsonNode> decisions) {
    Map<String, String> canonical = new TreeMap<>();
    decisions.forEach(
        (id, decision) -> {
          JsonNode copy = decision.deepCopy();
          ObjectNode clocks = (ObjectNode) copy.get("clocks");
          assertThat(clocks.remove("processingTime"), notNullValue());
          assertThat(clocks.remove("decisionTime"), notNullValue());
          canonical.put(id, Json.canonical(copy));
        });
    return canonical;
  }

  private static Decision pane(String timing, long index, int txnCount) {
    Instant start = Instant.parse("2026-01-01T00:00:00Z");
    Instant event = start.plus(org.joda.time.Duration.standardSeconds(10 + index));
    return Decision.unscored(
        "acct-1",
        start,
        start.plus(org.joda.time.Duration.standardMinutes(5)),
        timing,
        index,
        index == 0,
        "LATE".equals(timing),
        PaymentFeatures.of(txnCount, 1000L * txnCount, 1000L, 1, 1, event, event),
        event.plus(org.joda.time.Duration.standardSeconds(1)));
  }

  private void writeDecisions(Decision... decisions) throws Exception {
    writeDecisions(options(FOLDER.getRoot().toPath().resolve("unused")), decisions);
  }

  private void writeDecisions(TidemarkOptions options, Decision... decisions) throws Exception {
    clearBigQueryCaches();
    Pipeline pipeline = Pipeline.create(options);
    PCollection<Decision> input =
        pipeline.apply(Create.of(List.of(decisions)).withCoder(Decision.DecisionCoder.of()));
    Outputs outputs =
        new Outputs(
            input,
            pipeline.apply("NoDeadLetters", Create.empty(DeadLetter.DeadLetterCoder.of())),
            pipeline.apply("NoDuplicates", Create.empty(DuplicateRecord.DuplicateRecordCoder.of())),
            pipeline.apply("NoTooLate", Create.empty(TooLateRecord.TooLateRecordCoder.of())));
    BigQuerySinks.write(outputs, options, services);
    pipeline.run().waitUntilFinish();
  }

  @Test
  public void theSpecNamesTheTablesOfItsProfile() throws Exception {
    Path spec =
        TestSpecs.paymentsWith(
            FOLDER.getRoot().toPath().resolve("renamed.yaml"),
            "names: {decisions: decisions, deadLetters: dead_letters, duplicates: duplicates,"
                + " tooLate: too_late}",
            "names: {decisions: scored, deadLetters: rejected, duplicates: repeated,"
                + " tooLate: late}");
    TidemarkOptions options = options(FOLDER.getRoot().toPath().resolve("unused"));
    options.as(SpecOptions.class).setSpecUri(spec.toString());
    options.setRunnerProfile("dataflow");
    Decision decision = pane("ON_TIME", 0, 2);
    writeDecisions(options, decision);

    List<TableRow> rows = datasets.getAllRows(PROJECT, DATASET, "scored");
    assertThat(rows, hasSize(1));
    assertThat(rows.get(0).get("decision_id"), is(decision.decisionId()));
    assertThat(rows(BigQueryTables.DECISIONS), hasSize(0));
  }

  @Test
  public void panesArrivingOutOfOrderEndWithTheLatest() throws Exception {
    Decision early = pane("EARLY", 0, 1);
    Decision onTime = pane("ON_TIME", 1, 2);
    Decision late = pane("LATE", 2, 3);

    writeDecisions(onTime);
    writeDecisions(late);
    writeDecisions(early); // older than what the table holds: ignored
    writeDecisions(onTime); // a retried older pane: ignored

    List<TableRow> rows = rows(BigQueryTables.DECISIONS);
    assertThat(rows, hasSize(1));
    TableRow row = rows.get(0);
    assertThat(row.get("decision_id"), is(late.decisionId()));
    assertThat(row.get("pane_timing"), is("LATE"));
    assertThat(Long.parseLong(row.get("version").toString()), is(2L));
    assertThat(Long.parseLong(row.get("txn_count").toString()), is(3L));
    assertThat(row.get("pane_is_last").toString(), is("true"));
  }

  @Test
  public void discardingPanesAreRefusedBecauseTheTableKeepsOnlyTheHighestPane() {
    TidemarkOptions discarding = options(FOLDER.getRoot().toPath().resolve("unused"));
    discarding.setAccumulationMode(TidemarkOptions.AccumulationKind.DISCARDING);
    IllegalArgumentException refused =
        org.junit.Assert.assertThrows(
            IllegalArgumentException.class, () -> OptionChecks.check(discarding));
    assertThat(refused.getMessage(), containsString("--accumulationMode=ACCUMULATING"));

    OptionChecks.check(options(FOLDER.getRoot().toPath().resolve("unused")));
    TidemarkOptions files = options(FOLDER.getRoot().toPath().resolve("unused"));
    files.setAccumulationMode(TidemarkOptions.AccumulationKind.DISCARDING);
    files.setSink(TidemarkOptions.SinkKind.files);
    OptionChecks.check(files);
  }

  @Test
  public void rowsBigQueryRejectsBecomeDeadLettersWithTheRow() throws Exception {
    datasets.setShouldFailRow(
        (Function<TableRow, Boolean> & Serializable)
            row -> Long.valueOf(3).toString().equals(String.valueOf(row.get("txn_count"))));
    Decision accepted = pane("EARLY", 0, 1);
    Decision rejected =
        Decision.unscored(
            "acct-2",
            accepted.windowStart(),
            accepted.windowEnd(),
            "EARLY",
            0,
            true,
            false,
            PaymentFeatures.of(3, 3000L, 1000L, 1, 1, accepted.eventTime(), accepted.eventTime()),
            accepted.processingTime());

    TidemarkOptions options = options(FOLDER.getRoot().toPath().resolve("unused"));
    Pipeline pipeline = Pipeline.create(options);
    PCollection<Decision> input =
        pipeline.apply(
            Create.of(List.of(accepted, rejected)).withCoder(Decision.DecisionCoder.of()));
    BigQuerySinks.write(
        new Outputs(
            input,
            pipeline.apply("NoDeadLetters", Create.empty(DeadLetter.DeadLetterCoder.of())),
            pipeline.apply("NoDuplicates", Create.empty(DuplicateRecord.DuplicateRecordCoder.of())),
            pipeline.apply("NoTooLate", Create.empty(TooLateRecord.TooLateRecordCoder.of()))),
        options,
        services);
    PipelineResult result = pipeline.run();
    result.waitUntilFinish();

    List<TableRow> decisions = rows(BigQueryTables.DECISIONS);
    assertThat(decisions, hasSize(1));
    assertThat(decisions.get(0).get("decision_id"), is(accepted.decisionId()));

    List<TableRow> deadLetters = rows(BigQueryTables.DEAD_LETTERS);
    assertThat(deadLetters, hasSize(1));
    TableRow letter = deadLetters.get(0);
    assertThat(letter.get("reason"), is("sink_rejected"));
    assertThat(letter.get("step"), is(BigQuerySinks.STEP_PREFIX + "decisions"));
    assertThat(
        (String) letter.get("origin"),
        is("bigquery:" + PROJECT + ":" + DATASET + ".decisions/" + rejected.decisionId()));
    assertThat((String) letter.get("message"), containsString("BigQuery rejected the row"));
    JsonNode payload = Json.MAPPER.readTree((String) letter.get("payload"));
    assertThat(payload.get("decision_id").asText(), is(rejected.decisionId()));
    assertThat(payload.get("account_id").asText(), is("acct-2"));
    assertThat(counter(result, BigQuerySinks.SINK_REJECTED_PREFIX + "decisions"), is(1L));
  }

  /**
   * A dead letter the dead-letter table itself rejects is counted and logged with its origin and
   * hash; its payload (personal data, as far as the pipeline knows) never reaches the log.
   */
  @Test
  public void aRowTheDeadLetterTableRejectsIsLoggedWithoutItsPayload() throws Exception {
    String secret = "card-4111-1111-1111-1111";
    datasets.setShouldFailRow(
        (Function<TableRow, Boolean> & Serializable)
            row -> String.valueOf(row.get("payload")).contains("card-4111"));
    DeadLetter letter =
        new DeadLetter(
            dev.tidemark.transforms.values.DeadLetterReason.INVALID_JSON,
            "not JSON",
            "ParseCloudEvents",
            "kafka:payments/1@77",
            ("{\"pan\":\"" + secret).getBytes(StandardCharsets.UTF_8),
            null);

    TidemarkOptions options = options(FOLDER.getRoot().toPath().resolve("unused"));
    Pipeline pipeline = Pipeline.create(options);
    BigQuerySinks.write(
        new Outputs(
            pipeline.apply("NoDecisions", Create.empty(Decision.DecisionCoder.of())),
            pipeline.apply(
                "OneDeadLetter",
                Create.of(List.of(letter)).withCoder(DeadLetter.DeadLetterCoder.of())),
            pipeline.apply("NoDuplicates", Create.empty(DuplicateRecord.DuplicateRecordCoder.of())),
            pipeline.apply("NoTooLate", Create.empty(TooLateRecord.TooLateRecordCoder.of()))),
        options,
        services);
    java.io.PrintStream stderr = System.err;
    java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
    PipelineResult result;
    System.setErr(new java.io.PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      result = pipeline.run();
      result.waitUntilFinish();
    } finally {
      System.setErr(stderr);
    }
    String log = captured.toString(StandardCharsets.UTF_8);
    stderr.print(log);

    assertThat(rows(BigQueryTables.DEAD_LETTERS), empty());
    assertThat(counter(result, BigQuerySinks.SINK_REJECTED_PREFIX + "dead_letters"), is(1L));
    assertThat(log, containsString("rejected a dead letter"));
    assertThat(log, containsString("origin=kafka:payments/1@77"));
    assertThat(log, containsString("rowSha256="));
    assertThat(log, not(containsString("card-4111")));
  }

  private static long counter(PipelineResult result, String name) {
    MetricQueryResults metrics =
        result
            .metrics()
            .queryMetrics(
                MetricsFilter.builder()
                    .addNameFilter(MetricNameFilter.named("tidemark", name))
                    .build());
    long total = 0;
    for (MetricResult<Long> counter : metrics.getCounters()) {
      total += counter.getAttempted();
    }
    return total;
  }

  /**
   * BigQueryIO's created-table, schema and stream-writer caches are static and would leak one
   * test's fake tables into the next; its {@code clearStaticCaches()} is package-private, so it is
   * called reflectively. If a Beam upgrade renames it, this fails loudly rather than leaking.
   */
  static void clearBigQueryCaches() throws Exception {
    java.lang.reflect.Method clear =
        org.apache.beam.sdk.io.gcp.bigquery.BigQueryIO.class.getDeclaredMethod("clearStaticCaches");
    clear.setAccessible(true);
    clear.invoke(null);
  }
}
