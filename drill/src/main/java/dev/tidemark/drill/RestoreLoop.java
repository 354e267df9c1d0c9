package dev.tidemark.drill;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * A job that fails the same way after every restore: each restore brings back the state that fails,
 * so it never makes progress again however long the drill waits. Read from the job's exception
 * history ({@code GET /jobs/:id/exceptions}): the last {@value #REPEATS} failures since a moment,
 * all with the same first line.
 */
final class RestoreLoop {
  /** Failures in a row, with one message, that make a loop. */
  static final int REPEATS = 3;

  private RestoreLoop() {}

  /**
   * The repeated failure's first line, or null: {@code history} is the body of {@code GET
   * /jobs/:id/exceptions}, and only failures at or after {@code sinceMillis} count.
   */
  static @Nullable String of(JsonNode history, long sinceMillis) {
    List<JsonNode> entries = new ArrayList<>();
    history.path("exceptionHistory").path("entries").forEach(entries::add);
    entries.removeIf(entry -> entry.path("timestamp").asLong(0) < sinceMillis);
    // Newest first, as Flink lists them; sorted here so that the order of the body does not count.
    entries.sort(
        (a, b) -> Long.compare(b.path("timestamp").asLong(), a.path("timestamp").asLong()));
    if (entries.size() < REPEATS) {
      return null;
    }
    String first = firstLine(entries.get(0));
    for (int i = 1; i < REPEATS; i++) {
      if (!firstLine(entries.get(i)).equals(first)) {
        return null;
      }
    }
    return first;
  }

  private static String firstLine(JsonNode entry) {
    String trace = entry.path("stacktrace").asText("");
    int end = trace.indexOf('\n');
    return end < 0 ? trace : trace.substring(0, end);
  }
}
