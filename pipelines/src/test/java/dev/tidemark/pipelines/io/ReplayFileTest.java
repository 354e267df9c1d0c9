package dev.tidemark.pipelines.io;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;

import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.transforms.ParseCloudEvents;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.DeadLetterReason;
import dev.tidemark.transforms.values.Event;
import dev.tidemark.transforms.values.RawRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.transforms.WithFailures;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** The replay-file reader: directives, broken lines, the replay clock. */
@RunWith(JUnit4.class)
public class ReplayFileTest {
  @Rule public final transient TestPipeline p = TestPipeline.create();
  @Rule public final transient TemporaryFolder folder = new TemporaryFolder();

  static String event(String id, String time, String amount) {
    return "{\"specversion\":\"1.0\",\"id\":\""
        + id
        + "\",\"source\":\"/test\",\"type\":\"payments.transaction.v1\",\"time\":\""
        + time
        + "\",\"data\":{\"accountId\":\"acct-1\",\"amount\":"
        + amount
        + ",\"currency\":\"GBP\"}}";
  }

  private Path write(String... lines) throws IOException {
    Path file = folder.newFile("replay.ndjson").toPath();
    Files.write(file, String.join("\n", lines).concat("\n").getBytes(StandardCharsets.UTF_8));
    return file;
  }

  @Test
  public void directivesDriveTheClocksAndBrokenLinesBecomeDeadLetters() throws IOException {
    Path file =
        write(
            event("e1", "2026-01-01T00:00:00Z", "1.00"),
            "{\"advanceProcessingTime\":\"PT10S\"}",
            event("e2", "2026-01-01T00:00:05Z", "2.00"),
            "{\"advanceWatermarkTo\":\"2026-01-01T00:01:00Z\"}",
            "{\"advanceWatermarkTo\":\"2026-01-01T00:00:30Z\"}", // backwards
            "{\"advanceProcessingTime\":\"soon\"}", // not a duration
            "{\"advanceWatermarkTo\":\"2026-01-01T00:02:00Z\",\"advanceProcessingTime\":\"PT1S\"}",
            "{\"advanceWatermarkToInfinity\":true}",
            event("e3", "2026-01-01T00:00:06Z", "3.00")); // after the end
    ReplayFile replay = ReplayFile.read(file, Duration.standardSeconds(30));
    assertThat(replay.lines(), is(9));
    assertThat(replay.directives(), is(3));
    assertThat(replay.rejected(), is(4));
    assertThat(replay.records(), is(6));

    PCollection<RawRecord> raw = p.apply(replay.stream());
    WithFailures.Result<PCollection<Event>, DeadLetter> parsed =
        raw.apply(ParseCloudEvents.create());
    PAssert.that(parsed.output())
        .satisfies(
            events -> {
              List<Event> all = new ArrayList<>();
              events.forEach(all::add);
              assertThat(all.size(), is(2));
              for (Event event : all) {
                // The replay clock starts at the first event and moves with advanceProcessingTime.
                Instant expected =
                    Instant.parse(
                        event.id().equals("e1") ? "2026-01-01T00:00:00Z" : "2026-01-01T00:00:10Z");
                assertThat(event.id(), event.ingestionTime(), is(expected));
              }
              return null;
            });
    PAssert.that(parsed.failures())
        .satisfies(
            failures -> {
              List<String> seen = new ArrayList<>();
              for (DeadLetter failure : failures) {
                seen.add(failure.reason() + "@" + failure.origin());
                assertThat(failure.step(), is("Source"));
              }
              java.util.Collections.sort(seen);
              assertThat(
                  String.join(",", seen),
                  is(
                      "AFTER_END_OF_REPLAY@replay:replay.ndjson:9,"
                          + "INVALID_DIRECTIVE@replay:replay.ndjson:5,"
                          + "INVALID_DIRECTIVE@replay:replay.ndjson:6,"
                          + "INVALID_DIRECTIVE@replay:replay.ndjson:7"));
              return null;
            });
    p.run().waitUntilFinish();
  }

  @Test
  public void backwardsWatermarkMessageSaysWhy() throws IOException {
    Path file =
        write(
            event("e1", "2026-01-01T00:00:00Z", "1.00"),
            "{\"advanceWatermarkTo\":\"2026-01-01T00:01:00Z\"}",
            "{\"advanceWatermarkTo\":\"2026-01-01T00:00:30Z\"}");
    ReplayFile replay = ReplayFile.read(file, Duration.standardSeconds(30));
    PCollection<DeadLetter> failures =
        p.apply(replay.stream()).apply(ParseCloudEvents.create()).failures();
    PAssert.that(failures)
        .satisfies(
            all -> {
              DeadLetter only = all.iterator().next();
              assertThat(only.reason(), is(DeadLetterReason.INVALID_DIRECTIVE));
              assertThat(only.message(), containsString("would not move the watermark forward"));
              assertThat(only.payloadText(), containsString("00:00:30Z"));
              return null;
            });
    p.run().waitUntilFinish();
  }

