package dev.tidemark.transforms;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import dev.tidemark.transforms.TestEvents.Account;
import dev.tidemark.transforms.values.Event;
import java.util.Map;
import java.util.TreeMap;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Duration;
import org.junit.Rule;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** The pane numbering and timing of sliding windows built from slices (docs/sliding-windows.md). */
@RunWith(JUnit4.class)
public class SlicedPanesTest {
  @Rule public final transient TestPipeline p = TestPipeline.create();

  /**
   * The panes the docs promise: a window first reached after the watermark passed its end fires a
   * late pane of index 0 and no on-time pane; with zero allowed lateness the on-time pane is the
   * last; without early firings a window's first pane is its on-time one.
   */
  @Test
  public void panesAreNumberedAndTimedAsDocumented() {
    String run = "panes";
    SlicedWindowsEquivalenceTest.PANES.remove(run);
    Event alice = TestEvents.payment(Account.ALICE, "a", 100, "m", "GB", TestEvents.minutes(1));
    Event bob = TestEvents.payment(Account.BOB, "b", 200, "m", "GB", TestEvents.minutes(5.5));
    PCollection<Event> events =
        p.apply(
            TestStream.create(Event.EventCoder.of())
                .addElements(TimestampedValue.of(alice, alice.eventTime()))
                .advanceWatermarkTo(TestEvents.minutes(6.01))
                .addElements(TimestampedValue.of(bob, bob.eventTime()))
                .advanceWatermarkToInfinity());
    ComputeFeatures sliding =
        ComputeFeatures.of(Duration.standardMinutes(5), Duration.standardMinutes(1))
            .withoutEarlyFirings();
    events
        .apply("Lateness", sliding.withAllowedLateness(Duration.standardMinutes(30)))
        .features()
        .apply(
            "RecordLateness",
            ParDo.of(new SlicedWindowsEquivalenceTest.RecordPaneFn(run, "lateness")));
    events
        .apply("NoLateness", sliding.withAllowedLateness(Duration.ZERO))
        .features()
        .apply(
            "RecordNoLateness",
            ParDo.of(new SlicedWindowsEquivalenceTest.RecordPaneFn(run, "none")));
    p.run().waitUntilFinish();

    Map<String, TreeMap<Long, String>> panes = SlicedWindowsEquivalenceTest.PANES.get(run);
    String lateWindow =
        "|" + Account.BOB.id + "|[2026-01-01T00:01:00.000Z..2026-01-01T00:06:00.000Z)";
    TreeMap<Long, String> late = panes.get("lateness" + lateWindow);
    assertThat(late.toString(), late.size(), is(1));
    assertThat(late.toString(), late.get(0L).startsWith("LATE|first|notLast "), is(true));
    String onTimeWindow =
        "|" + Account.ALICE.id + "|[2026-01-01T00:00:00.000Z..2026-01-01T00:05:00.000Z)";
    TreeMap<Long, String> onTime = panes.get("lateness" + onTimeWindow);
    assertThat(onTime.toString(), onTime.size(), is(1));
    assertThat(onTime.toString(), onTime.get(0L).startsWith("ON_TIME|first|notLast "), is(true));
    TreeMap<Long, String> last = panes.get("none" + onTimeWindow);
    assertThat(last.toString(), last.get(0L).startsWith("ON_TIME|first|last "), is(true));
    // Without lateness Bob's event is too late for the windows that ended.
    assertThat(panes.containsKey("none" + lateWindow), is(false));
  }
}
