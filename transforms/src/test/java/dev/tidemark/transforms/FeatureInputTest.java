package dev.tidemark.transforms;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;

import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.testing.CoderProperties;
import org.apache.beam.sdk.util.CoderUtils;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

@RunWith(JUnit4.class)
public class FeatureInputTest {
  private static final Coder<FeatureInput> CODER = FeatureInput.FeatureInputCoder.of();

  @Test
  public void coderRoundTripsAndIsDeterministic() throws Exception {
    FeatureInput full =
        new FeatureInput(12_345, "m-7", "GB", 1_767_225_600_000L, 1_767_225_601_000L);
    FeatureInput bare = new FeatureInput(1, null, null, 0, 0);
    CoderProperties.coderDecodeEncodeEqual(CODER, full);
    CoderProperties.coderDecodeEncodeEqual(CODER, bare);
    CoderProperties.coderDeterministic(
        CODER, full, new FeatureInput(12_345, "m-7", "GB", 1_767_225_600_000L, 1_767_225_601_000L));
    CoderProperties.coderSerializable(CODER);
  }

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
  public void isSmallerThanTheEventItCameFrom() throws Exception {
    PaymentEvent event =
        TestEvents.payment(TestEvents.Account.ALICE, "e1", 1_000, "m-1", "GB", TestEvents.BASE);
    int eventBytes =
        CoderUtils.encodeToByteArray(PaymentEvent.PaymentEventCoder.of(), event).length;
    int inputBytes = CoderUtils.encodeToByteArray(CODER, FeatureInput.of(event)).length;
    assertThat(inputBytes * 2, lessThan(eventBytes));
  }
}
