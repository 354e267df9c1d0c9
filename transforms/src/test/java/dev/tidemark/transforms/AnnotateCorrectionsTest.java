package dev.tidemark.transforms;

import static dev.tidemark.transforms.TestEvents.minutes;

import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.PaymentFeatures;
import java.util.List;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
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
    Features features = PaymentFeatures.of(version + 1, 100, 100, 1, 1, minutes(1), minutes(1));
    Decision decision =
        Decision.unscored(
                "acct-1",
                START,
                END,
                version == 0 ? "ON_TIME" : "LATE",
                version,
                version == 0,
                false,
                features,
                START)
            .withScore(score, score >= 0.5 ? "review" : "allow", MODEL, START);
    return TimestampedValue.of(decision, END.minus(Duration.millis(1)));
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
}
