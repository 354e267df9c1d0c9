package dev.tidemark.transforms.values;

import dev.tidemark.transforms.util.Json;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.beam.sdk.coders.CoderProvider;
import org.apache.beam.sdk.coders.CoderProviders;
import org.apache.beam.sdk.coders.DefaultCoder;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.values.TypeDescriptor;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;

/**
 * An event that arrived after the watermark had passed the end of one or more of its windows plus
 * the allowed lateness. {@code partiallyLate} events still count in their other windows; the rest
 * are in no window at all.
 *
 * <p>JSON: {@code source}, {@code id}, the key under its field's name ({@code accountId} for
 * payments), {@code eventTime}, {@code missedWindows} (a list of {@code {"start", "end"}}), {@code
 * partiallyLate}, {@code ingestionTime}, {@code watermark} (the watermark bound the event was
 * judged against).
 */
@DefaultCoder(TooLateRecord.TooLateRecordCoder.class)
public final class TooLateRecord {
  private final String source;
  private final String id;
  private final String keyName;
  private final String key;
  private final Instant eventTime;
  private final List<IntervalWindow> missedWindows;
  private final boolean partiallyLate;
  private final Instant ingestionTime;
  private final Instant watermark;

  public TooLateRecord(
      String source,
      String id,
      String keyName,
      String key,
      Instant eventTime,
      List<IntervalWindow> missedWindows,
      boolean partiallyLate,
      Instant ingestionTime,
      Instant watermark) {
    this.source = Objects.requireNonNull(source, "source");
    this.id = Objects.requireNonNull(id, "id");
    this.keyName = Objects.requireNonNull(keyName, "keyName");
    this.key = Objects.requireNonNull(key, "key");
    this.eventTime = Objects.requireNonNull(eventTime, "eventTime");
    this.missedWindows = List.copyOf(missedWindows);
    this.partiallyLate = partiallyLate;
    this.ingestionTime = Objects.requireNonNull(ingestionTime, "ingestionTime");
    this.watermark = Objects.requireNonNull(watermark, "watermark");
  }

  public String source() {
    return source;
  }

  public String id() {
    return id;
  }

  /** The name of the spec's key field. */
  public String keyName() {
    return keyName;
  }

  /** The event's key. */
  public String key() {
    return key;
  }

  public Instant eventTime() {
    return eventTime;
  }

  public List<IntervalWindow> missedWindows() {
    return missedWindows;
  }

  public boolean partiallyLate() {
    return partiallyLate;
  }

  public Instant ingestionTime() {
    return ingestionTime;
  }

  public Instant watermark() {
    return watermark;
  }

  /** One line of the too-late output. */
  public String toJson() {
    return Json.object(
        out -> {
          out.writeStringField("source", source);
          out.writeStringField("id", id);
          out.writeStringField(keyName, key);
          out.writeStringField("eventTime", Json.instant(eventTime));
          out.writeArrayFieldStart("missedWindows");
          for (IntervalWindow window : missedWindows) {
            out.writeStartObject();
            out.writeStringField("start", Json.instant(window.start()));
            out.writeStringField("end", Json.instant(window.end()));
            out.writeEndObject();
          }
          out.writeEndArray();
          out.writeBooleanField("partiallyLate", partiallyLate);
          out.writeStringField("ingestionTime", Json.instant(ingestionTime));
          out.writeStringField("watermark", Json.instant(watermark));
        });
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof TooLateRecord)) {
      return false;
    }
    TooLateRecord that = (TooLateRecord) o;
    return partiallyLate == that.partiallyLate
        && source.equals(that.source)
        && id.equals(that.id)
        && keyName.equals(that.keyName)
        && key.equals(that.key)
        && eventTime.equals(that.eventTime)
        && missedWindows.equals(that.missedWindows)
        && ingestionTime.equals(that.ingestionTime)
        && watermark.equals(that.watermark);
  }

  @Override
  public int hashCode() {
    return Objects.hash(source, id, eventTime, missedWindows);
  }

  @Override
  public String toString() {
    return toJson();
  }

  /** Compact, deterministic coder. */
  public static final class TooLateRecordCoder extends Codec.DataCoder<TooLateRecord> {
    private static final long serialVersionUID = 1L;

    /**
     * Version 2: the fields {@link #write} writes, in its order. Version 1 had no key name: its key
     * is a payment's {@code accountId}.
     */
    @Override
    protected int version() {
      return 2;
    }

    private static final TooLateRecordCoder INSTANCE = new TooLateRecordCoder();

    public static TooLateRecordCoder of() {
      return INSTANCE;
    }

    /** Makes {@code @DefaultCoder} work for {@link TooLateRecord}. */
    public static CoderProvider getCoderProvider() {
      return CoderProviders.forCoder(TypeDescriptor.of(TooLateRecord.class), INSTANCE);
    }

    @Override
    protected void write(TooLateRecord value, DataOutput out) throws IOException {
      Codec.writeString(value.source, out);
      Codec.writeString(value.id, out);
      Codec.writeString(value.keyName, out);
      Codec.writeString(value.key, out);
      Codec.writeInstant(value.eventTime, out);
      out.writeInt(value.missedWindows.size());
      for (IntervalWindow window : value.missedWindows) {
        Codec.writeInstant(window.start(), out);
        Codec.writeInstant(window.end(), out);
      }
      out.writeBoolean(value.partiallyLate);
      Codec.writeInstant(value.ingestionTime, out);
      Codec.writeInstant(value.watermark, out);
    }

    @Override
    protected TooLateRecord read(int version, DataInputStream in) throws IOException {
      String source = Codec.readString(in);
      String id = Codec.readString(in);
      String keyName = version == 1 ? "accountId" : Codec.readString(in);
      String key = Codec.readString(in);
      Instant eventTime = Codec.readInstant(in);
      int windows = in.readInt();
      List<IntervalWindow> missed = new ArrayList<>(windows);
      for (int i = 0; i < windows; i++) {
        missed.add(new IntervalWindow(Codec.readInstant(in), Codec.readInstant(in)));
      }
      return new TooLateRecord(
          source,
          id,
          keyName,
          key,
          eventTime,
          missed,
          in.readBoolean(),
          Codec.readInstant(in),
          Codec.readInstant(in));
    }
  }
}
