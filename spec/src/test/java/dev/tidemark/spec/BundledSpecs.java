package dev.tidemark.spec;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.stream.Stream;

/** The specs under the top-level {@code specs/} directory, for tests. */
final class BundledSpecs {
  private BundledSpecs() {}

  static Path directory() {
    String configured = System.getProperty("tidemark.specs");
    Path dir = configured != null ? Paths.get(configured) : Paths.get("..", "specs");
    if (!Files.isDirectory(dir)) {
      throw new IllegalStateException("no specs directory at " + dir.toAbsolutePath());
    }
    return dir;
  }

  static List<Path> all() {
    try (Stream<Path> files = Files.list(directory())) {
      return files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static Path path(String name) {
    return directory().resolve(name + ".yaml");
  }

  static String text(String name) {
    try {
      return Files.readString(path(name), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static PipelineSpec load(String name) {
    return SpecLoader.load(path(name));
  }
}
