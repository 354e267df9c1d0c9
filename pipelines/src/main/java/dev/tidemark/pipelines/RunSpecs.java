package dev.tidemark.pipelines;

import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecException;
import dev.tidemark.spec.SpecLoader;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.regex.Pattern;
import org.apache.beam.sdk.io.FileSystems;
import org.apache.beam.sdk.io.fs.MatchResult;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * Loads the spec a run follows ({@code --specUri}): a bundled spec by name (its YAML travels in the
 * {@code tidemark-spec} jar), a local path, a {@code file:} URI, or any URI a Beam filesystem reads
 * ({@code gs://...}). A spec that cannot be used raises the loader's {@link SpecException}, naming
 * the spec and every problem.
 */
public final class RunSpecs {
  private static final Pattern SCHEME = Pattern.compile("^[A-Za-z][A-Za-z0-9+.-]+:.*");

  private RunSpecs() {}

  /**
   * The spec {@code options} name ({@link SpecOptions#getSpecUri}), read once per options instance
   * ({@link SpecOptions#getPipelineSpec}).
   */
  public static PipelineSpec of(PipelineOptions options) {
    return options.as(SpecOptions.class).getPipelineSpec();
  }

  /** Reads the spec {@code options} name, every time it is called. */
  static PipelineSpec read(PipelineOptions options) {
    String uri = options.as(SpecOptions.class).getSpecUri();
    if (uri != null && SCHEME.matcher(uri.trim()).matches() && !uri.startsWith("file:")) {
      // gs:// and the other Beam filesystems are registered from the options.
      FileSystems.setDefaultPipelineOptions(options);
    }
    return load(uri);
  }

  /** How problems name the spec at {@code uri}: a bundled spec by its file in the source tree. */
  public static String location(String uri) {
    String given = uri == null ? "" : uri.trim();
    if (given.isEmpty()) {
      given = SpecLoader.DEFAULT_BUNDLED;
    }
    return SpecLoader.isBundled(given) ? "specs/" + given + ".yaml" : given;
  }

  /**
   * The spec at {@code uri}: null or blank is the bundled default ({@value
   * SpecLoader#DEFAULT_BUNDLED}), a bare name a bundled spec, anything else a path or URI.
   */
  public static PipelineSpec load(String uri) {
    String given = uri == null ? "" : uri.trim();
    if (given.isEmpty()) {
      return SpecLoader.loadBundled(SpecLoader.DEFAULT_BUNDLED);
    }
    if (SpecLoader.isBundled(given)) {
      return SpecLoader.loadBundled(given);
    }
    if (given.startsWith("file:")) {
      return SpecLoader.load(Paths.get(URI.create(given)));
    }
    if (!SCHEME.matcher(given).matches()) {
      Path path = Paths.get(given);
      return SpecLoader.load(path);
    }
    return SpecLoader.parse(readRemote(given), given);
  }

  private static String readRemote(String uri) {
    try {
      MatchResult.Metadata file = FileSystems.matchSingleFileSpec(uri);
      try (InputStream in = Channels.newInputStream(FileSystems.open(file.resourceId()))) {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
    } catch (IOException | RuntimeException e) {
      throw new SpecException(
          uri, List.of(new SpecException.Problem("", "cannot read the spec: " + e)));
    }
  }
}
