package dev.tidemark.launcher.it.kafka;

import java.io.ByteArrayInputStream;
import java.io.FileNotFoundException;
import java.nio.channels.Channels;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.beam.sdk.io.FileSystem;
import org.apache.beam.sdk.io.FileSystemRegistrar;
import org.apache.beam.sdk.io.fs.CreateOptions;
import org.apache.beam.sdk.io.fs.MatchResult;
import org.apache.beam.sdk.io.fs.MoveOptions;
import org.apache.beam.sdk.io.fs.ResolveOptions;
import org.apache.beam.sdk.io.fs.ResourceId;
import org.apache.beam.sdk.options.PipelineOptions;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * A Beam file system that is not the local one, for tests: {@value #SCHEME}://NAME holds the bytes
 * a test put in {@link #FILES}, in this JVM's memory. Registered through {@code
 * META-INF/services/org.apache.beam.sdk.io.FileSystemRegistrar}, as GCS's file system is, so a
 * {@code gs://}-like path can be read through Beam's {@code FileSystems} without Google. Read-only:
 * the code under test only reads.
 */
public final class InMemoryFileSystem extends FileSystem<InMemoryFileSystem.Id> {
  static final String SCHEME = "tidemark-mem";

  /** The files, by their whole URI. */
  static final Map<String, byte[]> FILES = new ConcurrentHashMap<>();

  /** How often each URI was opened. */
  static final Map<String, Integer> OPENS = new ConcurrentHashMap<>();

  /** Finds the file system by its scheme. */
  public static final class Registrar implements FileSystemRegistrar {
    @Override
    public Iterable<FileSystem<?>> fromOptions(@Nullable PipelineOptions options) {
      return List.of(new InMemoryFileSystem());
    }
  }

  /** A URI of this file system. */
  static final class Id implements ResourceId {
    private static final long serialVersionUID = 1L;
    private final String uri;

    Id(String uri) {
      this.uri = uri;
    }

    @Override
    public ResourceId resolve(String other, ResolveOptions options) {
      throw new UnsupportedOperationException("read-only test file system");
    }

    @Override
    public ResourceId getCurrentDirectory() {
      return new Id(uri.substring(0, uri.lastIndexOf('/') + 1));
    }

    @Override
    public String getScheme() {
      return SCHEME;
    }

    @Override
    public @Nullable String getFilename() {
      return uri.substring(uri.lastIndexOf('/') + 1);
    }

    @Override
    public boolean isDirectory() {
      return uri.endsWith("/");
    }

    @Override
    public String toString() {
      return uri;
    }

    @Override
    public boolean equals(@Nullable Object other) {
      return other instanceof Id id && id.uri.equals(uri);
    }

    @Override
    public int hashCode() {
      return uri.hashCode();
    }
  }

  @Override
  protected List<MatchResult> match(List<String> specs) {
    List<MatchResult> results = new ArrayList<>();
    for (String spec : specs) {
      byte[] content = FILES.get(spec);
      results.add(
          content == null
              ? MatchResult.create(MatchResult.Status.NOT_FOUND, new FileNotFoundException(spec))
              : MatchResult.create(
                  MatchResult.Status.OK,
                  List.of(
                      MatchResult.Metadata.builder()
                          .setResourceId(new Id(spec))
                          .setSizeBytes(content.length)
                          .setIsReadSeekEfficient(false)
                          .setLastModifiedMillis(0)
                          .build())));
    }
    return results;
  }

  @Override
  protected ReadableByteChannel open(Id resourceId) throws FileNotFoundException {
    byte[] content = FILES.get(resourceId.uri);
    if (content == null) {
      throw new FileNotFoundException(resourceId.uri);
    }
    OPENS.merge(resourceId.uri, 1, Integer::sum);
    return Channels.newChannel(new ByteArrayInputStream(content));
  }

  @Override
  protected WritableByteChannel create(Id resourceId, CreateOptions createOptions) {
    throw new UnsupportedOperationException("read-only test file system");
  }

  @Override
  protected void copy(List<Id> srcResourceIds, List<Id> destResourceIds) {
    throw new UnsupportedOperationException("read-only test file system");
  }

  @Override
  protected void rename(
      List<Id> srcResourceIds, List<Id> destResourceIds, MoveOptions... moveOptions) {
    throw new UnsupportedOperationException("read-only test file system");
  }

  @Override
  protected void delete(Collection<Id> resourceIds) {
    throw new UnsupportedOperationException("read-only test file system");
  }

  @Override
  protected Id matchNewResource(String singleResourceSpec, boolean isDirectory) {
    return new Id(singleResourceSpec);
  }

  @Override
  protected String getScheme() {
    return SCHEME;
  }
}
