package dev.tidemark.pipelines.io.bigquery;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.api.services.bigquery.model.TableFieldSchema;
import com.google.api.services.bigquery.model.TableRow;
import com.google.api.services.bigquery.model.TableSchema;
import dev.tidemark.pipelines.SpecDefaults;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.util.Sha256;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.DriftAlarm;
import dev.tidemark.transforms.values.DuplicateRecord;
import dev.tidemark.transforms.values.EvaluationCounts;
import dev.tidemark.transforms.values.EvaluationSummary;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.Label;
import dev.tidemark.transforms.values.TooLateRecord;
import java.io.IOException;
import java.io.Serializable;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.transforms.SerializableFunction;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * The one definition of Tidemark's BigQuery tables, the four outputs' and the model loop's five:
 * their columns, primary keys and how each record becomes a row. The pipeline's table schemas, the
 * Terraform schema files ({@code terraform/schemas/<table>.json}) and {@code
 * docs/bigquery-schema.md} are all produced from here; a test fails when a checked-in file differs.
 * Regenerate them from the project directory with
 *
 * <pre>
 * mvn -B -q -o -pl pipelines test -Dtest=BigQueryTablesTest -Dtidemark.regenerate=true
 * </pre>
 *
 * <p>Columns are the snake_case of the JSON fields of the file and Kafka sinks, nested objects
 * flattened ({@code pane.timing} becomes {@code pane_timing}, {@code clocks.eventTime} becomes
 * {@code event_time}). Types use BigQuery's legacy names (INTEGER, FLOAT, BOOLEAN), which is what
 * the BigQuery API returns, so Terraform sees no spurious diff.
 *
 * <p>Every table is written with Storage Write API CDC upserts keyed by its primary key, so a
 * replayed or retried record rewrites its own row instead of adding one. Decisions and evaluations
 * use the pane index as the change sequence number (a later pane wins, an older one never
 * overwrites it); the other tables key each record by a hash of the fields that identify it and
 * never change it.
 */
public final class BigQueryTables {
  /** A column: name, BigQuery type, mode, description, and how a record fills it. */
  public static final class Column<T> implements Serializable {
    private static final long serialVersionUID = 1L;

    final String name;
    final String type;
    final String mode;
    final String description;
    final SerializableFunction<T, @Nullable Object> value;
    final List<? extends Column<?>> fields;

    Column(
        String name,
        String type,
        String mode,
        String description,
        SerializableFunction<T, @Nullable Object> value,
        List<? extends Column<?>> fields) {
      this.name = name;
      this.type = type;
      this.mode = mode;
      this.description = description;
      this.value = value;
      this.fields = fields;
    }

    public String name() {
      return name;
    }

    public String type() {
      return type;
    }

    public String mode() {
      return mode;
    }

    public String description() {
      return description;
    }

    TableFieldSchema schema() {
      TableFieldSchema field =
          new TableFieldSchema()
              .setName(name)
              .setType(type)
              .setMode(mode)
              .setDescription(description);
      if (!fields.isEmpty()) {
        List<TableFieldSchema> nested = new ArrayList<>();
        fields.forEach(f -> nested.add(f.schema()));
        field.setFields(nested);
      }
      return field;
    }
  }

  /** One table: its name, primary key and columns, and the row of a record. */
  public static final class Table<T> implements Serializable {
    private static final long serialVersionUID = 1L;

    private final String name;
    private final String role;
    private final String description;
    private final String primaryKey;
    private final List<Column<T>> columns;

    Table(String name, String description, String primaryKey, List<Column<T>> columns) {
      this(name, name, description, primaryKey, columns);
    }

    private Table(
        String name, String role, String description, String primaryKey, List<Column<T>> columns) {
      this.name = name;
      this.role = role;
      this.description = description;
      this.primaryKey = primaryKey;
      this.columns = List.copyOf(columns);
      if (columns.stream().noneMatch(c -> c.name.equals(primaryKey))) {
        throw new IllegalStateException(name + ": no primary key column " + primaryKey);
      }
    }

    /** The table name inside the dataset (also the Terraform table_id). */
    public String name() {
      return name;
    }

    /**
     * The output the table holds, as its default name ({@code decisions}, {@code dead_letters},
     * ..., {@code drift_alarms}): step, metric and schema file names use it, so that a table
     * renamed by a spec keeps them.
     */
    public String role() {
      return role;
    }

    /**
     * A table of the same columns and key for another output: {@code role} is its default name, and
     * the name it has until {@link #named}.
     */
    Table<T> forRole(String otherRole, String otherDescription) {
      return new Table<>(otherRole, otherRole, otherDescription, primaryKey, columns);
    }

    /** This table under another name in the dataset. */
    public Table<T> named(String tableName) {
      return tableName.equals(name)
          ? this
          : new Table<>(tableName, role, description, primaryKey, columns);
    }

    public String description() {
      return description;
    }

