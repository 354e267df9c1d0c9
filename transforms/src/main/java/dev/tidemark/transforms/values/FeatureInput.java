package dev.tidemark.transforms.values;

import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.IOException;
import java.util.Objects;
import org.apache.beam.sdk.coders.CoderProvider;
import org.apache.beam.sdk.coders.CoderProviders;
import org.apache.beam.sdk.coders.DefaultCoder;
import org.apache.beam.sdk.values.TypeDescriptor;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * The part of a {@link PaymentEvent} that {@link dev.tidemark.transforms.AggregateFeaturesFn}
 * reads: amount, merchant, country and the two clocks. {@link
 * dev.tidemark.transforms.ComputeFeatures} windows and shuffles this instead of the whole event:
 * every event is in {@code size / period} windows (10 with 5 min / 30 s), so each copy is encoded,
 * shuffled and sorted that many times, and this is about a third of an event's bytes.
 */
@DefaultCoder(FeatureInput.FeatureInputCoder.class)
public final class FeatureInput {
  private final long amountCents;
  private final @Nullable String merchantId;
  private final @Nullable String country;
  private final long eventTimeMillis;
  private final long ingestionTimeMillis;

  public FeatureInput(
      long amountCents,
      @Nullable String merchantId,
      @Nullable String country,
      long eventTimeMillis,
      long ingestionTimeMillis) {
    this.amountCents = amountCents;
    this.merchantId = merchantId;
    this.country = country;
    this.eventTimeMillis = eventTimeMillis;
    this.ingestionTimeMillis = ingestionTimeMillis;
  }

  /** What the features of {@code event} are computed from. */
  public static FeatureInput of(PaymentEvent event) {
    return new FeatureInput(
        event.amountCents(),
        event.merchantId(),
        event.country(),
        event.eventTime().getMillis(),
        event.ingestionTime().getMillis());
  }

  public long amountCents() {
    return amountCents;
  }

  public @Nullable String merchantId() {
    return merchantId;
  }

  public @Nullable String country() {
    return country;
  }

  public long eventTimeMillis() {
    return eventTimeMillis;
  }

  public long ingestionTimeMillis() {
    return ingestionTimeMillis;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof FeatureInput)) {
      return false;
    }
    FeatureInput that = (FeatureInput) o;
    return amountCents == that.amountCents
        && eventTimeMillis == that.eventTimeMillis
        && ingestionTimeMillis == that.ingestionTimeMillis
        && Objects.equals(merchantId, that.merchantId)
        && Objects.equals(country, that.country);
  }

  @Override
  public int hashCode() {
    return Objects.hash(amountCents, merchantId, country, eventTimeMillis, ingestionTimeMillis);
  }

  @Override
  public String toString() {
    return "FeatureInput{"
        + amountCents
        + " cents, merchant "
        + merchantId
        + ", country "
        + country
        + ", event "
        + eventTimeMillis
        + ", ingestion "
        + ingestionTimeMillis
        + "}";
  }

  /** Compact, deterministic coder. */
  public static final class FeatureInputCoder extends Codec.DataCoder<FeatureInput> {
    private static final long serialVersionUID = 1L;

    /** Version 1: the fields {@link #write} writes, in its order. */
    @Override
    protected int version() {
      return 1;
    }

    private static final FeatureInputCoder INSTANCE = new FeatureInputCoder();

    public static FeatureInputCoder of() {
      return INSTANCE;
    }

    /** Makes {@code @DefaultCoder} work for {@link FeatureInput}. */
    public static CoderProvider getCoderProvider() {
      return CoderProviders.forCoder(TypeDescriptor.of(FeatureInput.class), INSTANCE);
    }

    @Override
    protected void write(FeatureInput value, DataOutput out) throws IOException {
      out.writeLong(value.amountCents);
      Codec.writeNullableString(value.merchantId, out);
      Codec.writeNullableString(value.country, out);
      out.writeLong(value.eventTimeMillis);
      out.writeLong(value.ingestionTimeMillis);
    }

    @Override
    protected FeatureInput read(int version, DataInputStream in) throws IOException {
      return new FeatureInput(
          in.readLong(),
          Codec.readNullableString(in),
          Codec.readNullableString(in),
          in.readLong(),
          in.readLong());
    }
  }
}
