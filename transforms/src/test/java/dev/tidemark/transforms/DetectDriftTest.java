package dev.tidemark.transforms;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.DriftAlarm;
import dev.tidemark.transforms.values.DriftReference;
import dev.tidemark.transforms.values.Evaluation;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.Label;
import dev.tidemark.transforms.values.PaymentFeatures;
import dev.tidemark.transforms.values.ScoreReference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.testing.CoderProperties;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.testing.TestStream;
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
 * CUSUM drift alarms on TestStreams: one on-time decision a minute, a reference mean of 0.1, an
 * allowance of 0.05 and a threshold of 1, so each decision scored 0.5 adds 0.35 to the rise's sum
 * and the third in a row raises an alarm.
 */
@RunWith(JUnit4.class)
public class DetectDriftTest {
  @Rule public final transient TestPipeline p = TestPipeline.create();

  private static final Decision.ModelRef MODEL = new Decision.ModelRef("m", "1", "XGBoost");
  private static final Decision.ModelRef SHADOW = new Decision.ModelRef("s", "2", "OnnxRuntime");
  private static final ScoreReference REFERENCE =
      new ScoreReference(List.of(90L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 10L), 0.1, 100);
  private static final Map<String, DriftReference> REFERENCES =
      Map.of(
          "m:1", new DriftReference(REFERENCE, null),
          "s:2", new DriftReference(REFERENCE, null));

  private static Instant minutes(long minutes) {
    return new Instant(minutes * 60_000);
  }

  /** The on-time decision of the window ending at {@code minute}, with a shadow score maybe. */
  private static Decision decision(long minute, double score, Double shadowScore) {
    Instant end = minutes(minute);
    Instant start = end.minus(Duration.standardMinutes(5));
    Features features = PaymentFeatures.of(1, 100, 100, 1, 1, start, start);
    Decision decision =
        Decision.unscored("acct-" + minute, start, end, "ON_TIME", 0, true, true, features, end)
            .withScore(score, score >= 0.5 ? "review" : "allow", MODEL, end);
    if (shadowScore != null) {
      decision =
          decision.withShadow(
              new Decision.Shadow(shadowScore, shadowScore >= 0.5 ? "review" : "allow", SHADOW));
    }
    return decision;
  }

  private static TimestampedValue<Decision> stamped(Decision decision) {
    return TimestampedValue.of(decision, decision.windowEnd().minus(Duration.millis(1)));
  }

  /** Ten decisions at the reference (minutes 0 to 9), then five scored 0.5 (minutes 10 to 14). */
  private static List<TimestampedValue<Decision>> shiftAtMinuteTen(boolean shadowShifts) {
    List<TimestampedValue<Decision>> decisions = new ArrayList<>();
    for (int minute = 0; minute < 15; minute++) {
      double shifted = minute < 10 ? 0.1 : 0.5;
      decisions.add(
          stamped(decision(minute, shadowShifts ? 0.1 : shifted, shadowShifts ? shifted : 0.1)));
    }
    return decisions;
  }

  /** A stream of {@code values}, one bundle each, in list order, then the watermark to the end. */
  private static <T> TestStream<T> streamOf(
      org.apache.beam.sdk.coders.Coder<T> coder, List<TimestampedValue<T>> values) {
    TestStream.Builder<T> stream = TestStream.create(coder);
    for (TimestampedValue<T> value : values) {
      stream = stream.addElements(value);
    }
    return stream.advanceWatermarkToInfinity();
  }

  /** Each alarm as text. */
  static final class DescribeFn extends DoFn<DriftAlarm, String> {
    @ProcessElement
    public void processElement(@Element DriftAlarm a, OutputReceiver<String> out) {
      out.output(
          String.format(
              Locale.ROOT,
              "%s %s %s %s at=%dmin S=%.2f>%s n=%d ref=%.2f obs=%.4f",
              a.role(),
              a.model(),
              a.kind(),
              a.direction(),
              a.at().plus(Duration.millis(1)).getMillis() / 60_000,
              a.statistic(),
              a.threshold(),
              a.observations(),
              a.referenceMean(),
              a.observedMean()));
    }
  }

  private static PCollection<String> described(PCollection<DriftAlarm> alarms) {
    return alarms.apply("Describe", ParDo.of(new DescribeFn()));
  }

  private static DetectDrift detect() {
    return DetectDrift.of(REFERENCES, "review").withScoreTest(0.05, 1.0);
  }

  @Test
  public void aRiseOfTheMeanScoreAlarmsOnceItHasAccumulatedThenResets() {
    // Arrival order reversed: the step applies them in event-time order all the same.
    List<TimestampedValue<Decision>> decisions = shiftAtMinuteTen(false);
    Collections.reverse(decisions);
    TestStream<Decision> stream = streamOf(Decision.DecisionCoder.of(), decisions);

    PCollection<DriftAlarm> alarms = p.apply(stream).apply(detect());

    // 0.35 a shifted decision: 1.05 > 1 at the third (minute 12), after 13 observations of mean
    // (10 * 0.1 + 3 * 0.5) / 13; then the sums restart, and two more (0.70) stay below.
    PAssert.that(described(alarms))
        .containsInAnyOrder("deciding m:1 score up at=12min S=1.05>1.0 n=13 ref=0.10 obs=0.1923");
    PipelineResult result = p.run();
    result.waitUntilFinish();
    assertThat(
        TestEvents.counter(result, TidemarkMetrics.DRIFT_ALARMS_PREFIX + "deciding/m:1/score"),
        is(1L));
  }