    /** The single primary-key column (NOT ENFORCED, as BigQuery CDC requires). */
    public String primaryKey() {
      return primaryKey;
    }

    public List<Column<T>> columns() {
      return columns;
    }

    /** The BigQuery schema of the table. */
    public TableSchema schema() {
      List<TableFieldSchema> fields = new ArrayList<>();
      columns.forEach(c -> fields.add(c.schema()));
      return new TableSchema().setFields(fields);
    }

    /** The row of one record; null values are left out. */
    public TableRow row(T record) {
      TableRow row = new TableRow();
      for (Column<T> column : columns) {
        Object value = column.value.apply(record);
        if (value != null) {
          row.set(column.name, value);
        }
      }
      return row;
    }

    /**
     * The schema in BigQuery's JSON schema format, as Terraform's {@code schema} argument and
     * {@code bq mk --schema} take it.
     */
    public String schemaJson() {
      ArrayNode fields = Json.MAPPER.createArrayNode();
      columns.forEach(c -> fields.add(fieldJson(c)));
      try {
        return Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(fields) + "\n";
      } catch (IOException e) {
        throw new IllegalStateException("cannot write the schema of " + name, e);
      }
    }

    private static ObjectNode fieldJson(Column<?> column) {
      ObjectNode field = Json.MAPPER.createObjectNode();
      field.put("name", column.name);
      field.put("type", column.type);
      field.put("mode", column.mode);
      field.put("description", column.description);
      if (!column.fields.isEmpty()) {
        ArrayNode nested = field.putArray("fields");
        column.fields.forEach(f -> nested.add(fieldJson(f)));
      }
      return field;
    }
  }

  private static final String REQUIRED = "REQUIRED";
  private static final String NULLABLE = "NULLABLE";

  private static <T> Column<T> column(
      String name,
      String type,
      String mode,
      String description,
      SerializableFunction<T, @Nullable Object> value) {
    return new Column<>(name, type, mode, description, value, List.of());
  }

  private static String time(org.joda.time.Instant instant) {
    return Json.instant(instant);
  }

  /** The decisions table of the bundled payments spec. */
  public static final Table<Decision> DECISIONS = decisions(Payments.SPEC);

  /**
   * The decisions table of {@code spec}: one row per key and window, the latest pane winning. The
   * key column and the feature columns come from the spec ({@link #featureColumns}).
   */
  public static Table<Decision> decisions(PipelineSpec spec) {
    String key = snakeCase(spec.events().key());
    List<Column<Decision>> columns = new ArrayList<>();
    columns.add(
        column(
            "decision_id",
            "STRING",
            REQUIRED,
            "Stable id of (" + key + ", window_start, window_end); the primary key.",
            Decision::decisionId));
    columns.add(
        column(
            "version",
            "INTEGER",
            REQUIRED,
            "Pane index; the CDC change sequence number, so a later pane wins.",
            Decision::version));
    columns.add(
        column(
            key,
            "STRING",
            REQUIRED,
            "The key the features are computed per (data." + spec.events().key() + ").",
            Decision::key));
    columns.add(
        column(
            "window_start",
            "TIMESTAMP",
            REQUIRED,
            "Start of the event-time window (inclusive).",
            d -> time(d.windowStart())));
    columns.add(
        column(
            "window_end",
            "TIMESTAMP",
            REQUIRED,
            "End of the event-time window (exclusive).",
            d -> time(d.windowEnd())));
    columns.add(
        column(
            "pane_timing",
            "STRING",
            REQUIRED,
            "EARLY, ON_TIME or LATE: when the pane fired relative to the watermark.",
            Decision::paneTiming));
    columns.add(
        column(
            "pane_is_first",
            "BOOLEAN",
            REQUIRED,
            "Whether this is the window's first pane.",
            Decision::isFirstPane));
    columns.add(
        column(
            "pane_is_last",
            "BOOLEAN",
            REQUIRED,
            "Whether this is the window's last pane.",
            Decision::isLastPane));
    columns.addAll(featureColumns(spec));
    columns.add(
        column(
            "event_time",
            "TIMESTAMP",
            REQUIRED,
            "Latest event time among the window's events.",
            d -> time(d.eventTime())));
    columns.add(
        column(
            "ingestion_time",
            "TIMESTAMP",
            REQUIRED,
            "Latest ingestion time among the window's events.",
            d -> time(d.ingestionTime())));
    columns.add(
        column(
            "processing_time",
            "TIMESTAMP",
            REQUIRED,
            "When the pane fired (wall clock).",
            d -> time(d.processingTime())));
    columns.add(
        column(
            "decision_time",
            "TIMESTAMP",
            REQUIRED,
            "When the model scored the pane (wall clock).",
            d -> time(d.decisionTime())));
    columns.add(column("score", "FLOAT", NULLABLE, "The model's score.", Decision::score));
    columns.add(
        column(
            "decision",
            "STRING",
            NULLABLE,
            "review or allow: the score against the threshold.",
            Decision::label));
    columns.add(
        column(
            "model_name",
            "STRING",
            NULLABLE,
            "The scoring model's name.",
            d -> d.model() == null ? null : d.model().name()));
    columns.add(
        column(
            "model_version",
            "STRING",
            NULLABLE,
            "The scoring model's version.",
            d -> d.model() == null ? null : d.model().version()));
    columns.add(
        column(
            "model_engine",
            "STRING",
            NULLABLE,
            "The DJL engine that ran the model.",
            d -> d.model() == null ? null : d.model().engine()));
    columns.addAll(saturationColumns(spec));
    columns.add(
        column(
            "correction",
            "STRING",
            NULLABLE,
            "none (the first edition), refined (same verdict, score or features moved) or"
                + " reversed (the verdict changed); absent with discarding panes.",
            d -> d.correction() == null ? null : d.correction().jsonName()));
    columns.add(
        column(
            "supersedes_version",
            "INTEGER",
            NULLABLE,
            "The pane index of the edition this one supersedes.",
            d -> d.supersedes() == null ? null : d.supersedes().version()));
    columns.add(
        column(
            "supersedes_score",
            "FLOAT",
            NULLABLE,
            "The score of the edition this one supersedes.",
            d -> d.supersedes() == null ? null : d.supersedes().score()));
    columns.add(
        column(
            "supersedes_decision",
            "STRING",
            NULLABLE,
            "The verdict of the edition this one supersedes.",
            d -> d.supersedes() == null ? null : d.supersedes().decision()));
    columns.add(
        column(
            "shadow_score",
            "FLOAT",
            NULLABLE,
            "The shadow model's score (--shadowModelUri); it never decides.",
            d -> d.shadow() == null ? null : d.shadow().score()));
    columns.add(
        column(
            "shadow_decision",
            "STRING",
            NULLABLE,
            "review or allow: the shadow model's score against the threshold.",
            d -> d.shadow() == null ? null : d.shadow().decision()));
    columns.add(
        column(
            "shadow_model_name",
            "STRING",
            NULLABLE,
            "The shadow model's name.",
            d -> d.shadow() == null ? null : d.shadow().model().name()));
    columns.add(
        column(
            "shadow_model_version",
            "STRING",
            NULLABLE,
            "The shadow model's version.",
            d -> d.shadow() == null ? null : d.shadow().model().version()));
    columns.add(
        column(
            "shadow_model_engine",
            "STRING",
            NULLABLE,
            "The DJL engine that ran the shadow model.",
            d -> d.shadow() == null ? null : d.shadow().model().engine()));
    return new Table<>(
        "decisions",
        "One row per " + key + " and window: the latest fired pane's features, clocks and score.",
        "decision_id",
        columns);
  }

