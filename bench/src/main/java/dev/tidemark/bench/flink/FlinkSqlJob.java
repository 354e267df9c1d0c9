package dev.tidemark.bench.flink;

import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Event;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.PaymentFeatures;
import dev.tidemark.transforms.values.PaymentFields;
import dev.tidemark.transforms.values.RawRecord;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Locale;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.functions.AggregateFunction;
import org.apache.flink.types.Row;
import org.joda.time.Instant;

/**
 * The second native baseline: {@link NativeFlinkJob} with its windowed features computed by Flink
 * SQL's window aggregation instead of a DataStream window, {@code TABLE(HOP(...))} grouped by
 * account, {@code window_start} and {@code window_end}. In streaming, the planner slices hopping
 * windows (each event is added once, to the slice of one period it falls in, and a window is merged
 * from its slices when it fires), the method the DataStream window lacks.
 *
 * <p>Parse, event time, dedup and scoring are {@link NativeFlinkJob}'s own operators, so the two
 * baselines differ only in the window step. The five features in SQL: {@code COUNT(*)}, {@code SUM}
 * and {@code MAX} of the amount in cents, {@code COUNT(DISTINCT)} of merchant and of country (nulls
 * not counted, as Tidemark's combine), and the latest event time ({@code MAX}) with the ingestion
 * time of that event ({@link LatestIngestion}, a user-defined aggregate with a merge, the one thing
 * the built-in functions cannot say). Where it differs from the DataStream job:
 *
 * <ul>
 *   <li>Lateness: a window aggregation has no allowed lateness and no late panes. Each window fires
 *       once, when the watermark passes its end, and its decision is the on-time pane, first and
 *       last; a late event joins at most the windows that have not fired yet, and an event past
 *       every window of its own is dropped (Flink counts it in its {@code numLateRecordsDropped}
 *       metric; no too-late output). The DataStream job emits a late pane per late event for an
 *       hour and sends events past that to its too-late output. On an input without late events
 *       (the suite's) both give the same decisions; its on-time panes are marked last only at the
 *       end of input, this job's always.
 *   <li>The amount sum is SQL's {@code BIGINT} sum: it does not saturate past {@link
 *       Long#MAX_VALUE} cents as Tidemark's does (no input comes near).
 * </ul>
 *
 * <p>In Flink's BATCH execution mode (the backfill) the planner uses its batch window aggregation
 * (no slicing: a bounded input needs no incremental state) and the SQL output is a bounded table.
 */
public final class FlinkSqlJob {
  private FlinkSqlJob() {}

  /** The columns the SQL query reads, one row per unique event. */
  static final TypeInformation<Row> EVENT_ROW =
      Types.ROW_NAMED(
          new String[] {
            "account", "amount", "merchant", "country", "event_millis", "ingestion_millis"
          },
          Types.STRING,
          Types.LONG,
          Types.STRING,
          Types.STRING,
          Types.LONG,
          Types.LONG);

  /** The backfill: NDJSON files, bounded; watermarks are assigned after parsing. */
  public static NativeFlinkJob.Outputs backfill(
      StreamExecutionEnvironment env, List<Path> files, NativeFlinkJob.Settings settings) {
    DataStream<RawRecord> raw =
        env.fromSource(
            new NdjsonFileSource(files),
            WatermarkStrategy.noWatermarks(),
            "ReadFiles",
            NativeFlinkJob.RAW);
    return expand(raw, true, settings);
  }

  /** Streaming from Kafka: event time and watermarks per partition at the source. */
  public static NativeFlinkJob.Outputs kafka(
      StreamExecutionEnvironment env,
      String bootstrapServers,
      String topic,
      NativeFlinkJob.Settings settings) {
    WatermarkStrategy<RawRecord> watermarks =
        WatermarkStrategy.<RawRecord>forBoundedOutOfOrderness(settings.maxOutOfOrderness)
            .withIdleness(settings.idleTimeout);
    DataStream<RawRecord> raw =
        env.fromSource(
            new KafkaRecordSource(bootstrapServers, topic),
            watermarks,
            "ReadKafka",
            NativeFlinkJob.RAW);
    return expand(raw, false, settings);
  }

  /** The query: the features of every (account, hopping window) with events. */
  static String query(Duration size, Duration period) {
    return "SELECT account, window_start, window_end,"
        + " COUNT(*) AS txn_count,"
        + " SUM(amount) AS amount_sum,"
        + " MAX(amount) AS amount_max,"
        + " COUNT(DISTINCT merchant) AS merchants,"
        + " COUNT(DISTINCT country) AS countries,"
        + " MAX(event_millis) AS latest_event_millis,"
        + " LATEST_INGESTION(event_millis, ingestion_millis) AS latest_ingestion_millis"
        + " FROM TABLE(HOP(TABLE events, DESCRIPTOR(rowtime), "
        + interval(period)
        + ", "
        + interval(size)
        + "))"
        + " GROUP BY account, window_start, window_end";
  }

