package dev.tidemark.bench.scoring;

import dev.tidemark.bench.scoring.ScoringPasses.Pass;
import dev.tidemark.bench.suite.BenchPart;
import dev.tidemark.bench.suite.BenchProfile;
import dev.tidemark.bench.suite.BenchResults;
import dev.tidemark.bench.suite.Stats;
import dev.tidemark.model.DefaultModel;
import dev.tidemark.model.ModelEngine;
import dev.tidemark.model.ScoreFeatures;
import dev.tidemark.transforms.values.Decision;
import java.util.List;
import java.util.Locale;

/**
 * The scoring step against its engines, for both shipped models (XGBoost and the ONNX logistic
 * regression): rows per second at batch sizes {@link #BATCH_SIZES}, in one thread and on the same
 * rows, of
 *
 * <ul>
 *   <li>{@code raw}: the engine's own Java API on float rows ({@link RawEngine});
 *   <li>{@code raw + decisions}: the same call plus the per-row work any scoring step does around
 *       it (each decision's feature vector in, a scored decision out);
 *   <li>{@code transform}: Tidemark's scoring transform, batch by batch as its DoFn scores a bundle
 *       ({@link dev.tidemark.model.DecisionScorer}: feature vectors, the repeated-row check, the
 *       DJL call, the checks, the scored decisions).
 * </ul>
 *
 * <p>Per batch size: {@link #WARMUP_NANOS} of passes of each way per profile warm-up, then {@link
 * #timedPasses} timed passes over all rows of each, the three ways taking turns; rows/s is their
 * median. Contract figures: {@code scoring.transformVsRaw.*}, the transform over the raw call at
 * batch 256 (target at least 0.8), and {@code scoring.batch256VsBatch1.*}, the transform at batch
 * 256 over batch 1 (target at least 10). Nothing here asserts a speed.
 */
public final class ScoringPart implements BenchPart {
  public static final String NAME = "scoring";

  /** The chart of rows per second by batch size. */
  public static final String CHART = "scoring-vs-batch";

  static final int[] BATCH_SIZES = {1, 64, 256};

  /** The three ways to score, in the order of {@link ScoringPasses}. */
  static final List<String> PATHS = List.of("raw", "raw + decisions", "transform");

  /** Warm-up per profile warm-up run, before the timed passes of one figure. */
  static final long WARMUP_NANOS = 2_000_000_000L;

  public static final double TARGET_TRANSFORM_VS_RAW = 0.8;
  public static final double TARGET_BATCH_SPEED_UP = 10;

  static final long SEED = 1234;

  /**
   * Timed passes per figure: at least {@value #MIN_PASSES} (a pass lasts tens of milliseconds at
   * batch 256, so its median needs more of them than the suite's repeats of whole jobs); the
   * profile's repeats in the smoke profile.
   */
  static int timedPasses(BenchProfile profile) {
    return profile.isSmoke() ? profile.repeats : Math.max(MIN_PASSES, profile.repeats);
  }

  static final int MIN_PASSES = 7;

  /** The rows of each pass: full 16,384, small 4,096, smoke 512. */
  static int rows(BenchProfile profile) {
    return profile.isFull() ? 16_384 : profile.isSmoke() ? 512 : 4_096;
  }

  /** A shipped model: its engine, its URI, and the suffix of its contract figures. */
  enum Model {
    XGBOOST(ModelEngine.XGBOOST, DefaultModel.XGBOOST_URI, "xgboost"),
    ONNX(ModelEngine.ONNX_RUNTIME, DefaultModel.ONNX_URI, "onnx");

    final ModelEngine engine;
    final String uri;
    final String key;