  /** Dead letters: every record Tidemark could not use, with its reason and original bytes. */
  public static final Table<DeadLetter> DEAD_LETTERS =
      new Table<>(
          "dead_letters",
          "Records Tidemark could not use, with the reason and the original bytes (cut to"
              + " --maxDeadLetterPayloadBytes, with their size and SHA-256).",
          "dead_letter_id",
          List.of(
              column(
                  "dead_letter_id",
                  "STRING",
                  REQUIRED,
                  "Hash of reason, step, origin and payload; the primary key.",
                  BigQueryTables::deadLetterId),
              column(
                  "reason",
                  "STRING",
                  REQUIRED,
                  "Stable machine-readable reason code.",
                  d -> d.reasonCode()),
              column("message", "STRING", REQUIRED, "What was wrong.", DeadLetter::message),
              column("step", "STRING", REQUIRED, "The step that rejected it.", DeadLetter::step),
              column(
                  "origin",
                  "STRING",
                  REQUIRED,
                  "Where it came from (topic/partition@offset, subscription/message id, table).",
                  DeadLetter::origin),
              column(
                  "exception",
                  "STRING",
                  NULLABLE,
                  "The exception, when there was one.",
                  DeadLetter::exception),
              column(
                  "payload",
                  "STRING",
                  NULLABLE,
                  "The original record (its first part when truncated), when it is valid UTF-8.",
                  DeadLetter::payloadText),
              column(
                  "payload_base64",
                  "STRING",
                  NULLABLE,
                  "The original record (its first part when truncated) in base64, when it is not"
                      + " valid UTF-8.",
                  d ->
                      d.payloadText() == null
                          ? Base64.getEncoder().encodeToString(d.payload())
                          : null),
              column(
                  "payload_bytes",
                  "INTEGER",
                  NULLABLE,
                  "Size of the original record in bytes, whether or not it was truncated.",
                  DeadLetter::payloadBytes),
              column(
                  "payload_sha256",
                  "STRING",
                  NULLABLE,
                  "Hex SHA-256 of the original record's bytes.",
                  DeadLetter::payloadSha256),
              column(
                  "truncated",
                  "BOOLEAN",
                  NULLABLE,
                  "Whether the payload holds only the first part of the record"
                      + " (--maxDeadLetterPayloadBytes).",
                  DeadLetter::truncated)));

