package dev.tidemark.transforms.values;

import dev.tidemark.spec.FeatureSchema;
import dev.tidemark.spec.FeatureValues;
import dev.tidemark.spec.SpecLoader;
import org.joda.time.Instant;

/**
 * The bundled payments spec's five features ({@code txnCount}, {@code amountSum}, {@code
 * amountMax}, {@code distinctMerchants}, {@code distinctCountries}) for code that builds them by
 * hand: tests, the benchmarks' native jobs, and the coders that read the formats of releases before
 * features came from a spec, which held exactly these. A pipeline never needs this: its features
 * come from its spec.
 */
public final class PaymentFeatures {
  private PaymentFeatures() {}

  /** The schema of the bundled payments spec's features. */
  public static final FeatureSchema SCHEMA =
      FeatureSchema.of(SpecLoader.loadBundled(SpecLoader.DEFAULT_BUNDLED));

  public static final int TXN_COUNT = 0;
  public static final int AMOUNT_SUM = 1;
  public static final int AMOUNT_MAX = 2;
  public static final int DISTINCT_MERCHANTS = 3;
  public static final int DISTINCT_COUNTRIES = 4;

  /** Payment features with an exact amount sum. */
  public static Features of(
      long txnCount,
      long amountSumCents,
      long amountMaxCents,
      long distinctMerchants,
      long distinctCountries,
      Instant latestEventTime,
      Instant latestIngestionTime) {
    return of(
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
   * Payment features whose amount sum is exact ({@code amountSumSaturated} false) or was held at
   * {@link Long#MAX_VALUE} minor units because the true sum is larger (true).
   */
  public static Features of(
      long txnCount,
      long amountSumCents,
      long amountMaxCents,
      long distinctMerchants,
      long distinctCountries,
      Instant latestEventTime,
      Instant latestIngestionTime,
      boolean amountSumSaturated) {
    long[] values = {
      txnCount, amountSumCents, amountMaxCents, distinctMerchants, distinctCountries
    };
    // A max over no event is absent; count, sum and distinct counts always have a value.
    long present = txnCount > 0 ? 0b11111 : 0b11011;
    return new Features(
        SCHEMA,
        FeatureValues.of(
            values,
            present,
            amountSumSaturated ? 1L << AMOUNT_SUM : 0,
            latestEventTime.getMillis(),
            latestIngestionTime.getMillis()));
  }
}
