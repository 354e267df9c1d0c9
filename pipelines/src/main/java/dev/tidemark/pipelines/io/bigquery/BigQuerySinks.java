package dev.tidemark.pipelines.io.bigquery;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.google.api.services.bigquery.model.TableRow;
import dev.tidemark.pipelines.BigQuerySinkOptions;
import dev.tidemark.pipelines.EvaluateDecisions;
import dev.tidemark.pipelines.OutputOptions;
import dev.tidemark.pipelines.Outputs;
import dev.tidemark.pipelines.RunSpecs;
import dev.tidemark.pipelines.SpecDefaults;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.util.Sha256;
import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.DeadLetterReason;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.DriftAlarm;
import dev.tidemark.transforms.values.DuplicateRecord;
import dev.tidemark.transforms.values.EvaluationSummary;
import dev.tidemark.transforms.values.Label;
import dev.tidemark.transforms.values.TooLateRecord;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.io.gcp.bigquery.BigQueryIO;
import org.apache.beam.sdk.io.gcp.bigquery.BigQueryServices;
import org.apache.beam.sdk.io.gcp.bigquery.BigQueryStorageApiInsertError;
import org.apache.beam.sdk.io.gcp.bigquery.RowMutationInformation;
import org.apache.beam.sdk.io.gcp.bigquery.WriteResult;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.Flatten;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.SerializableFunction;
import org.apache.beam.sdk.transforms.windowing.DefaultTrigger;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionList;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The BigQuery sink: the four outputs ({@link #write}), the model loop's label outputs ({@link
 * #writeLabels}) and the drift alarms ({@link #writeDrift}) to their tables of {@link
 * BigQueryTables} in one dataset, all through the Storage Write API with CDC upserts ({@code
 * STORAGE_API_AT_LEAST_ONCE}, a primary key, {@link RowMutationInformation.MutationType#UPSERT}).
 *
 * <p>Why CDC for every table: BigQuery keeps one row per primary key, so a record written twice (a
 * retried bundle, a restarted job, a replay of the same input) lands once, for good. The
 * alternative, append with deterministic insert ids, needs the legacy streaming-insert API, whose
 * id dedup is best effort and lasts about a minute; the Storage Write API has no insert ids.
 *
 * <ul>
 *   <li>Decisions: key {@code decision_id}, change sequence number = pane index, so a later pane
 *       replaces the row and an older pane arriving after it is ignored. Evaluations likewise, key
 *       {@code evaluation_id} (role, model version and window).
 *   <li>Dead letters, duplicates, too-late, unmatched labels, the labels' duplicates and dead
 *       letters, drift alarms: key = a hash of the fields that identify the record, sequence number
 *       0; a repeat rewrites an identical row.
 * </ul>
 *
 * <p>Rows BigQuery rejects ({@link WriteResult#getFailedStorageApiInserts()}) become dead letters
 * with reason {@code sink_rejected}, the rejected row as payload: the four outputs' in the
 * dead-letter table, the model loop's (evaluations, unmatched labels, label duplicates, drift
 * alarms) in the label dead-letter table. Rows a dead-letter table itself rejects cannot go
 * anywhere else in BigQuery: they are counted ({@code tidemark/sinkRejected.dead_letters}, {@code
 * .label_dead_letters}) and logged at ERROR, never dropped silently. The log line names the row
 * (its origin, key and reason) with its size and SHA-256, never its payload: logs are no place for
 * the personal data a payload may hold, and the hash finds the record at its origin. Transient
 * errors (quota, unavailability) are retried by BigQueryIO; on a streaming runner that retry is
 * unbounded and shows up as a stuck write step, not as lost rows.
 */
public final class BigQuerySinks {
  private static final Logger LOG = LoggerFactory.getLogger(BigQuerySinks.class);

  /** The step of a {@code sink_rejected} dead letter: this prefix and the table name. */
  public static final String STEP_PREFIX = "WriteToBigQuery:";

  /** Counter of rows a table rejected: {@code tidemark/sinkRejected.<table>}. */
  public static final String SINK_REJECTED_PREFIX = "sinkRejected.";

  private BigQuerySinks() {}

  /**
   * Writes the outputs to the dataset of {@code --bigQueryDataset}. {@code testServices}, when not
   * null, replaces the BigQuery services (Beam's {@code FakeBigQueryServices} in tests).
   */
  public static void write(
      Outputs outputs, BigQuerySinkOptions options, @Nullable BigQueryServices testServices) {
    String dataset = dataset(options);
    PipelineSpec spec = RunSpecs.of(options);
    Map<String, String> names = SpecDefaults.outputNames(options, PipelineSpec.Sink.BIGQUERY);
    BigQueryTables.Table<Decision> decisionsTable =
        BigQueryTables.decisions(spec).named(names.get("decisions"));
    BigQueryTables.Table<DeadLetter> deadLettersTable =
        BigQueryTables.DEAD_LETTERS.named(names.get("deadLetters"));
    BigQueryTables.Table<DuplicateRecord> duplicatesTable =
        BigQueryTables.DUPLICATES.named(names.get("duplicates"));
    BigQueryTables.Table<TooLateRecord> tooLateTable =
        BigQueryTables.tooLate(spec).named(names.get("tooLate"));
    WriteResult decisions =
        outputs.decisions.apply(
            "WriteDecisionsToBigQuery",
            write(decisionsTable, dataset, options, testServices, d -> d.version()));
    WriteResult duplicates =
        outputs.duplicates.apply(
            "WriteDuplicatesToBigQuery",
            write(duplicatesTable, dataset, options, testServices, d -> 0L));
    WriteResult tooLate =
        outputs.tooLate.apply(
            "WriteTooLateToBigQuery", write(tooLateTable, dataset, options, testServices, t -> 0L));

    int maxPayload = options.as(OutputOptions.class).getMaxDeadLetterPayloadBytes();
    List<PCollection<DeadLetter>> deadLetters = new ArrayList<>();
    deadLetters.add(outputs.deadLetters);
    deadLetters.add(rejected(decisions, decisionsTable, dataset, maxPayload));
    deadLetters.add(rejected(duplicates, duplicatesTable, dataset, maxPayload));
    deadLetters.add(rejected(tooLate, tooLateTable, dataset, maxPayload));
    writeDeadLetters("", deadLetters, deadLettersTable, dataset, options, testServices);
  }

  /**
   * Writes the model loop's label outputs to their tables ({@link BigQueryTables#EVALUATIONS},
   * {@link BigQueryTables#unmatchedLabels}, {@link BigQueryTables#LABEL_DUPLICATES}, {@link
   * BigQueryTables#LABEL_DEAD_LETTERS}), named by the spec. Evaluations use the pane index as the
   * change sequence number, so a later pane of a window replaces its row. Rows these tables reject
   * become {@code sink_rejected} dead letters in the label dead-letter table.
   */
  public static void writeLabels(
      EvaluateDecisions.Result labels,
      BigQuerySinkOptions options,
      @Nullable BigQueryServices testServices) {
    String dataset = dataset(options);
    Map<String, String> names = SpecDefaults.outputNames(options, PipelineSpec.Sink.BIGQUERY);
    BigQueryTables.Table<EvaluationSummary> evaluationsTable =
        BigQueryTables.EVALUATIONS.named(names.get("evaluations"));
    BigQueryTables.Table<Label> unmatchedTable =
        BigQueryTables.unmatchedLabels(RunSpecs.of(options)).named(names.get("unmatchedLabels"));
    BigQueryTables.Table<DuplicateRecord> duplicatesTable =
        BigQueryTables.LABEL_DUPLICATES.named(names.get("labelDuplicates"));
    WriteResult evaluations =
        labels.summaries.apply(
            "WriteEvaluationsToBigQuery",
            write(evaluationsTable, dataset, options, testServices, e -> e.paneIndex()));
    WriteResult unmatched =
        labels.unmatched.apply(
            "WriteUnmatchedLabelsToBigQuery",
            write(unmatchedTable, dataset, options, testServices, l -> 0L));
    WriteResult duplicates =
        labels.duplicates.apply(
            "WriteLabelDuplicatesToBigQuery",
            write(duplicatesTable, dataset, options, testServices, d -> 0L));

    int maxPayload = options.as(OutputOptions.class).getMaxDeadLetterPayloadBytes();
    List<PCollection<DeadLetter>> deadLetters = new ArrayList<>();
    deadLetters.add(labels.deadLetters);
    deadLetters.add(rejected(evaluations, evaluationsTable, dataset, maxPayload));
    deadLetters.add(rejected(unmatched, unmatchedTable, dataset, maxPayload));
    deadLetters.add(rejected(duplicates, duplicatesTable, dataset, maxPayload));
    writeDeadLetters(
        "Label", deadLetters, labelDeadLettersTable(options), dataset, options, testServices);
  }

  /**
   * Writes the drift alarms to {@link BigQueryTables#DRIFT_ALARMS}, named by the spec; every run
   * has them, with labels or without. Rows the table rejects become {@code sink_rejected} dead
   * letters in the label dead-letter table, as the other model-loop tables' do.
   */
  public static void writeDrift(
      PCollection<DriftAlarm> drift,
      BigQuerySinkOptions options,
      @Nullable BigQueryServices testServices) {
    String dataset = dataset(options);
    BigQueryTables.Table<DriftAlarm> driftTable =
        BigQueryTables.DRIFT_ALARMS.named(
            SpecDefaults.outputNames(options, PipelineSpec.Sink.BIGQUERY).get("drift"));
    WriteResult written =
        drift.apply(
            "WriteDriftToBigQuery", write(driftTable, dataset, options, testServices, a -> 0L));
    int maxPayload = options.as(OutputOptions.class).getMaxDeadLetterPayloadBytes();
    writeDeadLetters(
        "Drift",
        List.of(rejected(written, driftTable, dataset, maxPayload)),
        labelDeadLettersTable(options),
        dataset,
        options,
        testServices);
  }

  /** The label dead-letter table under the spec's name. */
  private static BigQueryTables.Table<DeadLetter> labelDeadLettersTable(
      BigQuerySinkOptions options) {
    return BigQueryTables.LABEL_DEAD_LETTERS.named(
        SpecDefaults.outputNames(options, PipelineSpec.Sink.BIGQUERY).get("labelDeadLetters"));
  }

  /**
   * Writes dead letters, the records a step set aside and the rows other tables rejected, into
   * {@code table}; rows that table rejects are counted and logged ({@link LogRejectedFn}). Step
   * names: {@code Collect<prefix>SinkDeadLetters}, {@code Write<prefix>DeadLettersToBigQuery},
   * {@code LogRejected<prefix>DeadLetters}.
   */
  private static void writeDeadLetters(
      String prefix,
      List<PCollection<DeadLetter>> deadLetters,
      BigQueryTables.Table<DeadLetter> table,
      String dataset,
      BigQuerySinkOptions options,
      @Nullable BigQueryServices testServices) {
    WriteResult deadLetterWrite =
        PCollectionList.of(deadLetters)
            .apply("Collect" + prefix + "SinkDeadLetters", Flatten.pCollections())
            .setCoder(DeadLetter.DeadLetterCoder.of())
            .apply(
                "Write" + prefix + "DeadLettersToBigQuery",
                write(table, dataset, options, testServices, d -> 0L));
    deadLetterWrite
        .getFailedStorageApiInserts()
        .apply("LogRejected" + prefix + "DeadLetters", ParDo.of(new LogRejectedFn(table)));
  }

  /**
   * The dataset from the options as BigQueryIO takes it: {@code PROJECT:DATASET} ({@code
   * PROJECT.DATASET} is accepted too), or {@code DATASET} alone in the job's {@code --project}.
   */
  static String dataset(BigQuerySinkOptions options) {
    String dataset =
        options.getBigQueryDataset() == null ? "" : options.getBigQueryDataset().trim();
    if (!dataset.matches("([^:.\\s]+[:.])?[A-Za-z0-9_]+")) {
      throw new IllegalArgumentException(
          "--sink=bigquery needs --bigQueryDataset=PROJECT:DATASET (got "
              + (dataset.isEmpty() ? "nothing" : "'" + dataset + "'")
              + ")");
    }
    int dot = dataset.lastIndexOf('.');
    return dataset.contains(":") || dot < 0
        ? dataset
        : dataset.substring(0, dot) + ":" + dataset.substring(dot + 1);
  }

  /** {@code PROJECT:DATASET.TABLE} of a table. */
  public static String tableSpec(String dataset, BigQueryTables.Table<?> table) {
    return dataset + "." + table.name();
  }

  /** A CDC upsert write of one table; {@code sequence} orders the versions of one row. */
  static <T> BigQueryIO.Write<T> write(
      BigQueryTables.Table<T> table,
      String dataset,
      BigQuerySinkOptions options,
      @Nullable BigQueryServices testServices,
      SerializableFunction<T, Long> sequence) {
    BigQueryIO.Write<T> write =
        BigQueryIO.<T>write()
            .to(tableSpec(dataset, table))
            .withSchema(table.schema())
            .withPrimaryKey(List.of(table.primaryKey()))
            .withFormatFunction(table::row)
            // Keeps the row as formatted for getFailedStorageApiInserts(): Beam cannot rebuild a
            // rejected CDC row from its proto ("Schema field not found: _change_type").
            .withFormatRecordOnFailureFunction(table::row)
            .withMethod(BigQueryIO.Write.Method.STORAGE_API_AT_LEAST_ONCE)
            .withRowMutationInformationFn(
                record ->
                    // _CHANGE_SEQUENCE_NUMBER: hexadecimal, compared as a number by BigQuery.
                    RowMutationInformation.of(
                        RowMutationInformation.MutationType.UPSERT,
                        Long.toHexString(sequence.apply(record))))
            .withCreateDisposition(
                Boolean.TRUE.equals(options.getBigQueryCreateTables())
                    ? BigQueryIO.Write.CreateDisposition.CREATE_IF_NEEDED
                    : BigQueryIO.Write.CreateDisposition.CREATE_NEVER)
            .withWriteDisposition(BigQueryIO.Write.WriteDisposition.WRITE_APPEND);
    if (!Boolean.TRUE.equals(options.getBigQueryValidate())) {
      write = write.withoutValidation();
    }
    return testServices == null ? write : write.withTestServices(testServices);
  }

  /** The rows a table rejected, as dead letters in the global window. */
  private static PCollection<DeadLetter> rejected(
      WriteResult result, BigQueryTables.Table<?> table, String dataset, int maxPayloadBytes) {
    StringBuilder name = new StringBuilder();
    for (String part : table.role().split("_")) {
      name.append(Character.toUpperCase(part.charAt(0))).append(part.substring(1));
    }
    return result
        .getFailedStorageApiInserts()
        .apply(
            "Rejected" + name + "ToDeadLetters",
            ParDo.of(new RejectedToDeadLetterFn(table, tableSpec(dataset, table), maxPayloadBytes)))
        .setCoder(DeadLetter.DeadLetterCoder.of())
        .apply(
            "Unwindow" + name + "Rejects",
            Window.<DeadLetter>into(new GlobalWindows())
                .triggering(DefaultTrigger.of())
                .withAllowedLateness(Duration.ZERO)
                .discardingFiredPanes());
  }

  /**
   * A rejected row as a {@code sink_rejected} dead letter, its payload bounded as every other dead
   * letter's is.
   */
  static final class RejectedToDeadLetterFn
      extends DoFn<BigQueryStorageApiInsertError, DeadLetter> {
    private static final long serialVersionUID = 1L;

    private final String role;
    private final String primaryKey;
    private final String tableSpec;
    private final int maxPayloadBytes;
    private final Counter rejected;

    RejectedToDeadLetterFn(BigQueryTables.Table<?> table, String tableSpec, int maxPayloadBytes) {
      this.role = table.role();
      this.primaryKey = table.primaryKey();
      this.tableSpec = tableSpec;
      this.maxPayloadBytes = maxPayloadBytes;
      this.rejected = Metrics.counter(TidemarkMetrics.NAMESPACE, SINK_REJECTED_PREFIX + role);
    }

    @ProcessElement
    public void process(
        @Element BigQueryStorageApiInsertError error, OutputReceiver<DeadLetter> out) {
      rejected.inc();
      TableRow row = error.getRow();
      Object key = row.get(primaryKey);
      out.output(
          new DeadLetter(
                  DeadLetterReason.SINK_REJECTED,
                  "BigQuery rejected the row: " + error.getErrorMessage(),
                  STEP_PREFIX + role,
                  "bigquery:" + tableSpec + (key == null ? "" : "/" + key),
                  rowJson(row).getBytes(StandardCharsets.UTF_8),
                  null)
              .withPayloadLimit(maxPayloadBytes));
    }
  }

  /** Counts and logs rows the dead-letter table rejected: the end of the line. */
  static final class LogRejectedFn extends DoFn<BigQueryStorageApiInsertError, Void> {
    private static final long serialVersionUID = 1L;

    private final String table;
    private final String primaryKey;
    private final Counter rejected;

    LogRejectedFn(BigQueryTables.Table<?> table) {
      this.table = table.name();
      this.primaryKey = table.primaryKey();
      this.rejected =
          Metrics.counter(TidemarkMetrics.NAMESPACE, SINK_REJECTED_PREFIX + table.role());
    }

    @ProcessElement
    public void process(@Element BigQueryStorageApiInsertError error) {
      rejected.inc();
      LOG.error(logLine(table, primaryKey, error));
    }
  }

  /** Characters of BigQuery's error message kept in a log line. */
  static final int MAX_LOGGED_ERROR_CHARS = 1024;

  /** Stands in the logged error message for a value of the row. */
  static final String REDACTED = "<redacted>";

  /**
   * What is logged of a row the dead-letter table rejected: the table, the row's origin, key and
   * reason, the size and SHA-256 of the row as JSON, and BigQuery's error with every value of the
   * row replaced by {@value #REDACTED} (an error message may quote the row); no payload.
   */
  static String logLine(String table, String primaryKey, BigQueryStorageApiInsertError error) {
    TableRow row = error.getRow();
    byte[] json = rowJson(row).getBytes(StandardCharsets.UTF_8);
    String message = String.valueOf(error.getErrorMessage());
    for (Object value : row.values()) {
      String text = String.valueOf(value);
      if (value != null && text.length() >= 4) {
        message = message.replace(text, REDACTED).replace(escapeJson(text), REDACTED);
      }
    }
    if (message.length() > MAX_LOGGED_ERROR_CHARS) {
      message = message.substring(0, MAX_LOGGED_ERROR_CHARS) + "...";
    }
    return "BigQuery table "
        + table
        + " rejected a dead letter and it cannot be written anywhere else: origin="
        + row.get("origin")
        + " "
        + primaryKey
        + "="
        + row.get(primaryKey)
        + " reason="
        + row.get("reason")
        + " rowBytes="
        + json.length
        + " rowSha256="
        + HexFormat.of().formatHex(Sha256.newDigest().digest(json))
        + " error: "
        + message;
  }

  /** A string as it appears inside a JSON string literal, without the quotes. */
  private static String escapeJson(String text) {
    try {
      String quoted = Json.MAPPER.writeValueAsString(text);
      return quoted.substring(1, quoted.length() - 1);
    } catch (JsonProcessingException e) {
      return text;
    }
  }

  static String rowJson(TableRow row) {
    try {
      return Json.MAPPER.writeValueAsString(row);
    } catch (JsonProcessingException e) {
      return String.valueOf(row);
    }
  }
}