  /** Duplicates: deliveries of an identity already seen inside the dedup horizon. */
  public static final Table<DuplicateRecord> DUPLICATES =
      new Table<>(
          "duplicates",
          "Repeated deliveries of a source+id already seen inside the dedup horizon.",
          "duplicate_id",
          List.of(
              column(
                  "duplicate_id",
                  "STRING",
                  REQUIRED,
                  "Hash of source, id, event_time, ingestion_time and identical_payload; the primary key.",
                  d ->
                      hash(
                          d.source(),
                          d.id(),
                          time(d.eventTime()),
                          time(d.ingestionTime()),
                          Boolean.toString(d.identicalPayload()))),
              column("source", "STRING", REQUIRED, "CloudEvents source.", DuplicateRecord::source),
              column("id", "STRING", REQUIRED, "CloudEvents id.", DuplicateRecord::id),
              column(
                  "event_time",
                  "TIMESTAMP",
                  REQUIRED,
                  "This delivery's event time.",
                  d -> time(d.eventTime())),
              column(
                  "identical_payload",
                  "BOOLEAN",
                  REQUIRED,
                  "Whether it repeats the first delivery byte for byte (false: a conflict).",
                  DuplicateRecord::identicalPayload),
              column(
                  "first_event_time",
                  "TIMESTAMP",
                  REQUIRED,
                  "The first delivery's event time.",
                  d -> time(d.firstEventTime())),
              column(
                  "ingestion_time",
                  "TIMESTAMP",
                  REQUIRED,
                  "This delivery's ingestion time.",
                  d -> time(d.ingestionTime()))));

  private static final List<Column<IntervalWindow>> WINDOW_FIELDS =
      List.of(
          column("start", "TIMESTAMP", REQUIRED, "Window start.", w -> time(w.start())),
          column("end", "TIMESTAMP", REQUIRED, "Window end.", w -> time(w.end())));

  /** Too-late records: events whose windows had all closed. */
  public static final Table<TooLateRecord> TOO_LATE = tooLate(Payments.SPEC);

  /** The too-late table of {@code spec}: its key column is named after the spec's key. */
  public static Table<TooLateRecord> tooLate(PipelineSpec spec) {
    String key = snakeCase(spec.events().key());
    return new Table<>(
        "too_late",
        "Events that arrived after their windows' allowed lateness.",
        "too_late_id",
        List.of(
            column(
                "too_late_id",
                "STRING",
                REQUIRED,
                "Hash of source, id, event_time and ingestion_time; the primary key.",
                t -> hash(t.source(), t.id(), time(t.eventTime()), time(t.ingestionTime()))),
            column("source", "STRING", REQUIRED, "CloudEvents source.", TooLateRecord::source),
            column("id", "STRING", REQUIRED, "CloudEvents id.", TooLateRecord::id),
            column(
                key,
                "STRING",
                REQUIRED,
                "The event's key (data." + spec.events().key() + ").",
                TooLateRecord::key),
            column(
                "event_time", "TIMESTAMP", REQUIRED, "The event's time.", t -> time(t.eventTime())),
            new Column<>(
                "missed_windows",
                "RECORD",
                "REPEATED",
                "The windows it would have counted in.",
                t -> records(WINDOW_FIELDS, t.missedWindows()),
                WINDOW_FIELDS),
            column(
                "partially_late",
                "BOOLEAN",
                REQUIRED,
                "Whether some of its windows still counted it.",
                TooLateRecord::partiallyLate),
            column(
                "ingestion_time",
                "TIMESTAMP",
                REQUIRED,
                "When it was ingested.",
                t -> time(t.ingestionTime())),
            column(
                "watermark",
                "TIMESTAMP",
                REQUIRED,
                "The watermark when it was judged too late.",
                t -> time(t.watermark()))));
  }

  /** The fields of one calibration bin of an evaluation. */
  private static final List<Column<EvaluationCounts.CalibrationBin>> CALIBRATION_FIELDS =
      List.of(
          column(
              "from",
              "FLOAT",
              REQUIRED,
              "Lowest score of the bin (inclusive).",
              EvaluationCounts.CalibrationBin::from),
          column(
              "to",
              "FLOAT",
              REQUIRED,
              "Highest score of the bin (exclusive; the last bin includes 1).",
              EvaluationCounts.CalibrationBin::to),
          column(
              "decisions",
              "INTEGER",
              REQUIRED,
              "Judged decisions that scored in the bin.",
              EvaluationCounts.CalibrationBin::decisions),
          column(
              "mean_score",
              "FLOAT",
              REQUIRED,
              "Their mean score.",
              EvaluationCounts.CalibrationBin::meanScore),
          column(
              "positive_rate",
              "FLOAT",
              REQUIRED,
              "The share of them that were positive.",
              EvaluationCounts.CalibrationBin::positiveRate));

