package dev.tidemark.pipelines.io.kafka;

import dev.tidemark.pipelines.io.CloudEventTime;
import java.util.Optional;
import org.apache.beam.sdk.io.UnboundedSource.UnboundedReader;
import org.apache.beam.sdk.io.kafka.KafkaRecord;
import org.apache.beam.sdk.io.kafka.TimestampPolicy;
import org.apache.beam.sdk.io.kafka.TimestampPolicyFactory;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.kafka.common.TopicPartition;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Event time and the watermark of one Kafka partition.
 *
 * <p>A record's timestamp is its event time, read where the spec's {@code clocks.eventTime} says
 * ({@link CloudEventTime}: the CloudEvent {@code time}, or a timestamp field of its data); a record
 * without a readable time gets the minimum timestamp and is dead-lettered by the parser. The
 * watermark is bounded out-of-orderness: the latest event time seen minus {@code
 * maxOutOfOrderness}, never moving back.
 *
 * <p>Idle partitions: when the reader has caught up with a partition (no backlog) and no record has
 * arrived for {@code idleTimeout} of processing time, the partition stops holding the watermark: it
 * advances with the wall clock from its last event time, as if the stream went on in real time with
 * no events ({@code maxEventTime - maxOutOfOrderness + (idle - idleTimeout)}). A partition restored
 * from a checkpoint that has read no record since advances the same way from the restored
 * watermark: it had records, and a restored reader may wait longer than {@code idleTimeout} for its
 * first fetch, so the wall clock (far ahead of a replayed input's event time) would judge the
 * backlog it is about to read too late. A partition restored from a checkpoint that holds no
 * watermark for it (the minimum) holds the minimum until its first event, and never follows the
 * wall clock: Beam's Kafka reader checkpoints the watermark it last computed, and Beam's Flink
 * source computes one only for a split that has emitted a record, so a checkpoint taken after a
 * restore and before a partition's first record holds the minimum for a partition that had records.
 * Only a partition never checkpointed and without a record assumes live traffic and follows the
 * wall clock ({@code now - idleTimeout - maxOutOfOrderness}): a restored one doing so while caught
 * up (its backlog already read before a pause in the input) would hold the wall clock as its
 * watermark, and Beam's reader asks for it even before the partition's first record, emitted with
 * that record; a replayed input's event time lies far behind the wall clock, and every window the
 * job had seen would expire at once. Records that arrive after an advance are judged late or too
 * late by the windowing step, never dropped silently.
 *
 * <p>Future events: a record whose event time lies more than {@code maxFutureSkew} after its
 * ingestion time (its Kafka record timestamp) comes from a producer with a wrong clock. It does not
 * count towards the latest event time, so it cannot move the watermark, and it is timestamped with
 * its ingestion time (never after it), which is the moment the parser measures the skew from: the
 * parser dead-letters it as {@code time_in_future} and its dead letter holds nothing back. A
 * watermark restored from a checkpoint that lies more than {@code maxFutureSkew} after the wall
 * clock cannot come from honest events (a checkpoint taken before this bound existed): it is
 * discarded and the partition starts again from the minimum.
 */
public final class EventTimePolicy extends TimestampPolicy<byte[], byte[]> {
  private static final Logger LOG = LoggerFactory.getLogger(EventTimePolicy.class);

  private final Duration maxOutOfOrderness;
  private final Duration idleTimeout;
  private final Duration maxFutureSkew;
  private final CloudEventTime eventTime;
  private final Instant created;
  private @Nullable Instant maxEventTime;
  private @Nullable Instant lastArrival;
  private Instant watermark;

  /** The watermark restored from a checkpoint, or null for a partition read for the first time. */
  private final @Nullable Instant restoredWatermark;

  /** Whether the partition comes from a checkpoint, with or without a watermark. */
  private final boolean checkpointed;

  EventTimePolicy(
      Duration maxOutOfOrderness,
      Duration idleTimeout,
      Duration maxFutureSkew,
      CloudEventTime eventTime,
      Instant initialWatermark,
      boolean checkpointed) {
    this.maxOutOfOrderness = maxOutOfOrderness;
    this.idleTimeout = idleTimeout;
    this.maxFutureSkew = maxFutureSkew;
    this.eventTime = eventTime;
    this.watermark = initialWatermark;
    this.restoredWatermark =
        initialWatermark.isAfter(BoundedWindow.TIMESTAMP_MIN_VALUE) ? initialWatermark : null;
    this.checkpointed = checkpointed;
    this.created = Instant.now();
  }

  /**
   * The factory KafkaIO calls per partition; restores the checkpointed watermark unless it lies
   * more than {@code maxFutureSkew} after the wall clock.
   */
  public static TimestampPolicyFactory<byte[], byte[]> factory(
      Duration maxOutOfOrderness, Duration idleTimeout, Duration maxFutureSkew) {
    return factory(maxOutOfOrderness, idleTimeout, maxFutureSkew, CloudEventTime.ATTRIBUTE);
  }

  /**
   * {@link #factory(Duration, Duration, Duration)}, reading event times where {@code eventTime}
   * says.
   */
  public static TimestampPolicyFactory<byte[], byte[]> factory(
      Duration maxOutOfOrderness,
      Duration idleTimeout,
      Duration maxFutureSkew,
      CloudEventTime eventTime) {
    return new Factory(maxOutOfOrderness, idleTimeout, maxFutureSkew, eventTime);
  }

  /**
   * {@link #factory}: a named class with a fixed {@code serialVersionUID}, not a lambda, because
   * Beam's Flink source keeps the Kafka source, this factory in it, Java-serialized in every
   * savepoint and restores the source from there: a lambda's serialized form names a synthetic
   * method that any edit of this class may rename.
   */
  static final class Factory implements TimestampPolicyFactory<byte[], byte[]> {
    private static final long serialVersionUID = 1L;

    private final Duration maxOutOfOrderness;
    private final Duration idleTimeout;
    private final Duration maxFutureSkew;

    /**
     * Where event times are read; null in a factory restored from a savepoint written before this
     * field existed, which read the attribute {@code time}.
     */
    private final @Nullable CloudEventTime eventTime;

    Factory(
        Duration maxOutOfOrderness,
        Duration idleTimeout,
        Duration maxFutureSkew,
        CloudEventTime eventTime) {
      this.maxOutOfOrderness = maxOutOfOrderness;
      this.idleTimeout = idleTimeout;
      this.maxFutureSkew = maxFutureSkew;
      this.eventTime = eventTime;
    }

    @Override
    public TimestampPolicy<byte[], byte[]> createTimestampPolicy(
        TopicPartition partition, Optional<Instant> previousWatermark) {
      return new EventTimePolicy(
          maxOutOfOrderness,
          idleTimeout,
          maxFutureSkew,
          eventTime == null ? CloudEventTime.ATTRIBUTE : eventTime,
          restored(partition, previousWatermark, Instant.now(), maxFutureSkew),
          previousWatermark.isPresent());
    }
  }

  /** The checkpointed watermark, or the minimum when there is none or it is in the future. */
  static Instant restored(
      TopicPartition partition, Optional<Instant> previous, Instant now, Duration maxFutureSkew) {
    if (previous.isEmpty()) {
      return BoundedWindow.TIMESTAMP_MIN_VALUE;
    }
    if (previous.get().isAfter(now.plus(maxFutureSkew))) {
      LOG.warn(
          "partition {}: discarding the checkpointed watermark {}, more than {} after the wall"
              + " clock {}; it was moved by an event with a wrong clock",
          partition,
          previous.get(),
          maxFutureSkew,
          now);
      return BoundedWindow.TIMESTAMP_MIN_VALUE;
    }
    return previous.get();
  }

  @Override
  public Instant getTimestampForRecord(
      PartitionContext context, KafkaRecord<byte[], byte[]> record) {
    lastArrival = Instant.now();
    Instant eventTime =
        KafkaCloudEvents.eventTime(record.getHeaders(), record.getKV().getValue(), this.eventTime);
    if (eventTime == null
        || eventTime.isBefore(BoundedWindow.TIMESTAMP_MIN_VALUE)
        || !eventTime.isBefore(BoundedWindow.TIMESTAMP_MAX_VALUE)) {
      return BoundedWindow.TIMESTAMP_MIN_VALUE;
    }
    Instant ingestionTime = KafkaSource.ingestionTime(record.getTimestamp());
    if (eventTime.isAfter(ingestionTime.plus(maxFutureSkew))) {
      // A wrong producer clock: neither the watermark nor the timestamp may follow it.
      return ingestionTime;
    }
    if (maxEventTime == null || eventTime.isAfter(maxEventTime)) {
      maxEventTime = eventTime;
    }
    return eventTime;
  }

  @Override
  public Instant getWatermark(PartitionContext context) {
    Instant candidate =
        maxEventTime == null
            ? BoundedWindow.TIMESTAMP_MIN_VALUE
            : maxEventTime.minus(maxOutOfOrderness);
    long backlog = context.getMessageBacklog();
    if (backlog == 0 && backlog != UnboundedReader.BACKLOG_UNKNOWN) {
      Instant now = context.getBacklogCheckTime();
      Instant since = lastArrival == null ? created : lastArrival;
      Duration idle = new Duration(since, now);
      if (idle.isLongerThan(idleTimeout)
          && (maxEventTime != null || !checkpointed || restoredWatermark != null)) {
        Instant idleWatermark =
            maxEventTime != null
                ? candidate.plus(idle.minus(idleTimeout))
                : restoredWatermark != null
                    ? restoredWatermark.plus(idle.minus(idleTimeout))
                    : now.minus(idleTimeout).minus(maxOutOfOrderness);
        if (idleWatermark.isAfter(candidate)) {
          candidate = idleWatermark;
        }
      }
    }
    Instant ceiling = BoundedWindow.TIMESTAMP_MAX_VALUE.minus(Duration.millis(1));
    if (candidate.isAfter(ceiling)) {
      candidate = ceiling;
    }
    if (candidate.isAfter(watermark)) {
      watermark = candidate;
    }
    return watermark;
  }
}
