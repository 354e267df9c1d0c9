package dev.tidemark.bench.flink;

import dev.tidemark.model.DecisionScorer;
import dev.tidemark.model.ScoreFeatures;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecFeaturesFn;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.transforms.ParseCloudEvents;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.DuplicateRecord;
import dev.tidemark.transforms.values.Event;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.RawRecord;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.apache.beam.runners.flink.translation.types.CoderTypeInformation;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.ChainingStrategy;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.joda.time.Instant;

/**
 * Tidemark's job written directly with Flink's DataStream API 1.19, the baseline of the benchmark
 * suite: the same work per record, without Beam.
 *
 * <ol>
 *   <li>Parse: {@link ParseCloudEvents#newParser()}, the Tidemark parser's own code (same rules,
 *       same dead letters), in a {@link ProcessFunction} with a dead-letter side output.
 *   <li>Event time: the CloudEvent {@code time}; bounded-out-of-orderness watermarks ({@link
 *       Settings#maxOutOfOrderness}), from the source per Kafka partition, or after parsing for
 *       files.
 *   <li>Dedup: keyed by ({@code source}, {@code id}); a {@link ValueState} with the first copy's
 *       fingerprint and event time, expired by {@link StateTtlConfig} after the dedup horizon
 *       (Flink's TTL runs on processing time; Tidemark's horizon is event time); later copies go to
 *       a duplicates side output as {@link DuplicateRecord}s.
 *   <li>Features: keyed by account, {@link SlidingEventTimeWindows} of size/period, the default
 *       event-time trigger (one on-time pane, then one late pane per late element: Tidemark with
 *       early firings off and late firings on every element), allowed lateness, accumulating;
 *       {@link SpecFeaturesFn}'s own accumulator code (the payments spec's) behind an {@link
 *       AggregateFunction}; fully late events to a too-late side output.
 *   <li>Decisions and scores: {@link Decision#unscored} per pane, then {@link DecisionScorer}, the
 *       model module's scorer (same model, same batches: full at {@code batchSize} distinct rows,
 *       the rest flushed at each watermark and at the end of input, like Tidemark's per-bundle
 *       batching).
 * </ol>
 *
 * <p>Records travel between Flink operators serialised with the project's compact Beam coders
 * (through Beam's {@code CoderTypeInformation}), as on the FlinkRunner, so serialisation costs the
 * same; the window accumulator is Flink-managed (heap state, never serialised without checkpoints).
 */
public final class NativeFlinkJob {
  private NativeFlinkJob() {}

  /** The job's settings; the defaults are Tidemark's option defaults. */
  public static final class Settings implements Serializable {
    private static final long serialVersionUID = 1L;

    public Duration windowSize = Duration.ofMinutes(5);
    public Duration windowPeriod = Duration.ofSeconds(30);
    public Duration allowedLateness = Duration.ofHours(1);
    public Duration dedupHorizon = Duration.ofHours(24);
    public Duration maxOutOfOrderness = Duration.ofSeconds(30);
    public Duration idleTimeout = Duration.ofSeconds(10);
    public int parallelism = 2;
    public ScoreFeatures scorer = ScoreFeatures.defaultModel();
  }

  /** The four outputs, as in {@code dev.tidemark.pipelines.io.Outputs}. */
  public static final class Outputs {
    public final DataStream<Decision> decisions;
    public final DataStream<DeadLetter> deadLetters;
    public final DataStream<DuplicateRecord> duplicates;
    public final DataStream<Event> tooLate;

    Outputs(
        DataStream<Decision> decisions,
        DataStream<DeadLetter> deadLetters,
        DataStream<DuplicateRecord> duplicates,
        DataStream<Event> tooLate) {
      this.decisions = decisions;
      this.deadLetters = deadLetters;
      this.duplicates = duplicates;
      this.tooLate = tooLate;
    }

