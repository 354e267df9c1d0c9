package dev.tidemark.pipelines.io.pubsub;

import dev.tidemark.pipelines.io.CloudEventBindings;
import dev.tidemark.transforms.values.DeadLetterReason;
import dev.tidemark.transforms.values.RawRecord;
import io.cloudevents.CloudEventData;
import io.cloudevents.SpecVersion;
import io.cloudevents.core.data.BytesCloudEventData;
import io.cloudevents.core.message.impl.BaseGenericBinaryMessageReaderImpl;
import io.cloudevents.jackson.JsonFormat;
import java.util.Locale;
import java.util.Map;
import java.util.function.BiConsumer;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;

/**
 * The CloudEvents Google Cloud Pub/Sub protocol binding, inbound, on top of the CloudEvents SDK's
 * generic binary reader (the SDK has no Pub/Sub module; this is the Kafka module's reader with
 * Pub/Sub attributes for headers).
 *
 * <p>A message with a {@code ce-specversion} attribute is a binary-mode event: its context
 * attributes are the {@code ce-*} attributes ({@code ce-id}, {@code ce-source}, {@code ce-type},
 * {@code ce-time}, extensions), {@code content-type} is its {@code datacontenttype} and the message
 * body is its data. It is turned into the structured JSON form so that {@code ParseCloudEvents}
 * validates every event the same way. Any other message is structured mode: the body is the event
 * ({@code content-type: application/cloudevents+json}, or no content type). A message that is
 * neither becomes a rejected {@link RawRecord} with the reason, which the parser dead-letters.
 */
public final class PubsubCloudEvents {
  /** The structured-mode content type. */
  public static final String STRUCTURED_CONTENT_TYPE = JsonFormat.CONTENT_TYPE;

  /** The attribute that makes a message binary mode. */
  public static final String SPECVERSION_ATTRIBUTE = "ce-specversion";

  /** The event time in binary mode. */
  public static final String TIME_ATTRIBUTE = "ce-time";

  /** The data content type in binary mode; the message content type in structured mode. */
  public static final String CONTENT_TYPE_ATTRIBUTE = "content-type";

  private static final String PREFIX = "ce-";

  private PubsubCloudEvents() {}

  /** Whether {@code name} is a binary-mode CloudEvents attribute ({@code ce-*}, any case). */
  public static boolean isCloudEventsAttribute(String name) {
    return name.length() > PREFIX.length() && hasCloudEventsPrefix(name);
  }

  /**
   * Whether {@code name} starts with {@code ce-} (any case), bare {@code ce-} included: the names
   * the binding reserves, which {@code --pubsubIdAttribute} must not take (as the Flex Template's
   * parameter pattern says).
   */
  public static boolean hasCloudEventsPrefix(String name) {
    return name.regionMatches(true, 0, PREFIX, 0, PREFIX.length());
  }

  /** The origin of a message: {@code pubsub:<subscription or topic path>/<messageId>}. */
  public static String origin(String path, @Nullable String messageId) {
    return "pubsub:" + path + "/" + (messageId == null ? "?" : messageId);
  }

  /** One received message as the parser's input. */
  public static RawRecord toRawRecord(
      @Nullable Map<String, String> attributes,
      byte @Nullable [] body,
      Instant ingestionTime,
      String origin) {
    Map<String, String> present = attributes == null ? Map.of() : attributes;
    byte[] payload = body == null ? new byte[0] : body;
    String specVersion = present.get(SPECVERSION_ATTRIBUTE);
    if (specVersion != null) {
      return CloudEventBindings.binary(
          () ->
              new BinaryReader(
                      SpecVersion.parse(specVersion),
                      present,
                      payload.length == 0 ? null : BytesCloudEventData.wrap(payload))
                  .toEvent(),
          payload,
          ingestionTime,
          origin,
          "binary-mode Pub/Sub message");
    }
    String contentType = present.get(CONTENT_TYPE_ATTRIBUTE);
    if (contentType != null && !CloudEventBindings.isStructured(contentType)) {
      return RawRecord.rejected(
          payload,
          ingestionTime,
          origin,
          DeadLetterReason.NOT_A_CLOUDEVENT,
          "Pub/Sub message with content-type '"
              + contentType
              + "' and no ce-specversion attribute is neither a structured ("
              + STRUCTURED_CONTENT_TYPE
              + ") nor a binary-mode CloudEvent");
    }
    return RawRecord.of(payload, ingestionTime, origin);
  }

  /** Binary mode: Pub/Sub attributes are the headers. */
  static final class BinaryReader extends BaseGenericBinaryMessageReaderImpl<String, String> {
    private final Map<String, String> attributes;

    BinaryReader(
        SpecVersion version, Map<String, String> attributes, @Nullable CloudEventData data) {
      super(version, data);
      this.attributes = attributes;
    }

    @Override
    protected boolean isContentTypeHeader(String key) {
      return CONTENT_TYPE_ATTRIBUTE.equalsIgnoreCase(key);
    }

    @Override
    protected boolean isCloudEventsHeader(String key) {
      return isCloudEventsAttribute(key);
    }

    @Override
    protected String toCloudEventsKey(String key) {
      return key.substring(PREFIX.length()).toLowerCase(Locale.ROOT);
    }

    @Override
    protected void forEachHeader(BiConsumer<String, String> fn) {
      attributes.forEach(fn);
    }

    @Override
    protected String toCloudEventsValue(String value) {
      return value;
    }
  }
}
