package dev.tidemark.transforms;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import dev.tidemark.transforms.values.FeatureInput;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.FormatBytes;
import dev.tidemark.transforms.values.PaymentEvent;
import java.io.ObjectStreamClass;
import java.math.BigDecimal;
import java.util.List;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.CoderException;
import org.apache.beam.sdk.testing.CoderProperties;
import org.apache.beam.sdk.util.CoderUtils;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** The feature combine: its two ways in, and its accumulator coder. */
@RunWith(JUnit4.class)
public class AggregateFeaturesFnTest {
  @Test
  public void featuresFromInputsEqualFeaturesFromEvents() {
    PaymentEvent first =
        TestEvents.payment(TestEvents.Account.ALICE, "e1", 1_000, "m-1", "GB", TestEvents.BASE);
    PaymentEvent second =
        TestEvents.payment(
            TestEvents.Account.ALICE, "e2", 3_250, "m-2", "FR", TestEvents.minutes(1));
    AggregateFeaturesFn fn = new AggregateFeaturesFn();
    AggregateFeaturesFn.Accumulator fromEvents = fn.createAccumulator();
    fn.addEvent(fromEvents, first);
    fn.addEvent(fromEvents, second);
    AggregateFeaturesFn.Accumulator fromInputs = fn.createAccumulator();
    fn.addInput(fromInputs, FeatureInput.of(first));
    fn.addInput(fromInputs, FeatureInput.of(second));
    assertThat(fn.extractOutput(fromInputs), is(fn.extractOutput(fromEvents)));
    assertThat(fn.extractOutput(fromInputs).txnCount(), is(2L));
    // By hand: 10.00 + 32.50 = 42.50, max 32.50, m-1 and m-2, GB and FR, latest at minute 1.
    assertThat(
        fn.extractOutput(fromInputs),
        is(new Features(2, 4250, 3250, 2, 2, TestEvents.minutes(1), TestEvents.minutes(1))));
  }

  /** The largest amount the parser accepts, 999999999999999.99, in minor units. */
  private static final long MAX_CENTS = 99_999_999_999_999_999L;

  private static AggregateFeaturesFn.Accumulator ofMaximumAmounts(int events) {
    AggregateFeaturesFn fn = new AggregateFeaturesFn();
    AggregateFeaturesFn.Accumulator acc = fn.createAccumulator();
    for (int i = 0; i < events; i++) {
      fn.addEvent(
          acc,
          TestEvents.payment(
              TestEvents.Account.ALICE, "max-" + i, MAX_CENTS, "m-1", "GB", TestEvents.BASE));
    }
    return acc;
  }

  @Test
  public void theSumIsExactUpToTheLimitAndSaturatesBeyondWithTheFlag() {
    AggregateFeaturesFn fn = new AggregateFeaturesFn();
    // 92 maximum amounts: 9199999999999999908 minor units, still below 9223372036854775807.
    Features exact = fn.extractOutput(ofMaximumAmounts(92));
    assertThat(exact.amountSumCents(), is(9_199_999_999_999_999_908L));
    assertThat(exact.amountSumSaturated(), is(false));
    // 93 of them would be 9299999999999999907: held at Long.MAX_VALUE, flagged.
    Features saturated = fn.extractOutput(ofMaximumAmounts(93));
    assertThat(saturated.txnCount(), is(93L));
    assertThat(saturated.amountSumCents(), is(9_223_372_036_854_775_807L));
    assertThat(saturated.amountSum(), is(new BigDecimal("92233720368547758.07")));
    assertThat(saturated.amountMax(), is(new BigDecimal("999999999999999.99")));
    assertThat(saturated.amountSumSaturated(), is(true));

    // A sum of exactly Long.MAX_VALUE is exact, not saturated.
    AggregateFeaturesFn.Accumulator atMax = fn.createAccumulator();
    fn.addInput(atMax, new FeatureInput(9_223_372_036_854_775_000L, null, null, 0, 0));
    fn.addInput(atMax, new FeatureInput(807L, null, null, 0, 0));
    assertThat(fn.extractOutput(atMax).amountSumCents(), is(Long.MAX_VALUE));
    assertThat(fn.extractOutput(atMax).amountSumSaturated(), is(false));
  }

