package dev.tidemark.transforms;

import dev.tidemark.transforms.util.Sha256;
import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.DuplicateRecord;
import dev.tidemark.transforms.values.Event;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.Arrays;
import org.apache.beam.sdk.coders.BigEndianLongCoder;
import org.apache.beam.sdk.coders.ByteArrayCoder;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.state.MapState;
import org.apache.beam.sdk.state.StateSpec;
import org.apache.beam.sdk.state.StateSpecs;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.state.Timer;
import org.apache.beam.sdk.state.TimerSpec;
import org.apache.beam.sdk.state.TimerSpecs;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.TupleTagList;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * Passes the first copy of every event and diverts the rest, keyed on the CloudEvents identity
 * {@code source}+{@code id}, remembered for an event-time horizon.
 *
 * <p>Semantics: the key is the pair ({@code source}, {@code id}), held as the first 128 bits of the
 * SHA-256 of both with length prefixes ({@link Sha256#prefix128}): the same {@code id} under
 * another {@code source} is a different event, and two different pairs share a key only on a
 * SHA-256 collision (about 2^128 work to find a pair colliding with a given one; 2^64 for any two,
 * which would only let a producer suppress one of its own events). The first copy to arrive passes
 * ({@link Result#events()}); every later copy within the horizon goes to {@link
 * Result#duplicates()} with a flag saying whether its content equals the first copy's. A copy with
 * different content is a <em>conflict</em> (a reused identity, which the IETF idempotency-key draft
 * treats as an error): it is counted in {@code conflicts} and never passes.
 *
 * <p>Horizon and state: state for a key is cleared by an event-time timer once the watermark passes
 * the first copy's event time plus the horizon (default {@link #DEFAULT_HORIZON}, the 24 hours
 * Stripe keeps idempotency keys). A copy arriving after that passes again: that is the documented
 * edge of the guarantee. The timer sets no output timestamp, so it never holds the watermark. State
 * is one small cell per distinct key inside the horizon.
 *
 * <p>Bounded input: every copy in it is diverted, however far apart in event time. A bounded
 * input's watermark only passes its timestamps once the input is read, so the horizon would end
 * only where the runner happens to process a later copy after an earlier one's horizon; instead no
 * expiry timers are set, and the state of a key lives until the end of the input, as it would with
 * them on the FlinkRunner's batch translation, which fires every timer of a key after its last
 * element. A replayed file is deduplicated as a whole, the same way on every runner. The state is
 * held per bucket of identities, a map keyed by {@link #identityKey}, rather than per identity: the
 * same outcome, at a fraction of what Flink's batch translation spends per key ({@link
 * DeduplicateBoundedFn}).
 *
 * <p>State format: a cell holds {@code KV<byte[], Long>} in Beam's {@code KvCoder}, {@code
 * ByteArrayCoder} and {@code VarLongCoder}, deliberately without a Tidemark format version (unlike
 * the {@code Codec.DataCoder} value coders). These are standard coders of Beam's model ({@code
 * beam:coder:kv:v1}, {@code beam:coder:bytes:v1}, {@code beam:coder:varint:v1}): their encodings
 * are fixed by Beam's portability spec, shared by every SDK and runner, and cannot change without a
 * new URN, so a savepoint's cells stay readable by every later Beam and Tidemark release; a version
 * byte would add a byte per live identity and protect nothing. A change of what a cell holds is a
 * change of its type: it gets a new state id, not a new version (see the "State compatibility"
 * section of docs/flink-cluster.md). The bounded variant's map state ({@code BigEndianLongCoder}
 * keys) exists only in batch runs, which have no savepoints.
 *
 * <p>Why not Beam's {@code Deduplicate}: it defaults to processing time (replays would then depend
 * on the wall clock), has no output for the diverted copies (the audit trail is lost) and does not
 * compare content (a conflicting reuse of an identity would vanish as a mere duplicate). Input must
 * be in the global window.
 *
 * <pre>{@code
 * DeduplicateEvents.Result deduped =
 *     events.apply("DeduplicateEvents", DeduplicateEvents.create().withHorizon(Duration.standardHours(24)));
 * deduped.events();     // first copies
 * deduped.duplicates(); // every other copy, with identicalPayload
 * }</pre>
 */