  @Test
  public void theShadowModelIsTestedOnItsOwnScores() {
    List<TimestampedValue<Decision>> decisions = shiftAtMinuteTen(true);
    TestStream.Builder<Decision> stream = TestStream.create(Decision.DecisionCoder.of());
    for (TimestampedValue<Decision> decision : decisions) {
      stream = stream.addElements(decision).advanceWatermarkTo(decision.getTimestamp());
    }

    PCollection<DriftAlarm> alarms = p.apply(stream.advanceWatermarkToInfinity()).apply(detect());

    PAssert.that(described(alarms))
        .containsInAnyOrder("shadow s:2 score up at=12min S=1.05>1.0 n=13 ref=0.10 obs=0.1923");
    p.run();
  }

  @Test
  public void aFallOfTheMeanScoreAlarmsTooAndAStableStreamNever() {
    // Stable: alternating 0.05 and 0.15 around the mean of 0.1 for 20 minutes.
    List<TimestampedValue<Decision>> stable = new ArrayList<>();
    for (int minute = 0; minute < 20; minute++) {
      stable.add(stamped(decision(minute, minute % 2 == 0 ? 0.05 : 0.15, null)));
    }
    // Falling: each 0.02 adds 0.1 - 0.02 - 0.05 = 0.03 to the fall's sum: 1.02 > 1 at the 34th.
    List<TimestampedValue<Decision>> falling = new ArrayList<>();
    for (int minute = 20; minute < 56; minute++) {
      falling.add(stamped(decision(minute, 0.02, null)));
    }

    PCollection<DriftAlarm> steady =
        p.apply("Stable", streamOf(Decision.DecisionCoder.of(), stable))
            .apply("DetectStable", detect());
    PCollection<DriftAlarm> fall =
        p.apply("Falling", streamOf(Decision.DecisionCoder.of(), falling))
            .apply("DetectFall", detect());

    PAssert.that(steady).empty();
    PAssert.that(fall.apply("DescribeFall", ParDo.of(new DescribeFn())))
        .containsInAnyOrder("deciding m:1 score down at=53min S=1.02>1.0 n=34 ref=0.10 obs=0.0200");
    p.run();
  }

  @Test
  public void aModelWithoutAScoreReferenceGetsNoScoreTest() {
    List<TimestampedValue<Decision>> decisions = shiftAtMinuteTen(false);
    TestStream<Decision> stream = streamOf(Decision.DecisionCoder.of(), decisions);

    PCollection<DriftAlarm> alarms =
        p.apply(stream)
            .apply(
                DetectDrift.of(Map.of("m:1", new DriftReference(null, 0.01)), "review")
                    .withScoreTest(0.05, 1.0));

    PAssert.that(alarms).empty();
    p.run();
  }

  @Test
  public void aKeyIdleForTheExpiryForgetsItsSums() {
    // Two shifted decisions (0.70), an idle hour, two more: without the expiry 1.40 > 1.
    TestStream<Decision> stream =
        TestStream.create(Decision.DecisionCoder.of())
            .addElements(stamped(decision(1, 0.5, null)), stamped(decision(2, 0.5, null)))
            .advanceWatermarkTo(minutes(70))
            .addElements(stamped(decision(71, 0.5, null)), stamped(decision(72, 0.5, null)))
            .advanceWatermarkToInfinity();
    PCollection<Decision> decisions = p.apply(stream);

    PCollection<DriftAlarm> forgetting =
        decisions.apply("Forgetting", detect().withIdleExpiry(Duration.standardMinutes(30)));
    PCollection<DriftAlarm> remembering =
        decisions.apply("Remembering", detect().withIdleExpiry(Duration.standardHours(2)));

    PAssert.that(forgetting).empty();
    PAssert.that(remembering.apply("DescribeRemembering", ParDo.of(new DescribeFn())))
        .containsInAnyOrder("deciding m:1 score up at=71min S=1.05>1.0 n=3 ref=0.10 obs=0.5000");
    p.run();
  }

  private static TimestampedValue<Evaluation> evaluation(
      long minute, double score, boolean positive) {
    Decision decision = decision(minute, score, null);
    Instant judged = minutes(minute + 60);
    Label label =
        new Label(
            "/labels",
            "l-" + minute,
            judged,
            "/pos",
            "txn-" + minute,
            decision.key(),
            decision.windowStart(),
            positive ? "fraud" : "ok");
    return TimestampedValue.of(
        new Evaluation(label, positive, Evaluation.Edition.of(decision)), judged);
  }

