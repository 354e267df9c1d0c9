package dev.tidemark.pipelines.io;

import dev.tidemark.transforms.values.DeadLetterReason;
import dev.tidemark.transforms.values.RawRecord;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import java.util.Arrays;
import org.apache.beam.sdk.io.FileIO;
import org.apache.beam.sdk.io.fs.EmptyMatchTreatment;
import org.apache.beam.sdk.io.fs.MatchResult;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Instant;

/**
 * Reads NDJSON CloudEvents from files (a glob) as a bounded source, for historical reprocessing:
 * one {@link RawRecord} per line, as raw bytes (so invalid UTF-8 reaches the dead letters intact).
 * A record's ingestion time is its file's last-modified time, the moment the platform accepted the
 * file; its origin is {@code file:<path>:<line>}.
 *
 * <p>Files are read in parallel, each file sequentially: split very large backfills into several
 * files. In batch mode the watermark jumps to the end once all input is read, so every window fires
 * exactly one on-time pane and nothing is late.
 *
 * <p><b>Event time.</b> Records carry the minimum timestamp (the parser moves each event to its
 * event time) and the source has no watermark of its own: no event, however far in the future, can
 * move it. Future events are measured against the backfill's own ingestion clock, the file's
 * last-modified time: an event more than {@code --maxFutureSkew} after it is dead-lettered by the
 * parser as {@code time_in_future}. A backfill of files copied long after the events were written
 * keeps working (their times lie before the copy); a file whose events lie after its own
 * last-modified time comes from a producer with a wrong clock.
 *
 * <p><b>Size.</b> A line is read into memory only up to {@link #withMaxEventBytes} bytes: the rest
 * of a longer line is skipped unread into memory, and the line becomes a rejected record ({@code
 * oversized_record}) with its first {@code maxEventBytes} bytes and its real size in the message. A
 * line of a gigabyte costs no more memory than the limit.
 *
 * <pre>{@code
 * PCollection<RawRecord> raw =
 *     pipeline.apply("ReadBackfill", BackfillSource.from("history/*.ndjson").withMaxEventBytes(65536));
 * }</pre>
 */
public final class BackfillSource extends PTransform<PBegin, PCollection<RawRecord>> {
  /** The default largest line read into a record, as the parser's default. */
  public static final int DEFAULT_MAX_EVENT_BYTES = 64 * 1024;

  private final String glob;
  private final int maxEventBytes;

  private BackfillSource(String glob, int maxEventBytes) {
    this.glob = glob;
    this.maxEventBytes = maxEventBytes;
  }

  public static BackfillSource from(String glob) {
    if (glob == null || glob.isBlank()) {
      throw new IllegalArgumentException(
          "--source=backfill needs --input=GLOB, e.g. --input='history/*.ndjson'");
    }
    return new BackfillSource(glob, DEFAULT_MAX_EVENT_BYTES);
  }

  /** The largest line, in bytes, read into a record; longer lines are rejected while reading. */
  public BackfillSource withMaxEventBytes(int bytes) {
    if (bytes <= 0 || bytes > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException(
          "--maxEventBytes must be positive and below 2 GiB, got "
              + bytes
              + "; the default is 65536");
    }
    return new BackfillSource(glob, bytes);
  }

  @Override
  public PCollection<RawRecord> expand(PBegin begin) {
    return begin
        .apply(
            "MatchFiles",
            FileIO.match().filepattern(glob).withEmptyMatchTreatment(EmptyMatchTreatment.DISALLOW))
        .apply("OpenFiles", FileIO.readMatches())
        .apply("ReadLines", ParDo.of(new ReadLinesFn(maxEventBytes)))
        .setCoder(RawRecord.RawRecordCoder.of());
  }

  /**
   * The file's last-modified time. Beam's local filesystem leaves it at 0 when matching a glob, so
   * a local file's is read from the disk; a filesystem that reports none gives the time of reading.
   */
  static Instant ingestionTime(MatchResult.Metadata metadata, String path) throws IOException {
    long millis = metadata.lastModifiedMillis();
    if (millis > 0) {
      return new Instant(millis);
    }
    if ("file".equals(metadata.resourceId().getScheme())) {
      return new Instant(
          java.nio.file.Files.getLastModifiedTime(java.nio.file.Paths.get(path)).toMillis());
    }
    return Instant.now();
  }

  /**
   * Splits a file into lines of bytes ({@code \n}, with an optional {@code \r} before it), holding
   * at most {@code maxEventBytes + 1} bytes of a line.
   */
  static final class ReadLinesFn extends DoFn<FileIO.ReadableFile, RawRecord> {
    private final int maxEventBytes;

    ReadLinesFn(int maxEventBytes) {
      this.maxEventBytes = maxEventBytes;
    }

    @ProcessElement
    public void processElement(@Element FileIO.ReadableFile file, OutputReceiver<RawRecord> out)
        throws IOException {
      String path = file.getMetadata().resourceId().toString();
      Instant ingested = ingestionTime(file.getMetadata(), path);
      try (InputStream in = new BufferedInputStream(Channels.newInputStream(file.open()))) {
        // One byte over the limit is kept, so that a line of exactly the limit plus its \r fits.
        Line line = new Line(maxEventBytes + 1);
        long number = 0;
        int b;
        while ((b = in.read()) != -1) {
          if (b == '\n') {
            out.output(line.toRecord(ingested, "file:" + path + ":" + ++number, maxEventBytes));
            line.reset();
          } else {
            line.add(b);
          }
        }
        if (line.length > 0) {
          out.output(line.toRecord(ingested, "file:" + path + ":" + ++number, maxEventBytes));
        }
      }
    }
  }

  /** The bytes of one line up to a capacity, and the length of the whole line. */
  private static final class Line {
    private final int capacity;
    private byte[] buffer = new byte[0];
    private int keptLength;
    private long length;
    private int last = -1;

    Line(int capacity) {
      this.capacity = capacity;
    }

    void add(int b) {
      if (keptLength < capacity) {
        if (keptLength == buffer.length) {
          buffer = Arrays.copyOf(buffer, Math.min(capacity, Math.max(512, buffer.length * 2)));
        }
        buffer[keptLength++] = (byte) b;
      }
      length++;
      last = b;
    }

    void reset() {
      keptLength = 0;
      length = 0;
      last = -1;
    }

    RawRecord toRecord(Instant ingested, String origin, int maxEventBytes) {
      long size = last == '\r' ? length - 1 : length;
      if (size <= maxEventBytes) {
        return RawRecord.of(Arrays.copyOf(buffer, (int) size), ingested, origin);
      }
      return RawRecord.rejected(
          Arrays.copyOf(buffer, maxEventBytes),
          ingested,
          origin,
          DeadLetterReason.OVERSIZED_RECORD,
          "line of "
              + size
              + " bytes is over --maxEventBytes="
              + maxEventBytes
              + "; the dead letter keeps its first "
              + maxEventBytes
              + " bytes");
    }
  }
}