  /** A SQL day-to-second interval literal of {@code duration} (millisecond precision). */
  static String interval(Duration duration) {
    long millis = duration.toMillis();
    if (millis <= 0) {
      throw new IllegalArgumentException("a window duration must be positive, got " + duration);
    }
    return String.format(
        Locale.ROOT,
        "INTERVAL '%d %02d:%02d:%02d.%03d' DAY TO SECOND(3)",
        millis / 86_400_000,
        millis / 3_600_000 % 24,
        millis / 60_000 % 60,
        millis / 1_000 % 60,
        millis % 1_000);
  }

  static NativeFlinkJob.Outputs expand(
      DataStream<RawRecord> raw, boolean assignWatermarks, NativeFlinkJob.Settings settings) {
    NativeFlinkJob.Deduplicated deduplicated =
        NativeFlinkJob.parseAndDeduplicate(raw, assignWatermarks, settings);
    StreamExecutionEnvironment env = raw.getExecutionEnvironment();
    StreamTableEnvironment tables = StreamTableEnvironment.create(env);
    tables.getConfig().setLocalTimeZone(ZoneOffset.UTC);
    tables.createTemporarySystemFunction("LATEST_INGESTION", LatestIngestion.class);
    DataStream<Row> rows = deduplicated.unique.map(new ToRow(), EVENT_ROW).name("EventColumns");
    // The rows' time is their stream timestamp (event time), their watermarks the stream's.
    Table events =
        tables.fromDataStream(
            rows,
            Schema.newBuilder()
                .columnByMetadata("rowtime", "TIMESTAMP_LTZ(3)")
                .watermark("rowtime", "SOURCE_WATERMARK()")
                .build());
    tables.createTemporaryView("events", events);
    Table features = tables.sqlQuery(query(settings.windowSize, settings.windowPeriod));
    SingleOutputStreamOperator<Decision> unscored =
        tables
            .toDataStream(features)
            .map(new ToDecision(), NativeFlinkJob.DECISION)
            .name("AssembleDecisions");
    SingleOutputStreamOperator<Decision> scored =
        unscored
            .transform(
                "ScoreFeatures",
                NativeFlinkJob.DECISION,
                new NativeFlinkJob.ScoreOperator(settings.scorer))
            .name("ScoreFeatures");
    // SQL has no too-late output: a side output nothing is sent to stands for it.
    DataStream<Event> tooLate = deduplicated.unique.getSideOutput(NativeFlinkJob.TOO_LATE);
    return NativeFlinkJob.outputs(deduplicated, scored, tooLate);
  }

  /** An event's columns. */
  static final class ToRow implements MapFunction<Event, Row> {
    private static final long serialVersionUID = 1L;
    private static final PaymentFields PAYMENT = PaymentFields.bundled();

    @Override
    public Row map(Event event) {
      return Row.of(
          event.key(),
          PAYMENT.amountCents(event),
          PAYMENT.merchantId(event),
          PAYMENT.country(event),
          event.eventTime().getMillis(),
          event.ingestionTime().getMillis());
    }
  }

  /** One unscored decision per window: the on-time pane, the only one SQL emits. */
  static final class ToDecision implements MapFunction<Row, Decision> {
    private static final long serialVersionUID = 1L;

    @Override
    public Decision map(Row row) {
      Features features =
          PaymentFeatures.of(
              row.<Long>getFieldAs("txn_count"),
              row.<Long>getFieldAs("amount_sum"),
              row.<Long>getFieldAs("amount_max"),
              row.<Long>getFieldAs("merchants"),
              row.<Long>getFieldAs("countries"),
              Instant.ofEpochMilli(row.<Long>getFieldAs("latest_event_millis")),
              Instant.ofEpochMilli(row.<Long>getFieldAs("latest_ingestion_millis")));
      return Decision.unscored(
          row.getFieldAs("account"),
          utc(row.getFieldAs("window_start")),
          utc(row.getFieldAs("window_end")),
          "ON_TIME",
          0,
          true,
          true,
          features,
          Instant.now());
    }

    private static Instant utc(LocalDateTime time) {
      return Instant.ofEpochMilli(time.toInstant(ZoneOffset.UTC).toEpochMilli());
    }
  }

  /**
   * The ingestion time of the latest event (greatest event time, then greatest ingestion time):
   * {@code latestIngestionTime} of Tidemark's features.
   */
  public static final class LatestIngestion
      extends AggregateFunction<Long, LatestIngestion.Latest> {
    private static final long serialVersionUID = 1L;

    /** The latest event so far. */
    public static final class Latest {
      public long eventMillis = Long.MIN_VALUE;
      public long ingestionMillis = Long.MIN_VALUE;
    }

    @Override
    public Latest createAccumulator() {
      return new Latest();
    }

    public void accumulate(Latest latest, Long eventMillis, Long ingestionMillis) {
      add(latest, eventMillis, ingestionMillis);
    }

    public void merge(Latest latest, Iterable<Latest> others) {
      for (Latest other : others) {
        add(latest, other.eventMillis, other.ingestionMillis);
      }
    }

    private static void add(Latest latest, long eventMillis, long ingestionMillis) {
      if (eventMillis > latest.eventMillis
          || (eventMillis == latest.eventMillis && ingestionMillis > latest.ingestionMillis)) {
        latest.eventMillis = eventMillis;
        latest.ingestionMillis = ingestionMillis;
      }
    }

    @Override
    public Long getValue(Latest latest) {
      return latest.ingestionMillis;
    }
  }
}
