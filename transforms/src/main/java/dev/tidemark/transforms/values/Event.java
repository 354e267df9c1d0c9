package dev.tidemark.transforms.values;

import dev.tidemark.spec.FieldValues;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.IOException;
import java.util.Arrays;
import java.util.Objects;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.coders.CoderProvider;
import org.apache.beam.sdk.coders.CoderProviders;
import org.apache.beam.sdk.coders.DefaultCoder;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TypeDescriptor;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;

/**
 * A validated CloudEvent of a spec's {@code events}: its identity ({@code source}, {@code id}), its
 * {@code type}, its {@code data} fields as the spec declares them ({@link FieldValues}, which also
 * hold the event's two clocks: event time and ingestion time), which of them is the key, and a
 * digest of its content.
 *
 * <p>{@link #fingerprint()} is a 128-bit digest of the event's canonical content ({@code type},
 * {@code time}, {@code subject} and {@code data}, with object fields in sorted order): two copies
 * of one event with the same fingerprint are identical duplicates, different fingerprints under one
 * {@code source}+{@code id} are a conflict.
 *
 * <p>The payments spec's fields are read by name through {@link PaymentFields}.
 */
@DefaultCoder(Event.EventCoder.class)
public final class Event {
  private final String source;
  private final String id;
  private final String type;
  private final FieldValues fields;
  private final int keyIndex;
  private final byte[] fingerprint;

  /**
   * An event whose {@code data} the spec's parser read into {@code fields}; field {@code keyIndex}
   * is the key, a present string.
   */
  public Event(
      String source, String id, String type, FieldValues fields, int keyIndex, byte[] fingerprint) {
    this.source = Objects.requireNonNull(source, "source");
    this.id = Objects.requireNonNull(id, "id");
    this.type = Objects.requireNonNull(type, "type");
    this.fields = Objects.requireNonNull(fields, "fields");
    if (keyIndex < 0 || keyIndex >= fields.size() || fields.getString(keyIndex) == null) {
      throw new IllegalArgumentException("field " + keyIndex + " is not a present string key");
    }
    this.keyIndex = keyIndex;
    this.fingerprint = Objects.requireNonNull(fingerprint, "fingerprint");
  }

  public String source() {
    return source;
  }

  public String id() {
    return id;
  }

  /**
   * The identity pair ({@code source}, {@code id}); {@link
   * dev.tidemark.transforms.DeduplicateEvents} keys on its digest.
   */
  public KV<String, String> identity() {
    return KV.of(source, id);
  }

  public String type() {
    return type;
  }

  public Instant eventTime() {
    return Instant.ofEpochMilli(fields.eventTimeMillis());
  }

  public Instant ingestionTime() {
    return Instant.ofEpochMilli(fields.ingestionTimeMillis());
  }

  /** The value of the spec's key field: what features are computed per. */
  public String key() {
    return Objects.requireNonNull(fields.getString(keyIndex));
  }

  /** Which field is the key. */
  public int keyIndex() {
    return keyIndex;
  }

  /** The {@code data} fields, laid out as the spec's {@code events.fields}, and the two clocks. */
  public FieldValues fields() {
    return fields;
  }

  /** The content digest; do not modify the returned array. */
  public byte[] fingerprint() {
    return fingerprint;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof Event)) {
      return false;
    }
    Event that = (Event) o;
    return keyIndex == that.keyIndex
        && source.equals(that.source)
        && id.equals(that.id)
        && type.equals(that.type)
        && fields.equals(that.fields)
        && Arrays.equals(fingerprint, that.fingerprint);
  }

  @Override
  public int hashCode() {
    return Objects.hash(source, id, fields);
  }

  @Override
  public String toString() {
    return "Event{" + source + "#" + id + " " + type + " " + key() + " at " + eventTime() + "}";
  }

  /**
   * Compact, deterministic coder of events of any spec: the fields describe their own layout
   * ({@link FieldValues#writeTo}), so one coder serves every spec.
   *
   * <p>Version 2: {@code source}, {@code id}, {@code type}, the key's field index (a byte), the
   * fields, the fingerprint. Version 1, written by releases 0.1 and 0.2 for payments (account,
   * amount in minor units, currency, merchant and country, and the clocks as fields of their own),
   * is read as the bundled payments spec's fields ({@link PaymentFields#bundled()}).
   */
  public static final class EventCoder extends Codec.DataCoder<Event> {
    private static final long serialVersionUID = 1L;

    private static final EventCoder INSTANCE = new EventCoder();

    public static EventCoder of() {
      return INSTANCE;
    }

    /** Makes {@code @DefaultCoder} work for {@link Event}. */
    public static CoderProvider getCoderProvider() {
      return CoderProviders.forCoder(TypeDescriptor.of(Event.class), INSTANCE);
    }

    @Override
    protected int version() {
      return 2;
    }

    @Override
    protected void write(Event value, DataOutput out) throws IOException {
      Codec.writeString(value.source, out);
      Codec.writeString(value.id, out);
      Codec.writeString(value.type, out);
      out.writeByte(value.keyIndex);
      value.fields.writeTo(out);
      Codec.writeBytes(value.fingerprint, out);
    }

    @Override
    protected Event read(int version, DataInputStream in) throws IOException {
      if (version == 1) {
        return readPayment(in);
      }
      String source = Codec.readString(in);
      String id = Codec.readString(in);
      String type = Codec.readString(in);
      int keyIndex = in.readUnsignedByte();
      FieldValues fields = FieldValues.readFrom(in);
      if (keyIndex >= fields.size() || fields.getString(keyIndex) == null) {
        throw new CoderException("key field " + keyIndex + " is not a present string");
      }
      return new Event(source, id, type, fields, keyIndex, Codec.readBytes(in));
    }

    private static Event readPayment(DataInputStream in) throws IOException {
      String source = Codec.readString(in);
      String id = Codec.readString(in);
      String type = Codec.readString(in);
      Instant eventTime = Codec.readInstant(in);
      Instant ingestionTime = Codec.readInstant(in);
      String accountId = Codec.readString(in);
      long amountCents = in.readLong();
      String currency = Codec.readString(in);
      String merchantId = Codec.readNullableString(in);
      String country = Codec.readNullableString(in);
      return PaymentFields.bundled()
          .event(
              source,
              id,
              type,
              eventTime,
              ingestionTime,
              accountId,
              amountCents,
              currency,
              merchantId,
              country,
              Codec.readBytes(in));
    }
  }
}
