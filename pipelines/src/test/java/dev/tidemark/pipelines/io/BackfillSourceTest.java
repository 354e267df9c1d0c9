package dev.tidemark.pipelines.io;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import dev.tidemark.transforms.values.RawRecord;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Instant;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** The backfill reader: lines, line ends, oversized lines read in bounded memory, timestamps. */
@RunWith(JUnit4.class)
public class BackfillSourceTest {
  @Rule public final transient TestPipeline p = TestPipeline.create();
  @Rule public final transient TemporaryFolder folder = new TemporaryFolder();

  private static final int MAX_EVENT_BYTES = 65536;
  private static final long HUGE_LINE_BYTES = 64L * 1024 * 1024;

  /** Origin's line number, the record's size or reject, its timestamp and its first bytes. */
  static final class DescribeFn extends DoFn<RawRecord, String> {
    @ProcessElement
    public void processElement(
        @Element RawRecord record, @Timestamp Instant timestamp, OutputReceiver<String> out) {
      String origin = record.origin();
      String line = origin.substring(origin.lastIndexOf(':') + 1);
      String head =
          new String(
              Arrays.copyOf(record.payload(), Math.min(8, record.payload().length)),
              StandardCharsets.UTF_8);
      out.output(
          line
              + " bytes="
              + record.payload().length
              + " head="
              + head
              + (record.sourceError() == null
                  ? ""
                  : " " + record.sourceError().code() + ": " + record.sourceErrorMessage())
              + (timestamp.equals(BoundedWindow.TIMESTAMP_MIN_VALUE) ? "" : " ts=" + timestamp));
    }
  }

  /**
   * A 64 MiB line between two short ones, written as a stream: the reader keeps its first
   * maxEventBytes bytes, reports its real size, and reads on. A line of exactly the limit plus a CR
   * is accepted; one byte more is not.
   */
  @Test
  public void anOversizedLineIsRejectedWhileReadingAndLaterLinesAreRead() throws IOException {
    Path file = folder.newFile("huge.ndjson").toPath();
    try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16)) {
      out.write("{\"first\":1}\n".getBytes(StandardCharsets.UTF_8));
      byte[] block = new byte[1 << 16];
      Arrays.fill(block, (byte) 'x');
      block[0] = '{';
      out.write(block);
      Arrays.fill(block, 0, 1, (byte) 'x');
      for (long written = block.length; written < HUGE_LINE_BYTES; written += block.length) {
        out.write(block);
      }
      out.write('\n');
      byte[] exact = new byte[MAX_EVENT_BYTES];
      Arrays.fill(exact, (byte) 'y');
      out.write(exact);
      out.write("\r\n".getBytes(StandardCharsets.UTF_8));
      out.write(exact);
      out.write("z\n".getBytes(StandardCharsets.UTF_8));
      out.write("{\"last\":4}".getBytes(StandardCharsets.UTF_8));
    }
    assertThat(Files.size(file) > HUGE_LINE_BYTES, is(true));

    PCollection<String> records =
        p.apply(BackfillSource.from(file.toString()).withMaxEventBytes(MAX_EVENT_BYTES))
            .apply(ParDo.of(new DescribeFn()));
    List<String> expected = new ArrayList<>();
    expected.add("1 bytes=11 head={\"first\"");
    expected.add(
        "2 bytes="
            + MAX_EVENT_BYTES
            + " head={xxxxxxx oversized_record: line of "
            + HUGE_LINE_BYTES
            + " bytes is over --maxEventBytes="
            + MAX_EVENT_BYTES
            + "; the dead letter keeps its first "
            + MAX_EVENT_BYTES
            + " bytes");
    expected.add("3 bytes=" + MAX_EVENT_BYTES + " head=yyyyyyyy");
    expected.add(
        "4 bytes="
            + MAX_EVENT_BYTES
            + " head=yyyyyyyy oversized_record: line of "
            + (MAX_EVENT_BYTES + 1)
            + " bytes is over --maxEventBytes="
            + MAX_EVENT_BYTES
            + "; the dead letter keeps its first "
            + MAX_EVENT_BYTES
            + " bytes");
    expected.add("5 bytes=10 head={\"last\":");
    PAssert.that(records).containsInAnyOrder(expected);
    p.run().waitUntilFinish();
  }

  @Test
  public void maxEventBytesMustBePositive() {
    IllegalArgumentException e =
        org.junit.Assert.assertThrows(
            IllegalArgumentException.class, () -> BackfillSource.from("x").withMaxEventBytes(0));
    assertThat(e.getMessage().startsWith("--maxEventBytes must be positive"), is(true));
  }
}
