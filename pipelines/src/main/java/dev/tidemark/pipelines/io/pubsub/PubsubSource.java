package dev.tidemark.pipelines.io.pubsub;

import com.google.api.client.util.Clock;
import dev.tidemark.transforms.values.DeadLetterReason;
import dev.tidemark.transforms.values.RawRecord;
import java.util.HashMap;
import java.util.Map;
import org.apache.beam.sdk.io.gcp.pubsub.PubsubClient;
import org.apache.beam.sdk.io.gcp.pubsub.PubsubIO;
import org.apache.beam.sdk.io.gcp.pubsub.PubsubJsonClient;
import org.apache.beam.sdk.io.gcp.pubsub.PubsubMessage;
import org.apache.beam.sdk.io.gcp.pubsub.PubsubTestClient;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * CloudEvents from a Pub/Sub subscription as {@link RawRecord}s: {@code PubsubIO} with the event
 * time taken from a message attribute, binary and structured mode both accepted ({@link
 * PubsubCloudEvents}). Each record's origin is {@code pubsub:<subscription>/<messageId>} and its
 * ingestion time the message's Pub/Sub publish time.
 *
 * <p><b>Event time and watermark.</b> The element timestamp is the value of the timestamp attribute
 * ({@link #DEFAULT_TIMESTAMP_ATTRIBUTE} unless {@link #withTimestampAttribute} says otherwise),
 * given to {@code PubsubIO.Read#withTimestampAttribute}. The source therefore assigns the event
 * time itself, as {@code ParseCloudEvents} requires, and the watermark is Pub/Sub's estimate of the
 * oldest event time not yet read: on Dataflow the service tracks it exactly from the subscription
 * backlog; on other runners Beam's reference source estimates it from the last minute of messages.
 * No out-of-orderness bound is configured: an event published after the watermark passed its time
 * is late and is judged by the windowing step (allowed lateness, too-late output), never dropped by
 * the source. A message whose timestamp attribute lies more than {@link #withMaxFutureSkew} after
 * its publish time (a producer with a wrong clock) is timestamped with its publish time instead, so
 * it cannot move the watermark; the parser dead-letters it as {@code time_in_future}. Reading the
 * publish time instead would put the watermark on ingestion time and make every event look
 * early-stamped; taking the time from the body instead is not possible in {@code PubsubIO}, and on
 * Dataflow only the attribute feeds the service's watermark. Binary-mode publishers set {@code
 * ce-time} anyway; structured-mode publishers must also set the {@code ce-time} attribute to the
 * event's {@code time} (an attribute earlier than the body's time is allowed, a later one is
 * dead-lettered by the parser).
 *
 * <p><b>Messages without a readable timestamp attribute</b> (missing, not RFC 3339 or epoch
 * milliseconds, outside Beam's range) are dead-lettered, not lost and not retried: the client
 * factory is wrapped ({@link EventTimeClientFactory}) so that the reader timestamps such a message
 * with its publish time and marks it, and this transform turns it into a rejected record ({@code
 * missing_attribute} or {@code invalid_time}). Without the wrapper Beam's clients throw from {@code
 * pull}, the batch is never acknowledged and the read wedges; {@code withDeadLetterTopic} only
 * covers failures after the read and is not used. <i>Dataflow caveat:</i> Dataflow replaces the
 * read with its service-side source, which never calls a client factory: a message without a valid
 * timestamp attribute is then handled by the service, not by Tidemark, and the publish time is not
 * delivered when a timestamp attribute is set, so the ingestion time is the time the record is
 * converted. Run with {@code --experiments=enable_custom_pubsub_source} to use this source as on
 * every other runner (a Pub/Sub dead-letter policy on the subscription is no backstop: Google
 * documents dead-letter topics as not fully supported by Dataflow).
 *
 * <p><b>Deduplication.</b> With {@link #withIdAttribute} Dataflow deduplicates messages carrying
 * the same attribute value within its ~10 minute window (publish retries of one message); without
 * it, on message id (Pub/Sub redeliveries). Tidemark's own source+id deduplication downstream is
 * the business boundary and applies either way.
 *
 * <pre>{@code
 * PCollection<RawRecord> raw =
 *     pipeline.apply("ReadPubsub",
 *         PubsubSource.fromSubscription("projects/p/subscriptions/payments").withIdAttribute("tidemark-id"));
 * }</pre>
 */
public final class PubsubSource extends PTransform<PBegin, PCollection<RawRecord>> {
  /** The default timestamp attribute: the binary-mode CloudEvents {@code time}. */
  public static final String DEFAULT_TIMESTAMP_ATTRIBUTE = PubsubCloudEvents.TIME_ATTRIBUTE;

  /** An id attribute of its own for {@link #withIdAttribute}: a copy of the CloudEvents id. */
  public static final String SUGGESTED_ID_ATTRIBUTE = "tidemark-id";

  /** The default bound on how far an event time may lie after its publish time. */
  public static final Duration DEFAULT_MAX_FUTURE_SKEW = Duration.standardMinutes(10);

  private final @Nullable String subscription;
  private final @Nullable String topic;
  private final String timestampAttribute;
  private final @Nullable String idAttribute;
  private final PubsubClient.PubsubClientFactory clientFactory;
  private final @Nullable Clock clock;
  private final Duration maxFutureSkew;

  private PubsubSource(
      @Nullable String subscription,
      @Nullable String topic,
      String timestampAttribute,
      @Nullable String idAttribute,
      PubsubClient.PubsubClientFactory clientFactory,
      @Nullable Clock clock,
      Duration maxFutureSkew) {
    this.subscription = subscription;
    this.topic = topic;
    this.timestampAttribute = timestampAttribute;
    this.idAttribute = idAttribute;
    this.clientFactory = clientFactory;
    this.clock = clock;
    this.maxFutureSkew = maxFutureSkew;
  }

  /** Reads an existing subscription, {@code projects/PROJECT/subscriptions/NAME}. */
  public static PubsubSource fromSubscription(String subscription) {
    PubsubIO.PubsubSubscription.fromPath(required("--pubsubSubscription", subscription));
    return new PubsubSource(
        subscription,
        null,
        DEFAULT_TIMESTAMP_ATTRIBUTE,
        null,
        PubsubJsonClient.FACTORY,
        null,
        DEFAULT_MAX_FUTURE_SKEW);
  }

  /**
   * Reads a topic, {@code projects/PROJECT/topics/NAME}, through a subscription created when the
   * pipeline starts: messages published before then are not read.
   */
  public static PubsubSource fromTopic(String topic) {
    PubsubIO.PubsubTopic.fromPath(required("--pubsubTopic", topic));
    return new PubsubSource(
        null,
        topic,
        DEFAULT_TIMESTAMP_ATTRIBUTE,
        null,
        PubsubJsonClient.FACTORY,
        null,
        DEFAULT_MAX_FUTURE_SKEW);
  }

  /** The attribute holding the event time (RFC 3339 or epoch milliseconds). */
  public PubsubSource withTimestampAttribute(String attribute) {
    if (attribute == null || attribute.trim().isEmpty()) {
      throw new IllegalArgumentException(
          "the timestamp attribute must name the message attribute holding the event time, e.g."
              + " ce-time; set it with --pubsubTimestampAttribute");
    }
    return new PubsubSource(
        subscription, topic, attribute, idAttribute, clientFactory, clock, maxFutureSkew);
  }

  /**
   * The attribute Dataflow deduplicates publish retries on; null for the message id. It must not be
   * one of the binding's {@code ce-} attributes: Dataflow's service-side source has been reported
   * to consume its id (and timestamp) attribute (GoogleCloudPlatform/DataflowJavaSDK#629), and a
   * binary-mode event without {@code ce-id} is dead-lettered, so naming {@code ce-id} could
   * dead-letter every binary event. Publishers copy the CloudEvents id into an attribute of its own
   * ({@link #SUGGESTED_ID_ATTRIBUTE}) instead.
   */
  public PubsubSource withIdAttribute(@Nullable String attribute) {
    String id = attribute == null || attribute.trim().isEmpty() ? null : attribute;
    if (id != null && PubsubCloudEvents.hasCloudEventsPrefix(id)) {
      throw new IllegalArgumentException(
          "--pubsubIdAttribute="
              + id
              + " names a CloudEvents binding attribute: Dataflow's Pub/Sub source may remove the"
              + " id attribute from the message, and a binary-mode event without its "
              + id
              + " attribute is dead-lettered; have publishers copy the CloudEvents id into an"
              + " attribute of its own, e.g. "
              + SUGGESTED_ID_ATTRIBUTE
              + ", and name that");
    }
    return new PubsubSource(
        subscription, topic, timestampAttribute, id, clientFactory, clock, maxFutureSkew);
  }

  /**
   * The Pub/Sub client: {@code PubsubJsonClient.FACTORY} (the default, also right for the emulator
   * with {@code --pubsubRootUrl}), {@code PubsubGrpcClient.FACTORY}, or a {@code PubsubTestClient}
   * factory in tests.
   */
  public PubsubSource withClientFactory(PubsubClient.PubsubClientFactory factory) {
    if (factory == null) {
      throw new IllegalArgumentException("the Pub/Sub client factory must not be null");
    }
    return new PubsubSource(
        subscription, topic, timestampAttribute, idAttribute, factory, clock, maxFutureSkew);
  }

  /**
   * The reader's clock, for tests with a {@link PubsubTestClient} factory: it must be the clock the
   * factory was created with.
   */
  public PubsubSource withClock(Clock testClock) {
    return new PubsubSource(
        subscription,
        topic,
        timestampAttribute,
        idAttribute,
        clientFactory,
        testClock,
        maxFutureSkew);
  }

  /**
   * How far the timestamp attribute may lie after the publish time and still be the message's
   * timestamp; a later one is replaced by the publish time, so it cannot move the watermark.
   */
  public PubsubSource withMaxFutureSkew(Duration skew) {
    if (skew == null || skew.isShorterThan(Duration.ZERO)) {
      throw new IllegalArgumentException(
          "--maxFutureSkew must not be negative, got " + skew + "; use e.g. PT10M");
    }
    return new PubsubSource(
        subscription, topic, timestampAttribute, idAttribute, clientFactory, clock, skew);
  }

  @Override
  public PCollection<RawRecord> expand(PBegin input) {
    PubsubIO.Read<PubsubMessage> read =
        PubsubIO.readMessagesWithAttributesAndMessageId()
            .withTimestampAttribute(timestampAttribute)
            .withClientFactory(
                new EventTimeClientFactory(clientFactory, maxFutureSkew.getMillis()));
    read = subscription != null ? read.fromSubscription(subscription) : read.fromTopic(topic);
    if (idAttribute != null) {
      read = read.withIdAttribute(idAttribute);
    }
    if (clock != null) {
      if (!(clientFactory instanceof PubsubTestClient.PubsubTestClientFactory)) {
        throw new IllegalStateException(
            "withClock(...) is for PubsubTestClient factories only; remove it or set one with"
                + " withClientFactory(...)");
      }
      read = ((PubsubTestClient.PubsubTestClientFactory) clientFactory).setClock(read, clock);
    }
    String path = subscription != null ? subscription : topic;
    return input
        .apply("ReadPubsub", read)
        .apply("ToRawRecords", ParDo.of(new ToRawRecordFn(path, timestampAttribute)))
        .setCoder(RawRecord.RawRecordCoder.of());
  }

  private static String required(String option, @Nullable String value) {
    if (value == null || value.trim().isEmpty()) {
      throw new IllegalArgumentException(option + " is required for --source=pubsub");
    }
    return value;
  }

  /**
   * PubsubMessage to RawRecord, keeping the event-time timestamp the read assigned; messages the
   * client marked as having no readable timestamp attribute become rejected records.
   */
  static final class ToRawRecordFn extends DoFn<PubsubMessage, RawRecord> {
    private final String path;
    private final String timestampAttribute;

    ToRawRecordFn(String path, String timestampAttribute) {
      this.path = path;
      this.timestampAttribute = timestampAttribute;
    }

    @ProcessElement
    public void processElement(
        @Element PubsubMessage message,
        @Timestamp Instant timestamp,
        OutputReceiver<RawRecord> out) {
      Map<String, String> attributes =
          message.getAttributeMap() == null
              ? new HashMap<>()
              : new HashMap<>(message.getAttributeMap());
      String publishTime = attributes.remove(EventTimeClientFactory.PUBLISH_TIME_ATTRIBUTE);
      String timestampError = attributes.remove(EventTimeClientFactory.TIMESTAMP_ERROR_ATTRIBUTE);
      String messageId = attributes.remove(EventTimeClientFactory.MESSAGE_ID_ATTRIBUTE);
      Instant ingestionTime = ingestionTime(publishTime);
      String origin =
          PubsubCloudEvents.origin(
              path, messageId == null || messageId.isEmpty() ? message.getMessageId() : messageId);
      byte[] payload = message.getPayload() == null ? new byte[0] : message.getPayload();
      if (timestampError != null) {
        out.output(rejectTimestamp(attributes, timestampError, payload, ingestionTime, origin));
        return;
      }
      if (PubsubCloudEvents.TIME_ATTRIBUTE.equals(timestampAttribute)
          && attributes.containsKey(PubsubCloudEvents.SPECVERSION_ATTRIBUTE)
          && !attributes.containsKey(PubsubCloudEvents.TIME_ATTRIBUTE)) {
        // A service-side source may consume the timestamp attribute; the timestamp is its value.
        attributes.put(PubsubCloudEvents.TIME_ATTRIBUTE, timestamp.toString());
      }
      out.output(PubsubCloudEvents.toRawRecord(attributes, payload, ingestionTime, origin));
    }

    private RawRecord rejectTimestamp(
        Map<String, String> attributes,
        String error,
        byte[] payload,
        Instant ingestionTime,
        String origin) {
      if (EventTimeClientFactory.MISSING.equals(error)) {
        return RawRecord.rejected(
            payload,
            ingestionTime,
            origin,
            DeadLetterReason.MISSING_ATTRIBUTE,
            "Pub/Sub message has no '"
                + timestampAttribute
                + "' attribute (--pubsubTimestampAttribute): every message must carry its event"
                + " time there, RFC 3339 or epoch milliseconds; structured-mode publishers must set"
                + " it to the event's time");
      }
      return RawRecord.rejected(
          payload,
          ingestionTime,
          origin,
          DeadLetterReason.INVALID_TIME,
          "Pub/Sub attribute '"
              + timestampAttribute
              + "' = '"
              + attributes.get(timestampAttribute)
              + "' is not an RFC 3339 timestamp such as 2026-01-01T00:00:00Z or epoch milliseconds"
              + " (--pubsubTimestampAttribute)");
    }

    /** The publish time the client recorded; the conversion time where no client ran. */
    private static Instant ingestionTime(@Nullable String publishTime) {
      if (publishTime != null) {
        try {
          return new Instant(Long.parseLong(publishTime));
        } catch (NumberFormatException e) {
          // Not written by EventTimeClientFactory: fall through.
        }
      }
      return Instant.now();
    }
  }
}