  /**
   * Evaluations: one row per model version, role and window of label time, the latest pane winning
   * (the pane index is the change sequence number, as for decisions).
   */
  public static final Table<EvaluationSummary> EVALUATIONS =
      new Table<>(
          "evaluations",
          "One row per model version, role and window of label time: the judged decisions' counts,"
              + " rates and calibration as of the latest pane.",
          "evaluation_id",
          List.of(
              column(
                  "evaluation_id",
                  "STRING",
                  REQUIRED,
                  "Hash of model_role, model_name, model_version, window_start and window_end;"
                      + " the primary key.",
                  BigQueryTables::evaluationId),
              column(
                  "model_name",
                  "STRING",
                  REQUIRED,
                  "The judged model's name.",
                  EvaluationSummary::modelName),
              column(
                  "model_version",
                  "STRING",
                  REQUIRED,
                  "The judged model's version.",
                  EvaluationSummary::modelVersion),
              column(
                  "model_role",
                  "STRING",
                  REQUIRED,
                  "deciding (its verdicts were acted on) or shadow.",
                  EvaluationSummary::role),
              column(
                  "window_start",
                  "TIMESTAMP",
                  REQUIRED,
                  "Start of the window of label time (inclusive).",
                  e -> time(e.windowStart())),
              column(
                  "window_end",
                  "TIMESTAMP",
                  REQUIRED,
                  "End of the window of label time (exclusive).",
                  e -> time(e.windowEnd())),
              column(
                  "pane_timing",
                  "STRING",
                  REQUIRED,
                  "EARLY, ON_TIME or LATE: when the pane fired relative to the watermark.",
                  EvaluationSummary::paneTiming),
              column(
                  "pane_index",
                  "INTEGER",
                  REQUIRED,
                  "Pane index; the CDC change sequence number, so a later pane wins.",
                  EvaluationSummary::paneIndex),
              column(
                  "labels",
                  "INTEGER",
                  REQUIRED,
                  "Judged decisions: labels matched to the edition in force.",
                  e -> e.counts().labels()),
              column(
                  "positives",
                  "INTEGER",
                  REQUIRED,
                  "Of them, labelled positive.",
                  e -> e.counts().positives()),
              column(
                  "flagged",
                  "INTEGER",
                  REQUIRED,
                  "Of them, flagged by the model (the verdict at or above the threshold).",
                  e -> e.counts().flagged()),
              column(
                  "true_positives",
                  "INTEGER",
                  REQUIRED,
                  "Flagged and positive.",
                  e -> e.counts().truePositives()),
              column(
                  "false_positives",
                  "INTEGER",
                  REQUIRED,
                  "Flagged and negative.",
                  e -> e.counts().falsePositives()),
              column(
                  "false_negatives",
                  "INTEGER",
                  REQUIRED,
                  "Not flagged and positive.",
                  e -> e.counts().falseNegatives()),
              column(
                  "true_negatives",
                  "INTEGER",
                  REQUIRED,
                  "Not flagged and negative.",
                  e -> e.counts().trueNegatives()),
              column(
                  "precision",
                  "FLOAT",
                  NULLABLE,
                  "true_positives / flagged; null when nothing was flagged.",
                  e -> rate(e.counts().precision())),
              column(
                  "recall",
                  "FLOAT",
                  NULLABLE,
                  "true_positives / positives; null without positives.",
                  e -> rate(e.counts().recall())),
              column(
                  "review_rate",
                  "FLOAT",
                  NULLABLE,
                  "flagged / labels.",
                  e -> rate(e.counts().reviewRate())),
              column(
                  "label_delay_seconds_mean",
                  "FLOAT",
                  NULLABLE,
                  "Mean time from the event to its label, in seconds.",
                  e -> rate(e.counts().meanLabelDelaySeconds())),
              column(
                  "label_delay_seconds_max",
                  "FLOAT",
                  REQUIRED,
                  "Longest time from an event to its label, in seconds.",
                  e -> e.counts().maxLabelDelaySeconds()),
              new Column<>(
                  "calibration",
                  "RECORD",
                  "REPEATED",
                  "Per tenth of the score that holds a judged decision: the mean score beside the"
                      + " share of positives.",
                  e -> records(CALIBRATION_FIELDS, e.counts().calibration()),
                  CALIBRATION_FIELDS)));

  /** Unmatched labels of the bundled payments spec. */
  public static final Table<Label> UNMATCHED_LABELS = unmatchedLabels(Payments.SPEC);

