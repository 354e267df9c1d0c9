package dev.tidemark.transforms;

import static dev.tidemark.transforms.TestEvents.minutes;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.PaymentFeatures;
import java.util.List;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.apache.beam.sdk.transforms.windowing.PaneInfo;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TimestampedValue;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.Rule;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * {@link AnnotateCorrections}: each edition against the latest earlier version seen, in arrival
 * order and out of it.
 */
@RunWith(JUnit4.class)
public class AnnotateCorrectionsTest {
  @Rule public final transient TestPipeline p = TestPipeline.create();

  private static final Instant START = minutes(0);
  private static final Instant END = minutes(5);
  private static final Decision.ModelRef MODEL = new Decision.ModelRef("m", "1", "XGBoost");

  /** Edition {@code version} of acct-1's decision in window [0, 5 min), scored {@code score}. */
  private static TimestampedValue<Decision> edition(long version, double score) {
    return edition(START, version, score);
  }

  /** Edition {@code version} of acct-1's decision in the 5-minute window from {@code start}. */
  private static TimestampedValue<Decision> edition(Instant start, long version, double score) {
    Instant end = start.plus(Duration.standardMinutes(5));
    Features features = PaymentFeatures.of(version + 1, 100, 100, 1, 1, minutes(1), minutes(1));
    Decision decision =
        Decision.unscored(
                "acct-1",
                start,
                end,
                version == 0 ? "ON_TIME" : "LATE",
                version,
                version == 0,
                false,
                features,
                start)
            .withScore(score, score >= 0.5 ? "review" : "allow", MODEL, start);
    return TimestampedValue.of(decision, end.minus(Duration.millis(1)));
  }

  private PCollection<String> annotate(TestStream<Decision> editions) {
    return p.apply(editions)
        .apply(Window.into(FixedWindows.of(Duration.standardMinutes(5))))
        .apply(AnnotateCorrections.create())
        .apply(
            MapElements.into(TypeDescriptors.strings())
                .via(
                    d ->
                        d.version()
                            + " "
                            + d.correction().jsonName()
                            + (d.supersedes() == null
                                ? ""
                                : " after "
                                    + d.supersedes().version()
                                    + " "
                                    + d.supersedes().decision()
                                    + " "
                                    + d.supersedes().score())));
  }

  private static TestStream.Builder<Decision> stream() {
    return TestStream.create(Decision.DecisionCoder.of());
  }

  @Test
  public void eachEditionSaysWhatItChangesInVersionOrder() {
    PCollection<String> annotated =
        annotate(
            stream()
                .addElements(edition(0, 0.1))
                .addElements(edition(1, 0.2))
                .addElements(edition(2, 0.9))
                .addElements(edition(3, 0.3))
                .advanceWatermarkToInfinity());
    PAssert.that(annotated)
        .containsInAnyOrder(
            List.of(
                "0 none",
                "1 refined after 0 allow 0.1",
                "2 reversed after 1 allow 0.2",
                "3 reversed after 2 review 0.9"));
    p.run().waitUntilFinish();
  }

  @Test
  public void anOlderEditionArrivingLateIsComparedWithTheVersionBelowIt() {
    PCollection<String> annotated =
        annotate(
            stream()
                .addElements(edition(0, 0.1))
                .addElements(edition(2, 0.9))
                .addElements(edition(1, 0.7))
                .advanceWatermarkToInfinity());
    PAssert.that(annotated)
        .containsInAnyOrder(
            List.of("0 none", "2 reversed after 0 allow 0.1", "1 reversed after 0 allow 0.1"));
    p.run().waitUntilFinish();
  }

  /** Re-emits each edition in its window with the pane its version names, as a fired pane is. */
  static final class AsFiredPaneFn extends DoFn<Decision, Decision> {
    @ProcessElement
    public void processElement(
        @Element Decision decision,
        @Timestamp Instant timestamp,
        BoundedWindow window,
        OutputReceiver<Decision> out) {
      PaneInfo pane =
          PaneInfo.createPane(
              decision.version() == 0,
              false,
              decision.version() == 0 ? PaneInfo.Timing.ON_TIME : PaneInfo.Timing.LATE,
              decision.version(),
              decision.version());
      out.outputWindowedValue(decision, timestamp, List.of(window), pane);
    }
  }

  /** What a step after the annotation sees of each decision: window, pane and timestamp. */
  static final class DescribeFn extends DoFn<Decision, String> {
    @ProcessElement
    public void processElement(
        @Element Decision decision,
        @Timestamp Instant timestamp,
        BoundedWindow window,
        PaneInfo pane,
        OutputReceiver<String> out) {
      out.output(
          decision.version()
              + " "
              + window
              + " "
              + pane.getTiming()
              + " "
              + pane.getIndex()
              + " "
              + pane.isFirst()
              + " "
              + timestamp);
    }
  }

  @Test
  public void eachDecisionKeepsItsWindowPaneAndTimestamp() {
    PCollection<String> seen =
        p.apply(
                stream()
                    .addElements(edition(0, 0.1))
                    .addElements(edition(1, 0.9))
                    .advanceWatermarkToInfinity())
            .apply(
                Window.<Decision>into(FixedWindows.of(Duration.standardMinutes(5)))
                    .withAllowedLateness(Duration.standardHours(1))
                    .accumulatingFiredPanes())
            .apply("AsFiredPanes", ParDo.of(new AsFiredPaneFn()))
            .apply(AnnotateCorrections.create())
            .apply("Describe", ParDo.of(new DescribeFn()));
    String window = new IntervalWindow(START, END).toString();
    String timestamp = END.minus(Duration.millis(1)).toString();
    PAssert.that(seen)
        .containsInAnyOrder(
            "0 " + window + " ON_TIME 0 true " + timestamp,
            "1 " + window + " LATE 1 false " + timestamp);
    p.run().waitUntilFinish();
  }

  @Test
  public void aWindowIsForgottenOnceItExpiredAndNotBefore() {
    // The later window's first edition comes first, so the earlier window's expiry is the sooner.
    Instant later = END;
    Duration lateness = Duration.standardHours(1);
    PCollection<Decision> annotated =
        p.apply(
                stream()
                    .addElements(edition(later, 0, 0.1))
                    .addElements(edition(0, 0.1))
                    // Past the first window's end plus the lateness, before the second's.
                    .advanceWatermarkTo(END.plus(lateness))
                    .addElements(edition(1, 0.2))
                    .addElements(edition(later, 1, 0.2))
                    .advanceWatermarkToInfinity())
            .apply(
                Window.<Decision>into(FixedWindows.of(Duration.standardMinutes(5)))
                    .withAllowedLateness(lateness)
                    .accumulatingFiredPanes())
            .apply(AnnotateCorrections.create());
    PAssert.that(
            annotated.apply(
                MapElements.into(TypeDescriptors.strings())
                    .via(
                        d ->
                            d.windowStart() + " " + d.version() + " " + d.correction().jsonName())))
        .containsInAnyOrder(
            START + " 0 none",
            later + " 0 none",
            // The first window expired: its state is gone, so edition 1 is judged a first one.
            START + " 1 none",
            later + " 1 refined");
    PipelineResult result = p.run();
    result.waitUntilFinish();
    // Both windows opened, and both expired at the end of the input.
    assertThat(TestEvents.counter(result, TidemarkMetrics.OPEN_WINDOWS), is(0L));
  }
}
