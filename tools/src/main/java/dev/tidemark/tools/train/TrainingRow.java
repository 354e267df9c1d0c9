package dev.tidemark.tools.train;

import java.util.Comparator;
import org.joda.time.Instant;

/**
 * One training row whatever the spec: the model input of one key in one window, and whether the
 * window holds a positively labelled event.
 *
 * @param key the window's key (an account, a user)
 * @param features the model input, in the model's feature order; NaN for an absent feature
 */
public record TrainingRow(
    String key, Instant windowStart, Instant windowEnd, float[] features, boolean positive) {

  /** Time order (window end, then start, then key): the order the split and training use. */
  public static final Comparator<TrainingRow> TIME_ORDER =
      Comparator.comparing(TrainingRow::windowEnd)
          .thenComparing(TrainingRow::windowStart)
          .thenComparing(TrainingRow::key);
}
