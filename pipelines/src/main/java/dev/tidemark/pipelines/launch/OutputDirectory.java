package dev.tidemark.pipelines.launch;

import dev.tidemark.pipelines.Outputs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The file sink's output directory between runs: what a run clears first and completes last. */
public final class OutputDirectory {
  private OutputDirectory() {}

  /** An output with no records still gets its (empty) file, so readers find every output. */
  public static void touchEmptyOutputs(Path output) {
    touchEmptyOutputs(output, Outputs.NAMES);
  }

  /** {@link #touchEmptyOutputs(Path)} for the outputs' directories {@code names}. */
  public static void touchEmptyOutputs(Path output, List<String> names) {
    for (String name : names) {
      Path dir = output.resolve(name);
      try {
        Files.createDirectories(dir);
        try (var files = Files.list(dir)) {
          if (files.noneMatch(f -> f.getFileName().toString().endsWith(".ndjson"))) {
            Files.createFile(dir.resolve(name + "-00000-of-00001.ndjson"));
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("cannot create output " + dir, e);
      }
    }
  }

  /**
   * Removes the previous run's output directories {@code names}, so that no stale shard survives.
   */
  public static void clear(Path output, List<String> names) {
    for (String name : names) {
      Path dir = output.resolve(name);
      if (Files.isDirectory(dir)) {
        try (var paths = Files.walk(dir)) {
          paths.sorted(java.util.Comparator.reverseOrder()).forEach(OutputDirectory::delete);
        } catch (IOException e) {
          throw new UncheckedIOException("cannot clear old output " + dir, e);
        }
      }
    }
  }

  private static void delete(Path path) {
    try {
      Files.delete(path);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete old output " + path, e);
    }
  }
}
