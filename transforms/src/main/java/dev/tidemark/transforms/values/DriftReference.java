package dev.tidemark.transforms.values;

import java.io.Serializable;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * What a model version's drift tests compare with, from its sidecar: the {@link ScoreReference}
 * (absent: no score drift test) and the error rate at its threshold on the evaluation rows (absent:
 * the error test takes its baseline from the first labelled evaluations).
 */
public record DriftReference(@Nullable ScoreReference score, @Nullable Double errorRate)
    implements Serializable {
  private static final long serialVersionUID = 1L;

  public DriftReference {
    if (errorRate != null && !(errorRate >= 0 && errorRate <= 1)) {
      throw new IllegalArgumentException("an error rate is in [0, 1], found " + errorRate);
    }
  }

  /** Neither reference: error test on a baseline from the first evaluations only. */
  public static DriftReference none() {
    return new DriftReference(null, null);
  }
}
