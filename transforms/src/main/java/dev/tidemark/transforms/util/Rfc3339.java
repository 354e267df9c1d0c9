package dev.tidemark.transforms.util;

import java.time.DateTimeException;
import java.time.LocalDate;
import java.time.ZoneOffset;

/**
 * RFC 3339 timestamps as CloudEvents {@code time} carries them, read without a regular expression
 * or a {@link java.time.format.DateTimeFormatter}, which together would be a large share of the
 * parser's time per event.
 *
 * <p>Accepts exactly what {@code java.time.OffsetDateTime.parse} accepts among the strings matching
 * {@code \d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})}: real calendar
 * dates, hours to 23, seconds to 59 (no leap second), at most nine fraction digits, offsets up to
 * ±18:00.
 */
public final class Rfc3339 {
  private static final int[] NANOS_PER_DIGIT = {
    100_000_000, 10_000_000, 1_000_000, 100_000, 10_000, 1_000, 100, 10, 1
  };

  private Rfc3339() {}

  /**
   * Milliseconds since the epoch of {@code text}, digits below the millisecond dropped.
   *
   * @throws DateTimeException if {@code text} is not such a timestamp
   */
  public static long epochMillis(String text) {
    int length = text.length();
    if (length < 20) {
      throw invalid(text);
    }
    int year = digits(text, 0, 4);
    expect(text, 4, '-');
    int month = digits(text, 5, 2);
    expect(text, 7, '-');
    int day = digits(text, 8, 2);
    char separator = text.charAt(10);
    if (separator != 'T' && separator != 't') {
      throw invalid(text);
    }
    int hour = digits(text, 11, 2);
    expect(text, 13, ':');
    int minute = digits(text, 14, 2);
    expect(text, 16, ':');
    int second = digits(text, 17, 2);
    int at = 19;
    int nanos = 0;
    if (text.charAt(at) == '.') {
      int start = ++at;
      while (at < length && isDigit(text.charAt(at))) {
        at++;
      }
      int count = at - start;
      if (count == 0 || count > NANOS_PER_DIGIT.length) {
        throw invalid(text);
      }
      nanos = digits(text, start, count) * NANOS_PER_DIGIT[count - 1];
    }
    if (at >= length) {
      throw invalid(text);
    }
    char zone = text.charAt(at);
    int offsetSeconds;
    if ((zone == 'Z' || zone == 'z') && at + 1 == length) {
      offsetSeconds = 0;
    } else if ((zone == '+' || zone == '-') && at + 6 == length) {
      int hours = digits(text, at + 1, 2);
      expect(text, at + 3, ':');
      int minutes = digits(text, at + 4, 2);
      int sign = zone == '-' ? -1 : 1;
      offsetSeconds = ZoneOffset.ofHoursMinutes(sign * hours, sign * minutes).getTotalSeconds();
    } else {
      throw invalid(text);
    }
    if (hour > 23 || minute > 59 || second > 59) {
      throw invalid(text);
    }
    long epochDay = LocalDate.of(year, month, day).toEpochDay();
    long epochSecond = epochDay * 86_400 + hour * 3_600 + minute * 60 + second - offsetSeconds;
    return epochSecond * 1_000 + nanos / 1_000_000;
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  private static int digits(String text, int start, int count) {
    int value = 0;
    for (int i = start; i < start + count; i++) {
      char c = text.charAt(i);
      if (!isDigit(c)) {
        throw invalid(text);
      }
      value = value * 10 + (c - '0');
    }
    return value;
  }

  private static void expect(String text, int at, char c) {
    if (text.charAt(at) != c) {
      throw invalid(text);
    }
  }

  private static DateTimeException invalid(String text) {
    return new DateTimeException("not an RFC 3339 timestamp: " + text);
  }
}
