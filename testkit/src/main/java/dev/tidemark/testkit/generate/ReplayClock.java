package dev.tidemark.testkit.generate;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The ingestion clock of a replay file in coarser steps. The generator writes a clock directive
 * ({@code {"advanceProcessingTime":"PT1.5S"}}) every few lines, and the DirectRunner replays a file
 * in one round per directive, each round costing tens of milliseconds however few events it
 * carries: a replay whose test does not turn on early panes or processing-time order between close
 * arrivals runs in a fraction of the time with its clock in steps of many lines.
 *
 * <p>{@link #withLabels} puts a labels stream into a replay, each label arriving on the replay's
 * clock at (or a little after) its own time: a replay that carries its labels ({@code
 * --labelsInReplay}).
 */
public final class ReplayClock {
  private static final Pattern DIRECTIVE =
      Pattern.compile("\\{\\s*\"advanceProcessingTime\"\\s*:\\s*\"([^\"]+)\"\\s*}\\s*");

  private static final Pattern TIME = Pattern.compile("\"time\"\\s*:\\s*\"([^\"]+)\"");

  private ReplayClock() {}

  /**
   * Copies {@code replay} to {@code merged} with the lines of {@code labels} (NDJSON label events
   * in time order, as {@link LabelStream} writes them) among its lines: each label right after the
   * replay's clock (its first event's time plus its {@code advanceProcessingTime} directives) has
   * reached the label's time. The labels later than the replay's end follow it, the clock moved
   * with one directive per {@code step} of label time, so a label arrives at most {@code step}
   * after its own time and never before it. The replay's lines are copied byte for byte.
   */
  public static void withLabels(Path replay, Path labels, Path merged, Duration step)
      throws IOException {
    if (step.isNegative() || step.isZero()) {
      throw new IllegalArgumentException("step must be positive, not " + step);
    }
    List<String> pending = new ArrayList<>();
    for (String line : Files.readAllLines(labels, StandardCharsets.UTF_8)) {
      if (!line.isBlank()) {
        pending.add(line);
      }
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    Instant[] clocks = {null};
    int[] written = {0};
    forEachLine(
        Files.readAllBytes(replay),
        (bytes, start, end) -> {
          String text = new String(bytes, start, end - start, StandardCharsets.ISO_8859_1);
          Matcher directive = DIRECTIVE.matcher(text);
          if (directive.matches() && clocks[0] != null) {
            clocks[0] = clocks[0].plus(Duration.parse(directive.group(1)));
          } else if (clocks[0] == null) {
            Matcher time = TIME.matcher(text);
            clocks[0] = time.find() ? Instant.parse(time.group(1)) : null;
          }
          out.write(bytes, start, end - start);
          out.write('\n');
          while (clocks[0] != null
              && written[0] < pending.size()
              && !timeOf(pending.get(written[0])).isAfter(clocks[0])) {
            writeLine(out, pending.get(written[0]++));
          }
        });
    Instant clock = clocks[0];
    int next = written[0];
    while (next < pending.size()) {
      Instant until = timeOf(pending.get(next)).plus(step);
      Instant to = clock == null ? until : until.isAfter(clock) ? until : clock;
      if (clock != null && to.isAfter(clock)) {
        writeLine(out, "{\"advanceProcessingTime\":\"" + Duration.between(clock, to) + "\"}");
      }
      clock = to;
      while (next < pending.size() && timeOf(pending.get(next)).isBefore(until)) {
        writeLine(out, pending.get(next++));
      }
    }
    Files.write(merged, out.toByteArray());
  }

  private static Instant timeOf(String label) {
    Matcher time = TIME.matcher(label);
    if (!time.find()) {
      throw new IllegalArgumentException("a label without a time: " + label);
    }
    return Instant.parse(time.group(1));
  }

  private static void writeLine(ByteArrayOutputStream out, String line) {
    byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
    out.write(bytes, 0, bytes.length);
    out.write('\n');
  }

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
    Duration[] pending = {Duration.ZERO};
    int[] lines = {0};
    forEachLine(
        Files.readAllBytes(generated),
        (bytes, start, end) -> {
          Matcher directive =
              DIRECTIVE.matcher(new String(bytes, start, end - start, StandardCharsets.ISO_8859_1));
          if (directive.matches()) {
            pending[0] = pending[0].plus(Duration.parse(directive.group(1)));
            return;
          }
          out.write(bytes, start, end - start);
          out.write('\n');
          if (++lines[0] >= linesPerStep && !pending[0].isZero()) {
            out.write(
                ("{\"advanceProcessingTime\":\"" + pending[0] + "\"}\n")
                    .getBytes(StandardCharsets.US_ASCII));
            pending[0] = Duration.ZERO;
            lines[0] = 0;
          }
        });
    Files.write(coarse, out.toByteArray());
  }

  /** One line of a file's bytes: {@code [start, end)}, without its line ending. */
  private interface LineVisitor {
    void visit(byte[] bytes, int start, int end) throws IOException;
  }

  /** Visits each line of {@code bytes} ({@code \n} or {@code \r\n} endings), in order. */
  private static void forEachLine(byte[] bytes, LineVisitor visitor) throws IOException {
    int start = 0;
    for (int i = 0; i <= bytes.length; i++) {
      if (i < bytes.length && bytes[i] != '\n') {
        continue;
      }
      int end = i > start && bytes[i - 1] == '\r' ? i - 1 : i;
      if (i == bytes.length && end == start) {
        break;
      }
      visitor.visit(bytes, start, end);
      start = i + 1;
    }
  }
}
