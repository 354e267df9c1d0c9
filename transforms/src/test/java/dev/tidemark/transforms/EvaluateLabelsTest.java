package dev.tidemark.transforms;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Evaluation;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.Label;
import dev.tidemark.transforms.values.PaymentFeatures;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.testing.CoderProperties;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.Rule;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * Labels judged against the editions in force, in streams and in bounded input: windows of two
 * minutes every minute, ten minutes of allowed lateness, a one-hour horizon. An event at 1 min 30 s
 * is in the windows starting at 0 and at 1 min.
 */
@RunWith(JUnit4.class)
public class EvaluateLabelsTest {
  @Rule public final transient TestPipeline p = TestPipeline.create();

  private static final Duration SIZE = Duration.standardMinutes(2);
  private static final Duration PERIOD = Duration.standardMinutes(1);
  private static final Duration LATENESS = Duration.standardMinutes(10);
  private static final Duration HORIZON = Duration.standardHours(1);
  private static final Decision.ModelRef MODEL = new Decision.ModelRef("m", "1", "XGBoost");
  private static final Decision.ModelRef SHADOW = new Decision.ModelRef("s", "2", "OnnxRuntime");
  private static final Instant EVENT = seconds(90);

  private static Instant seconds(long seconds) {
    return new Instant(seconds * 1000);
  }

  private static Instant minutes(long minutes) {
    return seconds(minutes * 60);
  }

  /** An edition of {@code key}'s decision for the window starting at {@code startMinute}. */
  private static TimestampedValue<Decision> edition(
      String key, long startMinute, String timing, long version, double score) {
    Instant start = minutes(startMinute);
    Instant end = start.plus(SIZE);
    Features features = PaymentFeatures.of(version + 1, 100, 100, 1, 1, start, start);
    Decision decision =
        Decision.unscored(key, start, end, timing, version, version == 0, false, features, end)
            .withScore(score, score >= 0.5 ? "review" : "allow", MODEL, end);
    return TimestampedValue.of(decision, end.minus(Duration.millis(1)));
  }

  private static TimestampedValue<Label> label(
      String id, String key, Instant eventTime, Instant time, String value) {
    return TimestampedValue.of(
        new Label("/labels", id, time, "/pos", "txn-" + id, key, eventTime, value), time);
  }

  private EvaluateLabels.Result evaluate(
      PCollection<Decision> decisions, PCollection<Label> labels) {
    return labels.apply(
        EvaluateLabels.of(decisions, SIZE, PERIOD, LATENESS)
            .withHorizon(HORIZON)
            .withPositiveValues(Set.of("fraud")));
  }

  /** Each evaluation as text, with the moment it was emitted at. */
  static final class DescribeFn extends DoFn<Evaluation, String> {
    @ProcessElement
    public void processElement(
        @Element Evaluation e, @Timestamp Instant timestamp, OutputReceiver<String> out) {
      Evaluation.Edition edition = e.edition();
      out.output(
          String.format(
              "%s %s@%d %s v%d %.2f %s %s %s delay=%ds at=%ds",
              e.label().id(),
              e.label().key(),
              edition.windowStart().getMillis() / 60_000,
              edition.paneTiming(),
              edition.version(),
              edition.score(),
              edition.decision(),
              e.positive() ? "positive" : "negative",
              edition.modelName() + ":" + edition.modelVersion(),
              e.labelDelayMillis() / 1000,
              timestamp.getMillis() / 1000));
    }
  }

  static final class LabelIdFn extends DoFn<Label, String> {
    @ProcessElement
    public void processElement(@Element Label label, OutputReceiver<String> out) {
      out.output(label.id());
    }
  }

  private static PCollection<String> described(EvaluateLabels.Result result) {
    return result.evaluations().apply("Describe", ParDo.of(new DescribeFn()));
  }

  private static PCollection<String> unmatchedIds(EvaluateLabels.Result result) {
    return result.unmatched().apply("UnmatchedIds", ParDo.of(new LabelIdFn()));
  }

  @Test
  public void aLabelIsJudgedByTheOnTimeEditionOfEachWindowThatHeldItsEvent() {
    TestStream<Decision> decisions =
        TestStream.create(Decision.DecisionCoder.of())
            .addElements(
                edition("acct-1", 0, "EARLY", 0, 0.9),
                edition("acct-1", 0, "ON_TIME", 1, 0.2),
                edition("acct-1", 1, "ON_TIME", 0, 0.7))
            .advanceWatermarkTo(minutes(20))
            // A late edition after the on-time one changes nothing: the on-time one was acted on.
            .addElements(edition("acct-1", 0, "LATE", 2, 0.95))
            .advanceWatermarkToInfinity();
    TestStream<Label> labels =
        TestStream.create(Label.LabelCoder.of())
            .advanceWatermarkTo(minutes(20))
            .addElements(label("a", "acct-1", EVENT, minutes(30), "fraud"))
            .advanceWatermarkToInfinity();
    EvaluateLabels.Result result = evaluate(p.apply("Decisions", decisions), p.apply(labels));
    PAssert.that(described(result))
        .containsInAnyOrder(
            "a acct-1@0 ON_TIME v1 0.20 allow positive m:1 delay=1710s at=1800s",
            "a acct-1@1 ON_TIME v0 0.70 review positive m:1 delay=1710s at=1800s");
    PAssert.that(unmatchedIds(result)).empty();
    assertCounters(p.run(), 2, 1, 0, 0);
  }

