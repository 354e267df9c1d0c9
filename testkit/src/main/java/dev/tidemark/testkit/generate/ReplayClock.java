package dev.tidemark.testkit.generate;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The ingestion clock of a replay file in coarser steps. The generator writes a clock directive
 * ({@code {"advanceProcessingTime":"PT1.5S"}}) every few lines, and the DirectRunner replays a file
 * in one round per directive, each round costing tens of milliseconds however few events it
 * carries: a replay whose test does not turn on early panes or processing-time order between close
 * arrivals runs in a fraction of the time with its clock in steps of many lines.
 */
public final class ReplayClock {
  private static final Pattern DIRECTIVE =
      Pattern.compile("\\{\\s*\"advanceProcessingTime\"\\s*:\\s*\"([^\"]+)\"\\s*}\\s*");

  private ReplayClock() {}

  /**
   * Copies {@code generated} to {@code coarse} with the clock directives of every {@code
   * linesPerStep} other lines made one, at the end of those lines, advancing by their sum; every
   * other line is copied byte for byte. Events keep their order and arrive no earlier than before.
   */
  public static void coarsen(Path generated, Path coarse, int linesPerStep) throws IOException {
    if (linesPerStep < 1) {
      throw new IllegalArgumentException("linesPerStep must be at least 1, not " + linesPerStep);
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    Duration pending = Duration.ZERO;
    int lines = 0;
    byte[] bytes = Files.readAllBytes(generated);
    int start = 0;
    for (int i = 0; i <= bytes.length; i++) {
      if (i < bytes.length && bytes[i] != '\n') {
        continue;
      }
      int end = i > start && bytes[i - 1] == '\r' ? i - 1 : i;
      if (i == bytes.length && end == start) {
        break;
      }
      Matcher directive =
          DIRECTIVE.matcher(new String(bytes, start, end - start, StandardCharsets.ISO_8859_1));
      if (directive.matches()) {
        pending = pending.plus(Duration.parse(directive.group(1)));
      } else {
        out.write(bytes, start, end - start);
        out.write('\n');
        if (++lines >= linesPerStep && !pending.isZero()) {
          out.write(
              ("{\"advanceProcessingTime\":\"" + pending + "\"}\n")
                  .getBytes(StandardCharsets.US_ASCII));
          pending = Duration.ZERO;
          lines = 0;
        }
      }
      start = i + 1;
    }
    Files.write(coarse, out.toByteArray());
  }
}