public final class DeduplicateEvents
    extends PTransform<PCollection<Event>, DeduplicateEvents.Result> {

  public static final Duration DEFAULT_HORIZON = Duration.standardHours(24);

  private final Duration horizon;

  private DeduplicateEvents(Duration horizon) {
    this.horizon = horizon;
  }

  public static DeduplicateEvents create() {
    return new DeduplicateEvents(DEFAULT_HORIZON);
  }

  /** How long, in event time after its first copy, an identity is remembered. */
  public DeduplicateEvents withHorizon(Duration horizon) {
    if (horizon == null || horizon.getMillis() <= 0) {
      throw new IllegalArgumentException(
          "the dedup horizon must be a positive duration such as PT24H, got "
              + horizon
              + "; set it with withHorizon(...) or --dedupHorizon");
    }
    return new DeduplicateEvents(horizon);
  }

  public Duration horizon() {
    return horizon;
  }

  @Override
  public Result expand(PCollection<Event> input) {
    TupleTag<Event> eventsTag = new TupleTag<Event>() {};
    TupleTag<DuplicateRecord> duplicatesTag = new TupleTag<DuplicateRecord>() {};
    return new Result(
        firstCopies(input, Records.EVENTS, horizon, eventsTag, duplicatesTag),
        eventsTag,
        duplicatesTag);
  }

  /**
   * What deduplication needs of a record type: its identity, the time its horizon runs from, its
   * content fingerprint, its coder, and the names its counters take. Events are one such type,
   * labels ({@link DeduplicateLabels}) another; both are deduplicated by the same steps.
   */
  abstract static class Records<T> implements Serializable {
    private static final long serialVersionUID = 1L;

    static final Records<Event> EVENTS =
        new Records<>() {
          private static final long serialVersionUID = 1L;

          @Override
          String source(Event record) {
            return record.source();
          }

          @Override
          String id(Event record) {
            return record.id();
          }

          @Override
          Instant time(Event record) {
            return record.eventTime();
          }

          @Override
          Instant ingestionTime(Event record) {
            return record.ingestionTime();
          }

          @Override
          byte[] fingerprint(Event record) {
            return record.fingerprint();
          }

          @Override
          Coder<Event> coder() {
            return Event.EventCoder.of();
          }

          @Override
          String counterPrefix() {
            return "";
          }
        };

    abstract String source(T record);

    abstract String id(T record);

    /** The record's time: the horizon runs from it, and the watermark judges it. */
    abstract Instant time(T record);

    abstract Instant ingestionTime(T record);

    /** A digest of the record's content: copies with other content are conflicts. */
    abstract byte[] fingerprint(T record);

    abstract Coder<T> coder();

    /** Prefixed to the counters' names: empty for events, so their names stay as they were. */
    abstract String counterPrefix();
  }

  /**
   * The first copies of {@code input}'s records (under {@code firstTag}) and their later copies
   * (under {@code duplicatesTag}), each counted.
   */
  static <T> PCollectionTuple firstCopies(
      PCollection<T> input,
      Records<T> records,
      Duration horizon,
      TupleTag<T> firstTag,
      TupleTag<DuplicateRecord> duplicatesTag) {
    if (!(input.getWindowingStrategy().getWindowFn() instanceof GlobalWindows)) {
      throw new IllegalArgumentException(
          "deduplication needs its input in the global window; apply it before windowing");
    }
    PCollectionTuple outputs =
        input.isBounded() == PCollection.IsBounded.UNBOUNDED
            ? input
                .apply("KeyByIdentityDigest", ParDo.of(new KeyByIdentityDigestFn<>(records)))
                .setCoder(KvCoder.of(ByteArrayCoder.of(), records.coder()))
                .apply(
                    "FirstCopyPerIdentity",
                    ParDo.of(new DeduplicateFn<>(records, horizon, firstTag, duplicatesTag))
                        .withOutputTags(firstTag, TupleTagList.of(duplicatesTag)))
            : input
                .apply("KeyByIdentityBucket", ParDo.of(new KeyByIdentityBucketFn<>(records)))
                .setCoder(KvCoder.of(VarIntCoder.of(), records.coder()))
                .apply(
                    "FirstCopyPerIdentity",
                    ParDo.of(new DeduplicateBoundedFn<>(records, firstTag, duplicatesTag))
                        .withOutputTags(firstTag, TupleTagList.of(duplicatesTag)));
    PCollection<T> firstCopies =
        outputs
            .get(firstTag)
            .setCoder(records.coder())
            .apply("CountFirstCopies", ParDo.of(new CountFirstCopiesFn<T>(records.counterPrefix())))
            .setCoder(records.coder());
    PCollection<DuplicateRecord> duplicates =
        outputs
            .get(duplicatesTag)
            .setCoder(DuplicateRecord.DuplicateRecordCoder.of())
            .apply("CountDuplicates", ParDo.of(new CountDuplicatesFn(records.counterPrefix())))
            .setCoder(DuplicateRecord.DuplicateRecordCoder.of());
    return PCollectionTuple.of(firstTag, firstCopies).and(duplicatesTag, duplicates);
  }

  /**
   * Counts the first copies ({@code unique}). The counters live in their own steps, not in the
   * stateful one: in batch, Flink runs a stateful DoFn as one bundle per key and pushes every
   * counter of its step to Flink after each, a cost per identity.
   */
  static final class CountFirstCopiesFn<T> extends DoFn<T, T> {
    private final Counter unique;

    CountFirstCopiesFn(String prefix) {
      unique = TidemarkMetrics.counter(prefix + TidemarkMetrics.UNIQUE);
    }

    @ProcessElement
    public void processElement(@Element T record, OutputReceiver<T> out) {
      unique.inc();
      out.output(record);
    }
  }

  /** Counts the diverted copies ({@code duplicates}) and those among them with other content. */
  static final class CountDuplicatesFn extends DoFn<DuplicateRecord, DuplicateRecord> {
    private final Counter duplicates;
    private final Counter conflicts;

    CountDuplicatesFn(String prefix) {
      duplicates = TidemarkMetrics.counter(prefix + TidemarkMetrics.DUPLICATES);
      conflicts = TidemarkMetrics.counter(prefix + TidemarkMetrics.CONFLICTS);
    }

    @ProcessElement
    public void processElement(
        @Element DuplicateRecord duplicate, OutputReceiver<DuplicateRecord> out) {
      duplicates.inc();
      if (!duplicate.identicalPayload()) {
        conflicts.inc();
      }
      out.output(duplicate);
    }
  }

  /** The first copies and the diverted duplicates. */
  public static final class Result extends PairedOutput<Event, DuplicateRecord> {
    Result(
        PCollectionTuple outputs,
        TupleTag<Event> eventsTag,
        TupleTag<DuplicateRecord> duplicatesTag) {
      super(outputs, eventsTag, duplicatesTag);
    }

    /** The first copy of each identity, timestamped with its event time. */
    public PCollection<Event> events() {
      return main();
    }

    /** Every later copy inside the horizon. */
    public PCollection<DuplicateRecord> duplicates() {
      return audit();
    }
  }

  /**
   * The dedup key of an event: {@link Sha256#prefix128} of its {@code source} and {@code id}, 17
   * bytes encoded whatever their length. Flink holds the key three times per identity (the value
   * cell, the expiry timer and Beam's timer index), so a short fixed-size key keeps the state per
   * live identity smaller than the pair itself would.
   */
  static <T> byte[] identityKey(MessageDigest sha256, Records<T> records, T record) {
    return Sha256.prefix128(sha256, records.source(record), records.id(record));
  }

  /** Keys every record by {@link #identityKey}. */
  static final class KeyByIdentityDigestFn<T> extends DoFn<T, KV<byte[], T>> {
    private final Records<T> records;
    private transient MessageDigest sha256;

    KeyByIdentityDigestFn(Records<T> records) {
      this.records = records;
    }

    @Setup
    public void setup() {
      sha256 = Sha256.newDigest();
    }

    @ProcessElement
    public void processElement(@Element T record, OutputReceiver<KV<byte[], T>> out) {
      out.output(KV.of(identityKey(sha256, records, record), record));
    }
  }

  /**
   * For an unbounded input: keeps, per identity, the first copy's content fingerprint and event
   * time, and expires them with an event-time timer that does not hold the watermark.
   */
  static final class DeduplicateFn<T> extends DoFn<KV<byte[], T>, T> {
    static final String FIRST_SEEN_STATE = "firstSeen";
    static final String EXPIRY_TIMER = "expiry";

    @StateId(FIRST_SEEN_STATE)
    private final StateSpec<ValueState<KV<byte[], Long>>> firstSeenSpec =
        StateSpecs.value(KvCoder.of(ByteArrayCoder.of(), VarLongCoder.of()));

    @TimerId(EXPIRY_TIMER)
    private final TimerSpec expirySpec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

    private final Records<T> records;
    private final Duration horizon;
    private final TupleTag<T> firstTag;
    private final TupleTag<DuplicateRecord> duplicatesTag;
    private final Counter liveIdentities;

    DeduplicateFn(
        Records<T> records,
        Duration horizon,
        TupleTag<T> firstTag,
        TupleTag<DuplicateRecord> duplicatesTag) {
      this.records = records;
      this.horizon = horizon;
      this.firstTag = firstTag;
      this.duplicatesTag = duplicatesTag;
      this.liveIdentities =
          TidemarkMetrics.counter(records.counterPrefix() + TidemarkMetrics.LIVE_IDENTITIES);
    }

    /** Identities stored minus identities expired in this bundle, added to the counter once. */
    private transient long liveDelta;

    @StartBundle
    public void startBundle() {
      liveDelta = 0;
    }

    @FinishBundle
    public void finishBundle() {
      if (liveDelta != 0) {
        liveIdentities.inc(liveDelta);
      }
    }

    @ProcessElement
    public void processElement(
        @Element KV<byte[], T> element,
        @StateId(FIRST_SEEN_STATE) ValueState<KV<byte[], Long>> firstSeen,
        @TimerId(EXPIRY_TIMER) Timer expiry,
        MultiOutputReceiver out) {
      T record = element.getValue();
      KV<byte[], Long> first = firstSeen.read();
      if (first == null) {
        liveDelta++;
        firstSeen.write(firstSeenOf(records, record));
        expiry.withNoOutputTimestamp().set(expiryOf(records.time(record), horizon));
        out.get(firstTag).output(record);
        return;
      }
      out.get(duplicatesTag).output(duplicateOf(records, record, first));
    }

    /**
     * When the state of an identity first seen at {@code eventTime} expires: the horizon later, but
     * no later than the global window's end (timers cannot outlive it), without overflow whatever
     * the horizon.
     */
    static Instant expiryOf(Instant eventTime, Duration horizon) {
      long end = GlobalWindow.INSTANCE.maxTimestamp().getMillis();
      long time = eventTime.getMillis();
      return new Instant(time > end - horizon.getMillis() ? end : time + horizon.getMillis());
    }

    @OnTimer(EXPIRY_TIMER)
    public void onExpiry(@StateId(FIRST_SEEN_STATE) ValueState<KV<byte[], Long>> firstSeen) {
      liveDelta--;
      firstSeen.clear();
    }
  }

  /**
   * The audit record of {@code copy}, a later copy of the first one seen ({@link #firstSeenOf}).
   */
  static <T> DuplicateRecord duplicateOf(Records<T> records, T copy, KV<byte[], Long> first) {
    return new DuplicateRecord(
        records.source(copy),
        records.id(copy),
        records.time(copy),
        Arrays.equals(first.getKey(), records.fingerprint(copy)),
        Instant.ofEpochMilli(first.getValue()),
        records.ingestionTime(copy));
  }

  /** What dedup state keeps of a first copy: its content fingerprint and time. */
  static <T> KV<byte[], Long> firstSeenOf(Records<T> records, T first) {
    return KV.of(records.fingerprint(first), records.time(first).getMillis());
  }

  /** Buckets of identities in a bounded input ({@link KeyByIdentityBucketFn}). */
  static final int IDENTITY_BUCKETS = 1 << 16;

  /**
   * Keys every event of a bounded input by a bucket of identities: {@link String#hashCode} (the
   * same on every JVM) of {@code source} and {@code id}, modulo {@link #IDENTITY_BUCKETS}. A bucket
   * only groups state; identities in it stay apart by their {@link #identityKey}.
   */
  static final class KeyByIdentityBucketFn<T> extends DoFn<T, KV<Integer, T>> {
    private final Records<T> records;

    KeyByIdentityBucketFn(Records<T> records) {
      this.records = records;
    }

    @ProcessElement
    public void processElement(@Element T record, OutputReceiver<KV<Integer, T>> out) {
      int hash = 31 * records.source(record).hashCode() + records.id(record).hashCode();
      out.output(KV.of(Math.floorMod(hash, IDENTITY_BUCKETS), record));
    }
  }

  /**
   * For a bounded input: keeps, per bucket of identities, a map from each identity's {@link
   * #identityKey} to its first copy's fingerprint and event time, and never expires it (see the
   * class documentation). Why buckets: Flink's batch translation runs a stateful DoFn as one bundle
   * per key, building a new DoFn runner for it and pushing the step's metrics after it, a fixed
   * cost per key that, with a key per identity, rivals the deduplication itself. A bucket holds
   * about one in {@link #IDENTITY_BUCKETS} of the identities.
   */
  static final class DeduplicateBoundedFn<T> extends DoFn<KV<Integer, T>, T> {
    static final String FIRST_SEEN_STATE = "firstSeenInBucket";

    @StateId(FIRST_SEEN_STATE)
    private final StateSpec<MapState<KV<Long, Long>, KV<byte[], Long>>> firstSeenSpec =
        StateSpecs.map(
            KvCoder.of(BigEndianLongCoder.of(), BigEndianLongCoder.of()),
            KvCoder.of(ByteArrayCoder.of(), VarLongCoder.of()));

    private final Records<T> records;
    private final TupleTag<T> firstTag;
    private final TupleTag<DuplicateRecord> duplicatesTag;
    private transient MessageDigest sha256;

    DeduplicateBoundedFn(
        Records<T> records, TupleTag<T> firstTag, TupleTag<DuplicateRecord> duplicatesTag) {
      this.records = records;
      this.firstTag = firstTag;
      this.duplicatesTag = duplicatesTag;
    }

    @Setup
    public void setup() {
      sha256 = Sha256.newDigest();
    }

    @ProcessElement
    public void processElement(
        @Element KV<Integer, T> element,
        @StateId(FIRST_SEEN_STATE) MapState<KV<Long, Long>, KV<byte[], Long>> firstSeenInBucket,
        MultiOutputReceiver out) {
      T record = element.getValue();
      // The 128-bit key as two longs: a map key that compares by value, unlike a byte[].
      ByteBuffer key = ByteBuffer.wrap(identityKey(sha256, records, record));
      KV<byte[], Long> first =
          firstSeenInBucket
              .putIfAbsent(KV.of(key.getLong(0), key.getLong(8)), firstSeenOf(records, record))
              .read();
      if (first == null) {
        out.get(firstTag).output(record);
      } else {
        out.get(duplicatesTag).output(duplicateOf(records, record, first));
      }
    }
  }
}
