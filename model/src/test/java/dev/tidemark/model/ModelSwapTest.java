package dev.tidemark.model;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.closeTo;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.notNullValue;

import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.PaymentFeatures;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.Filter;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithFailures;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * A replay during which new model files appear in the watched directory: decisions before the first
 * swap carry version 1, later ones version 2; a broken version 3 and a file without a sidecar are
 * refused and version 2 keeps scoring; the shadow model's verdict is on every decision. The files
 * are copied into the directory by the watch's own tick at a fixed point of the stream: the
 * DirectRunner runs a TestStream event only once the work of the one before is done.
 */
public class ModelSwapTest {
  private static final String NAME = "test-model";
  private static final String TICK = "tick-";

  @Rule public final transient TestPipeline p = TestPipeline.create();
  @Rule public final TemporaryFolder tmp = new TemporaryFolder();

  private Path watched;
  private Path staged;
  private Path onnx;
  private Path xgboost;
  private Path shadow;

  @Before
  public void models() throws Exception {
    watched = tmp.newFolder("watched").toPath();
    staged = tmp.newFolder("staged").toPath();
    Path raw = tmp.newFolder("raw").toPath();
    onnx = TestModels.onnx(raw);
    xgboost = TestModels.xgboost(raw);
    Path shadowDir = tmp.newFolder("shadow").toPath();
    shadow = TestModels.xgboost(shadowDir);

    // Version 1: the logistic regression (ONNX), in the watched directory from the start.
    Path v1 = watched.resolve("model-v1.onnx");
    Files.copy(onnx, v1);
    ModelMetadata.of(NAME, "1", ModelEngine.ONNX_RUNTIME, PaymentFeatures.SCHEMA.names())
        .withInputOutput("features", "score")
        .withModelSha256(LoadedModel.sha256(v1))
        .writeTo(ModelMetadata.sidecarOf(v1));
    touch(v1, 1);
    // Version 2: the XGBoost model, staged until the first swap.
    Path v2 = staged.resolve("model-v2.ubj");
    Files.copy(xgboost, v2);
    ModelMetadata.of(NAME, "2", ModelEngine.XGBOOST, PaymentFeatures.SCHEMA.names())
        .withModelSha256(LoadedModel.sha256(v2))
        .writeTo(ModelMetadata.sidecarOf(v2));
    // Version 3: a sidecar whose features are in another order; refused.
    Path v3 = staged.resolve("model-v3.ubj");
    Files.copy(xgboost, v3);
    List<String> reversed = new ArrayList<>(PaymentFeatures.SCHEMA.names());
    java.util.Collections.reverse(reversed);
    ModelMetadata.of(NAME, "3", ModelEngine.XGBOOST, reversed).writeTo(ModelMetadata.sidecarOf(v3));
    // A model file without a sidecar; refused.
    Files.copy(onnx, staged.resolve("model-v4.onnx"));
  }

  private static void touch(Path file, int day) throws IOException {
    FileTime time = FileTime.fromMillis(Instant.parse("2026-01-01T00:00:00Z").getMillis());
    time = FileTime.fromMillis(time.toMillis() + Duration.standardDays(day).getMillis());
    Files.setLastModifiedTime(file, time);
    Path sidecar = ModelMetadata.sidecarOf(file);
    if (Files.exists(sidecar)) {
      Files.setLastModifiedTime(sidecar, time);
    }
  }

  /** On tick 1 copies version 2 into the directory, on tick 2 the refused files; emits the tick. */
  static final class CopyThenTickFn extends DoFn<Decision, Long> {
    private final String staged;
    private final String watched;

    CopyThenTickFn(Path staged, Path watched) {
      this.staged = staged.toString();
      this.watched = watched.toString();
    }

