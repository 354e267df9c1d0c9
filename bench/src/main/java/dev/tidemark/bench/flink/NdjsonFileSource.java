package dev.tidemark.bench.flink;

import dev.tidemark.transforms.values.RawRecord;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.connector.source.lib.util.IteratorSourceEnumerator;
import org.apache.flink.api.connector.source.lib.util.IteratorSourceReader;
import org.apache.flink.api.connector.source.lib.util.IteratorSourceSplit;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.joda.time.Instant;

/**
 * A bounded Flink source of NDJSON files, the native counterpart of Tidemark's {@code
 * BackfillSource}: one split per file, each file read sequentially as raw bytes line by line, one
 * {@link RawRecord} per line with the file's last-modified time as ingestion time and {@code
 * file:<path>:<line>} as origin (the same records {@code BackfillSource} makes). Built on Flink's
 * iterator source helpers (flink-connector-files is not a dependency).
 */
final class NdjsonFileSource
    implements Source<
        RawRecord, NdjsonFileSource.FileSplit, Collection<NdjsonFileSource.FileSplit>> {
  private static final long serialVersionUID = 1L;

  private final List<String> files;

  NdjsonFileSource(List<Path> files) {
    this.files = new ArrayList<>();
    files.forEach(f -> this.files.add(f.toAbsolutePath().toString()));
  }

  @Override
  public Boundedness getBoundedness() {
    return Boundedness.BOUNDED;
  }

  @Override
  public SplitEnumerator<FileSplit, Collection<FileSplit>> createEnumerator(
      SplitEnumeratorContext<FileSplit> context) {
    List<FileSplit> splits = new ArrayList<>();
    files.forEach(f -> splits.add(new FileSplit(f, 0)));
    return new IteratorSourceEnumerator<>(context, splits);
  }

  @Override
  public SplitEnumerator<FileSplit, Collection<FileSplit>> restoreEnumerator(
      SplitEnumeratorContext<FileSplit> context, Collection<FileSplit> checkpoint) {
    return new IteratorSourceEnumerator<>(context, checkpoint);
  }

  @Override
  public SimpleVersionedSerializer<FileSplit> getSplitSerializer() {
    return new SplitSerializer();
  }

  @Override
  public SimpleVersionedSerializer<Collection<FileSplit>> getEnumeratorCheckpointSerializer() {
    return new SplitsSerializer<>(new SplitSerializer());
  }

  @Override
  public SourceReader<RawRecord, FileSplit> createReader(SourceReaderContext context) {
    return new IteratorSourceReader<>(context);
  }

  /** One file, from line {@code skip} on. */
  static final class FileSplit implements IteratorSourceSplit<RawRecord, LineIterator> {
    final String path;
    final long skip;

    FileSplit(String path, long skip) {
      this.path = path;
      this.skip = skip;
    }

    @Override
    public String splitId() {
      return path;
    }

    @Override
    public LineIterator getIterator() {
      return new LineIterator(path, skip);
    }

    @Override
    public IteratorSourceSplit<RawRecord, LineIterator> getUpdatedSplitForIterator(
        LineIterator iterator) {
      return new FileSplit(path, iterator.number);
    }
  }

  /** The lines of a file as records, read lazily; closes the file at its end. */
  static final class LineIterator implements Iterator<RawRecord> {
    private final String path;
    private final long skip;
    private InputStream in;
    private Instant ingested;
    private final ByteArrayOutputStream line = new ByteArrayOutputStream(512);
    private RawRecord next;
    private boolean done;
    long number;

    LineIterator(String path, long skip) {
      this.path = path;
      this.skip = skip;
    }

    @Override
    public boolean hasNext() {
      if (next == null && !done) {
        try {
          if (in == null) {
            Path file = Paths.get(path);
            ingested = new Instant(Files.getLastModifiedTime(file).toMillis());
            in = new BufferedInputStream(Files.newInputStream(file), 1 << 16);
          }
          do {
            next = readLine();
          } while (next != null && number <= skip);
          if (next == null) {
            done = true;
            in.close();
          }
        } catch (IOException e) {
          throw new UncheckedIOException("cannot read " + path, e);
        }
      }
      return next != null;
    }

    @Override
    public RawRecord next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      RawRecord record = next;
      next = null;
      return record;
    }

    private RawRecord readLine() throws IOException {
      line.reset();
      boolean pending = false;
      int b;
      while ((b = in.read()) != -1) {
        if (b == '\n') {
          return record();
        }
        line.write(b);
        pending = true;
      }
      return pending ? record() : null;
    }

    private RawRecord record() {
      byte[] bytes = line.toByteArray();
      if (bytes.length > 0 && bytes[bytes.length - 1] == '\r') {
        bytes = java.util.Arrays.copyOf(bytes, bytes.length - 1);
      }
      return RawRecord.of(bytes, ingested, "file:" + path + ":" + ++number);
    }
  }

  static final class SplitSerializer implements SimpleVersionedSerializer<FileSplit> {
    @Override
    public int getVersion() {
      return 1;
    }

    @Override
    public byte[] serialize(FileSplit split) throws IOException {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (DataOutputStream out = new DataOutputStream(bytes)) {
        out.writeUTF(split.path);
        out.writeLong(split.skip);
      }
      return bytes.toByteArray();
    }

    @Override
    public FileSplit deserialize(int version, byte[] serialized) throws IOException {
      try (DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(serialized))) {
        return new FileSplit(in.readUTF(), in.readLong());
      }
    }
  }
}
