package dev.tidemark.pipelines.io.pubsub;

import com.google.pubsub.v1.PubsubMessage;
import java.io.IOException;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.io.gcp.pubsub.PubsubClient;
import org.apache.beam.sdk.io.gcp.pubsub.PubsubOptions;
import org.apache.beam.sdk.schemas.Schema;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * A {@link PubsubClient.PubsubClientFactory} around another one (JSON, gRPC, the test client) that
 * reads the timestamp attribute itself, so that a message without a readable one can neither stop
 * the reader nor be lost.
 *
 * <p>Beam's reference clients throw from {@code pull} when a message lacks the timestamp attribute
 * or it does not parse: the whole pulled batch fails, is never acknowledged, is redelivered, fails
 * again, and the read is wedged (PubsubIO's {@code withDeadLetterTopic} does not help: it only sees
 * messages that were read). This factory creates the wrapped client with no timestamp attribute
 * (the wrapped client then timestamps with the publish time) and, per message:
 *
 * <ul>
 *   <li>records the publish time in the {@value #PUBLISH_TIME_ATTRIBUTE} attribute (milliseconds)
 *       and the Pub/Sub message id in {@value #MESSAGE_ID_ATTRIBUTE}, because Beam's {@code
 *       PubsubMessage} carries neither (its message id is the record id, the id attribute's value
 *       when there is one);
 *   <li>timestamps the message with the attribute's time when it parses (RFC 3339, or milliseconds
 *       since the epoch, within Beam's timestamp range);
 *   <li>keeps the publish time as its timestamp when the attribute's time lies more than the
 *       maximum future skew after the publish time: a producer clock that far ahead must not move
 *       the watermark (the parser dead-letters the message as {@code time_in_future});
 *   <li>otherwise keeps the publish time as its timestamp and marks it with {@value
 *       #TIMESTAMP_ERROR_ATTRIBUTE} ({@code missing} or {@code invalid}); {@link PubsubSource}
 *       dead-letters marked messages.
 * </ul>
 *
 * <p>Attributes of these names sent by a publisher are replaced or removed. Dataflow's own Pub/Sub
 * source never calls a client factory, so there none of this applies (see {@link PubsubSource}).
 */
final class EventTimeClientFactory implements PubsubClient.PubsubClientFactory {
  private static final long serialVersionUID = 1L;

  /** Publish time of the message, milliseconds since the epoch. */
  static final String PUBLISH_TIME_ATTRIBUTE = "tidemark.publishTime";

  /**
   * The Pub/Sub message id. Beam's reference source hands the record id on as the message id, and
   * that is the id attribute's value when one is configured.
   */
  static final String MESSAGE_ID_ATTRIBUTE = "tidemark.messageId";

  /** Set when the timestamp attribute is {@code missing} or {@code invalid}. */
  static final String TIMESTAMP_ERROR_ATTRIBUTE = "tidemark.timestampError";

  static final String MISSING = "missing";
  static final String INVALID = "invalid";

  private final PubsubClient.PubsubClientFactory delegate;
  private final long maxFutureSkewMillis;

  EventTimeClientFactory(PubsubClient.PubsubClientFactory delegate, long maxFutureSkewMillis) {
    this.delegate = delegate;
    this.maxFutureSkewMillis = maxFutureSkewMillis;
  }

  @Override
  public PubsubClient newClient(
      @Nullable String timestampAttribute,
      @Nullable String idAttribute,
      PubsubOptions options,
      @Nullable String rootUrlOverride)
      throws IOException {
    return new EventTimeClient(
        delegate.newClient(null, idAttribute, options, rootUrlOverride),
        timestampAttribute,
        maxFutureSkewMillis);
  }

  @Override
  public PubsubClient newClient(
      @Nullable String timestampAttribute, @Nullable String idAttribute, PubsubOptions options)
      throws IOException {
    return new EventTimeClient(
        delegate.newClient(null, idAttribute, options), timestampAttribute, maxFutureSkewMillis);
  }

  @Override
  public String getKind() {
    return "EventTime(" + delegate.getKind() + ")";
  }

  /**
   * An attribute value as a timestamp, as Beam reads it: milliseconds since the epoch or RFC 3339;
   * null when it is neither or outside Beam's timestamp range.
   */
  static @Nullable Long parseTimestamp(String text) {
    long millis;
    try {
      millis = Long.parseLong(text);
    } catch (NumberFormatException notMillis) {
      try {
        millis = OffsetDateTime.parse(text).toInstant().toEpochMilli();
      } catch (DateTimeParseException | ArithmeticException e) {
        return null;
      }
    }
    if (millis < BoundedWindow.TIMESTAMP_MIN_VALUE.getMillis()
        || millis >= BoundedWindow.TIMESTAMP_MAX_VALUE.getMillis()) {
      return null;
    }
    return millis;
  }

  /** Delegates everything; re-timestamps what {@link #pull} returns. */
  static final class EventTimeClient extends PubsubClient {
    private final PubsubClient delegate;
    private final @Nullable String timestampAttribute;
    private final long maxFutureSkewMillis;

    EventTimeClient(
        PubsubClient delegate, @Nullable String timestampAttribute, long maxFutureSkewMillis) {
      this.delegate = delegate;
      this.timestampAttribute = timestampAttribute;
      this.maxFutureSkewMillis = maxFutureSkewMillis;
    }

    @Override
    public List<IncomingMessage> pull(
        long requestTimeMsSinceEpoch,
        SubscriptionPath subscription,
        int batchSize,
        boolean returnImmediately)
        throws IOException {
      List<IncomingMessage> pulled =
          delegate.pull(requestTimeMsSinceEpoch, subscription, batchSize, returnImmediately);
      List<IncomingMessage> stamped = new ArrayList<>(pulled.size());
      for (IncomingMessage incoming : pulled) {
        stamped.add(stamp(incoming));
      }
      return stamped;
    }

    private IncomingMessage stamp(IncomingMessage incoming) {
      long publishTime = incoming.timestampMsSinceEpoch();
      PubsubMessage.Builder message =
          incoming.message().toBuilder()
              .removeAttributes(TIMESTAMP_ERROR_ATTRIBUTE)
              .putAttributes(PUBLISH_TIME_ATTRIBUTE, Long.toString(publishTime))
              .putAttributes(MESSAGE_ID_ATTRIBUTE, incoming.message().getMessageId());
      long timestamp = publishTime;
      if (timestampAttribute != null) {
        String value = incoming.message().getAttributesMap().get(timestampAttribute);
        Long parsed = value == null ? null : parseTimestamp(value);
        if (value == null) {
          message.putAttributes(TIMESTAMP_ERROR_ATTRIBUTE, MISSING);
        } else if (parsed == null) {
          message.putAttributes(TIMESTAMP_ERROR_ATTRIBUTE, INVALID);
        } else if (parsed - publishTime > maxFutureSkewMillis) {
          // The producer's clock is too far ahead: the publish time stays the timestamp.
        } else {
          timestamp = parsed;
        }
      }
      return IncomingMessage.of(
          message.build(),
          timestamp,
          incoming.requestTimeMsSinceEpoch(),
          incoming.ackId(),
          incoming.recordId());
    }

    @Override
    public int publish(TopicPath topic, List<OutgoingMessage> outgoingMessages) throws IOException {
      return delegate.publish(topic, outgoingMessages);
    }

    @Override
    public void acknowledge(SubscriptionPath subscription, List<String> ackIds) throws IOException {
      delegate.acknowledge(subscription, ackIds);
    }

    @Override
    public void modifyAckDeadline(
        SubscriptionPath subscription, List<String> ackIds, int deadlineSeconds)
        throws IOException {
      delegate.modifyAckDeadline(subscription, ackIds, deadlineSeconds);
    }

    @Override
    public void createTopic(TopicPath topic) throws IOException {
      delegate.createTopic(topic);
    }

    @Override
    public void createTopic(TopicPath topic, SchemaPath schema) throws IOException {
      delegate.createTopic(topic, schema);
    }

    @Override
    public void deleteTopic(TopicPath topic) throws IOException {
      delegate.deleteTopic(topic);
    }

    @Override
    public List<TopicPath> listTopics(ProjectPath project) throws IOException {
      return delegate.listTopics(project);
    }

    @Override
    public boolean isTopicExists(TopicPath topic) throws IOException {
      return delegate.isTopicExists(topic);
    }

    @Override
    public void createSubscription(
        TopicPath topic, SubscriptionPath subscription, int ackDeadlineSeconds) throws IOException {
      delegate.createSubscription(topic, subscription, ackDeadlineSeconds);
    }

    @Override
    public SubscriptionPath createRandomSubscription(
        ProjectPath project, TopicPath topic, int ackDeadlineSeconds) throws IOException {
      return delegate.createRandomSubscription(project, topic, ackDeadlineSeconds);
    }

    @Override
    public void deleteSubscription(SubscriptionPath subscription) throws IOException {
      delegate.deleteSubscription(subscription);
    }

    @Override
    public List<SubscriptionPath> listSubscriptions(ProjectPath project, TopicPath topic)
        throws IOException {
      return delegate.listSubscriptions(project, topic);
    }

    @Override
    public int ackDeadlineSeconds(SubscriptionPath subscription) throws IOException {
      return delegate.ackDeadlineSeconds(subscription);
    }

    @Override
    public boolean isEOF() {
      return delegate.isEOF();
    }

    @Override
    public void createSchema(
        SchemaPath schemaPath, String schemaContent, com.google.pubsub.v1.Schema.Type type)
        throws IOException {
      delegate.createSchema(schemaPath, schemaContent, type);
    }

    @Override
    public void deleteSchema(SchemaPath schemaPath) throws IOException {
      delegate.deleteSchema(schemaPath);
    }

    @Override
    public SchemaPath getSchemaPath(TopicPath topic) throws IOException {
      return delegate.getSchemaPath(topic);
    }

    @Override
    public Schema getSchema(SchemaPath schemaPath) throws IOException {
      return delegate.getSchema(schemaPath);
    }

    @Override
    public void close() throws IOException {
      delegate.close();
    }
  }
}
