package dev.tidemark.bench.kafka;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** The scratch directory of a part's jobs: their output and checkpoint directories. */
public final class Workspace {
  private Workspace() {}

  /** Removes {@code directory} and everything below it; what cannot be removed stays. */
  public static void delete(Path directory) {
    try (Stream<Path> paths = Files.walk(directory)) {
      paths.sorted(Comparator.reverseOrder()).forEach(Workspace::deleteOne);
    } catch (IOException | UncheckedIOException e) {
      System.out.println("bench: left " + directory + " behind: " + e);
    }
  }

  private static void deleteOne(Path path) {
    try {
      Files.deleteIfExists(path);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