    /** Counts every output into the tally of {@code runId}. */
    public void countInto(String runId) {
      count(decisions, runId, Tally.Output.DECISIONS);
      count(deadLetters, runId, Tally.Output.DEAD_LETTERS);
      count(duplicates, runId, Tally.Output.DUPLICATES);
      count(tooLate, runId, Tally.Output.TOO_LATE);
    }

    /**
     * Writes every output to Kafka as JSON: {@code topics} maps {@code decisions}, {@code
     * dead-letters}, {@code duplicates} and {@code too-late} to a topic, as Tidemark's Kafka sink
     * names them.
     */
    public void writeTo(String bootstrapServers, java.util.Map<String, String> topics) {
      write(decisions, bootstrapServers, topics.get("decisions"), Decision::toJson);
      write(deadLetters, bootstrapServers, topics.get("dead-letters"), DeadLetter::toJson);
      write(duplicates, bootstrapServers, topics.get("duplicates"), DuplicateRecord::toJson);
      write(tooLate, bootstrapServers, topics.get("too-late"), Outputs::tooLateJson);
    }

    private static String tooLateJson(Event event) {
      return dev.tidemark.transforms.util.Json.MAPPER
          .createObjectNode()
          .put("source", event.source())
          .put("id", event.id())
          .put("accountId", event.key())
          .put("eventTime", event.eventTime().toString())
          .toString();
    }

    private static <T> void write(
        DataStream<T> stream,
        String bootstrapServers,
        String topic,
        org.apache.flink.util.function.SerializableFunction<T, String> json) {
      stream
          .sinkTo(
              new KafkaOutputSink<T>(
                  bootstrapServers,
                  topic,
                  element -> json.apply(element).getBytes(java.nio.charset.StandardCharsets.UTF_8)))
          .name("Write " + topic);
    }

    private static <T> void count(DataStream<T> stream, String runId, Tally.Output output) {
      stream
          .process(new Tally.CountFlinkFn<T>(runId, output), Types.VOID)
          .name("Count" + output)
          .sinkTo(new DiscardingSink<>())
          .name("Discard" + output);
    }
  }

  static final TypeInformation<RawRecord> RAW = coder(RawRecord.RawRecordCoder.of());
  static final TypeInformation<Event> EVENT = coder(Event.EventCoder.of());
  static final TypeInformation<DeadLetter> DEAD_LETTER = coder(DeadLetter.DeadLetterCoder.of());
  static final TypeInformation<DuplicateRecord> DUPLICATE =
      coder(DuplicateRecord.DuplicateRecordCoder.of());
  static final TypeInformation<Features> FEATURES = coder(Features.FeaturesCoder.of());
  static final TypeInformation<Decision> DECISION = coder(Decision.DecisionCoder.of());

  private static <T> TypeInformation<T> coder(Coder<T> coder) {
    return new CoderTypeInformation<>(coder, PipelineOptionsFactory.create());
  }

  static final OutputTag<DeadLetter> DEAD_LETTERS = new OutputTag<>("dead-letters", DEAD_LETTER);
  static final OutputTag<DeadLetter> SCORING_FAILURES =
      new OutputTag<>("scoring-failures", DEAD_LETTER);
  static final OutputTag<DuplicateRecord> DUPLICATES = new OutputTag<>("duplicates", DUPLICATE);
  static final OutputTag<Event> TOO_LATE = new OutputTag<>("too-late", EVENT);

  /** A local (embedded MiniCluster) environment; batch runs in Flink's BATCH execution mode. */
  public static StreamExecutionEnvironment environment(int parallelism, boolean batch) {
    Configuration configuration = new Configuration();
    configuration.set(RestOptions.BIND_PORT, "0");
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.createLocalEnvironment(parallelism, configuration);
    env.setRuntimeMode(batch ? RuntimeExecutionMode.BATCH : RuntimeExecutionMode.STREAMING);
    return env;
  }

