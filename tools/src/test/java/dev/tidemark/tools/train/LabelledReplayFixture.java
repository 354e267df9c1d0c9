package dev.tidemark.tools.train;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import org.joda.time.Instant;

/**
 * A small labelled replay file for tests, in the format {@code ./tidemark generate} writes (the
 * generator lives in {@code pipelines}, which {@code model} must not depend on): legit payments
 * spread over the accounts, card-testing bursts (many small payments at distinct merchants) and
 * account-takeover bursts (a few large payments from abroad) labelled {@code fraud}, identical
 * re-sends, one malformed line and {@code advanceProcessingTime} directives. Deterministic per
 * seed; no conflicting duplicates, no late events (so a streaming replay and a batch run see the
 * same events).
 */
public final class LabelledReplayFixture {
  public static final Instant START = Instant.parse("2026-01-01T00:00:00Z");
  public static final String SOURCE = "/tidemark/test/pos";

  private LabelledReplayFixture() {}

  /** One event line before serialisation. */
  public record Line(long timeMs, String json) {}

  /**
   * Writes {@code legitEvents} legit events over {@code minutes} minutes for {@code accounts}
   * accounts, plus {@code bursts} fraud bursts spread evenly over the same time.
   */
  public static Path write(
      Path file, long seed, int accounts, int legitEvents, int bursts, int minutes)
      throws IOException {
    SplittableRandom random = new SplittableRandom(seed);
    long spanMs = minutes * 60_000L;
    List<Line> events = new ArrayList<>();
    int id = 0;
    for (int i = 0; i < legitEvents; i++) {
      long t = (long) (random.nextDouble() * spanMs);
      int account = random.nextInt(accounts);
      long cents = 100 + (long) (Math.exp(random.nextGaussian() * 0.9) * 2500);
      events.add(event(++id, t, account, cents, "m-" + (1 + random.nextInt(80)), "GB", "legit"));
    }
    for (int b = 0; b < bursts; b++) {
      long t0 = (long) ((b + 0.5) * spanMs / bursts);
      int account = random.nextInt(accounts);
      if (b % 2 == 0) {
        int n = 8 + random.nextInt(8);
        for (int i = 0; i < n; i++) {
          long cents = 50 + random.nextInt(250);
          events.add(
              event(
                  ++id,
                  t0 + random.nextInt(120_000),
                  account,
                  cents,
                  "m-" + (100 + b * 20 + i),
                  "GB",
                  "fraud"));
        }
      } else {
        int n = 3 + random.nextInt(3);
        for (int i = 0; i < n; i++) {
          long cents = 50_000 + random.nextInt(140_000);
          events.add(
              event(
                  ++id,
                  t0 + random.nextInt(180_000),
                  account,
                  cents,
                  "m-" + (1 + random.nextInt(80)),
                  "RU",
                  "fraud"));
        }
      }
    }
    events.sort(java.util.Comparator.comparingLong(Line::timeMs).thenComparing(Line::json));
    StringBuilder out = new StringBuilder();
    long clock = events.get(0).timeMs();
    for (int i = 0; i < events.size(); i++) {
      Line line = events.get(i);
      if (line.timeMs() - clock >= 1000) {
        out.append(
                String.format(
                    Locale.ROOT,
                    "{\"advanceProcessingTime\":\"PT%.3fS\"}",
                    (line.timeMs() - clock) / 1000.0))
            .append('\n');
        clock = line.timeMs();
      }
      out.append(line.json()).append('\n');
      if (i % 97 == 13) {
        out.append(line.json()).append('\n'); // an identical re-send
      }
      if (i == events.size() / 2) {
        out.append("{\"specversion\":\"1.0\",\"id\":\"bad-1\"").append('\n'); // truncated JSON
      }
    }
    Files.writeString(file, out.toString(), StandardCharsets.UTF_8);
    return file;
  }

  private static Line event(
      int id,
      long offsetMs,
      int account,
      long cents,
      String merchant,
      String country,
      String label) {
    String time = dev.tidemark.transforms.util.Json.instant(START.plus(offsetMs));
    String json =
        String.format(
            Locale.ROOT,
            "{\"specversion\":\"1.0\",\"id\":\"txn-%06d\",\"source\":\"%s\","
                + "\"type\":\"payments.transaction.v1\",\"time\":\"%s\","
                + "\"datacontenttype\":\"application/json\",\"data\":{\"accountId\":\"acct-%03d\","
                + "\"amount\":%d.%02d,\"currency\":\"GBP\",\"merchantId\":\"%s\",\"country\":\"%s\","
                + "\"label\":\"%s\"}}",
            id,
            SOURCE,
            time,
            account,
            cents / 100,
            cents % 100,
            merchant,
            country,
            label);
    return new Line(offsetMs, json);
  }
}
