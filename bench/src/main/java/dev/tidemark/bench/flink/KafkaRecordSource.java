package dev.tidemark.bench.flink;

import dev.tidemark.launcher.KafkaFeed;
import dev.tidemark.pipelines.io.kafka.KafkaCloudEvents;
import dev.tidemark.transforms.values.RawRecord;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceOutput;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.joda.time.Instant;

/**
 * An unbounded Flink source of CloudEvents in a Kafka topic, written with kafka-clients because
 * flink-connector-kafka is not a dependency: one split per partition, partition {@code i} read by
 * reader {@code i % parallelism}, from the earliest offset, {@code read_committed}. Each record
 * becomes the {@link RawRecord} Tidemark's {@code KafkaSource} makes ({@link
 * KafkaCloudEvents#toRawRecord}) with its CloudEvent {@code time} as timestamp ({@link
 * KafkaCloudEvents#eventTime}, as Tidemark's {@code EventTimePolicy}), emitted through a per-split
 * output so each partition has its own watermark, as in KafkaIO. Offsets are in the split state; no
 * offsets are committed to Kafka.
 */
final class KafkaRecordSource
    implements Source<
        RawRecord, KafkaRecordSource.PartitionSplit, Collection<KafkaRecordSource.PartitionSplit>> {
  private static final long serialVersionUID = 1L;

  private final String bootstrapServers;
  private final String topic;

  KafkaRecordSource(String bootstrapServers, String topic) {
    this.bootstrapServers = bootstrapServers;
    this.topic = topic;
  }

  @Override
  public Boundedness getBoundedness() {
    return Boundedness.CONTINUOUS_UNBOUNDED;
  }

  private Map<String, Object> consumerConfig() {
    Map<String, Object> config = new HashMap<>();
    config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    return config;
  }

  @Override
  public SplitEnumerator<PartitionSplit, Collection<PartitionSplit>> createEnumerator(
      SplitEnumeratorContext<PartitionSplit> context) {
    List<PartitionSplit> splits = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerConfig())) {
      for (TopicPartition partition : KafkaFeed.partitions(consumer, topic)) {
        splits.add(new PartitionSplit(topic, partition.partition(), 0));
      }
    }
    return new Enumerator(context, splits);
  }

  @Override
  public SplitEnumerator<PartitionSplit, Collection<PartitionSplit>> restoreEnumerator(
      SplitEnumeratorContext<PartitionSplit> context, Collection<PartitionSplit> checkpoint) {
    return new Enumerator(context, new ArrayList<>(checkpoint));
  }

  @Override
  public SimpleVersionedSerializer<PartitionSplit> getSplitSerializer() {
    return new SplitSerializer();
  }

  @Override
  public SimpleVersionedSerializer<Collection<PartitionSplit>> getEnumeratorCheckpointSerializer() {
    return new SplitsSerializer<>(new SplitSerializer());
  }

  @Override
  public SourceReader<RawRecord, PartitionSplit> createReader(SourceReaderContext context) {
    return new Reader(consumerConfig());
  }

  /** One partition, from {@code offset} on. */
  static final class PartitionSplit implements SourceSplit {
    final String topic;
    final int partition;
    final long offset;

    PartitionSplit(String topic, int partition, long offset) {
      this.topic = topic;
      this.partition = partition;
      this.offset = offset;
    }

    @Override
    public String splitId() {
      return topic + "-" + partition;
    }
  }

  /** Assigns partition {@code i} to reader {@code i % parallelism} when that reader registers. */
  static final class Enumerator
      implements SplitEnumerator<PartitionSplit, Collection<PartitionSplit>> {
    private final SplitEnumeratorContext<PartitionSplit> context;
    private final List<PartitionSplit> unassigned;

    Enumerator(SplitEnumeratorContext<PartitionSplit> context, List<PartitionSplit> splits) {
      this.context = context;
      this.unassigned = splits;
    }

    @Override
    public void start() {}

    @Override
    public void handleSplitRequest(int subtaskId, String requesterHostname) {}

    @Override
    public void addSplitsBack(List<PartitionSplit> splits, int subtaskId) {
      unassigned.addAll(splits);
      if (context.registeredReaders().containsKey(subtaskId)) {
        addReader(subtaskId);
      }
    }

    @Override
    public void addReader(int subtaskId) {
      int parallelism = context.currentParallelism();
      Iterator<PartitionSplit> it = unassigned.iterator();
      while (it.hasNext()) {
        PartitionSplit split = it.next();
        if (split.partition % parallelism == subtaskId) {
          context.assignSplit(split, subtaskId);
          it.remove();
        }
      }
      context.signalNoMoreSplits(subtaskId);
    }

    @Override
    public Collection<PartitionSplit> snapshotState(long checkpointId) {
      return new ArrayList<>(unassigned);
    }

    @Override
    public void close() {}
  }

  /** Polls its partitions and emits each record through its partition's output. */
  static final class Reader implements SourceReader<RawRecord, PartitionSplit> {
    private static final java.time.Duration POLL = java.time.Duration.ofMillis(50);
    private final Map<String, Object> config;
    private final Map<TopicPartition, PartitionSplit> splits = new HashMap<>();
    private final Map<TopicPartition, SourceOutput<RawRecord>> outputs = new HashMap<>();
    private final ArrayDeque<ConsumerRecord<byte[], byte[]>> buffer = new ArrayDeque<>();
    private KafkaConsumer<byte[], byte[]> consumer;
    private boolean assignmentChanged;
    private boolean noMoreSplits;
    private CompletableFuture<Void> available = CompletableFuture.completedFuture(null);

    Reader(Map<String, Object> config) {
      this.config = config;
    }

    @Override
    public void start() {
      consumer = new KafkaConsumer<>(config);
    }

    @Override
    public InputStatus pollNext(ReaderOutput<RawRecord> output) {
      if (assignmentChanged) {
        consumer.assign(new ArrayList<>(splits.keySet()));
        for (PartitionSplit split : splits.values()) {
          TopicPartition tp = new TopicPartition(split.topic, split.partition);
          consumer.seek(tp, split.offset);
          outputs.computeIfAbsent(tp, p -> output.createOutputForSplit(split.splitId()));
        }
        assignmentChanged = false;
      }
      if (splits.isEmpty()) {
        if (noMoreSplits) {
          output.markIdle();
        }
        available = new CompletableFuture<>();
        return InputStatus.NOTHING_AVAILABLE;
      }
      if (buffer.isEmpty()) {
        consumer.poll(POLL).forEach(buffer::add);
        if (buffer.isEmpty()) {
          return InputStatus.NOTHING_AVAILABLE;
        }
      }
      ConsumerRecord<byte[], byte[]> record = buffer.poll();
      TopicPartition tp = new TopicPartition(record.topic(), record.partition());
      Instant eventTime = KafkaCloudEvents.eventTime(record.headers(), record.value());
      RawRecord raw =
          KafkaCloudEvents.toRawRecord(
              record.headers(),
              record.value(),
              new Instant(record.timestamp()),
              KafkaCloudEvents.origin(record.topic(), record.partition(), record.offset()));
      outputs.get(tp).collect(raw, eventTime == null ? Long.MIN_VALUE : eventTime.getMillis());
      PartitionSplit split = splits.get(tp);
      splits.put(tp, new PartitionSplit(split.topic, split.partition, record.offset() + 1));
      return InputStatus.MORE_AVAILABLE;
    }

    @Override
    public List<PartitionSplit> snapshotState(long checkpointId) {
      return new ArrayList<>(splits.values());
    }

    @Override
    public CompletableFuture<Void> isAvailable() {
      return available;
    }

    @Override
    public void addSplits(List<PartitionSplit> added) {
      for (PartitionSplit split : added) {
        splits.put(new TopicPartition(split.topic, split.partition), split);
      }
      assignmentChanged = true;
      available.complete(null);
    }

    @Override
    public void notifyNoMoreSplits() {
      noMoreSplits = true;
    }

    @Override
    public void close() {
      if (consumer != null) {
        consumer.close();
      }
    }
  }

  static final class SplitSerializer implements SimpleVersionedSerializer<PartitionSplit> {
    @Override
    public int getVersion() {
      return 1;
    }

    @Override
    public byte[] serialize(PartitionSplit split) throws IOException {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (DataOutputStream out = new DataOutputStream(bytes)) {
        out.writeUTF(split.topic);
        out.writeInt(split.partition);
        out.writeLong(split.offset);
      }
      return bytes.toByteArray();
    }

    @Override
    public PartitionSplit deserialize(int version, byte[] serialized) throws IOException {
      try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized))) {
        return new PartitionSplit(in.readUTF(), in.readInt(), in.readLong());
      }
    }
  }
}
