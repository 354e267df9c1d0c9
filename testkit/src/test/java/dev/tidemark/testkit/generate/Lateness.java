package dev.tidemark.testkit.generate;

/**
 * The lateness contract of a replay file, read back independently of the generator: how a first
 * arrival is classified by how far the replay reader's clock is behind its event time, and whether
 * the watermark (largest event time read so far minus the out-of-orderness) is where that class
 * says it is.
 */
final class Lateness {
  private Lateness() {}

  enum Kind {
    ON_TIME,
    LATE,
    TOO_LATE,
    UNCLASSIFIED
  }

  /**
   * The class of a first arrival read {@code lagMs} after its event time (true delay < lag + 1 s).
   */
  static Kind classify(GeneratorConfig config, long lagMs) {
    if (lagMs <= config.maxOutOfOrderness().toMillis()) {
      return Kind.ON_TIME;
    }
    if (lagMs >= config.lateDelayMin().toMillis() - 1000
        && lagMs < config.lateDelayMax().toMillis()) {
      return Kind.LATE;
    }
    if (lagMs >= config.tooLateDelayMin().toMillis() - 1000
        && lagMs < config.tooLateDelayMax().toMillis()) {
      return Kind.TOO_LATE;
    }
    return Kind.UNCLASSIFIED;
  }

  /**
   * Whether a {@link Kind#LATE} event is behind the watermark but within the allowed lateness of
   * its window, or a {@link Kind#TOO_LATE} one past it; true for the other kinds.
   */
  static boolean watermarkAgrees(
      GeneratorConfig config, Kind kind, long timeMs, long maxEventTimeMs) {
    long windowMs = config.windowSize().toMillis();
    long latenessMs = config.allowedLateness().toMillis();
    long windowEnd = Math.floorDiv(timeMs, windowMs) * windowMs + windowMs;
    long watermark = maxEventTimeMs - config.maxOutOfOrderness().toMillis();
    if (kind == Kind.LATE) {
      return watermark >= windowEnd && watermark < windowEnd + latenessMs;
    }
    if (kind == Kind.TOO_LATE) {
      return watermark >= windowEnd + latenessMs;
    }
    return true;
  }
}