    Model(ModelEngine engine, String uri, String key) {
      this.engine = engine;
      this.uri = uri;
      this.key = key;
    }
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public void run(BenchProfile profile, BenchResults results) throws Exception {
    int rows = rows(profile);
    List<Decision> decisions = ScoringInputs.decisions(rows, SEED);
    float[][] vectors = new float[rows][];
    for (int i = 0; i < rows; i++) {
      vectors[i] = decisions.get(i).features().toVector();
    }
    for (Model model : Model.values()) {
      try (RawEngine engine = RawEngine.open(model.engine);
          ScoringPasses.Scorers scorers =
              new ScoringPasses.Scorers(ScoreFeatures.of(model.uri, model.engine), BATCH_SIZES)) {
        measure(
            profile,
            results,
            model,
            ScoringPasses.raw(engine, vectors),
            ScoringPasses.rawWithDecisions(engine, decisions),
            ScoringPasses.transform(scorers, decisions),
            rows);
      }
    }
    results.note(
        NAME,
        String.format(
            Locale.ROOT,
            "method: %d rows (distinct feature vectors), one thread, OMP_NUM_THREADS=%s, ONNX"
                + " Runtime with one intra-op thread; per batch size %.0f s of warm-up passes of"
                + " each way, then %d timed pass(es) over all rows of each, the three taking"
                + " turns, rows/s their median; raw = the engine's own"
                + " Java API on float rows, raw + decisions = the same plus feature vectors in and"
                + " scored decisions out, transform = ScoreFeatures' per-batch work"
                + " (DecisionScorer)",
            rows,
            System.getenv("OMP_NUM_THREADS"),
            profile.warmups * WARMUP_NANOS / 1e9,
            timedPasses(profile)));
  }

  private static void measure(
      BenchProfile profile,
      BenchResults results,
      Model model,
      Pass raw,
      Pass rawPlus,
      Pass transform,
      int rows)
      throws Exception {
    String engine = model.engine.djlName();
    List<Pass> passes = List.of(raw, rawPlus, transform);
    double[][] medians = new double[PATHS.size()][BATCH_SIZES.length];
    for (int b = 0; b < BATCH_SIZES.length; b++) {
      int batch = BATCH_SIZES[b];
      double[][] rates = rates(passes, batch, rows, profile);
      for (int p = 0; p < PATHS.size(); p++) {
        Stats stats = Stats.of(rates[p]);
        results.measure(NAME, engine + " batch " + batch + " " + PATHS.get(p), stats, "rows/s");
        results.point(CHART, engine + " " + PATHS.get(p), batch, stats.median());
        medians[p][b] = stats.median();
      }
    }
    int last = BATCH_SIZES.length - 1;
    double[] rawRates = medians[0];
    double[] rawPlusRates = medians[1];
    double[] transformRates = medians[2];
    double vsRaw = transformRates[last] / rawRates[last];
    double speedUp = transformRates[last] / transformRates[0];
    results.figure("scoring.transformVsRaw." + model.key, vsRaw);
    results.figure("scoring.batch256VsBatch1." + model.key, speedUp);
    results.note(
        NAME,
        String.format(
            Locale.ROOT,
            "%s at batch %d: transform / raw %.2f (target >= %.1f: %s), transform / (raw +"
                + " decisions) %.2f; transform at batch %d / at batch 1: %.1fx (target >= %.0fx:"
                + " %s)",
            engine,
            BATCH_SIZES[last],
            vsRaw,
            TARGET_TRANSFORM_VS_RAW,
            vsRaw >= TARGET_TRANSFORM_VS_RAW ? "met" : "missed",
            transformRates[last] / rawPlusRates[last],
            BATCH_SIZES[last],
            speedUp,
            TARGET_BATCH_SPEED_UP,
            speedUp >= TARGET_BATCH_SPEED_UP ? "met" : "missed"));
  }

  /**
   * Rows per second of each of {@code passes} at {@code batch}, one row of rates per pass: each
   * warmed up for {@link #WARMUP_NANOS} per profile warm-up, then {@link #timedPasses} timed passes
   * of each, taking turns so that load noise hits them alike.
   */
  static double[][] rates(List<Pass> passes, int batch, int rows, BenchProfile profile)
      throws Exception {
    for (Pass pass : passes) {
      long warmupEnd = System.nanoTime() + profile.warmups * WARMUP_NANOS;
      while (System.nanoTime() < warmupEnd) {
        pass.run(batch);
      }
    }
    double[][] rates = new double[passes.size()][timedPasses(profile)];
    for (int r = 0; r < rates[0].length; r++) {
      for (int p = 0; p < passes.size(); p++) {
        long start = System.nanoTime();
        passes.get(p).run(batch);
        rates[p][r] = rows / ((System.nanoTime() - start) / 1e9);
      }
    }
    return rates;
  }
}
