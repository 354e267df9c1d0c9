package dev.tidemark.transforms;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.DuplicateRecord;
import dev.tidemark.transforms.values.Label;
import java.util.List;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.values.TimestampedValue;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.Rule;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * Labels are deduplicated on their own identity as events are: the first copy passes, a repeat is a
 * duplicate, a repeat with other content a conflict, and the counters are the labels' own.
 */
@RunWith(JUnit4.class)
public class DeduplicateLabelsTest {
  @Rule public final transient TestPipeline p = TestPipeline.create();

  private static Instant hours(long hours) {
    return new Instant(hours * 3_600_000);
  }

  private static TimestampedValue<Label> label(String id, Instant time, String value) {
    return TimestampedValue.of(
        new Label("/labels", id, time, "/pos", "txn-" + id, "acct-1", hours(0), value), time);
  }

  /** Each copy in a bundle of its own, in this order: the first copy is the first to arrive. */
  @Test
  public void aStreamPassesTheFirstCopyOfEachLabel() {
    TestStream<Label> stream =
        TestStream.create(Label.LabelCoder.of())
            .addElements(label("a", hours(1), "fraud"))
            .advanceWatermarkTo(hours(1))
            .addElements(label("b", hours(1), "legit"))
            .advanceWatermarkTo(hours(2))
            .addElements(label("a", hours(1), "fraud"))
            .advanceWatermarkTo(hours(3))
            // Other content under a's identity: a conflict, never passed on.
            .addElements(label("a", hours(1), "legit"))
            .advanceWatermarkToInfinity();
    DeduplicateLabels.Result result = p.apply(stream).apply(DeduplicateLabels.create());
    PAssert.that(
            result
                .labels()
                .apply(
                    "Ids",
                    MapElements.into(TypeDescriptors.strings()).via(l -> l.id() + " " + l.value())))
        .containsInAnyOrder("a fraud", "b legit");
    PAssert.that(
            result
                .duplicates()
                .apply(
                    "Copies",
                    MapElements.into(TypeDescriptors.strings())
                        .via((DuplicateRecord d) -> d.id() + " identical=" + d.identicalPayload())))
        .containsInAnyOrder("a identical=true", "a identical=false");
    PipelineResult run = p.run();
    run.waitUntilFinish();
    assertThat(TestEvents.counter(run, "labels.unique"), is(2L));
    assertThat(TestEvents.counter(run, "labels.duplicates"), is(2L));
    assertThat(TestEvents.counter(run, "labels.conflicts"), is(1L));
    assertThat(
        "events' counters untouched", TestEvents.counter(run, TidemarkMetrics.UNIQUE), is(0L));
  }

  /** Which copy of a bounded input comes first is the runner's choice; one per identity passes. */
  @Test
  public void aBoundedInputIsDeduplicatedAsAWhole() {
    List<TimestampedValue<Label>> copies =
        List.of(
            label("a", hours(1), "fraud"),
            label("b", hours(1), "legit"),
            label("a", hours(30), "fraud"),
            label("a", hours(1), "legit"));
    DeduplicateLabels.Result result =
        p.apply(Create.timestamped(copies).withCoder(Label.LabelCoder.of()))
            .apply(DeduplicateLabels.create());
    PAssert.that(
            result
                .labels()
                .apply("Ids", MapElements.into(TypeDescriptors.strings()).via(Label::id)))
        .containsInAnyOrder("a", "b");
    PAssert.that(
            result
                .duplicates()
                .apply(
                    "CopyIds",
                    MapElements.into(TypeDescriptors.strings()).via((DuplicateRecord d) -> d.id())))
        .containsInAnyOrder("a", "a");
    PipelineResult run = p.run();
    run.waitUntilFinish();
    assertThat(TestEvents.counter(run, "labels.unique"), is(2L));
    assertThat(TestEvents.counter(run, "labels.duplicates"), is(2L));
  }

  @Test
  public void aLabelAfterTheHorizonPassesAgain() {
    TestStream<Label> stream =
        TestStream.create(Label.LabelCoder.of())
            .addElements(label("a", hours(1), "fraud"))
            .advanceWatermarkTo(hours(30))
            .addElements(label("a", hours(30), "fraud"))
            .advanceWatermarkToInfinity();
    DeduplicateLabels.Result result =
        p.apply(stream).apply(DeduplicateLabels.create().withHorizon(Duration.standardHours(24)));
    PAssert.that(
            result.labels().apply(MapElements.into(TypeDescriptors.strings()).via(l -> l.id())))
        .containsInAnyOrder("a", "a");
    PAssert.that(result.duplicates()).empty();
    p.run();
  }
}