  /** The backfill: NDJSON files, bounded; watermarks are assigned after parsing. */
  public static Outputs backfill(
      StreamExecutionEnvironment env, List<Path> files, Settings settings) {
    DataStream<RawRecord> raw =
        env.fromSource(
            new NdjsonFileSource(files), WatermarkStrategy.noWatermarks(), "ReadFiles", RAW);
    return expand(raw, true, settings);
  }

  /** Streaming from Kafka: event time and watermarks per partition at the source. */
  public static Outputs kafka(
      StreamExecutionEnvironment env, String bootstrapServers, String topic, Settings settings) {
    WatermarkStrategy<RawRecord> watermarks =
        WatermarkStrategy.<RawRecord>forBoundedOutOfOrderness(settings.maxOutOfOrderness)
            .withIdleness(settings.idleTimeout);
    DataStream<RawRecord> raw =
        env.fromSource(
            new KafkaRecordSource(bootstrapServers, topic), watermarks, "ReadKafka", RAW);
    return expand(raw, false, settings);
  }

  /** The parsed events (dead letters on their side output) and the first copies among them. */
  static final class Deduplicated {
    final SingleOutputStreamOperator<Event> parsed;
    final SingleOutputStreamOperator<Event> unique;

    Deduplicated(
        SingleOutputStreamOperator<Event> parsed, SingleOutputStreamOperator<Event> unique) {
      this.parsed = parsed;
      this.unique = unique;
    }
  }

  /** Parse, event time (when {@code assignWatermarks}) and dedup: the part both baselines share. */
  static Deduplicated parseAndDeduplicate(
      DataStream<RawRecord> raw, boolean assignWatermarks, Settings settings) {
    SingleOutputStreamOperator<Event> parsed =
        raw.process(new ParseFn(), EVENT).name("ParseCloudEvents");
    DataStream<Event> timed = parsed;
    if (assignWatermarks) {
      timed =
          parsed
              .assignTimestampsAndWatermarks(
                  WatermarkStrategy.<Event>forBoundedOutOfOrderness(settings.maxOutOfOrderness)
                      .withTimestampAssigner((event, previous) -> event.eventTime().getMillis()))
              .name("EventTime");
    }
    SingleOutputStreamOperator<Event> unique =
        timed
            .keyBy(new IdentityKey(), Types.TUPLE(Types.STRING, Types.STRING))
            .process(new DeduplicateFn(settings.dedupHorizon), EVENT)
            .name("DeduplicateEvents");
    return new Deduplicated(parsed, unique);
  }

  /** Parse, dedup, windowed features, decisions and scores on {@code raw}. */
  static Outputs expand(DataStream<RawRecord> raw, boolean assignWatermarks, Settings settings) {
    Deduplicated deduplicated = parseAndDeduplicate(raw, assignWatermarks, settings);
    SingleOutputStreamOperator<Event> unique = deduplicated.unique;
    SingleOutputStreamOperator<Decision> unscored =
        unique
            .keyBy(new AccountKey(), Types.STRING)
            .window(SlidingEventTimeWindows.of(settings.windowSize, settings.windowPeriod))
            .allowedLateness(settings.allowedLateness)
            .sideOutputLateData(TOO_LATE)
            .aggregate(
                new FeaturesAggregate(),
                new AssembleDecisionFn(settings.allowedLateness.isZero()),
                TypeInformation.of(SpecFeaturesFn.Accumulator.class),
                FEATURES,
                DECISION)
            .name("ComputeFeatures");
    SingleOutputStreamOperator<Decision> scored =
        unscored
            .transform("ScoreFeatures", DECISION, new ScoreOperator(settings.scorer))
            .name("ScoreFeatures");
    return outputs(deduplicated, scored, unscored.getSideOutput(TOO_LATE));
  }

  /** The four outputs of a job whose scored decisions are {@code scored}. */
  static Outputs outputs(
      Deduplicated deduplicated,
      SingleOutputStreamOperator<Decision> scored,
      DataStream<Event> tooLate) {
    DataStream<DeadLetter> deadLetters =
        deduplicated
            .parsed
            .getSideOutput(DEAD_LETTERS)
            .union(scored.getSideOutput(SCORING_FAILURES));
    return new Outputs(scored, deadLetters, deduplicated.unique.getSideOutput(DUPLICATES), tooLate);
  }