  @Test
  public void aWindowWithoutAnOnTimePaneIsJudgedByItsFirstLateEdition() {
    TestStream<Decision> decisions =
        TestStream.create(Decision.DecisionCoder.of())
            .advanceWatermarkTo(minutes(4))
            .addElements(edition("acct-1", 0, "LATE", 1, 0.8))
            .addElements(edition("acct-1", 0, "LATE", 0, 0.6))
            .advanceWatermarkToInfinity();
    TestStream<Label> labels =
        TestStream.create(Label.LabelCoder.of())
            .addElements(label("b", "acct-1", seconds(30), minutes(60), "legit"))
            .advanceWatermarkToInfinity();
    EvaluateLabels.Result result = evaluate(p.apply("Decisions", decisions), p.apply(labels));
    PAssert.that(described(result))
        .containsInAnyOrder("b acct-1@0 LATE v0 0.60 review negative m:1 delay=3570s at=3600s");
    PAssert.that(unmatchedIds(result)).empty();
    p.run();
  }

  /**
   * A replay can bring a label before its event's windows have fired: it waits until they can fire
   * no more (the last window's end plus the lateness), and is emitted then.
   */
  @Test
  public void aLabelBeforeItsDecisionsWaitsUntilTheirWindowsAreFinal() {
    TestStream<Decision> decisions =
        TestStream.create(Decision.DecisionCoder.of())
            .advanceWatermarkTo(seconds(100))
            .addElements(edition("acct-1", 0, "ON_TIME", 0, 0.3))
            .addElements(edition("acct-1", 1, "ON_TIME", 0, 0.4))
            .advanceWatermarkToInfinity();
    TestStream<Label> labels =
        TestStream.create(Label.LabelCoder.of())
            .addElements(label("c", "acct-1", EVENT, seconds(100), "fraud"))
            .advanceWatermarkToInfinity();
    EvaluateLabels.Result result = evaluate(p.apply("Decisions", decisions), p.apply(labels));
    // The last window ends at 3 min; ten minutes of lateness: judged at 13 min.
    PAssert.that(described(result))
        .containsInAnyOrder(
            "c acct-1@0 ON_TIME v0 0.30 allow positive m:1 delay=10s at=780s",
            "c acct-1@1 ON_TIME v0 0.40 allow positive m:1 delay=10s at=780s");
    p.run();
  }

  @Test
  public void labelsWithNothingInForceAreUnmatchedAndCounted() {
    TestStream<Decision> decisions =
        TestStream.create(Decision.DecisionCoder.of())
            .addElements(
                edition("acct-1", 0, "EARLY", 0, 0.9), edition("acct-1", 1, "EARLY", 0, 0.9))
            .addElements(edition("acct-3", 0, "ON_TIME", 0, 0.1))
            .advanceWatermarkToInfinity();
    TestStream<Label> labels =
        TestStream.create(Label.LabelCoder.of())
            .addElements(
                // Only early editions: nothing was acted on.
                label("early", "acct-1", EVENT, minutes(30), "fraud"),
                // A key the run never decided.
                label("unknown", "acct-2", EVENT, minutes(30), "fraud"),
                // No key: cannot be placed.
                label("keyless", null, EVENT, minutes(30), "fraud"),
                // The horizon (an hour after the window's end at 2 min) has passed.
                label("expired", "acct-3", seconds(30), minutes(63), "fraud"),
                // Within it.
                label("kept", "acct-3", seconds(30), minutes(61), "fraud"))
            .advanceWatermarkToInfinity();
    EvaluateLabels.Result result = evaluate(p.apply("Decisions", decisions), p.apply(labels));
    PAssert.that(unmatchedIds(result)).containsInAnyOrder("early", "unknown", "keyless", "expired");
    PAssert.that(described(result))
        .containsInAnyOrder(
            "kept acct-3@0 ON_TIME v0 0.10 allow positive m:1 delay=3630s at=3660s");
    assertCounters(p.run(), 1, 1, 3, 1);
  }