    @ProcessElement
    public void processElement(@Element Decision tick, OutputReceiver<Long> out) {
      long n = Long.parseLong(tick.key().substring(TICK.length()));
      try {
        if (n == 1) {
          copy("model-v2.ubj", 2);
        } else if (n == 2) {
          copy("model-v3.ubj", 3);
          copy("model-v4.onnx", 4);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      out.output(n);
    }

    void copy(String file, int day) throws IOException {
      Path from = Paths.get(staged, file);
      Path to = Paths.get(watched, file);
      Path sidecar = ModelMetadata.sidecarOf(from);
      if (Files.exists(sidecar)) {
        Files.copy(sidecar, ModelMetadata.sidecarOf(to), StandardCopyOption.REPLACE_EXISTING);
      }
      Files.copy(from, to, StandardCopyOption.REPLACE_EXISTING);
      touch(to, day);
    }
  }

  private static Decision tick(int n) {
    Instant start = TestModels.BASE;
    return Decision.unscored(
        TICK + n,
        start,
        start.plus(TestModels.WINDOW),
        "ON_TIME",
        0,
        true,
        true,
        PaymentFeatures.of(1, 100, 100, 1, 1, start, start),
        start);
  }

  private static List<Decision> part(String prefix, int n, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    List<Decision> decisions = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Instant start = TestModels.BASE.plus(TestModels.WINDOW.multipliedBy(i % 4));
      Instant end = start.plus(TestModels.WINDOW);
      decisions.add(
          Decision.unscored(
              prefix + i,
              start,
              end,
              "ON_TIME",
              0,
              true,
              true,
              TestModels.features(random, end.minus(Duration.standardSeconds(5))),
              end));
    }
    return decisions;
  }

  @Test
  public void aFiniteInputTakesTheNewestValidModelOnceAndEnds() throws Exception {
    new CopyThenTickFn(staged, watched).copy("model-v2.ubj", 2);
    new CopyThenTickFn(staged, watched).copy("model-v3.ubj", 3);
    List<Decision> decisions = part("acct-", 30, 7);
    float[] xgbScores = TestModels.xgboostRaw(xgboost, TestModels.vectors(decisions));
    HashMap<String, Float> expected = TestModels.byDecisionId(decisions, xgbScores);

    WithFailures.Result<PCollection<Decision>, DeadLetter> scored =
        p.apply(org.apache.beam.sdk.transforms.Create.of(decisions))
            .apply("ScoreFeatures", ScoreFeatures.of(watched.toString()));

    PAssert.that(scored.failures()).empty();
    PAssert.that(scored.output())
        .satisfies(
            out -> {
              int n = 0;
              for (Decision d : out) {
                n++;
                // Version 3 is newer but refused; version 2 is the newest valid one.
                assertThat(d.key(), d.model().version(), equalTo("2"));
                assertThat(d.score(), closeTo(expected.get(d.decisionId()), 1e-6));
                assertThat(d.shadow(), is((Decision.Shadow) null));
              }
              assertThat(n, is(30));
              return null;
            });
    PipelineResult result = p.run();
    assertThat(result.waitUntilFinish(), is(PipelineResult.State.DONE));
    assertThat(ScoringAssertions.counter(result, ScoringMetrics.MODEL_REFUSED), is(1L));
  }

