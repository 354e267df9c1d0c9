package dev.tidemark.transforms.values;

import com.fasterxml.jackson.core.JsonGenerator;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.IOException;
import java.math.BigDecimal;
import java.util.List;
import java.util.Objects;
import org.apache.beam.sdk.coders.CoderProvider;
import org.apache.beam.sdk.coders.CoderProviders;
import org.apache.beam.sdk.coders.DefaultCoder;
import org.apache.beam.sdk.values.TypeDescriptor;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Instant;

/**
 * The features of one account in one window pane, plus the two event clocks the pane carries: the
 * latest event time among its events and the ingestion time of that event.
 *
 * <p>{@link #NAMES} is the model input order; {@link #toVector()} follows it.
 */
@DefaultCoder(Features.FeaturesCoder.class)
public final class Features {
  /** Feature names in model input order. */
  public static final List<String> NAMES =
      List.of("txnCount", "amountSum", "amountMax", "distinctMerchants", "distinctCountries");

  private final long txnCount;
  private final long amountSumCents;
  private final long amountMaxCents;
  private final long distinctMerchants;
  private final long distinctCountries;
  private final Instant latestEventTime;
  private final Instant latestIngestionTime;

  public Features(
      long txnCount,
      long amountSumCents,
      long amountMaxCents,
      long distinctMerchants,
      long distinctCountries,
      Instant latestEventTime,
      Instant latestIngestionTime) {
    this.txnCount = txnCount;
    this.amountSumCents = amountSumCents;
    this.amountMaxCents = amountMaxCents;
    this.distinctMerchants = distinctMerchants;
    this.distinctCountries = distinctCountries;
    this.latestEventTime = Objects.requireNonNull(latestEventTime, "latestEventTime");
    this.latestIngestionTime = Objects.requireNonNull(latestIngestionTime, "latestIngestionTime");
  }

  public long txnCount() {
    return txnCount;
  }

  public long amountSumCents() {
    return amountSumCents;
  }

  public BigDecimal amountSum() {
    return BigDecimal.valueOf(amountSumCents, 2);
  }

  public long amountMaxCents() {
    return amountMaxCents;
  }

  public BigDecimal amountMax() {
    return BigDecimal.valueOf(amountMaxCents, 2);
  }

  public long distinctMerchants() {
    return distinctMerchants;
  }

  public long distinctCountries() {
    return distinctCountries;
  }

  public Instant latestEventTime() {
    return latestEventTime;
  }

  public Instant latestIngestionTime() {
    return latestIngestionTime;
  }

  /** The features as model input, in {@link #NAMES} order; amounts in major units. */
  public float[] toVector() {
    return new float[] {
      txnCount, amountSumCents / 100f, amountMaxCents / 100f, distinctMerchants, distinctCountries
    };
  }

  /** Writes the {@code features} object's fields. */
  void writeFields(JsonGenerator out) throws IOException {
    out.writeNumberField("txnCount", txnCount);
    out.writeNumberField("amountSum", amountSum());
    out.writeNumberField("amountMax", amountMax());
    out.writeNumberField("distinctMerchants", distinctMerchants);
    out.writeNumberField("distinctCountries", distinctCountries);
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof Features)) {
      return false;
    }
    Features that = (Features) o;
    return txnCount == that.txnCount
        && amountSumCents == that.amountSumCents
        && amountMaxCents == that.amountMaxCents
        && distinctMerchants == that.distinctMerchants
        && distinctCountries == that.distinctCountries
        && latestEventTime.equals(that.latestEventTime)
        && latestIngestionTime.equals(that.latestIngestionTime);
  }

  @Override
  public int hashCode() {
    return Objects.hash(txnCount, amountSumCents, amountMaxCents, latestEventTime);
  }

  @Override
  public String toString() {
    return "Features{txnCount="
        + txnCount
        + ", amountSum="
        + amountSum()
        + ", amountMax="
        + amountMax()
        + ", distinctMerchants="
        + distinctMerchants
        + ", distinctCountries="
        + distinctCountries
        + ", latestEventTime="
        + latestEventTime
        + ", latestIngestionTime="
        + latestIngestionTime
        + "}";
  }

  /** Compact, deterministic coder. */
  public static final class FeaturesCoder extends Codec.DataCoder<Features> {
    private static final FeaturesCoder INSTANCE = new FeaturesCoder();

    public static FeaturesCoder of() {
      return INSTANCE;
    }

    /** Makes {@code @DefaultCoder} work for {@link Features}. */
    public static CoderProvider getCoderProvider() {
      return CoderProviders.forCoder(TypeDescriptor.of(Features.class), INSTANCE);
    }

    @Override
    protected void write(Features value, DataOutput out) throws IOException {
      out.writeLong(value.txnCount);
      out.writeLong(value.amountSumCents);
      out.writeLong(value.amountMaxCents);
      out.writeLong(value.distinctMerchants);
      out.writeLong(value.distinctCountries);
      Codec.writeInstant(value.latestEventTime, out);
      Codec.writeInstant(value.latestIngestionTime, out);
    }

    @Override
    protected Features read(DataInputStream in) throws IOException {
      return new Features(
          in.readLong(),
          in.readLong(),
          in.readLong(),
          in.readLong(),
          in.readLong(),
          Codec.readInstant(in),
          Codec.readInstant(in));
    }
  }
}
