package dev.tidemark.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** The records a file-sink run wrote: one output's directory of NDJSON files, for tests. */
public final class OutputFiles {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private OutputFiles() {}

  /**
   * Every record of the {@code *.ndjson} files in {@code directory} (an output's directory, such as
   * {@code out/decisions}), file by file in name order; blank lines are skipped.
   */
  public static List<JsonNode> records(Path directory) throws IOException {
    List<JsonNode> records = new ArrayList<>();
    List<Path> files;
    try (Stream<Path> listed = Files.list(directory)) {
      files = listed.filter(f -> f.toString().endsWith(".ndjson")).sorted().toList();
    }
    for (Path file : files) {
      for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        if (!line.isBlank()) {
          records.add(MAPPER.readTree(line));
        }
      }
    }
    return records;
  }
}
