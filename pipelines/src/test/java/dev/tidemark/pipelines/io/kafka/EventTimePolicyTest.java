package dev.tidemark.pipelines.io.kafka;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import dev.tidemark.pipelines.io.CloudEventTime;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.apache.beam.sdk.io.kafka.KafkaRecord;
import org.apache.beam.sdk.io.kafka.KafkaTimestampType;
import org.apache.beam.sdk.io.kafka.TimestampPolicy;
import org.apache.beam.sdk.io.kafka.TimestampPolicy.PartitionContext;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** The Kafka partition's event time and watermark, with honest and future-dated records. */
@RunWith(JUnit4.class)
public class EventTimePolicyTest {
  private static final Instant INGESTED = Instant.parse("2026-01-01T00:10:00Z");
  private static final Instant HONEST = Instant.parse("2026-01-01T00:09:00Z");
  private static final Instant LATER_HONEST = Instant.parse("2026-01-01T00:09:30Z");
  private static final Instant FROM_2099 = Instant.parse("2099-01-01T00:00:00Z");
  private static final Duration OUT_OF_ORDERNESS = Duration.standardSeconds(30);
  private static final Duration SKEW = Duration.standardMinutes(10);
  private static final TopicPartition PARTITION = new TopicPartition("payments", 0);

  /** A partition with a backlog, so the idle rule never applies. */
  private static final PartitionContext BUSY =
      new PartitionContext() {
        @Override
        public long getMessageBacklog() {
          return 100;
        }

        @Override
        public Instant getBacklogCheckTime() {
          return INGESTED;
        }
      };

  /** A partition caught up by its last backlog figure, checked a minute from now. */
  private static final PartitionContext CAUGHT_UP_A_MINUTE_LATER =
      new PartitionContext() {
        @Override
        public long getMessageBacklog() {
          return 0;
        }

        @Override
        public Instant getBacklogCheckTime() {
          return Instant.now().plus(Duration.standardMinutes(1));
        }
      };

  private static KafkaRecord<byte[], byte[]> record(long offset, Instant eventTime) {
    String json =
        "{\"specversion\":\"1.0\",\"id\":\"e"
            + offset
            + "\",\"time\":\""
            + eventTime
            + "\",\"data\":{}}";
    return new KafkaRecord<>(
        PARTITION.topic(),
        PARTITION.partition(),
        offset,
        INGESTED.getMillis(),
        KafkaTimestampType.CREATE_TIME,
        new RecordHeaders(),
        new byte[0],
        json.getBytes(StandardCharsets.UTF_8));
  }

  private static TimestampPolicy<byte[], byte[]> policy(Optional<Instant> previous) {
    return EventTimePolicy.factory(OUT_OF_ORDERNESS, Duration.standardSeconds(10), SKEW)
        .createTimestampPolicy(PARTITION, previous);
  }

  @Test
  public void aFutureRecordGetsItsIngestionTimeAndDoesNotMoveTheWatermark() {
    TimestampPolicy<byte[], byte[]> policy = policy(Optional.empty());
    assertThat(policy.getTimestampForRecord(BUSY, record(1, HONEST)), is(HONEST));
    assertThat(policy.getWatermark(BUSY), is(HONEST.minus(OUT_OF_ORDERNESS)));

    assertThat(policy.getTimestampForRecord(BUSY, record(2, FROM_2099)), is(INGESTED));
    assertThat(policy.getWatermark(BUSY), is(HONEST.minus(OUT_OF_ORDERNESS)));

    // Honest records after it still drive the watermark.
    assertThat(policy.getTimestampForRecord(BUSY, record(3, LATER_HONEST)), is(LATER_HONEST));
    assertThat(policy.getWatermark(BUSY), is(LATER_HONEST.minus(OUT_OF_ORDERNESS)));
  }

  @Test
  public void theSpecsEventTimeFieldGivesTheTimestampAndTheWatermark() {
    TimestampPolicy<byte[], byte[]> policy =
        EventTimePolicy.factory(
                OUT_OF_ORDERNESS, Duration.standardSeconds(10), SKEW, CloudEventTime.of("paidAt"))
            .createTimestampPolicy(PARTITION, Optional.empty());
    // The attribute says 2099; data.paidAt, the event time, says HONEST.
    KafkaRecord<byte[], byte[]> record = record(1, FROM_2099);
    String json =
        new String(record.getKV().getValue(), StandardCharsets.UTF_8)
            .replace("\"data\":{}", "\"data\":{\"paidAt\":\"" + HONEST + "\"}");
    KafkaRecord<byte[], byte[]> paid =
        new KafkaRecord<>(
            PARTITION.topic(),
            PARTITION.partition(),
            1,
            INGESTED.getMillis(),
            KafkaTimestampType.CREATE_TIME,
            new RecordHeaders(),
            new byte[0],
            json.getBytes(StandardCharsets.UTF_8));
    assertThat(policy.getTimestampForRecord(BUSY, paid), is(HONEST));
    assertThat(policy.getWatermark(BUSY), is(HONEST.minus(OUT_OF_ORDERNESS)));
  }