  @Test
  public void laterDecisionsCarryTheNewVersionAndABrokenOneIsRefused() throws Exception {
    List<Decision> part1 = part("one-", 40, 1);
    List<Decision> part2 = part("two-", 40, 2);
    List<Decision> part3 = part("three-", 40, 3);
    List<Decision> all = new ArrayList<>(part1);
    all.addAll(part2);
    all.addAll(part3);
    float[] onnxScores = TestModels.onnxRaw(onnx, TestModels.vectors(all));
    float[] xgbScores = TestModels.xgboostRaw(xgboost, TestModels.vectors(all));
    // Expected: version 1 (ONNX) for part 1, version 2 (XGBoost) after; the shadow always XGBoost.
    HashMap<String, KV<String, Float>> expected = new HashMap<>();
    HashMap<String, Float> shadowExpected = new HashMap<>();
    for (int i = 0; i < all.size(); i++) {
      boolean first = i < part1.size();
      expected.put(
          all.get(i).decisionId(), KV.of(first ? "1" : "2", first ? onnxScores[i] : xgbScores[i]));
      shadowExpected.put(all.get(i).decisionId(), xgbScores[i]);
    }

    TestStream<Decision> stream =
        TestStream.create(Decision.DecisionCoder.of())
            .addElements(tick(0))
            .addElements(part1.get(0), part1.subList(1, part1.size()).toArray(new Decision[0]))
            .addElements(tick(1))
            .addElements(part2.get(0), part2.subList(1, part2.size()).toArray(new Decision[0]))
            .addElements(tick(2))
            .addElements(part3.get(0), part3.subList(1, part3.size()).toArray(new Decision[0]))
            .advanceWatermarkToInfinity();
    PCollection<Decision> events = p.apply("Replay", stream);
    ScoreFeatures scorer =
        ScoreFeatures.of(watched.toString()).withShadowModel(shadow.toString()).withBatchSize(8);
    PCollection<KV<Long, String>> updates =
        events
            .apply("Ticks", Filter.by(d -> d.key().startsWith(TICK)))
            .apply("CopyModels", ParDo.of(new CopyThenTickFn(staged, watched)))
            .apply("Watch", WatchModels.forConfig(scorer.config(), Duration.millis(1)).onTicks());
    WithFailures.Result<PCollection<Decision>, DeadLetter> scored =
        events
            .apply("Decisions", Filter.by(d -> !d.key().startsWith(TICK)))
            .apply("ScoreFeatures", scorer.withModelUpdates(updates));

    PAssert.that(scored.failures()).empty();
    PAssert.that(scored.output())
        .satisfies(
            decisions -> {
              int n = 0;
              for (Decision d : decisions) {
                n++;
                KV<String, Float> want = expected.get(d.decisionId());
                assertThat(d.key(), want, notNullValue());
                assertThat(d.key() + " model", d.model().name(), equalTo(NAME));
                assertThat(d.key() + " version", d.model().version(), equalTo(want.getKey()));
                assertThat(d.key() + " score", d.score(), closeTo(want.getValue(), 1e-6));
                assertThat(
                    d.label(),
                    equalTo(d.score() >= ScoreFeatures.DEFAULT_THRESHOLD ? "review" : "allow"));
                Decision.Shadow s = d.shadow();
                assertThat(d.key() + " shadow", s, notNullValue());
                assertThat(s.model().name(), equalTo(TestModels.XGB_NAME));
                assertThat(s.model().version(), equalTo(TestModels.VERSION));
                assertThat(s.model().engine(), equalTo("XGBoost"));
                assertThat(s.score(), closeTo(shadowExpected.get(d.decisionId()), 1e-6));
                assertThat(
                    s.decision(),
                    equalTo(s.score() >= ScoreFeatures.DEFAULT_THRESHOLD ? "review" : "allow"));
              }
              assertThat(n, is(120));
              return null;
            });
    PipelineResult result = p.run();
    result.waitUntilFinish();

    assertThat(ScoringAssertions.counter(result, ScoringMetrics.MODEL_REFUSED), is(2L));
    Map<String, Long> perVersion = new HashMap<>();
    for (String version : List.of("1", "2")) {
      long review =
          ScoringAssertions.counter(
              result, ScoringMetrics.perVersion(ScoringMetrics.DECISIONS_REVIEW, NAME, version));
      long allow =
          ScoringAssertions.counter(
              result, ScoringMetrics.perVersion(ScoringMetrics.DECISIONS_ALLOW, NAME, version));
      perVersion.put(version, review + allow);
    }
    assertThat(perVersion, equalTo(Map.of("1", 40L, "2", 80L)));
    long expectedReviewV1 = 0;
    for (int i = 0; i < part1.size(); i++) {
      expectedReviewV1 += onnxScores[i] >= ScoreFeatures.DEFAULT_THRESHOLD ? 1 : 0;
    }
    assertThat(
        ScoringAssertions.counter(
            result, ScoringMetrics.perVersion(ScoringMetrics.DECISIONS_REVIEW, NAME, "1")),
        is(expectedReviewV1));
    long shadowed =
        ScoringAssertions.counter(
                result,
                ScoringMetrics.SHADOW_PREFIX
                    + ScoringMetrics.perVersion(
                        ScoringMetrics.DECISIONS_REVIEW, TestModels.XGB_NAME, TestModels.VERSION))
            + ScoringAssertions.counter(
                result,
                ScoringMetrics.SHADOW_PREFIX
                    + ScoringMetrics.perVersion(
                        ScoringMetrics.DECISIONS_ALLOW, TestModels.XGB_NAME, TestModels.VERSION));
    assertThat(shadowed, is(120L));
  }
}
