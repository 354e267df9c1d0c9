package dev.tidemark.transforms;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Evaluation;
import dev.tidemark.transforms.values.EvaluationCounts;
import dev.tidemark.transforms.values.EvaluationSummary;
import dev.tidemark.transforms.values.Label;
import java.util.List;
import org.apache.beam.sdk.testing.CoderProperties;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TimestampedValue;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.Rule;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** Evaluations summed per model version and role over windows of two hours every hour. */
@RunWith(JUnit4.class)
public class SummarizeEvaluationsTest {
  @Rule public final transient TestPipeline p = TestPipeline.create();

  private static final Decision.ModelRef M1 = new Decision.ModelRef("m", "1", "XGBoost");
  private static final Decision.ModelRef M2 = new Decision.ModelRef("m", "2", "XGBoost");
  private static final Decision.ModelRef SHADOW = new Decision.ModelRef("s", "2", "OnnxRuntime");

  private static Instant minutes(long minutes) {
    return new Instant(minutes * 60_000);
  }

  /** A judgement at {@code atMinute} of a decision scored {@code score} by {@code model}. */
  private static TimestampedValue<Evaluation> judged(
      long atMinute,
      Decision.ModelRef model,
      double score,
      boolean positive,
      long delaySeconds,
      Decision.@Nullable Shadow shadow) {
    Instant at = minutes(atMinute);
    Instant eventTime = at.minus(Duration.standardSeconds(delaySeconds));
    Label label =
        new Label(
            "/labels",
            "l-" + atMinute + "-" + score,
            at,
            "/pos",
            "txn",
            "acct-1",
            eventTime,
            positive ? "fraud" : "legit");
    Evaluation.Edition edition =
        new Evaluation.Edition(
            "d",
            eventTime,
            eventTime.plus(Duration.standardMinutes(5)),
            "ON_TIME",
            0,
            eventTime,
            score,
            score >= 0.5 ? "review" : "allow",
            model.name(),
            model.version(),
            shadow);
    return TimestampedValue.of(new Evaluation(label, positive, edition), at);
  }

  private static Decision.Shadow shadow(double score) {
    return new Decision.Shadow(score, score >= 0.5 ? "review" : "allow", SHADOW);
  }

  static final class DescribeFn extends DoFn<EvaluationSummary, String> {
    @ProcessElement
    public void processElement(@Element EvaluationSummary s, OutputReceiver<String> out) {
      EvaluationCounts c = s.counts();
      out.output(
          String.format(
              "%s %s:%s %d-%d %s#%d labels=%d tp=%d fp=%d fn=%d tn=%d p=%s r=%s rr=%s delay=%s/%.0f",
              s.role(),
              s.modelName(),
              s.modelVersion(),
              s.windowStart().getMillis() / 60_000,
              s.windowEnd().getMillis() / 60_000,
              s.paneTiming(),
              s.paneIndex(),
              c.labels(),
              c.truePositives(),
              c.falsePositives(),
              c.falseNegatives(),
              c.trueNegatives(),
              c.precision(),
              c.recall(),
              c.reviewRate(),
              c.meanLabelDelaySeconds(),
              c.maxLabelDelaySeconds()));
    }
  }

  private static PCollection<String> summarize(PCollection<Evaluation> evaluations) {
    return evaluations
        .apply(
            SummarizeEvaluations.flagging("review")
                .withWindows(Duration.standardHours(2), Duration.standardHours(1))
                .withAllowedLateness(Duration.standardHours(1)))
        .apply(ParDo.of(new DescribeFn()));
  }

  @Test
  public void countsPerModelVersionAndShadowInEachWindow() {
    List<TimestampedValue<Evaluation>> evaluations =
        List.of(
            judged(30, M1, 0.9, true, 600, shadow(0.3)),
            judged(30, M1, 0.8, false, 1200, shadow(0.6)),
            judged(30, M1, 0.1, true, 1800, null),
            judged(30, M1, 0.05, false, 2400, null),
            judged(90, M2, 0.7, true, 60, null));
    PCollection<String> summaries =
        summarize(
            p.apply(Create.timestamped(evaluations).withCoder(Evaluation.EvaluationCoder.of())));
    PAssert.that(summaries)
        .containsInAnyOrder(
            "deciding m:1 -60-60 ON_TIME#0 labels=4 tp=1 fp=1 fn=1 tn=1 p=0.5 r=0.5 rr=0.5"
                + " delay=1500.0/2400",
            "deciding m:1 0-120 ON_TIME#0 labels=4 tp=1 fp=1 fn=1 tn=1 p=0.5 r=0.5 rr=0.5"
                + " delay=1500.0/2400",
            "shadow s:2 -60-60 ON_TIME#0 labels=2 tp=0 fp=1 fn=1 tn=0 p=0.0 r=0.0 rr=0.5"
                + " delay=900.0/1200",
            "shadow s:2 0-120 ON_TIME#0 labels=2 tp=0 fp=1 fn=1 tn=0 p=0.0 r=0.0 rr=0.5"
                + " delay=900.0/1200",
            "deciding m:2 0-120 ON_TIME#0 labels=1 tp=1 fp=0 fn=0 tn=0 p=1.0 r=1.0 rr=1.0"
                + " delay=60.0/60",
            "deciding m:2 60-180 ON_TIME#0 labels=1 tp=1 fp=0 fn=0 tn=0 p=1.0 r=1.0 rr=1.0"
                + " delay=60.0/60");
    p.run();
  }

