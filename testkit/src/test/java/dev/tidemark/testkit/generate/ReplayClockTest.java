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
