package dev.tidemark.transforms.values;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.tidemark.transforms.util.Json;
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
 *
 * <p>The amount sum saturates: it is exact up to {@link Long#MAX_VALUE} minor units
 * (92233720368547758.07 major units: 92 events of the largest amount the parser accepts, {@code
 * 999999999999999.99}), and a larger sum is held at that value with {@link #amountSumSaturated()}
 * set, never an exception. The flag is not a model input; it is written in the {@code features}
 * object of a decision as {@code amountSumSaturated}, always, {@code false} for an exact sum.
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
  private final boolean amountSumSaturated;

  /** Features with an exact amount sum. */
  public Features(
      long txnCount,
      long amountSumCents,
      long amountMaxCents,
      long distinctMerchants,
      long distinctCountries,
      Instant latestEventTime,
      Instant latestIngestionTime) {
    this(
        txnCount,
        amountSumCents,
        amountMaxCents,
        distinctMerchants,
        distinctCountries,
        latestEventTime,
        latestIngestionTime,
        false);
  }

  /**
   * Features whose amount sum is exact ({@code amountSumSaturated} false) or was held at {@link
   * Long#MAX_VALUE} minor units because the true sum is larger (true).
   */
  public Features(
      long txnCount,
      long amountSumCents,
      long amountMaxCents,
      long distinctMerchants,
      long distinctCountries,
      Instant latestEventTime,
      Instant latestIngestionTime,
      boolean amountSumSaturated) {
    this.txnCount = txnCount;
    this.amountSumCents = amountSumCents;
    this.amountMaxCents = amountMaxCents;
    this.distinctMerchants = distinctMerchants;
    this.distinctCountries = distinctCountries;
    this.latestEventTime = Objects.requireNonNull(latestEventTime, "latestEventTime");
    this.latestIngestionTime = Objects.requireNonNull(latestIngestionTime, "latestIngestionTime");
    this.amountSumSaturated = amountSumSaturated;
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

  /**
   * Whether the true amount sum exceeded {@link Long#MAX_VALUE} minor units, so that {@link
   * #amountSumCents()} holds that maximum instead of the sum.
   */
  public boolean amountSumSaturated() {
    return amountSumSaturated;
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

  /** The {@code features} object of a decision, on its own. */
  public String toJson() {
    return Json.object(this::writeFields);
  }

  /** Writes the {@code features} object's fields. */
  void writeFields(JsonGenerator out) throws IOException {
    out.writeNumberField("txnCount", txnCount);
    out.writeNumberField("amountSum", amountSum());
    out.writeNumberField("amountMax", amountMax());
    out.writeNumberField("distinctMerchants", distinctMerchants);
    out.writeNumberField("distinctCountries", distinctCountries);
    out.writeBooleanField("amountSumSaturated", amountSumSaturated);
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (!(o instanceof Features)) {
      return false;
    }
    Features that = (Features) o;
    return txnCount == that.txnCount
        && amountSumCents == that.amountSumCents
        && amountSumSaturated == that.amountSumSaturated
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
        + (amountSumSaturated ? " (saturated)" : "")
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
    private static final long serialVersionUID = 1L;

    /** Version 1: the fields {@link #write} writes, in its order. */
    @Override
    protected int version() {
      return 1;
    }

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
      out.writeBoolean(value.amountSumSaturated);
    }

    @Override
    protected Features read(int version, DataInputStream in) throws IOException {
      return new Features(
          in.readLong(),
          in.readLong(),
          in.readLong(),
          in.readLong(),
          in.readLong(),
          Codec.readInstant(in),
          Codec.readInstant(in),
          in.readBoolean());
    }
  }
}