  /**
   * The unmatched labels of {@code spec}: labels whose event no decision held (unknown, expired, or
   * without key and event time), one row per label identity. The key column is named after the
   * spec's key.
   */
  public static Table<Label> unmatchedLabels(PipelineSpec spec) {
    String key = snakeCase(spec.events().key());
    return new Table<>(
        "unmatched_labels",
        "Labels no decision could be judged by: an unknown or expired event, or no key and event"
            + " time.",
        "label_id",
        List.of(
            column(
                "label_id",
                "STRING",
                REQUIRED,
                "Hash of source and id; the primary key.",
                l -> hash(l.source(), l.id())),
            column("source", "STRING", REQUIRED, "The label's CloudEvents source.", Label::source),
            column("id", "STRING", REQUIRED, "The label's CloudEvents id.", Label::id),
            column(
                "time",
                "TIMESTAMP",
                REQUIRED,
                "When the truth became known (the label's time).",
                l -> time(l.time())),
            column(
                "subject_source",
                "STRING",
                REQUIRED,
                "The labelled event's CloudEvents source.",
                Label::subjectSource),
            column(
                "subject_id",
                "STRING",
                REQUIRED,
                "The labelled event's CloudEvents id.",
                Label::subjectId),
            column(
                key,
                "STRING",
                NULLABLE,
                "The labelled event's key (data." + spec.events().key() + "), when given.",
                Label::key),
            column(
                "event_time",
                "TIMESTAMP",
                NULLABLE,
                "The labelled event's time, when given.",
                l -> l.eventTime() == null ? null : time(l.eventTime())),
            column(
                "value", "STRING", REQUIRED, "The outcome, e.g. fraud or legit.", Label::value)));
  }

  /** Label duplicates: the duplicates table's columns, for repeated deliveries of a label. */
  public static final Table<DuplicateRecord> LABEL_DUPLICATES =
      DUPLICATES.forRole(
          "label_duplicates",
          "Repeated deliveries of a label's source+id already seen inside the dedup horizon.");

  /** Label dead letters: the dead-letter table's columns, for labels Tidemark could not use. */
  public static final Table<DeadLetter> LABEL_DEAD_LETTERS =
      DEAD_LETTERS.forRole(
          "label_dead_letters",
          "Labels Tidemark could not use, and rows a model-loop table rejected, with the reason and"
              + " the original bytes (cut to --maxDeadLetterPayloadBytes, with their size and"
              + " SHA-256).");

  /** Drift alarms: one row per alarm. */
  public static final Table<DriftAlarm> DRIFT_ALARMS =
      new Table<>(
          "drift_alarms",
          "Drift alarms: a model version's CUSUM test on its scores or its labelled error rate"
              + " crossed its threshold.",
          "drift_alarm_id",
          List.of(
              column(
                  "drift_alarm_id",
                  "STRING",
                  REQUIRED,
                  "Hash of the whole alarm (one test may alarm more than once at one time, after"
                      + " a reset); the primary key.",
                  a -> hash(a.toJsonLine())),
              column("model_name", "STRING", REQUIRED, "The model's name.", DriftAlarm::modelName),
              column(
                  "model_version",
                  "STRING",
                  REQUIRED,
                  "The model's version.",
                  DriftAlarm::modelVersion),
              column("model_role", "STRING", REQUIRED, "deciding or shadow.", DriftAlarm::role),
              column(
                  "kind",
                  "STRING",
                  REQUIRED,
                  "score (the scores against the sidecar's reference) or error (the labelled"
                      + " error rate).",
                  DriftAlarm::kind),
              column(
                  "direction",
                  "STRING",
                  REQUIRED,
                  "up or down: which way the statistic moved.",
                  DriftAlarm::direction),
              column(
                  "at",
                  "TIMESTAMP",
                  REQUIRED,
                  "The time of the observation that crossed the threshold.",
                  a -> time(a.at())),
              column(
                  "statistic",
                  "FLOAT",
                  REQUIRED,
                  "The CUSUM statistic then.",
                  DriftAlarm::statistic),
              column(
                  "threshold",
                  "FLOAT",
                  REQUIRED,
                  "The threshold it crossed (the spec's).",
                  DriftAlarm::threshold),
              column(
                  "observations",
                  "INTEGER",
                  REQUIRED,
                  "Observations of the test since its last reset.",
                  DriftAlarm::observations),
              column(
                  "reference_mean",
                  "FLOAT",
                  REQUIRED,
                  "The reference mean.",
                  DriftAlarm::referenceMean),
              column(
                  "observed_mean",
                  "FLOAT",
                  REQUIRED,
                  "The mean of the observations since the last reset.",
                  DriftAlarm::observedMean)));

  /** All tables of the bundled payments spec, in output order. */
  public static final List<Table<?>> ALL = all(Payments.SPEC);

  /**
   * All tables of {@code spec}, in the order of the spec's output names ({@link
   * PipelineSpec#ALL_OUTPUTS}): the four outputs, then the model loop's.
   */
  public static List<Table<?>> all(PipelineSpec spec) {
    return List.of(
        decisions(spec),
        DEAD_LETTERS,
        DUPLICATES,
        tooLate(spec),
        EVALUATIONS,
        unmatchedLabels(spec),
        LABEL_DUPLICATES,
        LABEL_DEAD_LETTERS,
        DRIFT_ALARMS);
  }

