package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.Summary;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * One producer with a clock in 2099 among honest events of 2026-01-01, replayed end to end: with
 * the future-skew bound the 2099 event moves no watermark and no honest event is late; without it
 * (a bound of a century) the same file makes honest events too late.
 */
@RunWith(JUnit4.class)
public class FutureEventIT {
  @ClassRule public static final TemporaryFolder FOLDER = new TemporaryFolder();

  private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");
  private static final String FROM_2099 = "2099-01-01T00:00:00Z";
  private static final int HONEST_EVENTS = 19;

  static String event(String id, String time, String account) {
    return "{\"specversion\":\"1.0\",\"id\":\""
        + id
        + "\",\"source\":\"/test\",\"type\":\"payments.transaction.v1\",\"time\":\""
        + time
        + "\",\"data\":{\"accountId\":\""
        + account
        + "\",\"amount\":1.00,\"currency\":\"GBP\"}}";
  }

  /**
   * 19 events 20 s apart on two accounts, the replay clock keeping pace; after the tenth, one more
   * processing-time step and the 2099 event.
   */
  static Path replay() throws IOException {
    List<String> lines = new ArrayList<>();
    for (int i = 0; i < HONEST_EVENTS; i++) {
      if (i > 0) {
        lines.add("{\"advanceProcessingTime\":\"PT20S\"}");
      }
      lines.add(
          event(
              "e" + i,
              START.plus(Duration.standardSeconds(20L * i)).toString(),
              "acct-" + (i % 2)));
      if (i == 9) {
        lines.add("{\"advanceProcessingTime\":\"PT1S\"}");
        lines.add(event("from-2099", FROM_2099, "acct-0"));
      }
    }
    Path file = FOLDER.getRoot().toPath().resolve("future.ndjson");
    Files.write(file, (String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8));
    return file;
  }

  @Test
  public void aFutureEventLeavesHonestEventsOnTime() throws IOException {
    Path file = replay();
    Summary bounded = Launch.run(TestReplays.options(file, FOLDER.newFolder("bounded").toPath()));
    assertThat(bounded.identityViolations().toString(), bounded.identityHolds(), is(true));
    assertThat(bounded.tooLate, is(0L));
    assertThat(bounded.partiallyLate, is(0L));

    // The same file with the bound out of reach: the 2099 event moves the watermark.
    Summary unbounded =
        Launch.run(
            TestReplays.options(
                file, FOLDER.newFolder("unbounded").toPath(), "--maxFutureSkew=PT1000000H"));
    assertThat(unbounded.tooLate + unbounded.partiallyLate, greaterThan(0L));
  }

  /** The parser's half of the bound: the 2099 event is a {@code time_in_future} dead letter. */
  @Test
  public void theFutureEventIsATimeInFutureDeadLetter() throws IOException {
    Summary summary =
        Launch.run(TestReplays.options(replay(), FOLDER.newFolder("dead-letters").toPath()));
    assertThat(summary.identityHolds(), is(true));
    assertThat(summary.deadLettersByReason.get("time_in_future"), is(1L));
    assertThat(summary.valid, is((long) HONEST_EVENTS));
  }
}