  @Test
  public void withoutClockDirectivesTheClockFollowsTheAcceptedEventTimes() throws IOException {
    Path file =
        write(
            event("e1", "2026-01-01T00:00:00Z", "1.00"),
            event("e2", "2026-01-01T00:09:00Z", "2.00"),
            event("e3", "2026-01-01T00:18:00Z", "3.00"),
            event("future", "2099-01-01T00:00:00Z", "4.00"),
            event("e4", "2026-01-01T00:17:00Z", "5.00"));
    ReplayFile replay = ReplayFile.read(file, Duration.standardSeconds(30));
    WithFailures.Result<PCollection<Event>, DeadLetter> parsed =
        p.apply(replay.stream()).apply(ParseCloudEvents.create());

    assertTheClockFollowedTheAcceptedEventTimes(parsed);
    p.run().waitUntilFinish();
  }

  @Test
  public void theClockFollowsTheSpecsEventTimeField() throws IOException {
    // The attribute time says midnight on every line; data.paidAt holds the event times.
    String[][] lines = {
      {"e1", "2026-01-01T00:00:00Z"},
      {"e2", "2026-01-01T00:09:00Z"},
      {"e3", "2026-01-01T00:18:00Z"},
      {"future", "2099-01-01T00:00:00Z"},
      {"e4", "2026-01-01T00:17:00Z"}
    };
    String[] events = new String[lines.length];
    for (int i = 0; i < lines.length; i++) {
      events[i] =
          event(lines[i][0], "2026-01-01T00:00:00Z", "1.00")
              .replace(
                  "\"currency\":\"GBP\"}",
                  "\"currency\":\"GBP\",\"paidAt\":\"" + lines[i][1] + "\"}");
    }
    Path file = write(events);
    String yaml =
        SpecLoader.bundledText("payments")
            .replace(
                "country:    {type: country, optional: true, reason: invalid_country}",
                "country:    {type: country, optional: true, reason: invalid_country}\n"
                    + "    paidAt:     {type: timestamp, reason: invalid_paid_at}")
            .replace("eventTime: time", "eventTime: paidAt");
    PipelineSpec spec = SpecLoader.parse(yaml, "paid-at.yaml");
    ReplayFile replay =
        ReplayFile.read(
            file,
            Duration.standardSeconds(30),
            ReplayFile.DEFAULT_MAX_FUTURE_SKEW,
            CloudEventTime.of(spec));
    WithFailures.Result<PCollection<Event>, DeadLetter> parsed =
        p.apply(replay.stream())
            .apply(
                ParseCloudEvents.create()
                    .withEvents(spec.events())
                    .withEventTime(spec.clocks().eventTime()));
    assertTheClockFollowedTheAcceptedEventTimes(parsed);
    p.run().waitUntilFinish();
  }

  /**
   * The events e1..e4 at 00:00, 00:09, 00:18 and 00:17 with a 2099 event fourth: each line is
   * ingested at the latest event time accepted before it; the 2099 event is not accepted, so it
   * moves the clock no more than the watermark.
   */
  private void assertTheClockFollowedTheAcceptedEventTimes(
      WithFailures.Result<PCollection<Event>, DeadLetter> parsed) {
    PAssert.that(parsed.output())
        .satisfies(
            events -> {
              java.util.Map<String, Instant> ingested = new java.util.TreeMap<>();
              events.forEach(e -> ingested.put(e.id(), e.ingestionTime()));
              assertThat(
                  ingested,
                  is(
                      java.util.Map.of(
                          "e1", Instant.parse("2026-01-01T00:00:00Z"),
                          "e2", Instant.parse("2026-01-01T00:00:00Z"),
                          "e3", Instant.parse("2026-01-01T00:09:00Z"),
                          "e4", Instant.parse("2026-01-01T00:18:00Z"))));
              return null;
            });
    PAssert.that(parsed.failures())
        .satisfies(
            failures -> {
              DeadLetter only = failures.iterator().next();
              assertThat(only.reason(), is(DeadLetterReason.TIME_IN_FUTURE));
              assertThat(only.origin(), is("replay:replay.ndjson:4"));
              return null;
            });
  }
}