  @Test
  public void anEventWithinTheSkewKeepsItsEventTime() {
    TimestampPolicy<byte[], byte[]> policy = policy(Optional.empty());
    Instant justWithin = INGESTED.plus(SKEW);
    assertThat(policy.getTimestampForRecord(BUSY, record(1, justWithin)), is(justWithin));
    assertThat(policy.getWatermark(BUSY), is(justWithin.minus(OUT_OF_ORDERNESS)));
    Instant justBeyond = INGESTED.plus(SKEW).plus(Duration.millis(1));
    assertThat(policy.getTimestampForRecord(BUSY, record(2, justBeyond)), is(INGESTED));
  }

  @Test
  public void aRestoredPartitionWaitingForItsFirstRecordAdvancesFromItsRestoredWatermark() {
    Instant restored = HONEST.minus(OUT_OF_ORDERNESS);
    Duration idleTimeout = Duration.standardSeconds(10);
    // Caught up by its last backlog figure, checked a minute after the reader started, no record
    // read yet: idle for 50 s beyond the timeout.
    PartitionContext aMinuteLater = CAUGHT_UP_A_MINUTE_LATER;
    TimestampPolicy<byte[], byte[]> policy =
        EventTimePolicy.factory(OUT_OF_ORDERNESS, idleTimeout, SKEW)
            .createTimestampPolicy(PARTITION, Optional.of(restored));
    // It moves on from where the checkpoint left it, by the idle time, not to the wall clock.
    Instant watermark = policy.getWatermark(aMinuteLater);
    assertThat(watermark.isAfter(restored.plus(Duration.standardSeconds(45))), is(true));
    assertThat(watermark.isBefore(restored.plus(Duration.standardMinutes(2))), is(true));

    // A partition that never had a record and no checkpoint assumes live traffic: the wall clock.
    TimestampPolicy<byte[], byte[]> fresh =
        EventTimePolicy.factory(OUT_OF_ORDERNESS, idleTimeout, SKEW)
            .createTimestampPolicy(PARTITION, Optional.empty());
    assertThat(
        fresh.getWatermark(aMinuteLater).isAfter(Instant.now().minus(Duration.standardMinutes(1))),
        is(true));
  }

  @Test
  public void aPartitionRestoredWithoutAWatermarkNeverFollowsTheWallClock() {
    // A checkpoint taken after a restore, before this partition's first record, holds the minimum
    // for it. Caught up and idle, it holds the minimum until its first event, then follows that.
    PartitionContext idleForAMinute = CAUGHT_UP_A_MINUTE_LATER;
    TimestampPolicy<byte[], byte[]> policy = policy(Optional.of(BoundedWindow.TIMESTAMP_MIN_VALUE));
    assertThat(policy.getWatermark(idleForAMinute), is(BoundedWindow.TIMESTAMP_MIN_VALUE));
    assertThat(policy.getTimestampForRecord(BUSY, record(1, HONEST)), is(HONEST));
    assertThat(policy.getWatermark(BUSY), is(HONEST.minus(OUT_OF_ORDERNESS)));

    // A partition never checkpointed and never read does follow the wall clock.
    TimestampPolicy<byte[], byte[]> fresh = policy(Optional.empty());
    assertThat(
        fresh
            .getWatermark(idleForAMinute)
            .isAfter(Instant.now().minus(Duration.standardMinutes(1))),
        is(true));
  }

  @Test
  public void aCheckpointedWatermarkInTheFutureIsNotRestored() {
    Instant now = Instant.now();
    assertThat(
        EventTimePolicy.restored(PARTITION, Optional.of(FROM_2099), now, SKEW),
        is(BoundedWindow.TIMESTAMP_MIN_VALUE));
    Instant honest = now.minus(Duration.standardMinutes(1));
    assertThat(EventTimePolicy.restored(PARTITION, Optional.of(honest), now, SKEW), is(honest));
    assertThat(
        EventTimePolicy.restored(PARTITION, Optional.empty(), now, SKEW),
        is(BoundedWindow.TIMESTAMP_MIN_VALUE));

    TimestampPolicy<byte[], byte[]> policy = policy(Optional.of(FROM_2099));
    assertThat(policy.getTimestampForRecord(BUSY, record(1, HONEST)), is(HONEST));
    assertThat(policy.getWatermark(BUSY), is(HONEST.minus(OUT_OF_ORDERNESS)));
  }

  @Test
  public void theSourceFactoriesSerializeAsNamedClassesWithFixedUids() {
    // Beam's Flink source keeps the Kafka source, with these factories, Java-serialized in every
    // savepoint: a lambda there would not survive an edit of the class that made it.
    for (java.io.Serializable factory :
        new java.io.Serializable[] {
          EventTimePolicy.factory(
              Duration.standardSeconds(30), Duration.standardSeconds(10), Duration.ZERO),
          KafkaClients.plaintext("localhost:9092").consumerFactory()
        }) {
      Class<?> type = factory.getClass();
      assertThat(
          type.getName(), type.isSynthetic() || type.getName().contains("$$Lambda"), is(false));
      assertThat(
          type.getName(), java.io.ObjectStreamClass.lookup(type).getSerialVersionUID(), is(1L));
      org.apache.beam.sdk.util.SerializableUtils.ensureSerializable(factory);
    }
  }
}
