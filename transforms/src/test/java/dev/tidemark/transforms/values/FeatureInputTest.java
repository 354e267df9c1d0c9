package dev.tidemark.transforms.values;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.lessThan;

import dev.tidemark.transforms.TestEvents;
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
  public void isSmallerThanTheEventItCameFrom() throws Exception {
    PaymentEvent event =
        TestEvents.payment(TestEvents.Account.ALICE, "e1", 1_000, "m-1", "GB", TestEvents.BASE);
    int eventBytes =
        CoderUtils.encodeToByteArray(PaymentEvent.PaymentEventCoder.of(), event).length;
    int inputBytes = CoderUtils.encodeToByteArray(CODER, FeatureInput.of(event)).length;
    assertThat(inputBytes * 2, lessThan(eventBytes));
  }
}
