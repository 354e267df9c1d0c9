package dev.tidemark.transforms.values;

import java.io.Serializable;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * A model's score distribution on its evaluation rows at training time, the reference the score
 * drift test compares live scores with: counts in {@value #BINS} fixed bins of width {@code 1/BINS}
 * over [0, 1] (a score of exactly 1 in the last bin), the mean score and the rows it came from.
 *
 * <p>Written into the model's sidecar as {@code scoreReference}:
 *
 * <pre>{@code
 * "scoreReference": {"rows": 19783, "mean": 0.0131, "binWidth": 0.1,
 *                    "counts": [19502, 8, 4, 3, 2, 3, 2, 4, 6, 249]}
 * }</pre>
 */
public record ScoreReference(List<Long> counts, double mean, long rows) implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The number of bins. */
  public static final int BINS = 10;

  public ScoreReference {
    counts = List.copyOf(Objects.requireNonNull(counts, "counts"));
    if (counts.size() != BINS) {
      throw new IllegalArgumentException(
          "a score reference has " + BINS + " bin counts, found " + counts.size());
    }
    long sum = 0;
    for (long count : counts) {
      if (count < 0) {
        throw new IllegalArgumentException("negative bin count " + count);
      }
      sum += count;
    }
    if (sum != rows || rows <= 0) {
      throw new IllegalArgumentException(
          "a score reference's bin counts sum to its rows (> 0): " + sum + " vs " + rows);
    }
    if (!(mean >= 0 && mean <= 1)) {
      throw new IllegalArgumentException("a score reference's mean is in [0, 1], found " + mean);
    }
  }

  /** The bin of a score in [0, 1]; scores outside are clamped to the first or last bin. */
  public static int bin(double score) {
    int bin = (int) Math.floor(score * BINS);
    return Math.max(0, Math.min(BINS - 1, bin));
  }

  /** The reference of {@code scores}, one per evaluation row. */
  public static ScoreReference of(double[] scores) {
    if (scores.length == 0) {
      throw new IllegalArgumentException("a score reference needs at least one score");
    }
    long[] counts = new long[BINS];
    double sum = 0;
    for (double score : scores) {
      counts[bin(score)]++;
      sum += score;
    }
    double mean = Math.max(0, Math.min(1, sum / scores.length));
    return new ScoreReference(Arrays.stream(counts).boxed().toList(), mean, scores.length);
  }

  /** The fraction of the reference rows in {@code bin}. */
  public double fraction(int bin) {
    return (double) counts.get(bin) / rows;
  }
}
