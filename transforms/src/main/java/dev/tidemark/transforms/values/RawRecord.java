package dev.tidemark.transforms.values;

import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.IOException;
import java.util.Arrays;
import java.util.Objects;
import org.apache.beam.sdk.coders.CoderProvider;
import org.apache.beam.sdk.coders.CoderProviders;
import org.apache.beam.sdk.coders.DefaultCoder;
import org.apache.beam.sdk.values.TypeDescriptor;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;

/**
 * One record as a source delivered it, before any parsing: the original bytes, when the platform
 * accepted it (the ingestion clock), and where it came from ({@code replay:line 17}, {@code
 * kafka:payments/3@1042}, a file path).
 *
 * <p>A source that already knows a record is bad (a replay directive it could not apply, say) sets
 * {@link #sourceError()}; {@link dev.tidemark.transforms.ParseCloudEvents} then dead-letters it
 * with that reason instead of parsing it.
 */
@DefaultCoder(RawRecord.RawRecordCoder.class)
public final class RawRecord {
  private final byte[] payload;
  private final Instant ingestionTime;
  private final String origin;
  private final @Nullable DeadLetterReason sourceError;
  private final @Nullable String sourceErrorMessage;

  private RawRecord(
      byte[] payload,
      Instant ingestionTime,
      String origin,
      @Nullable DeadLetterReason sourceError,
      @Nullable String sourceErrorMessage) {
    this.payload = Objects.requireNonNull(payload, "payload");
    this.ingestionTime = Objects.requireNonNull(ingestionTime, "ingestionTime");
    this.origin = Objects.requireNonNull(origin, "origin");
    this.sourceError = sourceError;
    this.sourceErrorMessage = sourceErrorMessage;
  }

  /** A record to parse. The payload array is not copied: do not change it afterwards. */
  public static RawRecord of(byte[] payload, Instant ingestionTime, String origin) {
    return new RawRecord(payload, ingestionTime, origin, null, null);
  }

  /** A record its source already rejected; it will be dead-lettered with this reason. */
  public static RawRecord rejected(
      byte[] payload,
      Instant ingestionTime,
      String origin,
      DeadLetterReason reason,
      String message) {
    return new RawRecord(
        payload, ingestionTime, origin, Objects.requireNonNull(reason, "reason"), message);
  }

  public byte[] payload() {
    return payload;
  }

  public Instant ingestionTime() {
    return ingestionTime;
  }

  public String origin() {
    return origin;
  }

  public @Nullable DeadLetterReason sourceError() {
    return sourceError;
  }

  public @Nullable String sourceErrorMessage() {
    return sourceErrorMessage;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof RawRecord)) {
      return false;
    }
    RawRecord that = (RawRecord) o;
    return Arrays.equals(payload, that.payload)
        && ingestionTime.equals(that.ingestionTime)
        && origin.equals(that.origin)
        && sourceError == that.sourceError
        && Objects.equals(sourceErrorMessage, that.sourceErrorMessage);
  }

  @Override
  public int hashCode() {
    return Objects.hash(Arrays.hashCode(payload), ingestionTime, origin, sourceError);
  }

  @Override
  public String toString() {
    return "RawRecord{" + origin + ", " + payload.length + " bytes}";
  }

  /** Compact, deterministic coder. */
  public static final class RawRecordCoder extends Codec.DataCoder<RawRecord> {
    private static final long serialVersionUID = 1L;

    /** Version 1: the fields {@link #write} writes, in its order. */
    @Override
    protected int version() {
      return 1;
    }

    private static final RawRecordCoder INSTANCE = new RawRecordCoder();

    public static RawRecordCoder of() {
      return INSTANCE;
    }

    /** Makes {@code @DefaultCoder} work for {@link RawRecord}. */
    public static CoderProvider getCoderProvider() {
      return CoderProviders.forCoder(TypeDescriptor.of(RawRecord.class), INSTANCE);
    }

    @Override
    protected void write(RawRecord value, DataOutput out) throws IOException {
      Codec.writeBytes(value.payload, out);
      Codec.writeInstant(value.ingestionTime, out);
      Codec.writeString(value.origin, out);
      Codec.writeNullableString(value.sourceError == null ? null : value.sourceError.name(), out);
      Codec.writeNullableString(value.sourceErrorMessage, out);
    }

    @Override
    protected RawRecord read(int version, DataInputStream in) throws IOException {
      byte[] payload = Codec.readBytes(in);
      Instant ingestionTime = Codec.readInstant(in);
      String origin = Codec.readString(in);
      String error = Codec.readNullableString(in);
      String message = Codec.readNullableString(in);
      return new RawRecord(
          payload,
          ingestionTime,
          origin,
          error == null ? null : DeadLetterReason.valueOf(error),
          message);
    }
  }
}
