package dev.tidemark.transforms.values;

import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.util.Sha256;
import dev.tidemark.transforms.util.Utf8;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.IOException;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Objects;
import org.apache.beam.sdk.coders.CoderProvider;
import org.apache.beam.sdk.coders.CoderProviders;
import org.apache.beam.sdk.coders.DefaultCoder;
import org.apache.beam.sdk.values.TypeDescriptor;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * A record Tidemark could not use, kept with everything needed to understand and replay it: the
 * stable reason code ({@link #reasonCode}: one of {@link DeadLetterReason}'s, or a spec field's own
 * such as {@code invalid_user_id}), a message for humans, the step that rejected it, where it came
 * from, the exception if there was one, and the original bytes, or their first part.
 *
 * <p>JSON form ({@link #toJson()}): {@code reason}, {@code message}, {@code step}, {@code origin},
 * {@code exception} (when present), the record as {@code payload} (text) or, when it is not valid
 * UTF-8, {@code payloadBase64}; and always {@code payloadBytes} (the original record's size),
 * {@code payloadSha256} (hex SHA-256 of the original bytes) and {@code truncated} ({@code true}
 * when {@code payload} holds only the first part of the record, {@code false} when it holds all of
 * it). A cut is made by {@link #withPayloadLimit}: at most that many bytes are kept, and a valid
 * UTF-8 record is cut on a code point boundary, so the kept part is still valid text.
 *
 * <p>Size: the texts ({@code message}, {@code step}, {@code origin}, {@code exception}) are each
 * cut to at most {@link #MAX_TEXT_BYTES} bytes of UTF-8 when the dead letter is made, so a dead
 * letter with a payload limit of {@code n} encodes to at most {@code n + }{@link
 * #MAX_BYTES_BEYOND_PAYLOAD} bytes with its coder. Its JSON form is larger by escaping: at most six
 * bytes per payload byte (a control character as a six-character escape), or four thirds in base64.
 */
@DefaultCoder(DeadLetter.DeadLetterCoder.class)
public final class DeadLetter {
  /** The most UTF-8 bytes kept of each text: message, step, origin and exception. */
  public static final int MAX_TEXT_BYTES = 4096;

  /**
   * The most bytes a dead letter encodes to, with {@link DeadLetterCoder}, beyond its payload: the
   * four texts at {@link #MAX_TEXT_BYTES} each, the reason, the sizes, flags and digest.
   */
  public static final int MAX_BYTES_BEYOND_PAYLOAD = 4 * MAX_TEXT_BYTES + 256;

  /** Ends a text cut to {@link #MAX_TEXT_BYTES}. */
  static final String CUT_MARK = " [cut]";

  private static final java.util.regex.Pattern REASON_CODE =
      java.util.regex.Pattern.compile("[a-z][a-z0-9_]{0,63}");

  /** The reason's code, e.g. {@code invalid_json}: the JSON form's {@code reason}. */
  private final String reason;

  private final String message;
  private final String step;
  private final String origin;
  private final byte[] payload;
  private final @Nullable String exception;
  private final long payloadBytes;
  private final byte[] payloadSha256;
  private final boolean truncated;

  /** A dead letter that keeps the whole record, {@code payload}. */
  public DeadLetter(
      DeadLetterReason reason,
      String message,
      String step,
      String origin,
      byte[] payload,
      @Nullable String exception) {
    this(reason.code(), message, step, origin, payload, exception);
  }

  /**
   * A dead letter with a reason code of its own (a spec field's, such as {@code invalid_user_id}),
   * that keeps the whole record.
   */
  public DeadLetter(
      String reasonCode,
      String message,
      String step,
      String origin,
      byte[] payload,
      @Nullable String exception) {
    this(
        checkCode(reasonCode),
        message,
        step,
        origin,
        payload,
        exception,
        Objects.requireNonNull(payload, "payload").length,
        Sha256.newDigest().digest(payload),
        false);
  }

  private DeadLetter(
      String reason,
      String message,
      String step,
      String origin,
      byte[] payload,
      @Nullable String exception,
      long payloadBytes,
      byte[] payloadSha256,
      boolean truncated) {
    this.reason = Objects.requireNonNull(reason, "reason");
    this.message = cut(Objects.requireNonNull(message, "message"));
    this.step = cut(Objects.requireNonNull(step, "step"));
    this.origin = cut(Objects.requireNonNull(origin, "origin"));
    this.payload = Objects.requireNonNull(payload, "payload");
    this.exception = exception == null ? null : cut(exception);
    this.payloadBytes = payloadBytes;
    this.payloadSha256 = Objects.requireNonNull(payloadSha256, "payloadSha256");
    this.truncated = truncated;
  }

  /**
   * This dead letter with at most {@code maxBytes} bytes of its payload: itself when the payload
   * fits, otherwise a copy keeping the first part, marked {@link #truncated()}, with the original
   * size and SHA-256. A valid UTF-8 payload is cut on a code point boundary (so it may keep up to
   * three bytes fewer); any other payload at exactly {@code maxBytes}.
   */
  public DeadLetter withPayloadLimit(int maxBytes) {
    if (maxBytes < 0) {
      throw new IllegalArgumentException("the payload limit must be zero or positive: " + maxBytes);
    }
    if (payload.length <= maxBytes) {
      return this;
    }
    int end = maxBytes;
    if (Utf8.decodeOrNull(payload) != null) {
      while (end > 0 && (payload[end] & 0xC0) == 0x80) {
        end--; // a continuation byte: the code point it belongs to started before it
      }
    }
    return new DeadLetter(
        reason,
        message,
        step,
        origin,
        Arrays.copyOf(payload, end),
        exception,
        payloadBytes,
        payloadSha256,
        true);
  }

  /** {@code text} cut to at most {@link #MAX_TEXT_BYTES} of UTF-8, ending {@link #CUT_MARK}. */
  static String cut(String text) {
    if (text.length() * 3L <= MAX_TEXT_BYTES) {
      return text; // short enough whatever its characters
    }
    int budget = MAX_TEXT_BYTES - CUT_MARK.length();
    int bytes = 0;
    int i = 0;
    while (i < text.length()) {
      int codePoint = text.codePointAt(i);
      // A lone surrogate is written as one byte ('?'); counting it as three only cuts earlier.
      int size = codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
      if (bytes + size > budget) {
        return text.substring(0, i) + CUT_MARK;
      }
      bytes += size;
      i += Character.charCount(codePoint);
    }
    return text;
  }

  /**
   * The pipeline's reason when the code is one of {@link DeadLetterReason}'s, else null (a spec
   * field's own reason): {@link #reasonCode} always has the code.
   */
  public @Nullable DeadLetterReason reason() {
    return DeadLetterReason.ofCode(reason);
  }

  /** The reason's code, e.g. {@code invalid_json} or a spec field's {@code invalid_user_id}. */
  public String reasonCode() {
    return reason;
  }

  /** A reason code: lower-case letters, digits and '_', starting with a letter, 1 to 64. */
  static String checkCode(String code) {
    Objects.requireNonNull(code, "reasonCode");
    if (!REASON_CODE.matcher(code).matches()) {
      throw new IllegalArgumentException(
          "a dead-letter reason code is 1 to 64 lower-case letters, digits and '_', starting with"
              + " a letter: '"
              + code
              + "'");
    }
    return code;
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

  /** The original record, or its first part when {@link #truncated()}. */
  public byte[] payload() {
    return payload;
  }

  public @Nullable String exception() {
    return exception;
  }

  /** The size of the original record in bytes, whether or not it was cut. */
  public long payloadBytes() {
    return payloadBytes;
  }

  /** The SHA-256 of the original record's bytes, in lower-case hex. */
  public String payloadSha256() {
    return HexFormat.of().formatHex(payloadSha256);
  }

  /** Whether {@link #payload()} holds only the first part of the record. */
  public boolean truncated() {
    return truncated;
  }

  /** The payload as text, or null when it is not valid UTF-8. */
  public @Nullable String payloadText() {
    return Utf8.decodeOrNull(payload);
  }

  /** One line of the dead-letter output. */
  public String toJson() {
    return Json.object(
        out -> {
          out.writeStringField("reason", reason);
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
          out.writeNumberField("payloadBytes", payloadBytes);
          out.writeStringField("payloadSha256", payloadSha256());
          out.writeBooleanField("truncated", truncated);
        });
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof DeadLetter)) {
      return false;
    }
    DeadLetter that = (DeadLetter) o;
    return reason.equals(that.reason)
        && payloadBytes == that.payloadBytes
        && truncated == that.truncated
        && message.equals(that.message)
        && step.equals(that.step)
        && origin.equals(that.origin)
        && Arrays.equals(payload, that.payload)
        && Arrays.equals(payloadSha256, that.payloadSha256)
        && Objects.equals(exception, that.exception);
  }

  @Override
  public int hashCode() {
    return Objects.hash(reason, message, step, origin, Arrays.hashCode(payload), payloadBytes);
  }

  @Override
  public String toString() {
    return "DeadLetter{" + reason + " at " + step + " from " + origin + ": " + message + "}";
  }

  /** Compact, deterministic coder. */
  public static final class DeadLetterCoder extends Codec.DataCoder<DeadLetter> {
    private static final long serialVersionUID = 1L;

    /** Version 1: the fields {@link #write} writes, in its order. */
    /**
     * Version 2 writes the reason's code ({@code invalid_json}, or a spec field's own); version 1
     * wrote the name of a {@link DeadLetterReason} constant ({@code INVALID_JSON}), still read.
     */
    @Override
    protected int version() {
      return 2;
    }

    private static final DeadLetterCoder INSTANCE = new DeadLetterCoder();
    private static final int SHA256_BYTES = 32;

    public static DeadLetterCoder of() {
      return INSTANCE;
    }

    /** Makes {@code @DefaultCoder} work for {@link DeadLetter}. */
    public static CoderProvider getCoderProvider() {
      return CoderProviders.forCoder(TypeDescriptor.of(DeadLetter.class), INSTANCE);
    }

    @Override
    protected void write(DeadLetter value, DataOutput out) throws IOException {
      Codec.writeString(value.reason, out);
      Codec.writeString(value.message, out);
      Codec.writeString(value.step, out);
      Codec.writeString(value.origin, out);
      Codec.writeBytes(value.payload, out);
      Codec.writeNullableString(value.exception, out);
      out.writeBoolean(value.truncated);
      if (value.truncated) {
        out.writeLong(value.payloadBytes);
        out.write(value.payloadSha256);
      }
    }

    @Override
    protected DeadLetter read(int version, DataInputStream in) throws IOException {
      String reason =
          version == 1
              ? DeadLetterReason.valueOf(Codec.readString(in)).code()
              : checkCode(Codec.readString(in));
      String message = Codec.readString(in);
      String step = Codec.readString(in);
      String origin = Codec.readString(in);
      byte[] payload = Codec.readBytes(in);
      String exception = Codec.readNullableString(in);
      if (!in.readBoolean()) {
        return new DeadLetter(reason, message, step, origin, payload, exception);
      }
      long payloadBytes = in.readLong();
      byte[] sha256 = new byte[SHA256_BYTES];
      in.readFully(sha256);
      return new DeadLetter(
          reason, message, step, origin, payload, exception, payloadBytes, sha256, true);
    }
  }
}