  /**
   * A late judgement within the allowed lateness gives a late pane with the whole window so far.
   */
  @Test
  public void aLateJudgementUpdatesItsWindowsInALatePane() {
    TestStream<Evaluation> stream =
        TestStream.create(Evaluation.EvaluationCoder.of())
            .addElements(judged(30, M1, 0.9, true, 60, null))
            .advanceWatermarkTo(minutes(150))
            .addElements(judged(100, M1, 0.2, true, 60, null))
            .advanceWatermarkToInfinity();
    PAssert.that(summarize(p.apply(stream)))
        .containsInAnyOrder(
            "deciding m:1 -60-60 ON_TIME#0 labels=1 tp=1 fp=0 fn=0 tn=0 p=1.0 r=1.0 rr=1.0"
                + " delay=60.0/60",
            "deciding m:1 0-120 ON_TIME#0 labels=1 tp=1 fp=0 fn=0 tn=0 p=1.0 r=1.0 rr=1.0"
                + " delay=60.0/60",
            "deciding m:1 0-120 LATE#1 labels=2 tp=1 fp=0 fn=1 tn=0 p=1.0 r=0.5 rr=0.5"
                + " delay=60.0/60",
            "deciding m:1 60-180 ON_TIME#0 labels=1 tp=0 fp=0 fn=1 tn=0 p=null r=0.0 rr=0.0"
                + " delay=60.0/60");
    p.run();
  }

  @Test
  public void aSummaryLineCarriesTheRatesAndTheCalibrationBins() throws Exception {
    EvaluationCounts counts = EvaluationCounts.of(0.95, true, true, 3_600_000);
    counts.merge(EvaluationCounts.of(0.91, true, false, 1_800_000));
    counts.merge(EvaluationCounts.of(0.02, false, false, 0));
    counts.merge(EvaluationCounts.of(1.0, true, true, 60_000));
    EvaluationSummary summary =
        new EvaluationSummary(
            EvaluationSummary.DECIDING, "m", "1", minutes(0), minutes(60), "ON_TIME", 0, counts);
    JsonNode json = Json.MAPPER.readTree(summary.toJsonLine());
    assertThat(json.at("/model/role").asText(), is("deciding"));
    assertThat(json.at("/pane/timing").asText(), is("ON_TIME"));
    assertThat(json.get("precision").asDouble(), is(0.666667));
    assertThat(json.get("recall").asDouble(), is(1.0));
    assertThat(json.get("reviewRate").asDouble(), is(0.75));
    assertThat(json.at("/labelDelaySeconds/mean").asDouble(), is(1365.0));
    assertThat(json.at("/labelDelaySeconds/max").asDouble(), is(3600.0));
    JsonNode bins = json.get("calibration");
    assertThat(bins.size(), is(2));
    assertThat(bins.get(0).get("from").asDouble(), is(0.0));
    assertThat(bins.get(0).get("decisions").asLong(), is(1L));
    // A score of exactly 1 is in the last bin, with the 0.9s.
    assertThat(bins.get(1).get("from").asDouble(), is(0.9));
    assertThat(bins.get(1).get("decisions").asLong(), is(3L));
    assertThat(bins.get(1).get("meanScore").asDouble(), is(0.953333));
    assertThat(bins.get(1).get("positiveRate").asDouble(), is(0.666667));
    CoderProperties.coderDecodeEncodeEqual(EvaluationSummary.SummaryCoder.of(), summary);
    CoderProperties.coderDecodeEncodeEqual(EvaluationCounts.CountsCoder.of(), counts);
    p.enableAbandonedNodeEnforcement(false);
  }
}
