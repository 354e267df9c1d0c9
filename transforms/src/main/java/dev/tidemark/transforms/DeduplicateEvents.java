package dev.tidemark.transforms;

import dev.tidemark.transforms.util.Sha256;
import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.DuplicateRecord;
import dev.tidemark.transforms.values.Event;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.Arrays;
import org.apache.beam.sdk.coders.BigEndianLongCoder;
import org.apache.beam.sdk.coders.ByteArrayCoder;
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
    if (!(input.getWindowingStrategy().getWindowFn() instanceof GlobalWindows)) {
      throw new IllegalArgumentException(
          "DeduplicateEvents needs its input in the global window; apply it before windowing");
    }
    TupleTag<Event> eventsTag = new TupleTag<Event>() {};
    TupleTag<DuplicateRecord> duplicatesTag = new TupleTag<DuplicateRecord>() {};
    PCollectionTuple outputs =
        input.isBounded() == PCollection.IsBounded.UNBOUNDED
            ? input
                .apply("KeyByIdentityDigest", ParDo.of(new KeyByIdentityDigestFn()))
                .setCoder(KvCoder.of(ByteArrayCoder.of(), Event.EventCoder.of()))
                .apply(
                    "FirstCopyPerIdentity",
                    ParDo.of(new DeduplicateFn(horizon, eventsTag, duplicatesTag))
                        .withOutputTags(eventsTag, TupleTagList.of(duplicatesTag)))
            : input
                .apply("KeyByIdentityBucket", ParDo.of(new KeyByIdentityBucketFn()))
                .setCoder(KvCoder.of(VarIntCoder.of(), Event.EventCoder.of()))
                .apply(
                    "FirstCopyPerIdentity",
                    ParDo.of(new DeduplicateBoundedFn(eventsTag, duplicatesTag))
                        .withOutputTags(eventsTag, TupleTagList.of(duplicatesTag)));
    PCollection<Event> firstCopies =
        outputs
            .get(eventsTag)
            .setCoder(Event.EventCoder.of())
            .apply("CountFirstCopies", ParDo.of(new CountFirstCopiesFn()))
            .setCoder(Event.EventCoder.of());
    PCollection<DuplicateRecord> duplicates =
        outputs
            .get(duplicatesTag)
            .setCoder(DuplicateRecord.DuplicateRecordCoder.of())
            .apply("CountDuplicates", ParDo.of(new CountDuplicatesFn()))
            .setCoder(DuplicateRecord.DuplicateRecordCoder.of());
    return new Result(
        PCollectionTuple.of(eventsTag, firstCopies).and(duplicatesTag, duplicates),
        eventsTag,
        duplicatesTag);
  }

  /**
   * Counts the first copies ({@code unique}). The counters live in their own steps, not in the
   * stateful one: in batch, Flink runs a stateful DoFn as one bundle per key and pushes every
   * counter of its step to Flink after each, a cost per identity.
   */
  static final class CountFirstCopiesFn extends DoFn<Event, Event> {
    private final Counter unique = TidemarkMetrics.counter(TidemarkMetrics.UNIQUE);

    @ProcessElement
    public void processElement(@Element Event event, OutputReceiver<Event> out) {
      unique.inc();
      out.output(event);
    }
  }

  /** Counts the diverted copies ({@code duplicates}) and those among them with other content. */
  static final class CountDuplicatesFn extends DoFn<DuplicateRecord, DuplicateRecord> {
    private final Counter duplicates = TidemarkMetrics.counter(TidemarkMetrics.DUPLICATES);
    private final Counter conflicts = TidemarkMetrics.counter(TidemarkMetrics.CONFLICTS);

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
  static byte[] identityKey(MessageDigest sha256, Event event) {
    return Sha256.prefix128(sha256, event.source(), event.id());
  }

  /** Keys every event by {@link #identityKey}. */
  static final class KeyByIdentityDigestFn extends DoFn<Event, KV<byte[], Event>> {
    private transient MessageDigest sha256;

    @Setup
    public void setup() {
      sha256 = Sha256.newDigest();
    }

    @ProcessElement
    public void processElement(@Element Event event, OutputReceiver<KV<byte[], Event>> out) {
      out.output(KV.of(identityKey(sha256, event), event));
    }
  }

  /**
   * For an unbounded input: keeps, per identity, the first copy's content fingerprint and event
   * time, and expires them with an event-time timer that does not hold the watermark.
   */
  static final class DeduplicateFn extends DoFn<KV<byte[], Event>, Event> {
    static final String FIRST_SEEN_STATE = "firstSeen";
    static final String EXPIRY_TIMER = "expiry";

    @StateId(FIRST_SEEN_STATE)
    private final StateSpec<ValueState<KV<byte[], Long>>> firstSeenSpec =
        StateSpecs.value(KvCoder.of(ByteArrayCoder.of(), VarLongCoder.of()));

    @TimerId(EXPIRY_TIMER)
    private final TimerSpec expirySpec = TimerSpecs.timer(TimeDomain.EVENT_TIME);

    private final Duration horizon;
    private final TupleTag<Event> eventsTag;
    private final TupleTag<DuplicateRecord> duplicatesTag;

    DeduplicateFn(
        Duration horizon, TupleTag<Event> eventsTag, TupleTag<DuplicateRecord> duplicatesTag) {
      this.horizon = horizon;
      this.eventsTag = eventsTag;
      this.duplicatesTag = duplicatesTag;
    }

    private final Counter liveIdentities = TidemarkMetrics.counter(TidemarkMetrics.LIVE_IDENTITIES);

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
        @Element KV<byte[], Event> element,
        @StateId(FIRST_SEEN_STATE) ValueState<KV<byte[], Long>> firstSeen,
        @TimerId(EXPIRY_TIMER) Timer expiry,
        MultiOutputReceiver out) {
      Event event = element.getValue();
      KV<byte[], Long> first = firstSeen.read();
      if (first == null) {
        liveDelta++;
        firstSeen.write(firstSeenOf(event));
        expiry.withNoOutputTimestamp().set(expiryOf(event.eventTime(), horizon));
        out.get(eventsTag).output(event);
        return;
      }
      out.get(duplicatesTag).output(duplicateOf(event, first));
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
  static DuplicateRecord duplicateOf(Event copy, KV<byte[], Long> first) {
    return new DuplicateRecord(
        copy.source(),
        copy.id(),
        copy.eventTime(),
        Arrays.equals(first.getKey(), copy.fingerprint()),
        Instant.ofEpochMilli(first.getValue()),
        copy.ingestionTime());
  }

  /** What dedup state keeps of a first copy: its content fingerprint and event time. */
  static KV<byte[], Long> firstSeenOf(Event first) {
    return KV.of(first.fingerprint(), first.eventTime().getMillis());
  }

  /** Buckets of identities in a bounded input ({@link KeyByIdentityBucketFn}). */
  static final int IDENTITY_BUCKETS = 1 << 16;

  /**
   * Keys every event of a bounded input by a bucket of identities: {@link String#hashCode} (the
   * same on every JVM) of {@code source} and {@code id}, modulo {@link #IDENTITY_BUCKETS}. A bucket
   * only groups state; identities in it stay apart by their {@link #identityKey}.
   */
  static final class KeyByIdentityBucketFn extends DoFn<Event, KV<Integer, Event>> {
    @ProcessElement
    public void processElement(@Element Event event, OutputReceiver<KV<Integer, Event>> out) {
      int hash = 31 * event.source().hashCode() + event.id().hashCode();
      out.output(KV.of(Math.floorMod(hash, IDENTITY_BUCKETS), event));
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
  static final class DeduplicateBoundedFn extends DoFn<KV<Integer, Event>, Event> {
    static final String FIRST_SEEN_STATE = "firstSeenInBucket";

    @StateId(FIRST_SEEN_STATE)
    private final StateSpec<MapState<KV<Long, Long>, KV<byte[], Long>>> firstSeenSpec =
        StateSpecs.map(
            KvCoder.of(BigEndianLongCoder.of(), BigEndianLongCoder.of()),
            KvCoder.of(ByteArrayCoder.of(), VarLongCoder.of()));

    private final TupleTag<Event> eventsTag;
    private final TupleTag<DuplicateRecord> duplicatesTag;
    private transient MessageDigest sha256;

    DeduplicateBoundedFn(TupleTag<Event> eventsTag, TupleTag<DuplicateRecord> duplicatesTag) {
      this.eventsTag = eventsTag;
      this.duplicatesTag = duplicatesTag;
    }

    @Setup
    public void setup() {
      sha256 = Sha256.newDigest();
    }

    @ProcessElement
    public void processElement(
        @Element KV<Integer, Event> element,
        @StateId(FIRST_SEEN_STATE) MapState<KV<Long, Long>, KV<byte[], Long>> firstSeenInBucket,
        MultiOutputReceiver out) {
      Event event = element.getValue();
      // The 128-bit key as two longs: a map key that compares by value, unlike a byte[].
      ByteBuffer key = ByteBuffer.wrap(identityKey(sha256, event));
      KV<byte[], Long> first =
          firstSeenInBucket
              .putIfAbsent(KV.of(key.getLong(0), key.getLong(8)), firstSeenOf(event))
              .read();
      if (first == null) {
        out.get(eventsTag).output(event);
      } else {
        out.get(duplicatesTag).output(duplicateOf(event, first));
      }
    }
  }
}
