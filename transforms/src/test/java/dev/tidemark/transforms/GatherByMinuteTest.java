package dev.tidemark.transforms;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.GroupByKey;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithKeys;
import org.apache.beam.sdk.transforms.windowing.AfterPane;
import org.apache.beam.sdk.transforms.windowing.AfterWatermark;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.Rule;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * Gathered elements keep their timestamps and their lateness downstream: an on-time element stays
 * on time (its window's on-time pane holds it), a late one stays late, and nothing is lost.
 */
@RunWith(JUnit4.class)
public class GatherByMinuteTest {
  @Rule public final transient TestPipeline pipeline = TestPipeline.create();

  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private static TimestampedValue<String> at(String value, long seconds) {
    return TimestampedValue.of(value, T0.plus(Duration.standardSeconds(seconds)));
  }

  @Test
  public void elementsKeepTheirTimestampsAndTheirPanes() {
    TestStream<String> stream =
        TestStream.create(StringUtf8Coder.of())
            // Out of order within a minute and across two keys and two minutes.
            .addElements(at("a:3", 50), at("b:1", 5), at("a:1", 10), at("a:4", 70))
            .addElements(at("a:2", 20))
            .advanceWatermarkTo(T0.plus(Duration.standardSeconds(65)))
            .addElements(at("b:2", 80))
            .advanceWatermarkTo(T0.plus(Duration.standardMinutes(3)))
            // Late for the first minute's window: still late after the gathering.
            .addElements(at("a:late", 30))
            .advanceWatermarkToInfinity();
    PCollection<String> gathered =
        pipeline
            .apply(stream)
            .apply(GatherByMinute.by((String s) -> s.substring(0, 1)))
            .apply(ParDo.of(new WithTimestampFn()))
            .apply(
                "ByMinuteOfEventTime",
                Window.<String>into(FixedWindows.of(Duration.standardMinutes(1)))
                    .triggering(
                        AfterWatermark.pastEndOfWindow()
                            .withLateFirings(AfterPane.elementCountAtLeast(1)))
                    .withAllowedLateness(Duration.standardMinutes(10))
                    .discardingFiredPanes());
    // Each pane of the windows downstream, as "minute timing [elements]".
    PCollection<String> panes =
        gathered
            .apply(WithKeys.of("all"))
            .apply(GroupByKey.create())
            .apply(ParDo.of(new PaneFn()))
            .apply("Unwindow", Window.into(new GlobalWindows()));
    PAssert.that(panes)
        .containsInAnyOrder(
            "0 ON_TIME [a:1@10, a:2@20, a:3@50, b:1@5]",
            "1 ON_TIME [a:4@70, b:2@80]",
            "0 LATE [a:late@30]");
    pipeline.run().waitUntilFinish();
  }

  /** A pane as "minute timing [sorted elements]". */
  static final class PaneFn extends DoFn<KV<String, Iterable<String>>, String> {
    @ProcessElement
    public void process(
        @Element KV<String, Iterable<String>> pane,
        BoundedWindow window,
        PaneInfo info,
        OutputReceiver<String> out) {
      List<String> elements = new ArrayList<>();
      pane.getValue().forEach(elements::add);
      Collections.sort(elements);
      long minute = (((IntervalWindow) window).start().getMillis() - T0.getMillis()) / 60_000;
      out.output(minute + " " + info.getTiming() + " " + elements);
    }
  }

  /** The element with its timestamp's second. */
  static final class WithTimestampFn extends DoFn<String, String> {
    @ProcessElement
    public void process(
        @Element String element, @Timestamp Instant timestamp, OutputReceiver<String> out) {
      out.output(element + "@" + (timestamp.getMillis() - T0.getMillis()) / 1000);
    }
  }
}