  /** The bundled payments spec, read once. */
  private static final class Payments {
    static final PipelineSpec SPEC = SpecLoader.loadBundled(SpecLoader.DEFAULT_BUNDLED);
  }

  /**
   * One column per feature of {@code spec}, in model input order: the snake_case of its name, the
   * BigQuery type of its value (INTEGER, NUMERIC for decimals, FLOAT, TIMESTAMP, BOOLEAN), and
   * REQUIRED when every window has a value (a count, a distinct count, a sum, or a minimum,
   * maximum, mean or last value of a required field without a filter), else NULLABLE.
   */
  static List<Column<Decision>> featureColumns(PipelineSpec spec) {
    List<Column<Decision>> columns = new ArrayList<>();
    for (PipelineSpec.Feature feature : spec.features()) {
      String name = feature.name();
      columns.add(
          column(
              snakeCase(name),
              bigQueryType(feature.valueType()),
              alwaysPresent(spec, feature) ? REQUIRED : NULLABLE,
              describe(feature),
              d -> featureValue(d.features(), d.features().index(name))));
    }
    return columns;
  }

  /** {@code <name>_saturated} for each sum: whether the sum was held at its type's limit. */
  static List<Column<Decision>> saturationColumns(PipelineSpec spec) {
    List<Column<Decision>> columns = new ArrayList<>();
    for (PipelineSpec.Feature feature : spec.features()) {
      if (feature.aggregation() == PipelineSpec.Aggregation.SUM) {
        String name = feature.name();
        columns.add(
            column(
                snakeCase(name) + "_saturated",
                "BOOLEAN",
                NULLABLE,
                "Whether the true sum was larger and "
                    + snakeCase(name)
                    + " holds its type's limit instead.",
                d -> d.features().isSaturated(d.features().index(name))));
      }
    }
    return columns;
  }

  private static boolean alwaysPresent(PipelineSpec spec, PipelineSpec.Feature feature) {
    switch (feature.aggregation()) {
      case COUNT:
      case DISTINCT:
      case SUM:
        return true;
      case MIN:
      case MAX:
      case MEAN:
      case LAST:
        return feature.where().isEmpty()
            && feature.of() != null
            && spec.field(feature.of()).map(f -> !f.optional()).orElse(false);
      default:
        return false;
    }
  }

  private static String bigQueryType(PipelineSpec.ValueType type) {
    switch (type) {
      case INTEGER:
        return "INTEGER";
      case DECIMAL:
        return "NUMERIC";
      case DOUBLE:
        return "FLOAT";
      case TIMESTAMP:
        return "TIMESTAMP";
      case BOOLEAN:
        return "BOOLEAN";
      default:
        throw new IllegalArgumentException("no BigQuery type for " + type);
    }
  }

  /** What a feature computes, in words: the column's description. */
  static String describe(PipelineSpec.Feature feature) {
    String of = feature.of() == null ? "" : feature.of();
    String what;
    switch (feature.aggregation()) {
      case COUNT:
        what = "Events in the window";
        break;
      case SUM:
        what =
            "Sum of "
                + of
                + ", held at its type's limit when larger, as "
                + snakeCase(feature.name())
                + "_saturated says";
        break;
      case MIN:
        what = "Smallest " + of;
        break;
      case MAX:
        what = "Largest " + of;
        break;
      case MEAN:
        what = "Mean of " + of;
        break;
      case DISTINCT:
        what = "Distinct values of " + of + " (exact up to " + feature.maxDistinct() + ")";
        break;
      case LAST:
        what = "The latest event's " + of;
        break;
      default:
        what = "Computed by the pipeline's own combine";
        break;
    }
    if (!feature.where().isEmpty()) {
      List<String> conditions = new ArrayList<>();
      feature.where().forEach(c -> conditions.add(c.field() + " = " + c.value()));
      what += ", of the events where " + String.join(" and ", conditions);
    }
    return what + " (feature " + feature.name() + ").";
  }

  /** A feature's value as a row holds it; null when the window has none. */
  private static @Nullable Object featureValue(Features features, int index) {
    if (index < 0 || !features.isPresent(index)) {
      return null;
    }
    switch (features.schema().type(index)) {
      case DECIMAL:
        return features.decimal(index).toPlainString();
      case DOUBLE:
        return features.getDouble(index);
      case TIMESTAMP:
        return time(new org.joda.time.Instant(features.getLong(index)));
      case BOOLEAN:
        return features.getLong(index) != 0;
      default:
        return features.getLong(index);
    }
  }

  /** {@code amountSum} as {@code amount_sum}: a column name from a spec's name. */
  static String snakeCase(String name) {
    return name.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toLowerCase(java.util.Locale.ROOT);
  }

  private BigQueryTables() {}

  /** The values of a REPEATED RECORD column: one map of {@code fields} per item. */
  private static <E> List<Map<String, Object>> records(List<Column<E>> fields, List<E> items) {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (E item : items) {
      Map<String, Object> row = new LinkedHashMap<>();
      for (Column<E> field : fields) {
        row.put(field.name, field.value.apply(item));
      }
      rows.add(row);
    }
    return rows;
  }

