package dev.tidemark.transforms.values;

import dev.tidemark.transforms.util.Json;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.IOException;
import java.util.Objects;
import org.apache.beam.sdk.coders.CoderProvider;
import org.apache.beam.sdk.coders.CoderProviders;
import org.apache.beam.sdk.coders.DefaultCoder;
import org.apache.beam.sdk.values.TypeDescriptor;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;

/**
 * A copy of an event whose {@code source}+{@code id} was already seen inside the dedup horizon.
 * {@code identicalPayload} is false for a conflict: the same identity with different content.
 *
 * <p>JSON: {@code source}, {@code id}, {@code eventTime} (of this copy), {@code identicalPayload},
 * {@code firstEventTime} (of the copy that passed), {@code ingestionTime} (of this copy).
 */
@DefaultCoder(DuplicateRecord.DuplicateRecordCoder.class)
public final class DuplicateRecord {
  private final String source;
  private final String id;
  private final Instant eventTime;
  private final boolean identicalPayload;
  private final Instant firstEventTime;
  private final Instant ingestionTime;

  public DuplicateRecord(
      String source,
      String id,
      Instant eventTime,
      boolean identicalPayload,
      Instant firstEventTime,
      Instant ingestionTime) {
    this.source = Objects.requireNonNull(source, "source");
    this.id = Objects.requireNonNull(id, "id");
    this.eventTime = Objects.requireNonNull(eventTime, "eventTime");
    this.identicalPayload = identicalPayload;
    this.firstEventTime = Objects.requireNonNull(firstEventTime, "firstEventTime");
    this.ingestionTime = Objects.requireNonNull(ingestionTime, "ingestionTime");
  }

  public String source() {
    return source;
  }

  public String id() {
    return id;
  }

  public Instant eventTime() {
    return eventTime;
  }

  public boolean identicalPayload() {
    return identicalPayload;
  }

  public Instant firstEventTime() {
    return firstEventTime;
  }

  public Instant ingestionTime() {
    return ingestionTime;
  }

  /** One line of the duplicates output. */
  public String toJson() {
    return Json.object(
        out -> {
          out.writeStringField("source", source);
          out.writeStringField("id", id);
          out.writeStringField("eventTime", Json.instant(eventTime));
          out.writeBooleanField("identicalPayload", identicalPayload);
          out.writeStringField("firstEventTime", Json.instant(firstEventTime));
          out.writeStringField("ingestionTime", Json.instant(ingestionTime));
        });
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof DuplicateRecord)) {
      return false;
    }
    DuplicateRecord that = (DuplicateRecord) o;
    return identicalPayload == that.identicalPayload
        && source.equals(that.source)
        && id.equals(that.id)
        && eventTime.equals(that.eventTime)
        && firstEventTime.equals(that.firstEventTime)
        && ingestionTime.equals(that.ingestionTime);
  }

  @Override
  public int hashCode() {
    return Objects.hash(source, id, eventTime, identicalPayload);
  }

  @Override
  public String toString() {
    return toJson();
  }

  /** Compact, deterministic coder. */
  public static final class DuplicateRecordCoder extends Codec.DataCoder<DuplicateRecord> {
    private static final long serialVersionUID = 1L;

    /** Version 1: the fields {@link #write} writes, in its order. */
    @Override
    protected int version() {
      return 1;
    }

    private static final DuplicateRecordCoder INSTANCE = new DuplicateRecordCoder();

    public static DuplicateRecordCoder of() {
      return INSTANCE;
    }

    /** Makes {@code @DefaultCoder} work for {@link DuplicateRecord}. */
    public static CoderProvider getCoderProvider() {
      return CoderProviders.forCoder(TypeDescriptor.of(DuplicateRecord.class), INSTANCE);
    }

    @Override
    protected void write(DuplicateRecord value, DataOutput out) throws IOException {
      Codec.writeString(value.source, out);
      Codec.writeString(value.id, out);
      Codec.writeInstant(value.eventTime, out);
      out.writeBoolean(value.identicalPayload);
      Codec.writeInstant(value.firstEventTime, out);
      Codec.writeInstant(value.ingestionTime, out);
    }

    @Override
    protected DuplicateRecord read(int version, DataInputStream in) throws IOException {
      return new DuplicateRecord(
          Codec.readString(in),
          Codec.readString(in),
          Codec.readInstant(in),
          in.readBoolean(),
          Codec.readInstant(in),
          Codec.readInstant(in));
    }
  }
}
