package dev.tidemark.transforms.util;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import java.time.DateTimeException;
import java.time.OffsetDateTime;
import java.util.Random;
import java.util.regex.Pattern;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * {@link Rfc3339#epochMillis} against the parser it replaced: the RFC 3339 pattern, then {@link
 * OffsetDateTime#parse}. Both must accept the same strings and give the same instant.
 */
@RunWith(JUnit4.class)
public class Rfc3339Test {
  private static final Pattern RFC3339 =
      Pattern.compile(
          "\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?([Zz]|[+-]\\d{2}:\\d{2})");

  /** The reference: epoch milliseconds, or null where it rejects the text. */
  private static Long reference(String text) {
    if (!RFC3339.matcher(text).matches()) {
      return null;
    }
    try {
      return OffsetDateTime.parse(text).toInstant().toEpochMilli();
    } catch (DateTimeException e) {
      return null;
    }
  }

  private static Long fast(String text) {
    try {
      return Rfc3339.epochMillis(text);
    } catch (DateTimeException e) {
      return null;
    }
  }

  @Test
  public void readsTheUsualForms() {
    assertThat(Rfc3339.epochMillis("1970-01-01T00:00:00Z"), is(0L));
    assertThat(Rfc3339.epochMillis("2026-01-01T00:05:00.123456789Z"), is(1767225900123L));
    assertThat(Rfc3339.epochMillis("2026-01-01t01:05:00.5+01:00"), is(1767225900500L));
    assertThat(Rfc3339.epochMillis("2025-12-31T19:05:00-05:00"), is(1767225900000L));
    assertThat(Rfc3339.epochMillis("1969-12-31T23:59:59.999z"), is(-1L));
  }

  @Test
  public void rejectsWhatJavaTimeRejects() {
    for (String text :
        new String[] {
          "2026-02-29T00:00:00Z", // not a leap year
          "2026-04-31T00:00:00Z",
          "2026-01-01T24:00:00Z",
          "2026-01-01T23:59:60Z", // leap second
          "2026-01-01T00:00:00.1234567890Z", // ten fraction digits
          "2026-01-01T00:00:00+18:01",
          "2026-01-01T00:00:00+05:60",
          "2026-01-01T00:00:00",
          "2026-01-01 00:00:00Z",
          "2026-01-01T00:00:00.Z",
          "2026-01-01T00:00Z",
          "2026-1-01T00:00:00Z",
          "+2026-01-01T00:00:00Z",
          "2026-01-01T00:00:00+0100",
          "2026-01-01T00:00:00Zjunk",
          "２０２６-01-01T00:00:00Z", // full-width digits
        }) {
      assertThat(text, reference(text), is((Long) null));
      assertThrows(text, DateTimeException.class, () -> Rfc3339.epochMillis(text));
    }
  }

  @Test
  public void agreesWithJavaTimeOnRandomNearMisses() {
    Random random = new Random(20261130L);
    int accepted = 0;
    for (int i = 0; i < 200_000; i++) {
      String text = randomTimestamp(random);
      Long expected = reference(text);
      assertThat(text, fast(text), is(expected));
      if (expected != null) {
        accepted++;
      }
    }
    assertThat(
        "both valid and invalid strings were tried",
        accepted > 20_000 && accepted < 180_000,
        is(true));
  }

  private static String two(Random random, int bound) {
    return String.format("%02d", random.nextInt(bound));
  }

  private static String randomTimestamp(Random random) {
    StringBuilder text = new StringBuilder();
    text.append(String.format("%04d", random.nextInt(10_000)))
        .append('-')
        .append(two(random, random.nextInt(8) == 0 ? 100 : 13))
        .append('-')
        .append(two(random, random.nextInt(8) == 0 ? 100 : 32))
        .append("TTTTTTt x".charAt(random.nextInt(9)))
        .append(two(random, random.nextInt(8) == 0 ? 100 : 25))
        .append(':')
        .append(two(random, 61))
        .append(':')
        .append(two(random, 61));
    int fraction = random.nextInt(14) - 2;
    if (fraction >= 0) {
      text.append('.');
      for (int d = 0; d < fraction; d++) {
        text.append((char) ('0' + random.nextInt(10)));
      }
    }
    switch (random.nextInt(6)) {
      case 0:
        text.append('Z');
        break;
      case 1:
        text.append('z');
        break;
      case 2:
        break; // no offset
      default:
        text.append(random.nextBoolean() ? '+' : '-')
            .append(two(random, 20))
            .append(random.nextInt(10) == 0 ? "" : ":")
            .append(two(random, 62));
    }
    if (random.nextInt(20) == 0) {
      int at = random.nextInt(text.length());
      text.setCharAt(at, ":-T.+9Zx".charAt(random.nextInt(8)));
    }
    return text.toString();
  }
}
