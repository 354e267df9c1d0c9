package dev.tidemark.transforms;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecFeaturesFn;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.transforms.values.Event;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.FormatBytes;
import dev.tidemark.transforms.values.PaymentFeatures;
import dev.tidemark.transforms.values.PaymentFields;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.lang.reflect.Constructor;
import java.math.BigDecimal;
import java.util.List;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.coders.CoderRegistry;
import org.apache.beam.sdk.testing.CoderProperties;
import org.apache.beam.sdk.util.CoderUtils;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The payments spec's features as the pipeline computes them: exact sums that saturate with a flag,
 * the coders, and the window state of releases 0.1 and 0.2 (the hand-written combine's) read back.
 */
@RunWith(JUnit4.class)
public class FeaturesFnTest {
  private static final PipelineSpec PAYMENTS = SpecLoader.loadBundled("payments");
  private static final FeaturesFn FN = new FeaturesFn(SpecFeaturesFn.of(PAYMENTS));
  private static final PaymentFields FIELDS = PaymentFields.of(PAYMENTS.events());

  /** The largest amount the parser accepts, 999999999999999.99, in minor units. */
  private static final long MAX_CENTS = 99_999_999_999_999_999L;

  private static SpecFeaturesFn.Accumulator add(SpecFeaturesFn.Accumulator acc, Event... events) {
    for (Event event : events) {
      FN.addInput(acc, event.fields());
    }
    return acc;
  }

  private static SpecFeaturesFn.Accumulator ofMaximumAmounts(int events) {
    SpecFeaturesFn.Accumulator acc = FN.createAccumulator();
    for (int i = 0; i < events; i++) {
      add(
          acc,
          TestEvents.payment(
              TestEvents.Account.ALICE, "max-" + i, MAX_CENTS, "m-1", "GB", TestEvents.BASE));
    }
    return acc;
  }

  @Test
  public void twoPaymentsGiveTheFeaturesWorkedOutByHand() {
    SpecFeaturesFn.Accumulator acc =
        add(
            FN.createAccumulator(),
            TestEvents.payment(TestEvents.Account.ALICE, "e1", 1_000, "m-1", "GB", TestEvents.BASE),
            TestEvents.payment(
                TestEvents.Account.ALICE, "e2", 3_250, "m-2", "FR", TestEvents.minutes(1)));
    // 10.00 + 32.50 = 42.50, max 32.50, m-1 and m-2, GB and FR, latest at minute 1.
    Features features = FN.extractOutput(acc);
    assertThat(
        features,
        is(PaymentFeatures.of(2, 4250, 3250, 2, 2, TestEvents.minutes(1), TestEvents.minutes(1))));
    assertThat(features.names(), is(PAYMENTS.featureNames()));
    assertThat(
        features.toJson(),
        is(
            "{\"txnCount\":2,\"amountSum\":42.50,\"amountMax\":32.50,\"distinctMerchants\":2,"
                + "\"distinctCountries\":2,\"amountSumSaturated\":false}"));
    assertThat(features.toVector(), is(new float[] {2f, 42.5f, 32.5f, 2f, 2f}));
  }

  @Test
  public void theSumIsExactUpToTheLimitAndSaturatesBeyondWithTheFlag() {
    // 92 maximum amounts: 9199999999999999908 minor units, still below 9223372036854775807.
    Features exact = FN.extractOutput(ofMaximumAmounts(92));
    assertThat(exact.getLong(PaymentFeatures.AMOUNT_SUM), is(9_199_999_999_999_999_908L));
    assertThat(exact.isSaturated(PaymentFeatures.AMOUNT_SUM), is(false));
    // 93 of them would be 9299999999999999907: held at Long.MAX_VALUE, flagged.
    Features saturated = FN.extractOutput(ofMaximumAmounts(93));
    assertThat(saturated.getLong(PaymentFeatures.TXN_COUNT), is(93L));
    assertThat(saturated.getLong(PaymentFeatures.AMOUNT_SUM), is(Long.MAX_VALUE));
    assertThat(
        saturated.decimal(PaymentFeatures.AMOUNT_SUM), is(new BigDecimal("92233720368547758.07")));
    assertThat(
        saturated.decimal(PaymentFeatures.AMOUNT_MAX), is(new BigDecimal("999999999999999.99")));
    assertThat(saturated.isSaturated(PaymentFeatures.AMOUNT_SUM), is(true));
    assertThat(saturated.toJson(), containsString("\"amountSumSaturated\":true"));
  }

  @Test
  public void mergingUnsaturatedAccumulatorsCanSaturateAndSaturationSticks() {
    // 50 + 50 maximum amounts: each 4999999999999999950, together over the limit.
    Features merged =
        FN.extractOutput(FN.mergeAccumulators(List.of(ofMaximumAmounts(50), ofMaximumAmounts(50))));
    assertThat(merged.getLong(PaymentFeatures.TXN_COUNT), is(100L));
    assertThat(merged.getLong(PaymentFeatures.AMOUNT_SUM), is(Long.MAX_VALUE));
    assertThat(merged.isSaturated(PaymentFeatures.AMOUNT_SUM), is(true));
  }

  @Test
  public void theFlagSurvivesTheAccumulatorAndFeaturesCoders() throws Exception {
    Coder<SpecFeaturesFn.Accumulator> coder =
        FN.getAccumulatorCoder(CoderRegistry.createDefault(), null);
    SpecFeaturesFn.Accumulator back =
        CoderUtils.decodeFromByteArray(
            coder, CoderUtils.encodeToByteArray(coder, ofMaximumAmounts(93)));
    Features saturated = FN.extractOutput(back);
    assertThat(saturated.isSaturated(PaymentFeatures.AMOUNT_SUM), is(true));
    CoderProperties.coderDecodeEncodeEqual(Features.FeaturesCoder.of(), saturated);
    Features exact = FN.extractOutput(ofMaximumAmounts(2));
    CoderProperties.coderDecodeEncodeEqual(Features.FeaturesCoder.of(), exact);
    assertThat(exact.equals(saturated), is(false));
    CoderProperties.structuralValueDecodeEncodeEqual(coder, ofMaximumAmounts(2));
  }

  /** The window state of releases 0.1 and 0.2, as their combine's coder wrote it. */
  private static FormatBytes releaseTwoState(boolean saturated, long sum) {
    return FormatBytes.version(1)
        .i64(2)
        .i64(sum)
        .bool(saturated)
        .i64(1_000)
        .i32(2)
        .str("m-1")
        .str("m-2")
        .i32(1)
        .str("GB")
        .i64(TestEvents.BASE.getMillis())
        .i64(TestEvents.BASE.getMillis() + 7);
  }

  @Test
  public void theWindowStateOfReleaseTwoReadsIntoThePaymentsFeatures() throws Exception {
    Coder<SpecFeaturesFn.Accumulator> coder =
        FN.getAccumulatorCoder(CoderRegistry.createDefault(), null);
    SpecFeaturesFn.Accumulator restored =
        CoderUtils.decodeFromByteArray(coder, releaseTwoState(false, 1_250).toBytes());
    assertThat(
        FN.extractOutput(restored),
        is(
            PaymentFeatures.of(
                2, 1_250, 1_000, 2, 1, TestEvents.BASE, TestEvents.BASE.plus(7), false)));
    // The current format of the same state is smaller: the window state per key does not grow.
    byte[] current = CoderUtils.encodeToByteArray(coder, restored);
    assertThat(
        current.length + " bytes against " + releaseTwoState(false, 1_250).toBytes().length,
        current.length < releaseTwoState(false, 1_250).toBytes().length,
        is(true));
    // Restored state goes on accumulating, and is written back in the current format.
    add(
        restored,
        TestEvents.payment(
            TestEvents.Account.ALICE, "e3", 5_000, "m-3", "FR", TestEvents.minutes(1)));
    Features after = FN.extractOutput(restored);
    assertThat(after.getLong(PaymentFeatures.TXN_COUNT), is(3L));
    assertThat(after.getLong(PaymentFeatures.AMOUNT_MAX), is(5_000L));
    assertThat(after.getLong(PaymentFeatures.DISTINCT_MERCHANTS), is(3L));
    assertThat(CoderUtils.encodeToByteArray(coder, restored)[0], is((byte) 2));
    // A saturated sum stays saturated.
    Features saturated =
        FN.extractOutput(
            CoderUtils.decodeFromByteArray(coder, releaseTwoState(true, Long.MAX_VALUE).toBytes()));
    assertThat(saturated.getLong(PaymentFeatures.AMOUNT_SUM), is(Long.MAX_VALUE));
    assertThat(saturated.isSaturated(PaymentFeatures.AMOUNT_SUM), is(true));
  }

  @Test
  public void aSpecWithOtherFeaturesRefusesTheStateOfReleaseTwo() throws Exception {
    PipelineSpec other =
        SpecLoader.parse(
            SpecLoader.bundledText("payments")
                .replace("{name: amountMax,         aggregate: max,      of: amount}", "")
                .replace("  - \n", ""),
            "other.yaml");
    Coder<SpecFeaturesFn.Accumulator> coder =
        SpecFeaturesFn.of(other).getAccumulatorCoder(CoderRegistry.createDefault(), null);
    CoderException e =
        assertThrows(
            CoderException.class,
            () -> CoderUtils.decodeFromByteArray(coder, releaseTwoState(false, 1).toBytes()));
    assertThat(e.getMessage(), containsString("restore it with the payments spec"));
  }

  @Test
  public void theCoderThatReleaseTwoSavepointsNameResolvesToTheSpecCombinesCoder()
      throws Exception {
    Constructor<AggregateFeaturesFn.AccumulatorCoder> constructor =
        AggregateFeaturesFn.AccumulatorCoder.class.getDeclaredConstructor();
    constructor.setAccessible(true);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(constructor.newInstance());
    }
    Object resolved;
    try (ObjectInputStream in =
        new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      resolved = in.readObject();
    }
    assertThat(resolved, instanceOf(Coder.class));
    @SuppressWarnings("unchecked")
    Coder<SpecFeaturesFn.Accumulator> coder = (Coder<SpecFeaturesFn.Accumulator>) resolved;
    assertThat(
        FN.extractOutput(
            CoderUtils.decodeFromByteArray(coder, releaseTwoState(false, 1_250).toBytes())),
        is(
            PaymentFeatures.of(
                2, 1_250, 1_000, 2, 1, TestEvents.BASE, TestEvents.BASE.plus(7), false)));
  }
}
