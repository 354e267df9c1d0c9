package dev.tidemark.pipelines.io;

import dev.tidemark.transforms.values.RawRecord;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
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
 */
public final class BackfillSource extends PTransform<PBegin, PCollection<RawRecord>> {
  private final String glob;

  private BackfillSource(String glob) {
    this.glob = glob;
  }

  public static BackfillSource from(String glob) {
    if (glob == null || glob.isBlank()) {
      throw new IllegalArgumentException(
          "--source=backfill needs --input=GLOB, e.g. --input='history/*.ndjson'");
    }
    return new BackfillSource(glob);
  }

  @Override
  public PCollection<RawRecord> expand(PBegin begin) {
    return begin
        .apply(
            "MatchFiles",
            FileIO.match().filepattern(glob).withEmptyMatchTreatment(EmptyMatchTreatment.DISALLOW))
        .apply("OpenFiles", FileIO.readMatches())
        .apply("ReadLines", ParDo.of(new ReadLinesFn()))
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

  /** Splits a file into lines of bytes ({@code \n}, with an optional {@code \r} before it). */
  static final class ReadLinesFn extends DoFn<FileIO.ReadableFile, RawRecord> {
    @ProcessElement
    public void processElement(@Element FileIO.ReadableFile file, OutputReceiver<RawRecord> out)
        throws IOException {
      String path = file.getMetadata().resourceId().toString();
      Instant ingested = ingestionTime(file.getMetadata(), path);
      try (InputStream in = new BufferedInputStream(Channels.newInputStream(file.open()))) {
        ByteArrayOutputStream line = new ByteArrayOutputStream(512);
        long number = 0;
        int b;
        boolean pending = false;
        while ((b = in.read()) != -1) {
          if (b == '\n') {
            out.output(RawRecord.of(trimCr(line), ingested, "file:" + path + ":" + ++number));
            line.reset();
            pending = false;
          } else {
            line.write(b);
            pending = true;
          }
        }
        if (pending) {
          out.output(RawRecord.of(trimCr(line), ingested, "file:" + path + ":" + ++number));
        }
      }
    }

    private static byte[] trimCr(ByteArrayOutputStream line) {
      byte[] bytes = line.toByteArray();
      return bytes.length > 0 && bytes[bytes.length - 1] == '\r'
          ? java.util.Arrays.copyOf(bytes, bytes.length - 1)
          : bytes;
    }
  }
}