  /** The evaluation's key: one per role, model version and window. */
  static String evaluationId(EvaluationSummary summary) {
    return hash(
        summary.role(),
        summary.modelName(),
        summary.modelVersion(),
        time(summary.windowStart()),
        time(summary.windowEnd()));
  }

  /** A rate as the evaluations' JSON shows it ({@link EvaluationCounts#round}); null stays null. */
  private static @Nullable Double rate(@Nullable Double value) {
    return value == null ? null : EvaluationCounts.round(value);
  }

  static String deadLetterId(DeadLetter letter) {
    return hash(
        letter.reasonCode(),
        letter.step(),
        letter.origin(),
        Base64.getEncoder().encodeToString(letter.payload()));
  }

  /** {@link Sha256#prefix128} of the parts, in hex. */
  static String hash(String... parts) {
    return HexFormat.of().formatHex(Sha256.prefix128(Sha256.threadDigest(), parts));
  }

  /** The Terraform schema file of a table, relative to the project directory. */
  public static Path terraformSchemaFile(Table<?> table) {
    return Paths.get("terraform", "schemas", table.role() + ".json");
  }

  /**
   * The file beside the schema files that names each table in the dataset, {@code {"decisions":
   * "decisions", "dead_letters": ...}} by {@link Table#role}; Terraform's {@code table_id}s read
   * it.
   */
  public static final String TABLE_NAMES_FILE = "tables.json";

  /**
   * {@link #TABLE_NAMES_FILE}'s content for the BigQuery names of the spec's outputs ({@link
   * PipelineSpec#ALL_OUTPUTS}: {@code decisions}, {@code deadLetters}, ..., {@code drift}, as
   * {@code SpecDefaults.outputNames} gives them).
   */
  public static String tableNamesJson(Map<String, String> outputNames) {
    ObjectNode names = Json.MAPPER.createObjectNode();
    Map<String, String> roles = SpecLoader.defaultNames(PipelineSpec.Sink.BIGQUERY);
    for (String output : PipelineSpec.ALL_OUTPUTS) {
      names.put(roles.get(output), outputNames.get(output));
    }
    try {
      return Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(names) + "\n";
    } catch (IOException e) {
      throw new IllegalStateException("cannot write the table names", e);
    }
  }

  /** The generated schema reference, relative to the project directory. */
  public static final Path SCHEMA_DOC = Paths.get("docs", "bigquery-schema.md");

  /** {@code docs/bigquery-schema.md}: every table's columns as a Markdown table. */
  public static String schemaMarkdown() {
    StringBuilder md = new StringBuilder();
    md.append("# BigQuery tables\n\n")
        .append("Generated from `BigQueryTables.java`; do not edit by hand (a test compares).\n")
        .append("Every table is written with Storage Write API CDC upserts on its primary key\n")
        .append("(`PRIMARY KEY (...) NOT ENFORCED`). `decisions` and `evaluations` use the pane\n")
        .append(
            "index (`version`, `pane_index`) as the change sequence number: a later pane of a\n")
        .append("window replaces its row, an older one never does. The other tables' rows never\n")
        .append(
            "change: a repeat rewrites the same row. Rows a table rejects become `sink_rejected`\n")
        .append("dead letters: the first four tables' in `dead_letters`, the model loop's (the\n")
        .append("last five) in `label_dead_letters`.\n");
    for (Table<?> table : ALL) {
      md.append("\n## `")
          .append(table.name())
          .append("`\n\n")
          .append(table.description())
          .append(" Primary key: `")
          .append(table.primaryKey())
          .append("`.\n\n| column | type | mode | description |\n|---|---|---|---|\n");
      for (Column<?> column : table.columns()) {
        appendRow(md, column.name, column);
        for (Column<?> field : column.fields) {
          appendRow(md, column.name + "." + field.name, field);
        }
      }
    }
    return md.toString();
  }

  private static void appendRow(StringBuilder md, String name, Column<?> column) {
    md.append("| `")
        .append(name)
        .append("` | ")
        .append(column.type)
        .append(" | ")
        .append(column.mode)
        .append(" | ")
        .append(column.description)
        .append(" |\n");
  }

  /** Every generated file, relative to the project directory, with its content. */
  public static Map<Path, String> generatedFiles() {
    Map<Path, String> files = new LinkedHashMap<>();
    for (Table<?> table : ALL) {
      files.put(terraformSchemaFile(table), table.schemaJson());
    }
    // The Terraform deploys the Flex Template, which runs the dataflow profile.
    files.put(
        Paths.get("terraform", "schemas", TABLE_NAMES_FILE),
        tableNamesJson(
            SpecDefaults.outputNames(Payments.SPEC, "dataflow", PipelineSpec.Sink.BIGQUERY)));
    files.put(SCHEMA_DOC, schemaMarkdown());
    return files;
  }
}