  /** Tidemark's parser; rejected records to the dead-letter side output. */
  static final class ParseFn extends ProcessFunction<RawRecord, Event> {
    private static final long serialVersionUID = 1L;
    private transient ParseCloudEvents.Parser parser;

    @Override
    public void open(OpenContext context) {
      parser = ParseCloudEvents.create().newParser();
    }

    @Override
    public void processElement(RawRecord record, Context context, Collector<Event> out) {
      Event event = parser.parse(record, dead -> context.output(DEAD_LETTERS, dead));
      if (event != null) {
        out.collect(event);
      }
    }
  }

  /** The CloudEvents identity. */
  static final class IdentityKey implements KeySelector<Event, Tuple2<String, String>> {
    private static final long serialVersionUID = 1L;

    @Override
    public Tuple2<String, String> getKey(Event event) {
      return Tuple2.of(event.source(), event.id());
    }
  }

  static final class AccountKey implements KeySelector<Event, String> {
    private static final long serialVersionUID = 1L;

    @Override
    public String getKey(Event event) {
      return event.key();
    }
  }

  /**
   * Keeps the first copy per identity: its 16-byte fingerprint and event time (24 bytes, as
   * Tidemark's {@code KV<byte[], Long>} cell) in a value state with a TTL of the horizon.
   */
  static final class DeduplicateFn
      extends KeyedProcessFunction<Tuple2<String, String>, Event, Event> {
    private static final long serialVersionUID = 1L;
    static final String FIRST_SEEN_STATE = "firstSeen";

    private final Duration horizon;
    private transient ValueState<byte[]> firstSeen;

    DeduplicateFn(Duration horizon) {
      this.horizon = horizon;
    }

    @Override
    public void open(OpenContext context) {
      ValueStateDescriptor<byte[]> descriptor =
          new ValueStateDescriptor<>(
              FIRST_SEEN_STATE, PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO);
      descriptor.enableTimeToLive(
          StateTtlConfig.newBuilder(horizon)
              .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite)
              .setStateVisibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
              .build());
      firstSeen = getRuntimeContext().getState(descriptor);
    }