  @Test
  public void theErrorTestTakesItsBaselineFromTheFirstEvaluationsWithoutASidecarRate() {
    // Four right verdicts make the baseline (0 errors); then wrong ones add 1 - 0 - 0.02 each.
    List<TimestampedValue<Evaluation>> evaluations = new ArrayList<>();
    for (int minute = 0; minute < 4; minute++) {
      evaluations.add(evaluation(minute, 0.1, false));
    }
    for (int minute = 4; minute < 8; minute++) {
      evaluations.add(evaluation(minute, 0.1, true)); // allowed, but fraud: wrong
    }
    TestStream<Evaluation> stream = streamOf(Evaluation.EvaluationCoder.of(), evaluations);
    PCollection<Decision> noDecisions =
        p.apply(
            "NoDecisions",
            TestStream.create(Decision.DecisionCoder.of()).advanceWatermarkToInfinity());

    PCollection<DriftAlarm> alarms =
        noDecisions.apply(
            DetectDrift.of(Map.of(), "review")
                .withEvaluations(p.apply("Evaluations", stream))
                .withErrorTest(0.02, 2.5)
                .withBaselineEvaluations(4));

    // 0.98, 1.96, 2.94 > 2.5 at the third wrong verdict (minute 6, judged at minute 66).
    PAssert.that(described(alarms))
        .containsInAnyOrder("deciding m:1 error up at=66min S=2.94>2.5 n=3 ref=0.00 obs=1.0000");
    p.run();
  }

  @Test
  public void theErrorTestComparesWithTheSidecarsErrorRate() {
    // Reference error rate 0.5: alternating right and wrong stays put; wrong ones add 0.48.
    List<TimestampedValue<Evaluation>> evaluations = new ArrayList<>();
    for (int minute = 0; minute < 10; minute++) {
      evaluations.add(evaluation(minute, 0.9, minute % 2 == 0));
    }
    for (int minute = 10; minute < 13; minute++) {
      evaluations.add(evaluation(minute, 0.9, false)); // review, not fraud: wrong
    }
    TestStream<Evaluation> stream = streamOf(Evaluation.EvaluationCoder.of(), evaluations);
    PCollection<Decision> noDecisions =
        p.apply(
            "NoDecisions",
            TestStream.create(Decision.DecisionCoder.of()).advanceWatermarkToInfinity());

    PCollection<DriftAlarm> alarms =
        noDecisions.apply(
            DetectDrift.of(Map.of("m:1", new DriftReference(null, 0.5)), "review")
                .withEvaluations(p.apply("Evaluations", stream))
                .withErrorTest(0.02, 1.0));

    // Right ones (minutes 0, 2, ...) and wrong ones alternate: 0 or 0.48 until minute 9; then
    // 0.48 + 0.48 + 0.48 = 1.44 > 1 at minute 11 (judged at 71), after 12 observations, 7 wrong.
    PAssert.that(described(alarms))
        .containsInAnyOrder("deciding m:1 error up at=71min S=1.44>1.0 n=12 ref=0.50 obs=0.5833");
    p.run();
  }

  @Test
  public void settingsThatCannotWorkAreRefusedWithHowToFixThem() {
    DetectDrift drift = DetectDrift.of(Map.of(), "review");
    assertThat(
        assertThrows(IllegalArgumentException.class, () -> drift.withScoreTest(1.5, 10))
            .getMessage(),
        containsString("the allowance is from 0 up to 1"));
    assertThrows(IllegalArgumentException.class, () -> drift.withErrorTest(0.1, 0));
    assertThrows(IllegalArgumentException.class, () -> drift.withBaselineEvaluations(0));
    assertThrows(IllegalArgumentException.class, () -> drift.withIdleExpiry(Duration.ZERO));
  }

  @Test
  public void alarmsAndObservationsSurviveTheirCoders() throws Exception {
    CoderProperties.coderDecodeEncodeEqual(
        DriftAlarm.AlarmCoder.of(),
        new DriftAlarm("shadow", "s", "2", "error", "up", minutes(3), 31.5, 30, 400, 0.01, 0.09));
    CoderProperties.coderDecodeEncodeEqual(
        DetectDrift.ObservationCoder.of(),
        new DetectDrift.Observation(12L, DetectDrift.ERROR, 1, "d/l"));
    CoderProperties.coderDecodeEncodeEqual(
        DetectDrift.SumsCoder.of(), new DetectDrift.Sums(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
    assertThat(
        new DriftAlarm("deciding", "m", "1", "score", "up", minutes(1), 2, 1, 3, 0.1, 0.4)
            .toJsonLine(),
        is(
            "{\"model\":{\"name\":\"m\",\"version\":\"1\",\"role\":\"deciding\"},\"kind\":"
                + "\"score\",\"direction\":\"up\",\"at\":\"1970-01-01T00:01:00.000Z\","
                + "\"statistic\":2.0,\"threshold\":1.0,\"observations\":3,\"referenceMean\":0.1,"
                + "\"observedMean\":0.4}"));
    p.enableAbandonedNodeEnforcement(false);
  }
}
