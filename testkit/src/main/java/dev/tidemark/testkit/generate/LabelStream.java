package dev.tidemark.testkit.generate;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * The truth about a generated stream's events as a stream of its own, as it reaches a real system:
 * each label arrives after its event, most within hours, a tail over days. NDJSON, one structured
 * CloudEvent of type {@value #TYPE} per line in arrival order: by the label's time ({@code time},
 * when the truth became known), a re-sent copy up to ten minutes after its first. The format is the
 * one {@code dev.tidemark.transforms.values.Label} reads:
 *
 * <pre>{@code
 * {"specversion":"1.0","id":"label-000001","source":"/tidemark/labels","type":"tidemark.label.v1",
 *  "time":"2026-01-01T02:13:09.120Z","datacontenttype":"application/json",
 *  "data":{"subject":{"source":"/tidemark/pos/eu-west","id":"txn-000123"},
 *          "key":"acct-00042","eventTime":"2026-01-01T00:03:12.345Z","value":"fraud"}}
 * }</pre>
 *
 * <p>Every distinct valid event gets one label with its true outcome. The delay from event time to
 * label time is log-normal, from one of two populations: {@link Config#tailShare()} of the labels
 * (chargebacks, disputes) around {@link Config#tailMedian()}, the rest (confirmations, fraud
 * reports) around {@link Config#median()}. A share of labels is sent twice (the same identity and
 * content, a few minutes apart) and a share names an event that does not exist, so that a reader's
 * deduplication and its accounting of labels without an event can be checked. Deterministic: the
 * same subjects and config give byte-identical files.
 */
public final class LabelStream {
  /** The CloudEvent type of a label. */
  public static final String TYPE = "tidemark.label.v1";

  /** The CloudEvent source of every generated label. */
  public static final String SOURCE = "/tidemark/labels";

  private static final JsonFactory JSON = new JsonFactory();

  /** Log-normal spread (sigma) of each population's delays. */
  private static final double SIGMA = 0.8;

  /** At most this much later a re-sent label arrives. */
  private static final long MAX_RESEND_MS = 10 * 60_000;

  /**
   * An event as a label names it.
   *
   * @param source the event's CloudEvents {@code source}
   * @param id its CloudEvents {@code id}
   * @param key its key (the spec's key field's value: the account, the user)
   * @param eventTimeMs its event time
   * @param value its true outcome ({@code fraud} or {@code legit} for payments)
   */
  public record Subject(String source, String id, String key, long eventTimeMs, String value) {}

  /**
   * How labels arrive.
   *
   * @param seed the random seed of the delays, re-sends and unknown subjects
   * @param median the median delay of most labels
   * @param tailMedian the median delay of the tail
   * @param tailShare the share of labels in the tail
   * @param resendRate the share of labels sent twice
   * @param unknownRate labels naming no event, as a share of the events
   */
  public record Config(
      long seed,
      Duration median,
      Duration tailMedian,
      double tailShare,
      double resendRate,
      double unknownRate) {
    public Config {
      Objects.requireNonNull(median, "median");
      Objects.requireNonNull(tailMedian, "tailMedian");
      if (median.isNegative() || median.isZero() || tailMedian.compareTo(median) < 0) {
        throw new IllegalArgumentException(
            "label delays need 0 < median <= tailMedian, got " + median + " and " + tailMedian);
      }
      for (double share : new double[] {tailShare, resendRate, unknownRate}) {
        if (!(share >= 0 && share <= 1)) {
          throw new IllegalArgumentException("label shares must be in [0, 1], got " + share);
        }
      }
    }

    /** Most labels within hours (median 2 h), a fifth over days (median 36 h); 2 % re-sent. */
    public static Config defaults(long seed) {
      return new Config(seed, Duration.ofHours(2), Duration.ofHours(36), 0.2, 0.02, 0.005);
    }
  }

  /** Counts of one written labels stream. */
  public record Stats(
      long labels, long distinct, long resent, long unknownSubjects, Duration medianDelay) {}

  private record Line(long timeMs, long seq, byte[] bytes) {}

  private LabelStream() {}

  /** Writes the labels of {@code subjects} to {@code file}, creating or replacing it. */
  public static Stats write(List<Subject> subjects, Config config, Path file) throws IOException {
    try (OutputStream out = Files.newOutputStream(file)) {
      return write(subjects, config, out);
    }
  }

  /** Writes the labels of {@code subjects} to {@code out} and flushes it; it is not closed. */
  public static Stats write(List<Subject> subjects, Config config, OutputStream out)
      throws IOException {
    SplittableRandom root = new SplittableRandom(config.seed());
    SplittableRandom delays = root.split();
    SplittableRandom resends = root.split();
    SplittableRandom unknown = root.split();
    List<Line> lines = new ArrayList<>();
    long[] delayMs = new long[subjects.size()];
    long seq = 0;
    for (int i = 0; i < subjects.size(); i++) {
      Subject subject = subjects.get(i);
      Duration median =
          delays.nextDouble() < config.tailShare() ? config.tailMedian() : config.median();
      delayMs[i] = Math.max(1, Math.round(median.toMillis() * Math.exp(SIGMA * gaussian(delays))));
      long timeMs = subject.eventTimeMs() + delayMs[i];
      byte[] bytes = line(seq + 1, timeMs, subject);
      lines.add(new Line(timeMs, seq++, bytes));
      if (resends.nextDouble() < config.resendRate()) {
        lines.add(new Line(timeMs + 1 + resends.nextLong(MAX_RESEND_MS), seq++, bytes));
      }
    }
    long unknownCount = Math.round(subjects.size() * config.unknownRate());
    long lastEventMs = subjects.isEmpty() ? 0 : subjects.get(subjects.size() - 1).eventTimeMs();
    for (long k = 0; k < unknownCount; k++) {
      Subject nobody =
          new Subject(
              EventGenerator.SOURCES.get(0),
              String.format(Locale.ROOT, "unknown-%06d", k + 1),
              "unknown",
              lastEventMs,
              "fraud");
      long timeMs = lastEventMs + 1 + unknown.nextLong(config.median().toMillis());
      lines.add(new Line(timeMs, seq, line(seq + 1, timeMs, nobody)));
      seq++;
    }
    lines.sort(Comparator.comparingLong(Line::timeMs).thenComparingLong(Line::seq));
    BufferedOutputStream buffered = new BufferedOutputStream(out, 1 << 16);
    for (Line line : lines) {
      buffered.write(line.bytes());
      buffered.write('\n');
    }
    buffered.flush();
    long[] sorted = delayMs.clone();
    java.util.Arrays.sort(sorted);
    return new Stats(
        lines.size(),
        subjects.size() + unknownCount,
        lines.size() - subjects.size() - unknownCount,
        unknownCount,
        Duration.ofMillis(sorted.length == 0 ? 0 : sorted[sorted.length / 2]));
  }

  /** A standard normal draw (Box-Muller; one of the pair). */
  private static double gaussian(SplittableRandom random) {
    double u = 1 - random.nextDouble();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random.nextDouble());
  }

  private static byte[] line(long number, long timeMs, Subject subject) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(320);
    try (JsonGenerator g = JSON.createGenerator(bytes, JsonEncoding.UTF8)) {
      g.writeStartObject();
      g.writeStringField("specversion", "1.0");
      g.writeStringField("id", String.format(Locale.ROOT, "label-%06d", number));
      g.writeStringField("source", SOURCE);
      g.writeStringField("type", TYPE);
      g.writeStringField(
          "time", EventGenerator.RFC3339_MILLIS.format(Instant.ofEpochMilli(timeMs)));
      g.writeStringField("datacontenttype", "application/json");
      g.writeObjectFieldStart("data");
      g.writeObjectFieldStart("subject");
      g.writeStringField("source", subject.source());
      g.writeStringField("id", subject.id());
      g.writeEndObject();
      g.writeStringField("key", subject.key());
      g.writeStringField(
          "eventTime",
          EventGenerator.RFC3339_MILLIS.format(Instant.ofEpochMilli(subject.eventTimeMs())));
      g.writeStringField("value", subject.value());
      g.writeEndObject();
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write JSON to memory", e);
    }
    return bytes.toByteArray();
  }
}
