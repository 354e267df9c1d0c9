package dev.tidemark.transforms;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import dev.tidemark.transforms.values.FeatureInput;
import dev.tidemark.transforms.values.PaymentEvent;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.testing.CoderProperties;
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
}
