package dev.tidemark.bench.scoring;

import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Features;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * The rows both scoring parts score: unscored decisions of distinct accounts with plausible
 * features, a fifth of them bursts (more transactions, sometimes one large amount), in four
 * five-minute windows; each row's feature vector is distinct, so a batch is never shortened by a
 * repeated row.
 */
final class ScoringInputs {
  static final Instant BASE = Instant.parse("2026-01-01T00:00:00Z");
  static final Duration WINDOW = Duration.standardMinutes(5);

  private ScoringInputs() {}

  /** {@code n} unscored decisions, accounts {@code acct-0..}, from {@code seed}. */
  static List<Decision> decisions(int n, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    List<Decision> decisions = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      Instant windowStart = BASE.plus(WINDOW.multipliedBy(i % 4));
      Instant windowEnd = windowStart.plus(WINDOW);
      Instant latest = windowEnd.minus(Duration.standardSeconds(1 + random.nextInt(200)));
      boolean burst = random.nextInt(5) == 0;
      long count = burst ? 6 + random.nextInt(15) : 1 + random.nextInt(4);
      long largest =
          burst && random.nextBoolean()
              ? 50_000 + random.nextInt(150_000)
              : 100 + random.nextInt(9_000);
      Features features =
          new Features(
              count,
              largest + random.nextInt(5_000) * (count - 1),
              largest,
              1 + random.nextInt((int) count),
              burst ? 1 + random.nextInt(2) : 1,
              latest,
              latest);
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
}