  @Test
  public void boundedInputGivesTheSameJudgements() {
    List<TimestampedValue<Decision>> editions = new ArrayList<>();
    editions.add(edition("acct-1", 0, "EARLY", 0, 0.9));
    editions.add(edition("acct-1", 0, "ON_TIME", 1, 0.2));
    editions.add(edition("acct-1", 0, "LATE", 2, 0.95));
    editions.add(edition("acct-1", 1, "LATE", 1, 0.8));
    editions.add(edition("acct-1", 1, "LATE", 0, 0.6));
    PCollection<Decision> decisions =
        p.apply("Decisions", Create.timestamped(editions).withCoder(Decision.DecisionCoder.of()));
    PCollection<Label> labels =
        p.apply(
            "Labels",
            Create.timestamped(
                    List.of(
                        label("d", "acct-1", EVENT, seconds(100), "fraud"),
                        label("e", "acct-9", EVENT, minutes(5), "fraud")))
                .withCoder(Label.LabelCoder.of()));
    EvaluateLabels.Result result = evaluate(decisions, labels);
    PAssert.that(described(result))
        .containsInAnyOrder(
            "d acct-1@0 ON_TIME v1 0.20 allow positive m:1 delay=10s at=780s",
            "d acct-1@1 LATE v0 0.60 review positive m:1 delay=10s at=780s");
    PAssert.that(unmatchedIds(result)).containsInAnyOrder("e");
    p.run();
  }

  @Test
  public void theEditionInForceIsOnTimeElseTheFirstLate() {
    Evaluation.Edition onTime =
        Evaluation.Edition.of(edition("k", 0, "ON_TIME", 3, 0.1).getValue());
    Evaluation.Edition late0 = Evaluation.Edition.of(edition("k", 0, "LATE", 0, 0.2).getValue());
    Evaluation.Edition late4 = Evaluation.Edition.of(edition("k", 0, "LATE", 4, 0.3).getValue());
    assertThat(Evaluation.Edition.inForce(late0, onTime), is(onTime));
    assertThat(Evaluation.Edition.inForce(onTime, late4), is(onTime));
    assertThat(Evaluation.Edition.inForce(late4, late0), is(late0));
    assertThat(Evaluation.Edition.counts("EARLY"), is(false));
    IllegalArgumentException unscored =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                Evaluation.Edition.of(
                    Decision.unscored(
                        "k",
                        minutes(0),
                        minutes(2),
                        "ON_TIME",
                        0,
                        true,
                        false,
                        PaymentFeatures.of(1, 1, 1, 1, 1, minutes(0), minutes(0)),
                        minutes(2))));
    assertThat(unscored.getMessage().contains("not scored"), is(true));
    assertThrows(
        IllegalArgumentException.class,
        () ->
            EvaluateLabels.of(
                    p.apply(Create.empty(Decision.DecisionCoder.of())), SIZE, PERIOD, LATENESS)
                .withHorizon(LATENESS));
    p.enableAbandonedNodeEnforcement(false);
  }

  @Test
  public void labelsAndEvaluationsRoundTripTheirCoders() throws Exception {
    Label keyed = label("f", "acct-1", EVENT, minutes(5), "fraud").getValue();
    Label bare = new Label("/l", "g", minutes(5), "/pos", "txn-g", null, null, "legit");
    CoderProperties.coderDecodeEncodeEqual(Label.LabelCoder.of(), keyed);
    CoderProperties.coderDecodeEncodeEqual(Label.LabelCoder.of(), bare);
    CoderProperties.coderDeterministic(Label.LabelCoder.of(), keyed, keyed);
    Decision shadowed =
        edition("acct-1", 0, "ON_TIME", 0, 0.7)
            .getValue()
            .withShadow(new Decision.Shadow(0.4, "allow", SHADOW));
    Evaluation evaluation = new Evaluation(keyed, true, Evaluation.Edition.of(shadowed));
    CoderProperties.coderDecodeEncodeEqual(Evaluation.EvaluationCoder.of(), evaluation);
    CoderProperties.coderDecodeEncodeEqual(
        Evaluation.EvaluationCoder.of(),
        new Evaluation(
            keyed, false, Evaluation.Edition.of(edition("acct-1", 1, "LATE", 2, 0.1).getValue())));
    p.enableAbandonedNodeEnforcement(false);
  }

  /** Checks the counters the step exports, as a run's summary reads them. */
  private static void assertCounters(
      PipelineResult result,
      long evaluations,
      long matched,
      long unmatched,
      long withoutKeyOrTime) {
    result.waitUntilFinish();
    assertThat(TestEvents.counter(result, EvaluateLabels.EVALUATIONS), is(evaluations));
    assertThat(TestEvents.counter(result, EvaluateLabels.UNMATCHED), is(unmatched));
    assertThat(
        TestEvents.counter(result, EvaluateLabels.WITHOUT_KEY_OR_TIME), is(withoutKeyOrTime));
    assertThat(TestEvents.counter(result, EvaluateLabels.MATCHED), is(matched));
  }
}
