package dev.tidemark.transforms.values;

import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.util.Utf8;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.IOException;
import java.util.Arrays;
import java.util.Base64;
import java.util.Objects;
import org.apache.beam.sdk.coders.CoderProvider;
import org.apache.beam.sdk.coders.CoderProviders;
import org.apache.beam.sdk.coders.DefaultCoder;
import org.apache.beam.sdk.values.TypeDescriptor;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * A record Tidemark could not use, kept with everything needed to understand and replay it: the
 * stable {@link DeadLetterReason reason}, a message for humans, the step that rejected it, where it
 * came from, the exception if there was one, and the original bytes.
 *
 * <p>JSON form ({@link #toJson()}): {@code reason}, {@code message}, {@code step}, {@code origin},
 * {@code exception} (when present), and the original record as {@code payload} (text) or, when it
 * is not valid UTF-8, {@code payloadBase64}.
 */
@DefaultCoder(DeadLetter.DeadLetterCoder.class)
public final class DeadLetter {
  private final DeadLetterReason reason;
  private final String message;
  private final String step;
  private final String origin;
  private final byte[] payload;
  private final @Nullable String exception;

  public DeadLetter(
      DeadLetterReason reason,
      String message,
      String step,
      String origin,
      byte[] payload,
      @Nullable String exception) {
    this.reason = Objects.requireNonNull(reason, "reason");
    this.message = Objects.requireNonNull(message, "message");
    this.step = Objects.requireNonNull(step, "step");
    this.origin = Objects.requireNonNull(origin, "origin");
    this.payload = Objects.requireNonNull(payload, "payload");
    this.exception = exception;
  }

  public DeadLetterReason reason() {
    return reason;
  }

  public String message() {
    return message;
  }

  public String step() {
    return step;
  }

  public String origin() {
    return origin;
  }

  public byte[] payload() {
    return payload;
  }

  public @Nullable String exception() {
    return exception;
  }

  /** The payload as text, or null when it is not valid UTF-8. */
  public @Nullable String payloadText() {
    return Utf8.decodeOrNull(payload);
  }

  /** One line of the dead-letter output. */
  public String toJson() {
    return Json.object(
        out -> {
          out.writeStringField("reason", reason.code());
          out.writeStringField("message", message);
          out.writeStringField("step", step);
          out.writeStringField("origin", origin);
          Json.optionalString(out, "exception", exception);
          String text = payloadText();
          if (text != null) {
            out.writeStringField("payload", text);
          } else {
            out.writeStringField("payloadBase64", Base64.getEncoder().encodeToString(payload));
          }
        });
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof DeadLetter)) {
      return false;
    }
    DeadLetter that = (DeadLetter) o;
    return reason == that.reason
        && message.equals(that.message)
        && step.equals(that.step)
        && origin.equals(that.origin)
        && Arrays.equals(payload, that.payload)
        && Objects.equals(exception, that.exception);
  }

  @Override
  public int hashCode() {
    return Objects.hash(reason, message, step, origin, Arrays.hashCode(payload));
  }

  @Override
  public String toString() {
    return "DeadLetter{" + reason.code() + " at " + step + " from " + origin + ": " + message + "}";
  }

  /** Compact, deterministic coder. */
  public static final class DeadLetterCoder extends Codec.DataCoder<DeadLetter> {
    private static final DeadLetterCoder INSTANCE = new DeadLetterCoder();

    public static DeadLetterCoder of() {
      return INSTANCE;
    }

    /** Makes {@code @DefaultCoder} work for {@link DeadLetter}. */
    public static CoderProvider getCoderProvider() {
      return CoderProviders.forCoder(TypeDescriptor.of(DeadLetter.class), INSTANCE);
    }

    @Override
    protected void write(DeadLetter value, DataOutput out) throws IOException {
      Codec.writeString(value.reason.name(), out);
      Codec.writeString(value.message, out);
      Codec.writeString(value.step, out);
      Codec.writeString(value.origin, out);
      Codec.writeBytes(value.payload, out);
      Codec.writeNullableString(value.exception, out);
    }

    @Override
    protected DeadLetter read(DataInputStream in) throws IOException {
      return new DeadLetter(
          DeadLetterReason.valueOf(Codec.readString(in)),
          Codec.readString(in),
          Codec.readString(in),
          Codec.readString(in),
          Codec.readBytes(in),
          Codec.readNullableString(in));
    }
  }
}
