package dev.tidemark.pipelines;

import org.joda.time.Duration;
import org.joda.time.format.ISOPeriodFormat;

/** Parses the ISO-8601 durations of the command line, naming the flag when one is wrong. */
public final class Durations {
  private Durations() {}

  /** Parses {@code value} (e.g. {@code PT5M}, {@code PT1H30M}, {@code PT0.5S}). */
  public static Duration parse(String flag, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException("--" + flag + " needs an ISO-8601 duration such as PT5M");
    }
    try {
      return ISOPeriodFormat.standard().parsePeriod(value.trim()).toStandardDuration();
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(
          "--"
              + flag
              + "="
              + value
              + " is not an ISO-8601 duration of hours, minutes and seconds, such as PT5M,"
              + " PT30S or PT1H",
          e);
    }
  }
}
