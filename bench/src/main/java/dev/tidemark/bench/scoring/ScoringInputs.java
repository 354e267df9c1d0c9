package dev.tidemark.bench.scoring;

import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.PaymentFeatures;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * The rows both scoring parts score: unscored decisions of distinct accounts with plausible
 * features, a fifth of them bursts (more transactions, sometimes one large amount), in four
 * five-minute windows; no two have the same feature vector, so that the transform's repeated-row
 * check never shortens a batch.
 */
final class ScoringInputs {
  static final Instant BASE = Instant.parse("2026-01-01T00:00:00Z");
  static final Duration WINDOW = Duration.standardMinutes(5);

  private ScoringInputs() {}

  /** {@code n} unscored decisions, accounts {@code acct-0..}, from {@code seed}. */
  static List<Decision> decisions(int n, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    Set<List<Float>> rows = new HashSet<>();
    List<Decision> decisions = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      Instant windowStart = BASE.plus(WINDOW.multipliedBy(i % 4));
      Instant windowEnd = windowStart.plus(WINDOW);
      Instant latest = windowEnd.minus(Duration.standardSeconds(1 + random.nextInt(200)));
      Features features = features(random, latest);
      // Drawn again while its row repeats an earlier one (about one in 300 for 2,000 rows).
      while (!rows.add(row(features))) {
        features = features(random, latest);
      }
      decisions.add(
          Decision.unscored(
              "acct-" + i,
              windowStart,
              windowEnd,
              "ON_TIME",
              0,
              true,
              true,
              features,
              windowEnd.plus(Duration.standardSeconds(2))));
    }
    return decisions;
  }

  /** Plausible features: a fifth bursts (more transactions, sometimes one large amount). */
  private static Features features(SplittableRandom random, Instant latest) {
    boolean burst = random.nextInt(5) == 0;
    long count = burst ? 6 + random.nextInt(15) : 1 + random.nextInt(4);
    long largest =
        burst && random.nextBoolean()
            ? 50_000 + random.nextInt(150_000)
            : 100 + random.nextInt(9_000);
    return PaymentFeatures.of(
        count,
        largest + random.nextInt(5_000) * (count - 1),
        largest,
        1 + random.nextInt((int) count),
        burst ? 1 + random.nextInt(2) : 1,
        latest,
        latest);
  }

  private static List<Float> row(Features features) {
    List<Float> row = new ArrayList<>();
    for (float value : features.toVector()) {
      row.add(value);
    }
    return row;
  }
}
