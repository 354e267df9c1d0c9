package dev.tidemark.transforms;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.DeadLetterReason;
import java.nio.charset.StandardCharsets;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.values.PCollection;
import org.junit.Rule;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * {@link BoundDeadLetters}: long payloads cut and counted, short ones unchanged, limits checked.
 */
@RunWith(JUnit4.class)
public class BoundDeadLettersTest {
  @Rule public final transient TestPipeline p = TestPipeline.create();

  private static DeadLetter letter(String origin, int payloadBytes) {
    return new DeadLetter(
        DeadLetterReason.OVERSIZED_RECORD,
        "too big",
        ParseCloudEvents.STEP,
        origin,
        "y".repeat(payloadBytes).getBytes(StandardCharsets.UTF_8),
        null);
  }

  @Test
  public void longPayloadsAreCutAndCountedAndShortOnesPassUnchanged() {
    DeadLetter atLimit = letter("replay:line 1", 300);
    DeadLetter over = letter("replay:line 2", 301);
    DeadLetter huge = letter("replay:line 3", 1_000_000);
    PCollection<DeadLetter> bounded =
        p.apply(Create.of(atLimit, over, huge).withCoder(DeadLetter.DeadLetterCoder.of()))
            .apply(BoundDeadLetters.create().withMaxPayloadBytes(300));
    PAssert.that(bounded)
        .containsInAnyOrder(atLimit, over.withPayloadLimit(300), huge.withPayloadLimit(300));
    PipelineResult run = p.run();
    run.waitUntilFinish();
    assertThat(TestEvents.counter(run, TidemarkMetrics.TRUNCATED_DEAD_LETTERS), is(2L));
  }

  @Test
  public void theLimitMustLieInItsRangeAndTheMessageNamesTheOption() {
    assertThat(BoundDeadLetters.create().maxPayloadBytes(), is(16_384));
    assertThat(BoundDeadLetters.create().withMaxPayloadBytes(256).maxPayloadBytes(), is(256));
    assertThat(
        BoundDeadLetters.create().withMaxPayloadBytes(128 * 1024).maxPayloadBytes(), is(131_072));
    for (int bad : new int[] {-1, 0, 255, 128 * 1024 + 1}) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> BoundDeadLetters.create().withMaxPayloadBytes(bad));
      assertThat(e.getMessage(), containsString("--maxDeadLetterPayloadBytes"));
      assertThat(e.getMessage(), containsString("got " + bad));
    }
  }
}
