package dev.tidemark.transforms.values;

import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.IOException;
import java.math.BigDecimal;
import java.util.Arrays;
import java.util.Objects;
import org.apache.beam.sdk.coders.CoderProvider;
import org.apache.beam.sdk.coders.CoderProviders;
import org.apache.beam.sdk.coders.DefaultCoder;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TypeDescriptor;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;

/**
 * A validated {@code payments.transaction.v1} CloudEvent: its identity ({@code source}, {@code
 * id}), its two clocks (event time from the CloudEvent {@code time}, ingestion time from the
 * source), and the transaction data. Amounts are exact: minor units (pence) in a {@code long}.
 *
 * <p>{@link #fingerprint()} is a 128-bit digest of the event's canonical content ({@code type},
 * {@code time}, {@code subject} and {@code data}, with object fields in sorted order): two copies
 * of one event with the same fingerprint are identical duplicates, different fingerprints under one
 * {@code source}+{@code id} are a conflict.
 */
@DefaultCoder(PaymentEvent.PaymentEventCoder.class)
public final class PaymentEvent {
  private final String source;
  private final String id;
  private final String type;
  private final Instant eventTime;
  private final Instant ingestionTime;
  private final String accountId;
  private final long amountCents;
  private final String currency;
  private final @Nullable String merchantId;
  private final @Nullable String country;
  private final byte[] fingerprint;

  public PaymentEvent(
      String source,
      String id,
      String type,
      Instant eventTime,
      Instant ingestionTime,
      String accountId,
      long amountCents,
      String currency,
      @Nullable String merchantId,
      @Nullable String country,
      byte[] fingerprint) {
    this.source = Objects.requireNonNull(source, "source");
    this.id = Objects.requireNonNull(id, "id");
    this.type = Objects.requireNonNull(type, "type");
    this.eventTime = Objects.requireNonNull(eventTime, "eventTime");
    this.ingestionTime = Objects.requireNonNull(ingestionTime, "ingestionTime");
    this.accountId = Objects.requireNonNull(accountId, "accountId");
    this.amountCents = amountCents;
    this.currency = Objects.requireNonNull(currency, "currency");
    this.merchantId = merchantId;
    this.country = country;
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
    return eventTime;
  }

  public Instant ingestionTime() {
    return ingestionTime;
  }

  public String accountId() {
    return accountId;
  }

  public long amountCents() {
    return amountCents;
  }

  public BigDecimal amount() {
    return BigDecimal.valueOf(amountCents, 2);
  }

  public String currency() {
    return currency;
  }

  public @Nullable String merchantId() {
    return merchantId;
  }

  public @Nullable String country() {
    return country;
  }

  /** The content digest; do not modify the returned array. */
  public byte[] fingerprint() {
    return fingerprint;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof PaymentEvent)) {
      return false;
    }
    PaymentEvent that = (PaymentEvent) o;
    return amountCents == that.amountCents
        && source.equals(that.source)
        && id.equals(that.id)
        && type.equals(that.type)
        && eventTime.equals(that.eventTime)
        && ingestionTime.equals(that.ingestionTime)
        && accountId.equals(that.accountId)
        && currency.equals(that.currency)
        && Objects.equals(merchantId, that.merchantId)
        && Objects.equals(country, that.country)
        && Arrays.equals(fingerprint, that.fingerprint);
  }

  @Override
  public int hashCode() {
    return Objects.hash(source, id, eventTime, accountId, amountCents);
  }

  @Override
  public String toString() {
    return "PaymentEvent{"
        + source
        + "#"
        + id
        + " "
        + accountId
        + " "
        + amount()
        + " "
        + currency
        + " at "
        + eventTime
        + "}";
  }

  /** Compact, deterministic coder. */
  public static final class PaymentEventCoder extends Codec.DataCoder<PaymentEvent> {
    private static final long serialVersionUID = 1L;

    /** Version 1: the fields {@link #write} writes, in its order. */
    @Override
    protected int version() {
      return 1;
    }

    private static final PaymentEventCoder INSTANCE = new PaymentEventCoder();

    public static PaymentEventCoder of() {
      return INSTANCE;
    }

    /** Makes {@code @DefaultCoder} work for {@link PaymentEvent}. */
    public static CoderProvider getCoderProvider() {
      return CoderProviders.forCoder(TypeDescriptor.of(PaymentEvent.class), INSTANCE);
    }

    @Override
    protected void write(PaymentEvent value, DataOutput out) throws IOException {
      Codec.writeString(value.source, out);
      Codec.writeString(value.id, out);
      Codec.writeString(value.type, out);
      Codec.writeInstant(value.eventTime, out);
      Codec.writeInstant(value.ingestionTime, out);
      Codec.writeString(value.accountId, out);
      out.writeLong(value.amountCents);
      Codec.writeString(value.currency, out);
      Codec.writeNullableString(value.merchantId, out);
      Codec.writeNullableString(value.country, out);
      Codec.writeBytes(value.fingerprint, out);
    }

    @Override
    protected PaymentEvent read(int version, DataInputStream in) throws IOException {
      return new PaymentEvent(
          Codec.readString(in),
          Codec.readString(in),
          Codec.readString(in),
          Codec.readInstant(in),
          Codec.readInstant(in),
          Codec.readString(in),
          in.readLong(),
          Codec.readString(in),
          Codec.readNullableString(in),
          Codec.readNullableString(in),
          Codec.readBytes(in));
    }
  }
}
