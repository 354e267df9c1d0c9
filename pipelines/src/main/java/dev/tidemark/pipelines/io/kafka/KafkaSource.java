package dev.tidemark.pipelines.io.kafka;

import dev.tidemark.pipelines.io.CloudEventTime;
import dev.tidemark.transforms.values.RawRecord;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.io.kafka.KafkaIO;
import org.apache.beam.sdk.io.kafka.KafkaRecord;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * CloudEvents from a Kafka topic as {@link RawRecord}s: KafkaIO with the {@link EventTimePolicy}
 * watermark, offsets committed only when the runner finalizes a checkpoint ({@code
 * commitOffsetsInFinalize}, auto-commit off), transactional input read {@code read_committed}. Each
 * record's ingestion time is its Kafka record timestamp and its origin {@code
 * kafka:topic/partition@offset}; binary and structured mode are both accepted ({@link
 * KafkaCloudEvents}). A record whose event time is more than {@link #withMaxFutureSkew} after its
 * ingestion time moves no watermark and is timestamped with its ingestion time; the parser
 * dead-letters it as {@code time_in_future}.
 *
 * <pre>{@code
 * PCollection<RawRecord> raw =
 *     pipeline.apply("ReadKafka",
 *         KafkaSource.of(clients, "payments", "tidemark")
 *             .withMaxFutureSkew(Duration.standardMinutes(10)));
 * }</pre>
 */
public final class KafkaSource extends PTransform<PBegin, PCollection<RawRecord>> {
  /** The default bound on how far an event time may lie after its ingestion time. */
  public static final Duration DEFAULT_MAX_FUTURE_SKEW = Duration.standardMinutes(10);

  private final KafkaClients clients;
  private final String topic;
  private final String consumerGroup;
  private final String startOffset;
  private final Duration maxOutOfOrderness;
  private final Duration idleTimeout;
  private final Duration maxFutureSkew;
  private final CloudEventTime eventTime;
  private final @Nullable Long maxRecords;
  private final @Nullable Integer partitions;

  private KafkaSource(
      KafkaClients clients,
      String topic,
      String consumerGroup,
      String startOffset,
      Duration maxOutOfOrderness,
      Duration idleTimeout,
      Duration maxFutureSkew,
      CloudEventTime eventTime,
      @Nullable Long maxRecords,
      @Nullable Integer partitions) {
    this.clients = clients;
    this.topic = topic;
    this.consumerGroup = consumerGroup;
    this.startOffset = startOffset;
    this.maxOutOfOrderness = maxOutOfOrderness;
    this.idleTimeout = idleTimeout;
    this.maxFutureSkew = maxFutureSkew;
    this.eventTime = eventTime;
    this.maxRecords = maxRecords;
    this.partitions = partitions;
  }

  /** Reads {@code topic} as consumer group {@code consumerGroup}, from the earliest offset. */
  public static KafkaSource of(KafkaClients clients, String topic, String consumerGroup) {
    return new KafkaSource(
        clients,
        topic,
        consumerGroup,
        "earliest",
        Duration.standardSeconds(30),
        Duration.standardSeconds(10),
        DEFAULT_MAX_FUTURE_SKEW,
        CloudEventTime.ATTRIBUTE,
        null,
        null);
  }

  /** Where a group without committed offsets starts: {@code earliest} or {@code latest}. */
  public KafkaSource withStartOffset(String reset) {
    if (!reset.equals("earliest") && !reset.equals("latest")) {
      throw new IllegalArgumentException(
          "--kafkaStartOffset=" + reset + ": use earliest or latest");
    }
    return new KafkaSource(
        clients,
        topic,
        consumerGroup,
        reset,
        maxOutOfOrderness,
        idleTimeout,
        maxFutureSkew,
        eventTime,
        maxRecords,
        partitions);
  }

  /** The watermark policy: out-of-orderness bound and idle-partition timeout. */
  public KafkaSource withWatermark(Duration outOfOrderness, Duration idle) {
    return new KafkaSource(
        clients,
        topic,
        consumerGroup,
        startOffset,
        outOfOrderness,
        idle,
        maxFutureSkew,
        eventTime,
        maxRecords,
        partitions);
  }

  /**
   * How far an event time may lie after the record's ingestion time (its Kafka timestamp) and still
   * move the watermark; later records are timestamped with their ingestion time instead.
   */
  public KafkaSource withMaxFutureSkew(Duration skew) {
    if (skew == null || skew.isShorterThan(Duration.ZERO)) {
      throw new IllegalArgumentException(
          "--maxFutureSkew must not be negative, got " + skew + "; use e.g. PT10M");
    }
    return new KafkaSource(
        clients,
        topic,
        consumerGroup,
        startOffset,
        maxOutOfOrderness,
        idleTimeout,
        skew,
        eventTime,
        maxRecords,
        partitions);
  }

  /**
   * Where a record's event time is read (a spec's {@code clocks.eventTime}): its timestamp and the
   * partition's watermark follow it. The parser must read the same place.
   */
  public KafkaSource withEventTime(CloudEventTime time) {
    return new KafkaSource(
        clients,
        topic,
        consumerGroup,
        startOffset,
        maxOutOfOrderness,
        idleTimeout,
        maxFutureSkew,
        time,
        maxRecords,
        partitions);
  }

  /** Stops after {@code records} records: a bounded read that ends by itself. */
  public KafkaSource withMaxRecords(long records) {
    if (records <= 0) {
      throw new IllegalArgumentException("--kafkaMaxRecords must be positive, got " + records);
    }
    return new KafkaSource(
        clients,
        topic,
        consumerGroup,
        startOffset,
        maxOutOfOrderness,
        idleTimeout,
        maxFutureSkew,
        eventTime,
        records,
        partitions);
  }

  /**
   * Reads partitions 0 to {@code count - 1} of the topic, as the caller listed them, instead of the
   * partitions KafkaIO lists when the job is translated. A caller that names the read by its
   * partition count reads exactly the partitions it counted: moments after a topic grew, one
   * broker's metadata may still show the old count while another's shows the new one.
   */
  public KafkaSource withPartitions(int count) {
    if (count < 1) {
      throw new IllegalArgumentException(
          "a Kafka read needs at least one partition of " + topic + ", got " + count);
    }
    return new KafkaSource(
        clients,
        topic,
        consumerGroup,
        startOffset,
        maxOutOfOrderness,
        idleTimeout,
        maxFutureSkew,
        eventTime,
        maxRecords,
        count);
  }

  @Override
  public PCollection<RawRecord> expand(PBegin input) {
    Map<String, Object> consumer = new HashMap<>();
    consumer.put(ConsumerConfig.GROUP_ID_CONFIG, consumerGroup);
    consumer.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, startOffset);
    consumer.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    consumer.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    KafkaIO.Read<byte[], byte[]> read =
        KafkaIO.<byte[], byte[]>read()
            .withBootstrapServers(clients.bootstrapServers())
            .withKeyDeserializer(ByteArrayDeserializer.class)
            .withValueDeserializer(ByteArrayDeserializer.class)
            .withConsumerConfigUpdates(consumer)
            .withConsumerFactoryFn(clients.consumerFactory())
            .withTimestampPolicyFactory(
                EventTimePolicy.factory(maxOutOfOrderness, idleTimeout, maxFutureSkew, eventTime))
            .commitOffsetsInFinalize();
    if (partitions == null) {
      read = read.withTopic(topic);
    } else {
      List<TopicPartition> listed = new ArrayList<>();
      for (int partition = 0; partition < partitions; partition++) {
        listed.add(new TopicPartition(topic, partition));
      }
      read = read.withTopicPartitions(listed);
    }
    if (maxRecords != null) {
      read = read.withMaxNumRecords(maxRecords);
    }
    return input
        .apply("ReadKafka", read)
        .apply("ToRawRecords", ParDo.of(new ToRawRecordFn()))
        .setCoder(RawRecord.RawRecordCoder.of());
  }

  /**
   * A record's ingestion time: its Kafka timestamp, or the time of reading for a record without one
   * (a negative timestamp, from a pre-0.10 message format).
   */
  static Instant ingestionTime(long recordTimestamp) {
    return recordTimestamp < 0 ? Instant.now() : new Instant(recordTimestamp);
  }

  /** KafkaRecord to RawRecord, keeping the event-time timestamp the policy assigned. */
  static final class ToRawRecordFn extends DoFn<KafkaRecord<byte[], byte[]>, RawRecord> {
    @ProcessElement
    public void processElement(
        @Element KafkaRecord<byte[], byte[]> record, OutputReceiver<RawRecord> out) {
      out.output(
          KafkaCloudEvents.toRawRecord(
              record.getHeaders(),
              record.getKV().getValue(),
              ingestionTime(record.getTimestamp()),
              KafkaCloudEvents.origin(
                  record.getTopic(), record.getPartition(), record.getOffset())));
    }
  }
}
