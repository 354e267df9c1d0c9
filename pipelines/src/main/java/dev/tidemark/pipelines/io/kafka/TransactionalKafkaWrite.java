package dev.tidemark.pipelines.io.kafka;

import dev.tidemark.transforms.values.Codec;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Metrics;
import org.apache.beam.sdk.state.BagState;
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
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PDone;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transactional Kafka sink: every record reaches its topic exactly once, in Kafka transactions
 * of many records each, whatever the runner retries or restores.
 *
 * <p>The design is that of Beam's {@code KafkaIO.write().withEOS()}: records are spread over a
 * fixed number of shards, a stateful step gives each record of a shard the next sequence number,
 * and a writer with {@link DoFn.RequiresStableInput stable input} (on Flink: it sees a record only
 * once the checkpoint holding the record and its number has completed) writes each shard's records
 * in order with one transactional producer per shard. Every transaction also commits, to the sink
 * group's offsets (the shard's partition of the topic, as Beam does), the shard's next sequence
 * number; a writer that starts (after a failure or a restore) reads it back and skips the records
 * below it, which a previous attempt has already committed. A record that arrives before its turn
 * (a restore on Flink can release pending checkpoints' records out of order) waits in the writer's
 * state until the records before it have been sent.
 *
 * <p>Where it differs from Beam's sink, each from a measurement:
 *
 * <ul>
 *   <li><b>One transaction per bundle per shard, not per record.</b> Beam's writer commits a
 *       transaction per element of a grouping step whose trigger fires per record; on Flink that is
 *       a transaction per record, and a Kafka transaction costs milliseconds. This writer sends
 *       every record of a bundle and commits each shard's transaction when the bundle finishes; on
 *       Flink a bundle of a stable-input step is everything one checkpoint released.
 *   <li><b>A lineage id from the sequencer's state, not the writer's.</b> Beam's writer keeps a
 *       random writer id in its own state and in Kafka to refuse commits of another job; its first
 *       commit reaches Kafka before its state reaches a checkpoint, so a restore from a checkpoint
 *       taken in between fails on every attempt. Here the sequencer draws the shard's lineage id
 *       with its first number and sends it with every record: a record the writer sees was released
 *       by a completed checkpoint, so that checkpoint holds the lineage id too.
 *   <li><b>Records keep their keys' order.</b> A record's shard is its key's hash, so all records
 *       of a key (the editions of one decision) travel one shard in order.
 * </ul>
 *
 * <p>Restores: from the latest checkpoint, and from a savepoint of a job stopped with it (Flink
 * completes a stop-with-savepoint before the tasks end, so its records are committed first). A
 * restore from an older checkpoint or savepoint of the same job finds higher numbers in Kafka and
 * skips records up to them: as with Beam's sink, it must not be used to rewrite output. A job that
 * starts without state on a group another lineage committed to fails with a message naming the fix.
 *
 * <p>After a restore, Beam's FlinkRunner releases to the writer, with the first checkpoint, records
 * that arrived after that checkpoint's barrier, one checkpoint early; on Flink the writer therefore
 * keeps every record one checkpoint before writing it ({@link Writer}).
 */
public final class TransactionalKafkaWrite
    extends PTransform<PCollection<KV<String, HeaderedValue>>, PDone> {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(TransactionalKafkaWrite.class);
  private static final String METRICS = "TransactionalKafkaWrite";

  private final String topic;
  private final String groupId;
  private final int shards;
  private final KafkaClients clients;
  private final Map<String, Object> producerConfig;
  private final boolean holdOneCheckpoint;

  /**
   * Writes to {@code topic} in {@code shards} shards, with {@code groupId} as the sink group (where
   * the committed sequence numbers live) and the prefix of the producers' transactional ids. {@code
   * producerConfig} adds to or overrides the producer settings this sink sets. {@code
   * holdOneCheckpoint}: write each record only after one more checkpoint ({@link Writer}), which a
   * runner that restores from checkpoints (Flink) needs.
   */
  public TransactionalKafkaWrite(
      String topic,
      String groupId,
      int shards,
      KafkaClients clients,
      Map<String, Object> producerConfig,
      boolean holdOneCheckpoint) {
    if (shards < 1) {
      throw new IllegalArgumentException("a transactional sink needs at least one shard");
    }
    this.topic = topic;
    this.groupId = groupId;
    this.shards = shards;
    this.clients = clients;
    this.producerConfig = new LinkedHashMap<>(producerConfig);
    this.holdOneCheckpoint = holdOneCheckpoint;
  }

  /** The producer settings this sink adds to the connection (the transactional id comes on top). */
  public Map<String, Object> producerConfig() {
    return Collections.unmodifiableMap(producerConfig);
  }

  @Override
  public PDone expand(PCollection<KV<String, HeaderedValue>> input) {
    input
        .apply("GlobalWindow", Window.into(new GlobalWindows()))
        .apply("AssignShard", ParDo.of(new AssignShard(shards)))
        .setCoder(KvCoder.of(VarIntCoder.of(), input.getCoder()))
        .apply("Sequence", ParDo.of(new Sequence()))
        .setCoder(KvCoder.of(VarIntCoder.of(), Sequenced.Coder.of()))
        .apply(
            "Write",
            ParDo.of(new Writer(topic, groupId, clients, producerConfig, holdOneCheckpoint)));
    return PDone.in(input.getPipeline());
  }

  /** The name of the sink group's offsets that hold a shard's next sequence number. */
  public static TopicPartition shardPartition(String topic, int shard) {
    return new TopicPartition(topic, shard);
  }

  /**
   * A record with its shard's lineage id, its sequence number in the shard, and the shard's content
   * chain up to it: the SHA-256 of the chain before it and this record's key, value and headers
   * ({@link #chain}). Two records under one number with one chain are the same record after the
   * same records.
   */
  static final class Sequenced {
    final String lineage;
    final long number;
    final String key;
    final HeaderedValue value;

    /** Hex; null in a record restored from a checkpoint written before chains were kept. */
    final @Nullable String chain;

    Sequenced(
        String lineage, long number, String key, HeaderedValue value, @Nullable String chain) {
      this.lineage = lineage;
      this.number = number;
      this.key = key;
      this.value = value;
      this.chain = chain;
    }

    /** The chain after a record ({@code key}, {@code value}) that follows {@code before}. */
    static String chain(@Nullable String before, String key, HeaderedValue value) {
      try {
        MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        Codec.writeString(before == null ? "" : before, out);
        Codec.writeString(key, out);
        HeaderedValue.Coder.of().writeVersioned(value, out);
        out.flush();
        return HexFormat.of().formatHex(sha256.digest(bytes.toByteArray()));
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException("every Java platform has SHA-256", e);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    /**
     * Versioned ({@link Codec.DataCoder}): the writer's stable input keeps these in checkpoints.
     * Version 2: lineage, number, key, the value in {@link HeaderedValue.Coder}'s format, then the
     * chain (empty: none). Version 1, read still: without the chain.
     */
    static final class Coder extends Codec.DataCoder<Sequenced> {
      private static final long serialVersionUID = 1L;
      private static final Coder INSTANCE = new Coder();

      static Coder of() {
        return INSTANCE;
      }

      @Override
      protected int version() {
        return 2;
      }

      @Override
      protected void write(Sequenced value, DataOutput out) throws IOException {
        Codec.writeString(value.lineage, out);
        out.writeLong(value.number);
        Codec.writeString(value.key, out);
        HeaderedValue.Coder.of().writeVersioned(value.value, out);
        Codec.writeString(value.chain == null ? "" : value.chain, out);
      }

      @Override
      protected Sequenced read(int version, DataInputStream in) throws IOException {
        return readFields(version, in);
      }

      /** The fields of a record in format {@code version} (1 or 2). */
      static Sequenced readFields(int version, DataInputStream in) throws IOException {
        String lineage = Codec.readString(in);
        long number = in.readLong();
        String key = Codec.readString(in);
        HeaderedValue value = HeaderedValue.Coder.of().readVersioned(in);
        String chain = version >= 2 ? Codec.readString(in) : "";
        return new Sequenced(lineage, number, key, value, chain.isEmpty() ? null : chain);
      }

      @Override
      public boolean consistentWithEquals() {
        return false;
      }
    }
  }

  /**
   * A record in the writer's state, with its shard and the run of the writer that took it ({@link
   * Writer#run}): empty for a record kept by a writer that predates runs, which counts as another
   * run's. The shard is kept because the FlinkRunner gives a timer that waited for a checkpoint no
   * key ({@code @Key} is null then).
   */
  static final class Held {
    /** The shard; {@link #UNKNOWN_SHARD} in a record kept before shards were. */
    final int shard;

    final Sequenced record;
    final String run;

    static final int UNKNOWN_SHARD = -1;

    Held(int shard, Sequenced record, String run) {
      this.shard = shard;
      this.record = record;
      this.run = run;
    }

    /**
     * Version 3: a record in {@link Sequenced.Coder}'s version 2 fields, then the run and the
     * shard. Versions 1 and 2 are {@link Sequenced.Coder}'s own, which this bag held before: read
     * with an empty run and an unknown shard.
     */
    static final class Coder extends Codec.DataCoder<Held> {
      private static final long serialVersionUID = 1L;
      private static final Coder INSTANCE = new Coder();

      static Coder of() {
        return INSTANCE;
      }

      @Override
      protected int version() {
        return 3;
      }

      @Override
      protected void write(Held value, DataOutput out) throws IOException {
        Sequenced.Coder.of().write(value.record, out);
        Codec.writeString(value.run, out);
        out.writeInt(value.shard);
      }

      @Override
      protected Held read(int version, DataInputStream in) throws IOException {
        if (version < 3) {
          return new Held(UNKNOWN_SHARD, Sequenced.Coder.readFields(version, in), "");
        }
        Sequenced record = Sequenced.Coder.readFields(2, in);
        String run = Codec.readString(in);
        return new Held(in.readInt(), record, run);
      }

      @Override
      public boolean consistentWithEquals() {
        return false;
      }
    }
  }

  /** Keys each record by its shard: the hash of its Kafka key. */
  static final class AssignShard
      extends DoFn<KV<String, HeaderedValue>, KV<Integer, KV<String, HeaderedValue>>> {
    private static final long serialVersionUID = 1L;
    private final int shards;

    AssignShard(int shards) {
      this.shards = shards;
    }

    @ProcessElement
    public void process(
        @Element KV<String, HeaderedValue> record,
        OutputReceiver<KV<Integer, KV<String, HeaderedValue>>> out) {
      String key = Objects.requireNonNull(record.getKey(), "a transactional sink record's key");
      out.output(KV.of(Math.floorMod(key.hashCode(), shards), record));
    }
  }

  /** Numbers each shard's records 0, 1, 2, ... and draws the shard's lineage id with number 0. */
  static final class Sequence
      extends DoFn<KV<Integer, KV<String, HeaderedValue>>, KV<Integer, Sequenced>> {
    private static final long serialVersionUID = 1L;

    @StateId("next")
    private final StateSpec<ValueState<Long>> nextSpec = StateSpecs.value();

    @StateId("lineage")
    private final StateSpec<ValueState<String>> lineageSpec = StateSpecs.value();

    /** The shard's content chain up to its last numbered record (null before the first). */
    @StateId("chain")
    private final StateSpec<ValueState<String>> chainSpec = StateSpecs.value();

    @ProcessElement
    public void process(
        @Element KV<Integer, KV<String, HeaderedValue>> element,
        @StateId("next") ValueState<Long> nextState,
        @StateId("lineage") ValueState<String> lineageState,
        @StateId("chain") ValueState<String> chainState,
        OutputReceiver<KV<Integer, Sequenced>> out) {
      String lineage = lineageState.read();
      if (lineage == null) {
        lineage = UUID.randomUUID().toString();
        lineageState.write(lineage);
      }
      Long stored = nextState.read();
      long next = stored == null ? 0 : stored;
      KV<String, HeaderedValue> record = element.getValue();
      String key = Objects.requireNonNull(record.getKey());
      // A shard restored from state numbered before chains were kept starts its chain here.
      String chain = Sequenced.chain(chainState.read(), key, record.getValue());
      out.output(
          KV.of(element.getKey(), new Sequenced(lineage, next, key, record.getValue(), chain)));
      nextState.write(next + 1);
      chainState.write(chain);
    }
  }

  /**
   * Writes each shard's records in sequence order, one transaction per shard per bundle. Keyed by
   * shard, like the sequencer, so that one task owns a shard's producer, also after a rescale.
   *
   * <p>With {@code holdOneCheckpoint} (on Flink) a record is not written in the bundle that brings
   * it: it is kept in state and written by a timer, which the runner also holds back until a
   * checkpoint completes. A record reaches this step when a completed checkpoint released it, and
   * that checkpoint normally holds its sequence number too; but after a restore Beam's FlinkRunner
   * releases with the first checkpoint what arrived after that checkpoint's barrier ({@code
   * StableInputAfterRestoreTest}), numbers no completed checkpoint holds. The next checkpoint to
   * complete holds them: written only then, a second failure in between cannot make the sequencer
   * number again what is already committed. The cost: read_committed consumers see a record one
   * checkpoint interval later.
   */
  static final class Writer extends DoFn<KV<Integer, Sequenced>, Void> {
    private static final long serialVersionUID = 1L;

    /** How soon the timer fires when records wait ahead of their turn, without holding. */
    private static final org.joda.time.Duration WAIT_DELAY =
        org.joda.time.Duration.standardSeconds(1);

    /**
     * Records not written yet: those ahead of their turn (a restore on Flink can release the
     * records of several pending checkpoints out of their order), and with {@code
     * holdOneCheckpoint} every record until a later checkpoint completed. Keyed state also makes
     * the runner partition the writer's input by shard, so that a shard's records reach the one
     * task that holds its producer, also after a rescale.
     */
    @StateId("waiting")
    private final StateSpec<BagState<Held>> waitingSpec = StateSpecs.bag(Held.Coder.of());

    /** The run that set the timer ({@link #run}); empty when none is set. */
    @StateId("timerRun")
    private final StateSpec<ValueState<String>> timerRunSpec =
        StateSpecs.value(StringUtf8Coder.of());

    /** The time the timer was set to fire at: tells it from a timer a restore brought back. */
    @StateId("timerAt")
    private final StateSpec<ValueState<Long>> timerAtSpec = StateSpecs.value(VarLongCoder.of());

    /** Writes the records in state that may be written, and sets itself again for the others. */
    @TimerId("sendWaiting")
    private final TimerSpec sendWaitingSpec = TimerSpecs.timer(TimeDomain.PROCESSING_TIME);

    private final String topic;
    private final String groupId;
    private final KafkaClients clients;
    private final Map<String, Object> producerConfig;
    private final boolean holdOneCheckpoint;

    private final Counter recordsWritten = Metrics.counter(METRICS, "recordsWritten");
    private final Counter recordsSkipped = Metrics.counter(METRICS, "recordsAlreadyCommitted");
    private final Counter transactions = Metrics.counter(METRICS, "transactions");
    private final Counter recordsWaiting = Metrics.counter(METRICS, "recordsWaiting");

    private transient @Nullable Map<Integer, ShardWriter> writers;

    /**
     * This instance's run, drawn at its setup: a restart or a restore gives a new one, so a record
     * kept by another run was kept before the checkpoint this run started from.
     */
    private transient @Nullable String run;

    Writer(
        String topic,
        String groupId,
        KafkaClients clients,
        Map<String, Object> producerConfig,
        boolean holdOneCheckpoint) {
      this.topic = topic;
      this.groupId = groupId;
      this.clients = clients;
      this.producerConfig = producerConfig;
      this.holdOneCheckpoint = holdOneCheckpoint;
    }

    @Setup
    public void setup() {
      writers = new HashMap<>();
      run = UUID.randomUUID().toString();
    }

    private String run() {
      return Objects.requireNonNull(run, "set up");
    }

    @RequiresStableInput
    @ProcessElement
    public void process(
        @Element KV<Integer, Sequenced> element,
        @StateId("waiting") BagState<Held> waiting,
        @StateId("timerRun") ValueState<String> timerRun,
        @StateId("timerAt") ValueState<Long> timerAt,
        @TimerId("sendWaiting") Timer sendWaitingTimer) {
      int shard = element.getKey();
      Sequenced record = element.getValue();
      if (holdOneCheckpoint) {
        waiting.add(new Held(shard, record, run()));
        if (!run().equals(timerRun.read())) {
          // Due at once: the runner holds the firing back until the next checkpoint completes.
          setTimer(sendWaitingTimer, timerRun, timerAt, org.joda.time.Duration.millis(1));
        }
        return;
      }
      ShardWriter writer = writerFor(shard, record.lineage);
      writer.checkLineage(record);
      // Records restored in state may be next in turn before this one.
      sendWaiting(writer, waiting);
      if (offer(writer, record)) {
        sendWaiting(writer, waiting);
        return;
      }
      if (writer.waitingNumbers().isEmpty()) {
        LOG.warn(
            "sink group {} shard {}: record {} arrived before record {}; it waits for it",
            groupId,
            shard,
            record.number,
            writer.next);
        setTimer(sendWaitingTimer, timerRun, timerAt, WAIT_DELAY);
      }
      waiting.add(new Held(shard, record, run()));
      writer.waitingNumbers().add(record.number);
      recordsWaiting.inc();
    }

    @OnTimer("sendWaiting")
    public void onSendWaiting(
        OnTimerContext context,
        @Key @Nullable Integer key,
        @StateId("waiting") BagState<Held> waiting,
        @StateId("timerRun") ValueState<String> timerRun,
        @StateId("timerAt") ValueState<Long> timerAt,
        @TimerId("sendWaiting") Timer sendWaitingTimer) {
      // Holding, a restored timer can carry this run's id only if it fired before this run set
      // its own, so the due time tells them apart.
      boolean own =
          run().equals(timerRun.read())
              && (!holdOneCheckpoint
                  || Long.valueOf(context.fireTimestamp().getMillis()).equals(timerAt.read()));
      if (own) {
        timerRun.clear();
        timerAt.clear();
      }
      List<Held> held = readAll(waiting);
      if (held.isEmpty()) {
        return;
      }
      List<Held> writable = new ArrayList<>();
      List<Held> rest = new ArrayList<>();
      for (Held record : held) {
        (writable(record, run(), own || !holdOneCheckpoint) ? writable : rest).add(record);
      }
      if (!writable.isEmpty()) {
        ShardWriter writer =
            writerFor(shardOf(writable.get(0), key), writable.get(0).record.lineage);
        writable.forEach(record -> writer.checkLineage(record.record));
        rest = sendInTurn(writer, waiting, writable, rest);
      }
      if (!rest.isEmpty() && !run().equals(timerRun.read())) {
        setTimer(
            sendWaitingTimer,
            timerRun,
            timerAt,
            holdOneCheckpoint ? org.joda.time.Duration.millis(1) : WAIT_DELAY);
      }
    }

    /** The shard of {@code record}: kept with it, else the timer's key. */
    static int shardOf(Held record, @Nullable Integer key) {
      if (record.shard != Held.UNKNOWN_SHARD) {
        return record.shard;
      }
      if (key == null) {
        throw new IllegalStateException(
            "a record kept by the transactional sink's writer before shards were kept (record "
                + record.record.number
                + ") reached a timer without a key: restore this state with the release that"
                + " wrote it and stop the job with a savepoint after its records are written");
      }
      return key;
    }

    /**
     * Whether the timer may write {@code record} now: always when it is this run's own timer
     * ({@code ownTimer}), which a checkpoint completed since the record was kept has released; from
     * a timer a restore brought back (the first checkpoint after the restore releases it) only a
     * record kept by an earlier run, which the checkpoint restored from holds.
     */
    static boolean writable(Held record, String run, boolean ownTimer) {
      return ownTimer || !record.run.equals(run);
    }

    /**
     * Sets the timer to fire {@code delay} from now, and records which run set it; when holding,
     * also the time it is due, by which its firing is told from a restored one's.
     */
    private void setTimer(
        Timer timer,
        ValueState<String> timerRun,
        ValueState<Long> timerAt,
        org.joda.time.Duration delay) {
      timerRun.write(run());
      if (!holdOneCheckpoint) {
        timer.offset(delay).setRelative();
        timerAt.clear();
        return;
      }
      // On Flink processing time is the wall clock.
      Instant at = new Instant(System.currentTimeMillis()).plus(delay);
      timer.set(at);
      timerAt.write(at.getMillis());
    }

    /** This bundle's writer of {@code shard}, opened on the shard's first record in the bundle. */
    private ShardWriter writerFor(int shard, String lineage) {
      return Objects.requireNonNull(writers)
          .computeIfAbsent(shard, s -> new ShardWriter(s, lineage));
    }

    /**
     * Sends {@code record} if it is next in turn, or skips it if an earlier attempt committed it;
     * false if it is ahead of its turn and must wait.
     */
    private boolean offer(ShardWriter writer, Sequenced record) {
      if (record.number < writer.next) {
        checkSkipped(groupId, writer.shard, record, writer.next - 1, writer.lastChain);
        writer.skipped++;
        recordsSkipped.inc();
        return true;
      }
      if (record.number > writer.next) {
        return false;
      }
      writer.send(record);
      recordsWritten.inc();
      return true;
    }

    /**
     * Checks that {@code record}, which is below the shard's next number and so is skipped, is the
     * record written under its number: for the record just below the next number, its content chain
     * must be the one committed (or sent) with that number. The chain covers every record before
     * it, so the records below are checked with it; a record replayed under another number, or with
     * other content, fails here rather than being skipped in place of another.
     *
     * @param last the number below the shard's next, whose chain is {@code lastChain}
     * @param lastChain null when unknown (committed before chains were kept)
     */
    static void checkSkipped(
        String groupId, int shard, Sequenced record, long last, @Nullable String lastChain) {
      if (record.number != last || lastChain == null || record.chain == null) {
        return;
      }
      if (!record.chain.equals(lastChain)) {
        throw new IllegalStateException(
            "sink group '"
                + groupId
                + "' shard "
                + shard
                + ": record "
                + record.number
                + " (key "
                + record.key
                + ") replayed after a restore is not the record committed under that number"
                + " (their content chains differ): the records of this shard were numbered"
                + " differently before and after the restore, and skipping would lose some and"
                + " write others twice. A step re-emitted after a restore what it had emitted"
                + " before the checkpoint: run Flink with --finishBundleBeforeCheckpointing=true,"
                + " and restore this job only from its latest checkpoint or a stop-with-savepoint");
      }
    }

    /**
     * Sends the waiting records that are now next in turn, and keeps the others waiting. The bag is
     * read once per shard and bundle, then only when the lowest waiting number is in turn: a record
     * ahead of its turn costs one append, however many wait before it.
     */
    private void sendWaiting(ShardWriter writer, BagState<Held> waiting) {
      List<Held> held = null;
      if (writer.waitingNumbers == null) {
        held = readAll(waiting);
        TreeSet<Long> numbers = new TreeSet<>();
        held.forEach(record -> numbers.add(record.record.number));
        writer.waitingNumbers = numbers;
      }
      if (writer.waitingNumbers.isEmpty() || writer.waitingNumbers.first() > writer.next) {
        return;
      }
      sendInTurn(writer, waiting, held == null ? readAll(waiting) : held, List.of());
    }

    /**
     * Offers {@code candidates} in number order, then leaves in the bag those not sent and {@code
     * kept}, and returns them.
     */
    private List<Held> sendInTurn(
        ShardWriter writer, BagState<Held> waiting, List<Held> candidates, List<Held> kept) {
      List<Held> inOrder = new ArrayList<>(candidates);
      inOrder.sort(Comparator.comparingLong(r -> r.record.number));
      List<Held> rest = new ArrayList<>(kept);
      for (Held record : inOrder) {
        if (!offer(writer, record.record)) {
          rest.add(record);
        }
      }
      waiting.clear();
      rest.forEach(waiting::add);
      TreeSet<Long> numbers = new TreeSet<>();
      rest.forEach(record -> numbers.add(record.record.number));
      writer.waitingNumbers = numbers;
      return rest;
    }

    private static List<Held> readAll(BagState<Held> waiting) {
      List<Held> held = new ArrayList<>();
      waiting.read().forEach(held::add);
      return held;
    }

    /** Closes the writers a failed bundle left behind: their transactions were never committed. */
    @StartBundle
    public void startBundle() {
      closeAll();
    }

    /**
     * Commits each shard's transaction and closes its writer. The next bundle opens new ones and
     * reads the committed numbers back from Kafka, so no number held in memory outlives the bundle
     * that committed it (a runner may give a shard's next bundle to another instance of this step).
     */
    @FinishBundle
    public void finishBundle() {
      try {
        for (ShardWriter writer : List.copyOf(Objects.requireNonNull(writers).values())) {
          if (writer.commit()) {
            transactions.inc();
          }
        }
      } finally {
        closeAll();
      }
    }

    private void closeAll() {
      if (writers != null) {
        writers.values().forEach(ShardWriter::close);
        writers.clear();
      }
    }

    @Teardown
    public void teardown() {
      closeAll();
    }

    /**
     * One shard's transactional producer for one bundle, and the next sequence number it expects.
     * Any failure fails the bundle (the next bundle's start, or the teardown, closes the producer);
     * the runner retries from stable input, and the next producer (same transactional id) aborts
     * what this one left open.
     */
    private final class ShardWriter {
      private final int shard;
      private final String lineage;
      private final Producer<String, HeaderedValue> producer;

      /** The number of the next record to send. */
      long next;

      /** The content chain of record {@code next - 1}, committed or sent; null when unknown. */
      @Nullable String lastChain;

      /** Records committed before that a restore replayed, since the last commit. */
      long skipped;

      /**
       * The numbers of the records waiting in state, read on the shard's first record of the bundle
       * (after a start, which may be a restore, any may wait); null until then.
       */
      @Nullable TreeSet<Long> waitingNumbers;

      private boolean inTransaction;

      ShardWriter(int shard, String lineage) {
        this.shard = shard;
        this.lineage = lineage;
        Map<String, Object> config = new HashMap<>(producerConfig);
        config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, groupId + "-" + shard);
        config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        this.producer =
            new KafkaProducer<>(
                clients.merged(config),
                new StringSerializer(),
                new HeaderedValue.ValueSerializer());
        try {
          // Fences any earlier producer of this shard and completes its open transaction, so the
          // committed number read next is final.
          producer.initTransactions();
          ShardPosition committed = committedPosition();
          this.next = committed.next;
          this.lastChain = committed.chain;
        } catch (RuntimeException e) {
          producer.close();
          throw e;
        }
      }

      /** The position the sink group holds for this shard; number 0 when it holds none. */
      private ShardPosition committedPosition() {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        TopicPartition partition = shardPartition(topic, shard);
        try (Consumer<byte[], byte[]> consumer =
            new KafkaConsumer<>(
                clients.merged(config), new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
          OffsetAndMetadata committed = consumer.committed(Set.of(partition)).get(partition);
          if (committed == null || committed.metadata().isEmpty()) {
            return new ShardPosition(lineage, 0, null);
          }
          ShardPosition position = ShardPosition.parse(committed.metadata());
          if (!position.lineage.equals(lineage)) {
            throw new IllegalStateException(
                "sink group '"
                    + groupId
                    + "' holds commits of shard "
                    + shard
                    + " from another job or an earlier run this job did not restore from (up to"
                    + " record "
                    + position.next
                    + "); writing would mix two runs' numbering. Give this job its own"
                    + " --kafkaSinkGroupId, or delete that group (kafka-consumer-groups.sh"
                    + " --delete --group "
                    + groupId
                    + ") if the earlier run's output is to be written again");
          }
          LOG.debug(
              "sink group {} shard {}: records below {} are committed",
              groupId,
              shard,
              position.next);
          return position;
        }
      }

      /** {@link #waitingNumbers}, once read. */
      TreeSet<Long> waitingNumbers() {
        return Objects.requireNonNull(waitingNumbers, "the waiting records were not read yet");
      }

      void checkLineage(Sequenced record) {
        if (!record.lineage.equals(lineage)) {
          throw new IllegalStateException(
              "shard "
                  + shard
                  + " received records of two lineages: "
                  + lineage
                  + ", "
                  + record.lineage);
        }
      }

      /** Sends {@code record}, the next in turn, in this bundle's transaction. */
      void send(Sequenced record) {
        if (!inTransaction) {
          producer.beginTransaction();
          inTransaction = true;
        }
        producer.send(new ProducerRecord<>(topic, record.key, record.value));
        next++;
        lastChain = record.chain;
      }

      /** Commits the open transaction with the shard's next number; false if none was open. */
      boolean commit() {
        if (skipped > 0) {
          LOG.warn(
              "sink group {} shard {}: skipped {} records that an earlier attempt had committed"
                  + " (a restore replayed them)",
              groupId,
              shard,
              skipped);
          skipped = 0;
        }
        if (!inTransaction) {
          return false;
        }
        producer.sendOffsetsToTransaction(
            Map.of(
                shardPartition(topic, shard),
                new OffsetAndMetadata(0L, new ShardPosition(lineage, next, lastChain).format())),
            new ConsumerGroupMetadata(groupId));
        producer.commitTransaction();
        inTransaction = false;
        return true;
      }

      void close() {
        producer.close(Duration.ofSeconds(5));
      }
    }
  }

  /**
   * A shard's lineage id, next sequence number and the content chain of the record before it, as
   * committed in the sink group's metadata: {@code tidemark/2 LINEAGE NEXT CHAIN}, or {@code
   * tidemark/1 LINEAGE NEXT} when the chain is unknown (and as written before chains were kept).
   */
  static final class ShardPosition {
    final String lineage;
    final long next;
    final @Nullable String chain;

    ShardPosition(String lineage, long next, @Nullable String chain) {
      this.lineage = lineage;
      this.next = next;
      this.chain = chain;
    }

    String format() {
      return chain == null
          ? "tidemark/1 " + lineage + " " + next
          : "tidemark/2 " + lineage + " " + next + " " + chain;
    }

    static ShardPosition parse(String metadata) {
      List<String> fields = List.of(metadata.split(" "));
      if (fields.size() == 4 && fields.get(0).equals("tidemark/2")) {
        return new ShardPosition(fields.get(1), Long.parseLong(fields.get(2)), fields.get(3));
      }
      if (fields.size() != 3 || !fields.get(0).equals("tidemark/1")) {
        throw new IllegalStateException(
            "the sink group's offset metadata '"
                + metadata
                + "' was not written by this sink (Beam's KafkaIO exactly-once sink, or another"
                + " tool, used the group): give this job its own --kafkaSinkGroupId");
      }
      return new ShardPosition(fields.get(1), Long.parseLong(fields.get(2)), null);
    }
  }
}
