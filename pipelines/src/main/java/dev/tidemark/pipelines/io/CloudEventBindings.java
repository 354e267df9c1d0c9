package dev.tidemark.pipelines.io;

import dev.tidemark.transforms.values.DeadLetterReason;
import dev.tidemark.transforms.values.RawRecord;
import io.cloudevents.CloudEvent;
import io.cloudevents.core.format.EventFormat;
import io.cloudevents.jackson.JsonFormat;
import io.cloudevents.rw.CloudEventRWException;
import java.util.Locale;
import java.util.function.Supplier;
import org.joda.time.Instant;

/**
 * What the Kafka and Pub/Sub CloudEvents bindings share: a binary-mode message becomes the
 * structured JSON form, so that {@code ParseCloudEvents} validates every mode the same way, and a
 * message the SDK cannot read becomes a rejected record with its reason.
 */
public final class CloudEventBindings {
  /** The structured-mode content type. */
  public static final String STRUCTURED_CONTENT_TYPE = JsonFormat.CONTENT_TYPE;

  private static final EventFormat JSON = new JsonFormat();

  private CloudEventBindings() {}

  /**
   * The binary-mode message {@code read} builds, as structured JSON; {@code what} names the message
   * kind in the rejection message ("binary-mode Kafka record").
   */
  public static RawRecord binary(
      Supplier<CloudEvent> read,
      byte[] payload,
      Instant ingestionTime,
      String origin,
      String what) {
    try {
      return RawRecord.of(JSON.serialize(read.get()), ingestionTime, origin);
    } catch (CloudEventRWException e) {
      return RawRecord.rejected(
          payload,
          ingestionTime,
          origin,
          e.getKind() == CloudEventRWException.CloudEventRWExceptionKind.INVALID_SPEC_VERSION
              ? DeadLetterReason.UNSUPPORTED_SPECVERSION
              : DeadLetterReason.INVALID_CLOUDEVENT,
          what + ": " + e.getMessage());
    } catch (RuntimeException e) {
      return RawRecord.rejected(
          payload,
          ingestionTime,
          origin,
          DeadLetterReason.INVALID_CLOUDEVENT,
          what + " is not a valid CloudEvent: " + e.getMessage());
    }
  }

  /** Whether a content type is structured-mode CloudEvents JSON (parameters ignored). */
  public static boolean isStructured(String contentType) {
    int semicolon = contentType.indexOf(';');
    String type = semicolon < 0 ? contentType : contentType.substring(0, semicolon);
    return type.trim().toLowerCase(Locale.ROOT).equals(STRUCTURED_CONTENT_TYPE);
  }
}