  @Test
  public void mergingUnsaturatedAccumulatorsCanSaturateAndSaturationSticks() {
    AggregateFeaturesFn fn = new AggregateFeaturesFn();
    // 50 + 50 maximum amounts: each 4999999999999999950, together over the limit.
    Features merged =
        fn.extractOutput(fn.mergeAccumulators(List.of(ofMaximumAmounts(50), ofMaximumAmounts(50))));
    assertThat(merged.txnCount(), is(100L));
    assertThat(merged.amountSumCents(), is(Long.MAX_VALUE));
    assertThat(merged.amountSumSaturated(), is(true));
    // A saturated accumulator merged with a small one stays saturated, in either order.
    AggregateFeaturesFn.Accumulator small = fn.createAccumulator();
    fn.addInput(small, new FeatureInput(1, null, null, 0, 0));
    for (List<AggregateFeaturesFn.Accumulator> order :
        List.of(List.of(ofMaximumAmounts(93), small), List.of(small, ofMaximumAmounts(93)))) {
      Features features = fn.extractOutput(fn.mergeAccumulators(order));
      assertThat(features.txnCount(), is(94L));
      assertThat(features.amountSumCents(), is(Long.MAX_VALUE));
      assertThat(features.amountSumSaturated(), is(true));
    }
  }

  @Test
  public void theFlagSurvivesTheAccumulatorAndFeaturesCoders() throws Exception {
    AggregateFeaturesFn.Accumulator acc = ofMaximumAmounts(93);
    AggregateFeaturesFn.Accumulator back =
        CoderUtils.decodeFromByteArray(
            AggregateFeaturesFn.AccumulatorCoder.INSTANCE,
            CoderUtils.encodeToByteArray(AggregateFeaturesFn.AccumulatorCoder.INSTANCE, acc));
    assertThat(AggregateFeaturesFn.output(back).amountSumSaturated(), is(true));
    Features saturated = AggregateFeaturesFn.output(acc);
    CoderProperties.coderDecodeEncodeEqual(Features.FeaturesCoder.of(), saturated);
    Features exact = AggregateFeaturesFn.output(ofMaximumAmounts(2));
    CoderProperties.coderDecodeEncodeEqual(Features.FeaturesCoder.of(), exact);
    assertThat(exact.equals(saturated), is(false));
  }

  @Test
  public void theAccumulatorIsComparedByItsEncoding() throws Exception {
    AggregateFeaturesFn fn = new AggregateFeaturesFn();
    AggregateFeaturesFn.Accumulator acc = fn.createAccumulator();
    fn.addEvent(
        acc,
        TestEvents.payment(TestEvents.Account.ALICE, "e1", 1_000, "m-1", "GB", TestEvents.BASE));
    Coder<AggregateFeaturesFn.Accumulator> coder = AggregateFeaturesFn.AccumulatorCoder.INSTANCE;
    // Beam's structural value of a decoded copy must equal the original's (no equals() here).
    CoderProperties.structuralValueDecodeEncodeEqual(coder, acc);
  }

  @Test
  public void theAccumulatorCoderReadsVersionOneWrittenByHandAndRefusesOthers() throws Exception {
    AggregateFeaturesFn fn = new AggregateFeaturesFn();
    AggregateFeaturesFn.Accumulator acc = fn.createAccumulator();
    fn.addEvent(
        acc,
        TestEvents.payment(TestEvents.Account.ALICE, "e1", 1_000, "m-1", "GB", TestEvents.BASE));
    fn.addEvent(
        acc, TestEvents.payment(TestEvents.Account.ALICE, "e2", 250, "m-2", "GB", TestEvents.BASE));
    long eventMillis = acc.latestEventMillis;
    long ingestionMillis = acc.latestIngestionMillis;
    byte[] version1 =
        FormatBytes.version(1)
            .i64(2)
            .i64(1_250)
            .bool(false)
            .i64(1_000)
            .i32(2)
            .str("m-1")
            .str("m-2")
            .i32(1)
            .str("GB")
            .i64(eventMillis)
            .i64(ingestionMillis)
            .toBytes();
    AggregateFeaturesFn.AccumulatorCoder coder = AggregateFeaturesFn.AccumulatorCoder.INSTANCE;
    AggregateFeaturesFn.Accumulator back = CoderUtils.decodeFromByteArray(coder, version1);
    assertThat(AggregateFeaturesFn.output(back), is(AggregateFeaturesFn.output(acc)));
    assertThat(back.merchants, is(acc.merchants));
    assertThat(CoderUtils.encodeToByteArray(coder, acc), is(version1));
    CoderProperties.structuralValueDecodeEncodeEqual(coder, acc);
    assertThat(ObjectStreamClass.lookup(coder.getClass()).getSerialVersionUID(), is(1L));

    version1[0] = 2;
    CoderException e =
        assertThrows(CoderException.class, () -> CoderUtils.decodeFromByteArray(coder, version1));
    assertThat(
        e.getMessage(),
        containsString("AggregateFeaturesFn.AccumulatorCoder cannot read format version 2"));
  }
}
