package dev.tidemark.testkit.generate;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/** A replay's clock in coarser steps. */
public class ReplayClockTest {
  @Rule public final TemporaryFolder temp = new TemporaryFolder();

  @Test
  public void coarserClockKeepsEveryRecordInOrderAndAddsUpItsSteps() throws Exception {
    Path generated = temp.getRoot().toPath().resolve("generated.ndjson");
    Files.writeString(
        generated,
        String.join(
                "\n",
                "{\"id\":\"1\"}",
                "{\"advanceProcessingTime\":\"PT1S\"}",
                "{\"id\":\"2\"}",
                "not json",
                "{\"advanceProcessingTime\":\"PT2S\"}",
                "{\"id\":\"3\"}",
                "{\"advanceProcessingTime\":\"PT4S\"}",
                "{\"id\":\"4\"}")
            + "\n",
        StandardCharsets.UTF_8);
    Path coarse = temp.getRoot().toPath().resolve("coarse.ndjson");
    ReplayClock.coarsen(generated, coarse, 2);
    assertThat(
        Files.readAllLines(coarse, StandardCharsets.UTF_8),
        is(
            List.of(
                "{\"id\":\"1\"}",
                "{\"id\":\"2\"}",
                "{\"advanceProcessingTime\":\"PT1S\"}",
                "not json",
                "{\"id\":\"3\"}",
                "{\"advanceProcessingTime\":\"PT2S\"}",
                "{\"id\":\"4\"}")));
  }

  @Test
  public void labelsArriveOnTheReplaysClockNeverBeforeTheirTime() throws Exception {
    Path replay = temp.getRoot().toPath().resolve("replay.ndjson");
    Files.writeString(
        replay,
        String.join(
                "\n",
                "{\"id\":\"e1\",\"time\":\"2026-01-01T00:00:00Z\"}",
                "{\"advanceProcessingTime\":\"PT10S\"}",
                "{\"id\":\"e2\",\"time\":\"2026-01-01T00:00:09Z\"}",
                "{\"advanceProcessingTime\":\"PT10S\"}",
                "{\"id\":\"e3\",\"time\":\"2026-01-01T00:00:19Z\"}")
            + "\n",
        StandardCharsets.UTF_8);
    Path labels = temp.getRoot().toPath().resolve("labels.ndjson");
    Files.writeString(
        labels,
        String.join(
                "\n",
                "{\"id\":\"l1\",\"time\":\"2026-01-01T00:00:05Z\"}",
                "{\"id\":\"l2\",\"time\":\"2026-01-01T00:00:20Z\"}",
                "{\"id\":\"l3\",\"time\":\"2026-01-01T02:00:00Z\"}",
                "{\"id\":\"l4\",\"time\":\"2026-01-01T02:30:00Z\"}",
                "{\"id\":\"l5\",\"time\":\"2026-01-01T05:00:00Z\"}")
            + "\n",
        StandardCharsets.UTF_8);
    Path merged = temp.getRoot().toPath().resolve("merged.ndjson");
    ReplayClock.withLabels(replay, labels, merged, java.time.Duration.ofHours(1));
    assertThat(
        Files.readAllLines(merged, StandardCharsets.UTF_8),
        is(
            List.of(
                "{\"id\":\"e1\",\"time\":\"2026-01-01T00:00:00Z\"}",
                // The directive moves the clock to 00:00:10: l1 has arrived.
                "{\"advanceProcessingTime\":\"PT10S\"}",
                "{\"id\":\"l1\",\"time\":\"2026-01-01T00:00:05Z\"}",
                "{\"id\":\"e2\",\"time\":\"2026-01-01T00:00:09Z\"}",
                "{\"advanceProcessingTime\":\"PT10S\"}",
                "{\"id\":\"l2\",\"time\":\"2026-01-01T00:00:20Z\"}",
                "{\"id\":\"e3\",\"time\":\"2026-01-01T00:00:19Z\"}",
                // After the replay: the clock to an hour past the next label, then every label
                // before it.
                "{\"advanceProcessingTime\":\"PT2H59M40S\"}",
                "{\"id\":\"l3\",\"time\":\"2026-01-01T02:00:00Z\"}",
                "{\"id\":\"l4\",\"time\":\"2026-01-01T02:30:00Z\"}",
                "{\"advanceProcessingTime\":\"PT3H\"}",
                "{\"id\":\"l5\",\"time\":\"2026-01-01T05:00:00Z\"}")));
  }

  @Test
  public void otherLinesAreCopiedByteForByte() throws Exception {
    Path generated = temp.getRoot().toPath().resolve("generated.ndjson");
    byte[] invalidUtf8 = {'{', (byte) 0xff, (byte) 0xfe, '}'};
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    bytes.write(invalidUtf8);
    bytes.write(
        "\r\n{\"advanceProcessingTime\":\"PT0.5S\"}\n{\"id\":\"1\"}\n"
            .getBytes(StandardCharsets.US_ASCII));
    Files.write(generated, bytes.toByteArray());
    Path coarse = temp.getRoot().toPath().resolve("coarse.ndjson");
    ReplayClock.coarsen(generated, coarse, 1);
    java.io.ByteArrayOutputStream expected = new java.io.ByteArrayOutputStream();
    expected.write(invalidUtf8);
    expected.write(
        "\n{\"id\":\"1\"}\n{\"advanceProcessingTime\":\"PT0.5S\"}\n"
            .getBytes(StandardCharsets.US_ASCII));
    assertThat(Files.readAllBytes(coarse), is(expected.toByteArray()));
  }
}