    @Override
    public void processElement(Event event, Context context, Collector<Event> out)
        throws Exception {
      byte[] first = firstSeen.value();
      if (first == null) {
        firstSeen.update(
            ByteBuffer.allocate(24)
                .put(event.fingerprint(), 0, 16)
                .putLong(event.eventTime().getMillis())
                .array());
        out.collect(event);
        return;
      }
      ByteBuffer cell = ByteBuffer.wrap(first);
      boolean identical =
          Arrays.equals(first, 0, 16, event.fingerprint(), 0, event.fingerprint().length);
      context.output(
          DUPLICATES,
          new DuplicateRecord(
              event.source(),
              event.id(),
              event.eventTime(),
              identical,
              Instant.ofEpochMilli(cell.getLong(16)),
              event.ingestionTime()));
    }
  }

  /** {@link SpecFeaturesFn} of the payments spec, Tidemark's combine, as a Flink aggregate. */
  static final class FeaturesAggregate
      implements AggregateFunction<Event, SpecFeaturesFn.Accumulator, Features> {
    private static final long serialVersionUID = 1L;
    private static final PipelineSpec PAYMENTS = SpecLoader.loadBundled(SpecLoader.DEFAULT_BUNDLED);
    private final SpecFeaturesFn fn = SpecFeaturesFn.of(PAYMENTS);

    @Override
    public SpecFeaturesFn.Accumulator createAccumulator() {
      return fn.createAccumulator();
    }

    @Override
    public SpecFeaturesFn.Accumulator add(Event event, SpecFeaturesFn.Accumulator accumulator) {
      return fn.addInput(accumulator, event.fields());
    }

    @Override
    public Features getResult(SpecFeaturesFn.Accumulator accumulator) {
      return new Features(fn.schema(), fn.extractOutput(accumulator));
    }

    @Override
    public SpecFeaturesFn.Accumulator merge(
        SpecFeaturesFn.Accumulator a, SpecFeaturesFn.Accumulator b) {
      return fn.mergeAccumulators(List.of(a, b));
    }
  }

  /**
   * One unscored decision per fired pane; the pane index is counted in per-window state (the first
   * pane is on time, the later ones are late firings).
   */
  static final class AssembleDecisionFn
      extends ProcessWindowFunction<Features, Decision, String, TimeWindow> {
    private static final long serialVersionUID = 1L;
    static final String PANES_STATE = "panes";
    private static final ValueStateDescriptor<Long> PANES =
        new ValueStateDescriptor<>(PANES_STATE, Types.LONG);

    private final boolean noLateness;

    AssembleDecisionFn(boolean noLateness) {
      this.noLateness = noLateness;
    }

    @Override
    public void process(
        String account, Context context, Iterable<Features> panes, Collector<Decision> out)
        throws Exception {
      ValueState<Long> fired = context.windowState().getState(PANES);
      Long previous = fired.value();
      long index = previous == null ? 0 : previous + 1;
      fired.update(index);
      TimeWindow window = context.window();
      boolean last = noLateness || context.currentWatermark() == Long.MAX_VALUE;
      for (Features features : panes) {
        out.collect(
            Decision.unscored(
                account,
                Instant.ofEpochMilli(window.getStart()),
                Instant.ofEpochMilli(window.getEnd()),
                index == 0 ? "ON_TIME" : "LATE",
                index,
                index == 0,
                last,
                features,
                Instant.now()));
      }
    }

    @Override
    public void clear(Context context) {
      context.windowState().getState(PANES).clear();
    }
  }

  /**
   * Scores decisions with the model module's {@link DecisionScorer}: batches full as the
   * transform's are (the configured batch size in distinct rows), the rest flushed at every
   * watermark, before a checkpoint and at the end of input; each output keeps its input's
   * timestamp. Rows that cannot be scored go to {@link #SCORING_FAILURES}.
   */
  static final class ScoreOperator extends AbstractStreamOperator<Decision>
      implements OneInputStreamOperator<Decision, Decision>, BoundedOneInput {
    private static final long serialVersionUID = 1L;
    private final ScoreFeatures scoreFeatures;
    private transient DecisionScorer scorer;
    private transient DecisionScorer.Batch batch;
    private transient long[] timestamps;
    private transient StreamRecord<Decision> reuse;

    ScoreOperator(ScoreFeatures scoreFeatures) {
      this.scoreFeatures = scoreFeatures;
      this.chainingStrategy = ChainingStrategy.ALWAYS;
    }

    @Override
    public void open() throws Exception {
      super.open();
      scorer = DecisionScorer.open(scoreFeatures);
      batch = scorer.newBatch();
      timestamps = new long[batch.maxDecisions()];
      reuse = new StreamRecord<>(null);
    }

    @Override
    public void processElement(StreamRecord<Decision> element) {
      timestamps[batch.size()] = element.getTimestamp();
      if (batch.add(element.getValue())) {
        flush();
      }
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
      flush();
      super.processWatermark(mark);
    }

    @Override
    public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
      flush();
      super.prepareSnapshotPreBarrier(checkpointId);
    }

    @Override
    public void endInput() {
      flush();
    }

    @Override
    public void finish() throws Exception {
      flush();
      super.finish();
    }

    private void flush() {
      int[] row = {0};
      scorer.score(
          batch,
          scored -> output.collect(reuse.replace(scored, timestamps[row[0]++])),
          failure ->
              output.collect(SCORING_FAILURES, new StreamRecord<>(failure, timestamps[row[0]++])));
    }

    @Override
    public void close() throws Exception {
      if (scorer != null) {
        scorer.close();
        scorer = null;
      }
      super.close();
    }
  }
}
