package dev.tidemark.testkit.generate;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.StreamWriteFeature;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * Deterministic synthetic event stream written as a <i>replay file</i>: NDJSON, one line per
 * arrival in arrival order, {@code '\n'} line endings. The same {@link GeneratorConfig} (seed
 * included) always yields a byte-identical file; nothing depends on the wall clock.
 *
 * <p>What the events are is the config's {@link Workload}: payments (described here, the default)
 * or logins (described in {@code LoginsContent}: login attempts with account-takeover episodes).
 * Everything about their timing below (arrival delays, late and too-late events, duplicates,
 * malformed lines, directives) is the same code for both; only the events' content, ids, sources,
 * conflicting payloads and malformed kinds differ.
 *
 * <p>Each line is one of:
 *
 * <ul>
 *   <li>a structured-mode CloudEvent 1.0 of type {@value #EVENT_TYPE}, e.g. {@code
 *       {"specversion":"1.0","id":"txn-000123","source":"/tidemark/pos/eu-west","type":
 *       "payments.transaction.v1","time":"2026-01-01T00:03:12.345Z","datacontenttype":
 *       "application/json","data":{"accountId":"acct-00042","amount":12.34,"currency":"GBP",
 *       "merchantId":"m-0071","country":"GB","label":"legit"}}}. The {@code id} is {@code txn-} and
 *       a counter per source, so the same id under two sources is not a duplicate. {@code label} is
 *       the ground truth, {@code fraud} or {@code legit}, unless the config leaves it out ({@link
 *       GeneratorConfig#inlineLabels()});
 *   <li>a directive {@code {"advanceProcessingTime":"PT1.5S"}}: written before a line whenever the
 *       arrival clock moved forward by at least one second since the last directive, with the exact
 *       delta as seconds ({@code PT<s>[.<fraction>]S}, parseable by both {@link
 *       java.time.Duration#parse} and {@code org.joda.time.Duration.parse}). No watermark
 *       directives are written: the reader derives the watermark from event times;
 *   <li>a malformed line that a reader must reject (see below); malformed lines carry no label and
 *       are not counted as events.
 * </ul>
 *
 * <p>Processing time: the first line is always the first event (event time {@code config.start},
 * delay 0), so a reader that starts its processing clock at the first line's event time and adds
 * every {@code advanceProcessingTime} has, at each line, a clock at most one second behind that
 * line's true arrival time.
 *
 * <p>Content: legit events with log-normal amounts (median 30.00, capped at 2000.00) at the
 * account's home country; card-testing bursts (one account, 8-20 events within 1-3 minutes, 0.50 to
 * 3.00, each at a different merchant) and account-takeover bursts (one account, 3-6 events within
 * 1-5 minutes, 500.00 to 1900.00, from a foreign country) labelled {@code fraud}. Arrival delays
 * are normally exponential (capped at {@code maxOutOfOrderness}); a share of events is late or too
 * late, and a share is re-sent as duplicates, some with a changed amount (conflicts). See {@link
 * GeneratorConfig} for the rates and their limits.
 *
 * <p>Lateness is measured against the watermark a replay reader derives from event times: the
 * largest event time of the valid events read so far minus {@code maxOutOfOrderness}, with fixed
 * windows of {@code windowSize} aligned to the epoch. The generator simulates that watermark and
 * keeps an event late (or too late) only if, when it arrives, the watermark has passed the end of
 * its window but not the end plus {@code allowedLateness} (or has passed the end plus {@code
 * allowedLateness}); so sparse or short streams may get fewer late and too-late events than the
 * fractions ask for, never mislabelled ones. Duplicates are not counted as late even if a re-send
 * happens to arrive behind the watermark.
 *
 * <p>The whole file is built in memory before it is written (it must be sorted by arrival time):
 * about 400 bytes per line, so keep {@code numEvents} to a few million at most.
 *
 * <p>Malformed kinds, used in turn: truncated JSON, a JSON object that is not a CloudEvent, a JSON
 * array, missing {@code id}, empty {@code source}, unparseable {@code time}, unsupported {@code
 * type}, missing {@code data.accountId}, negative amount, amount with 3 decimals, amount as a
 * string, currency USD, country {@code XX}, country {@code GBR}, an oversized record (a {@code
 * data.padding} of {@value #PADDING_CHARS} characters) and invalid UTF-8 (bytes {@code 0xC3 0x28}
 * in {@code data.merchantId}). Each has exactly one defect, an id {@code bad-NNNNNN} that no event
 * uses, and no label.
 *
 * <p>Not thread-safe: {@link #stats()} describes the last {@code writeTo} call.
 */
public final class EventGenerator {

  /** The CloudEvent sources, in the order their share of events decreases. */
  public static final List<String> SOURCES =
      List.of("/tidemark/pos/eu-west", "/tidemark/web/checkout", "/tidemark/mobile/app");

  /** The CloudEvent type of every valid event. */
  public static final String EVENT_TYPE = "payments.transaction.v1";

  /** The currency of every valid event. */
  public static final String CURRENCY = "GBP";

  /** Number of merchants, {@code m-0001 .. m-0500}. */
  public static final int MERCHANT_POOL_SIZE = 500;

  /** Length of the {@code data.padding} field of the oversized malformed record. */
  public static final int PADDING_CHARS = 70_000;

  /** Home countries and their cumulative weights: mostly GB. */
  static final String[] HOME_COUNTRIES = {"GB", "IE", "FR", "DE", "NL", "ES"};

  static final double[] HOME_COUNTRY_CUMULATIVE = {0.80, 0.84, 0.88, 0.92, 0.96, 1.0};

  /** Countries account takeovers come from; never a home country. */
  private static final String[] TAKEOVER_COUNTRIES = {"RU", "BR", "NG", "VN"};

  static final double[] SOURCE_CUMULATIVE = {0.45, 0.80, 1.0};

  private static final long MEDIAN_LEGIT_CENTS = 3000;
  private static final double LEGIT_AMOUNT_SIGMA = 0.9;
  private static final long MAX_LEGIT_CENTS = 200_000;
  static final double ACCOUNT_SKEW = 0.9;
  private static final double MERCHANT_SKEW = 0.6;
  private static final long MAX_DUPLICATE_EXTRA_DELAY_MS = 120_000;
  private static final long DIRECTIVE_STEP_MS = 1000;
  private static final long TOO_LATE_RUNWAY_MS = 5 * 60_000;
  private static final int LATENESS_ROUNDS = 8;

  static final String INVALID_UTF8_MARKER = "@@INVALID_UTF8@@";

  static final DateTimeFormatter RFC3339_MILLIS =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'", Locale.ROOT)
          .withZone(ZoneOffset.UTC);

  private static final JsonFactory JSON =
      JsonFactory.builder().enable(StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN).build();

  private final GeneratorConfig config;
  private Stats stats;
  private List<LabelStream.Subject> subjects;

  /** A generator for {@code config}; nothing is generated until {@code writeTo}. */
  public EventGenerator(GeneratorConfig config) {
    this.config = Objects.requireNonNull(config, "config must not be null");
  }

  /** Writes the replay file to {@code file}, creating or replacing it. */
  public void writeTo(Path file) throws IOException {
    try (OutputStream out = Files.newOutputStream(file)) {
      writeTo(out);
    }
  }

  /**
   * Writes the replay file as raw bytes (one line is deliberately not valid UTF-8) to {@code out},
   * then flushes it; {@code out} is not closed.
   */
  public void writeTo(OutputStream out) throws IOException {
    Objects.requireNonNull(out, "out must not be null");
    Generation generation = new Generation(config);
    List<Line> lines = generation.lines();
    BufferedOutputStream buffered = new BufferedOutputStream(out, 1 << 16);
    long clock = lines.isEmpty() ? 0 : lines.get(0).arrivalMs();
    long directives = 0;
    for (Line line : lines) {
      long delta = line.arrivalMs() - clock;
      if (delta >= DIRECTIVE_STEP_MS) {
        buffered.write(directive(delta));
        buffered.write('\n');
        directives++;
        clock = line.arrivalMs();
      }
      buffered.write(line.bytes());
      buffered.write('\n');
    }
    buffered.flush();
    subjects = new ArrayList<>(generation.events.size());
    for (Event event : generation.events) {
      subjects.add(generation.content.subject(event));
    }
    stats =
        new Stats(
            generation.events.size(),
            generation.fraudEvents,
            generation.duplicates,
            generation.conflicts,
            generation.malformed,
            generation.late,
            generation.tooLate,
            directives,
            lines.size() + directives);
  }

  /**
   * The distinct valid events of the last {@code writeTo}, in event-time order, as labels name
   * them: the input of {@link LabelStream}.
   *
   * @throws IllegalStateException if nothing has been written yet
   */
  public List<LabelStream.Subject> subjects() {
    if (subjects == null) {
      throw new IllegalStateException("no events yet: call writeTo(...) before subjects()");
    }
    return List.copyOf(subjects);
  }

  /**
   * What the last {@code writeTo} wrote.
   *
   * @throws IllegalStateException if nothing has been written yet
   */
  public Stats stats() {
    if (stats == null) {
      throw new IllegalStateException("no stats yet: call writeTo(...) before stats()");
    }
    return stats;
  }

  /**
   * Counts of one written replay file.
   *
   * @param eventsWritten distinct valid events (legit and fraud), without duplicates
   * @param fraudEvents distinct events labelled positive: {@code fraud} (payments) or {@code
   *     takeover} (logins)
   * @param duplicates re-sent events (lines whose source and id appeared on an earlier line)
   * @param conflicts duplicates whose payload differs from the original
   * @param malformed lines a reader must reject
   * @param late distinct events that arrive after their window closed, within allowed lateness
   * @param tooLate distinct events that arrive after their window's allowed lateness expired
   * @param directives {@code advanceProcessingTime} lines
   * @param lines all lines of the file
   */
  public record Stats(
      long eventsWritten,
      long fraudEvents,
      long duplicates,
      long conflicts,
      long malformed,
      long late,
      long tooLate,
      long directives,
      long lines) {}

  /** The kinds of malformed lines, written in this order, cyclically. */
  enum MalformedKind {
    TRUNCATED_JSON,
    NOT_A_CLOUDEVENT_OBJECT,
    NOT_A_CLOUDEVENT_ARRAY,
    MISSING_ID,
    EMPTY_SOURCE,
    UNPARSEABLE_TIME,
    WRONG_TYPE,
    MISSING_ACCOUNT_ID,
    NEGATIVE_AMOUNT,
    AMOUNT_THREE_DECIMALS,
    AMOUNT_AS_STRING,
    WRONG_CURRENCY,
    COUNTRY_XX,
    COUNTRY_GBR,
    OVERSIZED,
    INVALID_UTF8
  }

  /** How an event's arrival delay was drawn. */
  private enum Timing {
    NORMAL,
    LATE,
    TOO_LATE
  }

  /** One line of the file before directives are added, ordered by arrival, then sequence. */
  private record Line(long arrivalMs, long seq, byte[] bytes) {}

  private static final Comparator<Line> ARRIVAL_ORDER =
      Comparator.comparingLong(Line::arrivalMs).thenComparingLong(Line::seq);

  /** One distinct valid event; its source and id number are set once all events are made. */
  abstract static class Event {
    final long timeMs;
    final boolean positive;
    int source;
    long idNumber;

    Event(long timeMs, boolean positive) {
      this.timeMs = timeMs;
      this.positive = positive;
    }
  }

  /**
   * What one {@link Workload} puts in a stream: its distinct valid events and their JSON, and its
   * malformed lines. The generator does the rest (sources and ids, arrival times, lateness,
   * duplicates, directives), the same for every workload.
   */
  interface Content {
    /** The CloudEvent sources, in the order their share of events decreases. */
    List<String> sources();

    /** The cumulative share of events of each source. */
    double[] sourceCumulative();

    /**
     * Appends the distinct valid events to {@code events}, the first at {@code config.start} (in
     * any order otherwise: they are sorted by event time, stably) and returns how many are labelled
     * positive.
     */
    long addEvents(List<Event> events);

    /** The line of a valid event; with {@code conflict}, the same identity with another payload. */
    byte[] json(Event event, boolean conflict);

    /**
     * Malformed line {@code k} (from 0), with exactly one defect, arriving at {@code arrivalMs}.
     */
    byte[] malformedLine(int k, long arrivalMs);

    /** A valid event as a label names it: identity, key, event time and true outcome. */
    LabelStream.Subject subject(Event event);
  }

  /** A payment of the payments workload. */
  private static final class Txn extends Event {
    final int account;
    final int merchant;
    final String country;
    final long cents;

    Txn(long timeMs, int account, int merchant, String country, long cents, boolean fraud) {
      super(timeMs, fraud);
      this.account = account;
      this.merchant = merchant;
      this.country = country;
      this.cents = cents;
    }
  }

  /**
   * The envelope of a CloudEvent line; a null field is left out. Subclasses write {@code data},
   * with the two members every workload's data has ({@code country}, {@code padding}). Used for
   * valid and malformed lines.
   */
  abstract static class Envelope {
    String specversion = "1.0";
    String id;
    String source;
    String type;
    String time;
    String datacontenttype = "application/json";
    String country;
    String padding;

    Envelope(String type) {
      this.type = type;
    }

    /** Writes the members of {@code data}. */
    abstract void writeData(JsonGenerator g) throws IOException;

    /**
     * For the malformed kinds every workload shares, named as in every workload's kinds: the line
     * with that defect, else null (the workload applies its own kinds). The envelope's: {@code
     * TRUNCATED_JSON}, {@code NOT_A_CLOUDEVENT_OBJECT}, {@code NOT_A_CLOUDEVENT_ARRAY}, {@code
     * MISSING_ID}, {@code EMPTY_SOURCE}, {@code UNPARSEABLE_TIME}; the data's: {@code COUNTRY_XX},
     * {@code COUNTRY_GBR}, {@code OVERSIZED} ({@code data.padding} of {@value #PADDING_CHARS}
     * characters) and {@code INVALID_UTF8} (bytes {@code 0xC3 0x28} in the text member {@link
     * #markForInvalidUtf8} names).
     */
    final byte[] withSharedDefect(String kind) {
      switch (kind) {
        case "TRUNCATED_JSON":
          byte[] whole = toJson();
          return Arrays.copyOf(whole, whole.length / 2);
        case "NOT_A_CLOUDEVENT_OBJECT":
          return "{\"hello\":\"world\"}".getBytes(StandardCharsets.UTF_8);
        case "NOT_A_CLOUDEVENT_ARRAY":
          return concat(bytes("["), toJson(), bytes("]"));
        case "MISSING_ID":
          id = null;
          return toJson();
        case "EMPTY_SOURCE":
          source = "";
          return toJson();
        case "UNPARSEABLE_TIME":
          time = "yesterday";
          return toJson();
        case "COUNTRY_XX":
          country = "XX";
          return toJson();
        case "COUNTRY_GBR":
          country = "GBR";
          return toJson();
        case "OVERSIZED":
          padding = "x".repeat(PADDING_CHARS);
          return toJson();
        case "INVALID_UTF8":
          markForInvalidUtf8();
          return replace(
              toJson(), bytes(INVALID_UTF8_MARKER), new byte[] {(byte) 0xC3, (byte) 0x28});
        default:
          return null;
      }
    }

    /** Puts {@link #INVALID_UTF8_MARKER} into the text member the invalid bytes replace. */
    abstract void markForInvalidUtf8();

    final byte[] toJson() {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream(320);
      try (JsonGenerator g = JSON.createGenerator(bytes, JsonEncoding.UTF8)) {
        g.writeStartObject();
        writeField(g, "specversion", specversion);
        writeField(g, "id", id);
        writeField(g, "source", source);
        writeField(g, "type", type);
        writeField(g, "time", time);
        writeField(g, "datacontenttype", datacontenttype);
        g.writeObjectFieldStart("data");
        writeData(g);
        g.writeEndObject();
        g.writeEndObject();
      } catch (IOException e) {
        throw new UncheckedIOException("cannot write JSON to memory", e);
      }
      return bytes.toByteArray();
    }

    static void writeField(JsonGenerator g, String name, String value) throws IOException {
      if (value != null) {
        g.writeStringField(name, value);
      }
    }
  }

  /** The fields of a payment line. */
  private static final class EventFields extends Envelope {
    String accountId;
    BigDecimal amount;
    String amountText;
    String currency = CURRENCY;
    String merchantId;
    String label;

    EventFields() {
      super(EVENT_TYPE);
    }

    @Override
    void writeData(JsonGenerator g) throws IOException {
      writeField(g, "accountId", accountId);
      if (amount != null) {
        g.writeNumberField("amount", amount);
      } else {
        writeField(g, "amount", amountText);
      }
      writeField(g, "currency", currency);
      writeField(g, "merchantId", merchantId);
      writeField(g, "country", country);
      writeField(g, "label", label);
      writeField(g, "padding", padding);
    }

    @Override
    void markForInvalidUtf8() {
      merchantId = "m-" + INVALID_UTF8_MARKER;
    }
  }

  /** Samples indices {@code 0..n-1} with Zipf-like weights, the heavy ones spread at random. */
  static final class SkewedSampler {
    private final double[] cumulative;
    private final int[] indexOfRank;

    SkewedSampler(int n, double exponent, SplittableRandom random) {
      cumulative = new double[n];
      double total = 0;
      for (int rank = 0; rank < n; rank++) {
        total += 1.0 / StrictMath.pow(rank + 1, exponent);
        cumulative[rank] = total;
      }
      for (int rank = 0; rank < n; rank++) {
        cumulative[rank] /= total;
      }
      indexOfRank = identity(n);
      shuffle(indexOfRank, random);
    }

    int next(SplittableRandom random) {
      return indexOfRank[pick(cumulative, random.nextDouble())];
    }
  }

  /** One run of the generator: all random choices, in a fixed order. */
  static final class Generation {
    final GeneratorConfig config;
    final long startMs;
    final SplittableRandom accountRandom;
    final SplittableRandom timeRandom;
    final SplittableRandom fraudRandom;
    final SplittableRandom amountRandom;
    final SplittableRandom sourceRandom;
    final SplittableRandom delayRandom;
    final SplittableRandom duplicateRandom;
    final SplittableRandom malformedRandom;
    final Content content;
    final List<Event> events = new ArrayList<>();
    long fraudEvents;
    long duplicates;
    long conflicts;
    long malformed;
    long late;
    long tooLate;

    Generation(GeneratorConfig config) {
      this.config = config;
      this.startMs = config.start().toEpochMilli();
      SplittableRandom root = new SplittableRandom(config.seed());
      accountRandom = root.split();
      timeRandom = root.split();
      fraudRandom = root.split();
      amountRandom = root.split();
      sourceRandom = root.split();
      delayRandom = root.split();
      duplicateRandom = root.split();
      malformedRandom = root.split();
      content =
          config.workload() == Workload.LOGINS
              ? new LoginsContent(this)
              : new PaymentsContent(this);
    }

    List<Line> lines() {
      fraudEvents = content.addEvents(events);
      // Stable sort: the first event (at start) stays first.
      events.sort(Comparator.comparingLong(event -> event.timeMs));
      double[] sourceCumulative = content.sourceCumulative();
      long[] counters = new long[content.sources().size()];
      for (Event event : events) {
        event.source = pick(sourceCumulative, sourceRandom.nextDouble());
        event.idNumber = ++counters[event.source];
      }
      long[] arrival = arrivals();
      List<Line> lines = new ArrayList<>();
      byte[][] eventBytes = new byte[events.size()][];
      long lastArrival = startMs;
      for (int i = 0; i < events.size(); i++) {
        eventBytes[i] = content.json(events.get(i), false);
        lines.add(new Line(arrival[i], i, eventBytes[i]));
        lastArrival = Math.max(lastArrival, arrival[i]);
      }
      long seq = events.size();
      int duplicateCount = (int) Math.round(events.size() * config.duplicateRate());
      int conflictCount = (int) Math.round(duplicateCount * config.conflictFraction());
      int[] originals = identity(events.size());
      shuffle(originals, duplicateRandom);
      for (int j = 0; j < duplicateCount; j++) {
        int original = originals[j];
        long extra = 1000 + nextLong(duplicateRandom, MAX_DUPLICATE_EXTRA_DELAY_MS - 1000 + 1);
        boolean conflict = j < conflictCount;
        byte[] bytes = conflict ? content.json(events.get(original), true) : eventBytes[original];
        lines.add(new Line(arrival[original] + extra, seq++, bytes));
        duplicates++;
        if (conflict) {
          conflicts++;
        }
      }
      int malformedCount = (int) Math.round(events.size() * config.malformedFraction());
      for (int k = 0; k < malformedCount; k++) {
        long arrivalMs =
            startMs + 1 + nextLong(malformedRandom, Math.max(1, lastArrival - startMs));
        lines.add(new Line(arrivalMs, seq++, content.malformedLine(k, arrivalMs)));
        malformed++;
      }
      lines.sort(ARRIVAL_ORDER);
      return lines;
    }

    /**
     * Arrival time of every event: normal, late or too-late delay. Late and too-late events are
     * kept only if the watermark derived from event times (max event time read so far minus
     * maxOutOfOrderness) really has passed their window (or its allowed lateness) when they arrive;
     * in a sparse stream that is not always so, and the others get a normal delay again. Turning an
     * event back to normal only raises the watermark, so a check pass never breaks earlier choices;
     * a few rounds refill the targets.
     */
    private long[] arrivals() {
      int n = events.size();
      long[] normalDelay = new long[n];
      double meanDelayMs = config.meanDelay().toMillis();
      long maxOutOfOrdernessMs = config.maxOutOfOrderness().toMillis();
      for (int i = 1; i < n; i++) {
        normalDelay[i] =
            Math.min(maxOutOfOrdernessMs, Math.round(exponential(delayRandom, meanDelayMs)));
      }
      long[] delay = normalDelay.clone();
      Timing[] timing = new Timing[n];
      Arrays.fill(timing, Timing.NORMAL);
      boolean[] tried = new boolean[n];
      tried[0] = true; // the first event opens the file with delay 0
      int[] order = identity(n);
      shuffle(order, delayRandom);

      long lastEventMs = events.get(n - 1).timeMs;
      long tooLateMin = config.tooLateDelayMin().toMillis();
      long tooLateMax = config.tooLateDelayMax().toMillis();
      long tooLateLatestEventMs = lastEventMs - tooLateMax - TOO_LATE_RUNWAY_MS;
      long tooLateTarget = Math.round(n * config.tooLateFraction());
      long lateMin = config.lateDelayMin().toMillis();
      long lateMax = config.lateDelayMax().toMillis();
      long lateTarget = lateMax - lateMin < 2 ? 0 : Math.round(n * config.lateFraction());

      for (int round = 0; round < LATENESS_ROUNDS; round++) {
        for (int i : order) {
          if (tooLate >= tooLateTarget) {
            break;
          }
          // Only events early enough that the stream still runs past their arrival.
          if (!tried[i] && events.get(i).timeMs <= tooLateLatestEventMs) {
            tried[i] = true;
            delay[i] = openUniform(delayRandom, tooLateMin, tooLateMax);
            timing[i] = Timing.TOO_LATE;
            tooLate++;
          }
        }
        for (int i : order) {
          if (late >= lateTarget) {
            break;
          }
          if (tried[i]) {
            continue;
          }
          tried[i] = true;
          long candidate = openUniform(delayRandom, lateMin, lateMax);
          // Only if the stream still runs at its arrival, so that the watermark moves past it.
          if (events.get(i).timeMs + candidate <= lastEventMs) {
            delay[i] = candidate;
            timing[i] = Timing.LATE;
            late++;
          }
        }
        if (!revertMisses(delay, normalDelay, timing)) {
          break;
        }
      }

      long[] arrival = new long[n];
      for (int i = 0; i < n; i++) {
        arrival[i] = events.get(i).timeMs + delay[i];
      }
      return arrival;
    }

    /**
     * Gives a normal delay back to every late event that would not be behind the watermark and to
     * every too-late event whose window would not have expired; true if any changed.
     */
    private boolean revertMisses(long[] delay, long[] normalDelay, Timing[] timing) {
      int n = events.size();
      Integer[] byArrival = new Integer[n];
      for (int i = 0; i < n; i++) {
        byArrival[i] = i;
      }
      Arrays.sort(
          byArrival,
          Comparator.comparingLong((Integer i) -> events.get(i).timeMs + delay[i])
              .thenComparingInt(i -> i));
      long windowMs = config.windowSize().toMillis();
      long latenessMs = config.allowedLateness().toMillis();
      long maxOutOfOrdernessMs = config.maxOutOfOrderness().toMillis();
      long maxEventMs = Long.MIN_VALUE;
      List<Integer> misses = new ArrayList<>();
      for (int i : byArrival) {
        long timeMs = events.get(i).timeMs;
        if (timing[i] != Timing.NORMAL) {
          long windowEnd = Math.floorDiv(timeMs, windowMs) * windowMs + windowMs;
          long watermark =
              maxEventMs == Long.MIN_VALUE ? Long.MIN_VALUE : maxEventMs - maxOutOfOrdernessMs;
          boolean ok =
              timing[i] == Timing.LATE
                  ? watermark >= windowEnd && watermark < windowEnd + latenessMs
                  : watermark >= windowEnd + latenessMs;
          if (!ok) {
            misses.add(i);
          }
        }
        maxEventMs = Math.max(maxEventMs, timeMs);
      }
      for (int i : misses) {
        if (timing[i] == Timing.LATE) {
          late--;
        } else {
          tooLate--;
        }
        timing[i] = Timing.NORMAL;
        delay[i] = normalDelay[i];
      }
      return !misses.isEmpty();
    }
  }

  /** The payments workload: card payments, card-testing and account-takeover bursts. */
  private static final class PaymentsContent implements Content {
    private final GeneratorConfig config;
    private final long startMs;
    private final SplittableRandom accountRandom;
    private final SplittableRandom timeRandom;
    private final SplittableRandom fraudRandom;
    private final SplittableRandom amountRandom;
    private final SplittableRandom malformedRandom;
    private final String[] homeCountry;
    private final SkewedSampler accounts;
    private final SkewedSampler merchants;

    PaymentsContent(Generation generation) {
      config = generation.config;
      startMs = generation.startMs;
      accountRandom = generation.accountRandom;
      timeRandom = generation.timeRandom;
      fraudRandom = generation.fraudRandom;
      amountRandom = generation.amountRandom;
      malformedRandom = generation.malformedRandom;
      homeCountry = new String[config.numAccounts()];
      for (int i = 0; i < homeCountry.length; i++) {
        homeCountry[i] = HOME_COUNTRIES[pick(HOME_COUNTRY_CUMULATIVE, accountRandom.nextDouble())];
      }
      accounts = new SkewedSampler(config.numAccounts(), ACCOUNT_SKEW, accountRandom);
      merchants = new SkewedSampler(MERCHANT_POOL_SIZE, MERCHANT_SKEW, accountRandom);
    }

    @Override
    public List<String> sources() {
      return SOURCES;
    }

    @Override
    public double[] sourceCumulative() {
      return SOURCE_CUMULATIVE;
    }

    /** Legit timeline plus fraud bursts. */
    @Override
    public long addEvents(List<Event> events) {
      int n = config.numEvents();
      int maxFraud = (n - 1) / 2;
      List<Integer> cardTestingSizes = new ArrayList<>();
      List<Integer> takeoverSizes = new ArrayList<>();
      int fraudTotal = 0;
      long cardTestingBursts = Math.round(n * config.cardTestingBurstsPerThousand() / 1000.0);
      for (long b = 0; b < cardTestingBursts; b++) {
        int size = 8 + nextInt(fraudRandom, 13);
        if (fraudTotal + size <= maxFraud) {
          cardTestingSizes.add(size);
          fraudTotal += size;
        }
      }
      long takeoverBursts = Math.round(n * config.takeoverBurstsPerThousand() / 1000.0);
      for (long b = 0; b < takeoverBursts; b++) {
        int size = 3 + nextInt(fraudRandom, 4);
        if (fraudTotal + size <= maxFraud) {
          takeoverSizes.add(size);
          fraudTotal += size;
        }
      }

      double meanGapMs = 1000.0 / config.eventsPerSecond();
      long t = startMs;
      for (int i = 0; i < n - fraudTotal; i++) {
        if (i > 0) {
          t += Math.round(exponential(timeRandom, meanGapMs));
        }
        int account = accounts.next(accountRandom);
        events.add(
            new Txn(
                t,
                account,
                merchants.next(accountRandom),
                homeCountry[account],
                legitCents(amountRandom),
                false));
      }
      long lastLegitMs = t;

      for (int size : cardTestingSizes) {
        long span = 60_000 + nextLong(fraudRandom, 120_001);
        long begin = burstBegin(span, lastLegitMs);
        int account = nextInt(fraudRandom, config.numAccounts());
        int[] merchantPool = identity(MERCHANT_POOL_SIZE);
        shuffle(merchantPool, fraudRandom);
        long[] offsets = sortedOffsets(size, span);
        // The same draws either way: a stream of one style differs from the other's of the same
        // seed only in its card testing.
        boolean oneMerchant = config.cardTestingStyle() == CardTestingStyle.ONE_MERCHANT;
        for (int e = 0; e < size; e++) {
          long cents = 50 + nextLong(fraudRandom, 251);
          int merchant = oneMerchant ? merchantPool[0] : merchantPool[e];
          events.add(
              new Txn(
                  begin + offsets[e],
                  account,
                  merchant,
                  homeCountry[account],
                  oneMerchant ? 4 * cents : cents,
                  true));
        }
      }
      for (int size : takeoverSizes) {
        long span = 60_000 + nextLong(fraudRandom, 240_001);
        long begin = burstBegin(span, lastLegitMs);
        int account = nextInt(fraudRandom, config.numAccounts());
        String country = TAKEOVER_COUNTRIES[nextInt(fraudRandom, TAKEOVER_COUNTRIES.length)];
        long[] offsets = sortedOffsets(size, span);
        for (int e = 0; e < size; e++) {
          long cents = 50_000 + nextLong(fraudRandom, 140_001);
          events.add(
              new Txn(
                  begin + offsets[e], account, merchants.next(fraudRandom), country, cents, true));
        }
      }
      return fraudTotal;
    }

    private long burstBegin(long span, long lastLegitMs) {
      return EventGenerator.burstBegin(fraudRandom, startMs, span, lastLegitMs);
    }

    private long[] sortedOffsets(int size, long span) {
      return EventGenerator.sortedOffsets(fraudRandom, size, span);
    }

    private static long legitCents(SplittableRandom random) {
      double amount = MEDIAN_LEGIT_CENTS * StrictMath.exp(LEGIT_AMOUNT_SIGMA * gaussian(random));
      return Math.max(1, Math.min(MAX_LEGIT_CENTS, Math.round(amount)));
    }

    @Override
    public byte[] json(Event event, boolean conflict) {
      return eventFields((Txn) event, conflict ? 100 : 0).toJson();
    }

    @Override
    public byte[] malformedLine(int k, long arrivalMs) {
      MalformedKind[] kinds = MalformedKind.values();
      return malformedLine(kinds[k % kinds.length], k, arrivalMs);
    }

    @Override
    public LabelStream.Subject subject(Event event) {
      Txn txn = (Txn) event;
      return new LabelStream.Subject(
          SOURCES.get(txn.source),
          id(txn),
          accountId(txn.account),
          txn.timeMs,
          txn.positive ? "fraud" : "legit");
    }

    private static String id(Txn txn) {
      return String.format(Locale.ROOT, "txn-%06d", txn.idNumber);
    }

    private EventFields eventFields(Txn txn, long extraCents) {
      EventFields f = new EventFields();
      f.id = id(txn);
      f.source = SOURCES.get(txn.source);
      f.time = RFC3339_MILLIS.format(Instant.ofEpochMilli(txn.timeMs));
      f.accountId = accountId(txn.account);
      f.amount = BigDecimal.valueOf(txn.cents + extraCents, 2);
      f.merchantId = merchantId(txn.merchant);
      f.country = txn.country;
      f.label = !config.inlineLabels() ? null : txn.positive ? "fraud" : "legit";
      return f;
    }

    /** A line with exactly one defect of {@code kind}; {@code k} numbers malformed lines. */
    private byte[] malformedLine(MalformedKind kind, int k, long arrivalMs) {
      int account = accounts.next(malformedRandom);
      EventFields f = new EventFields();
      f.id = String.format(Locale.ROOT, "bad-%06d", k + 1);
      f.source = SOURCES.get(k % SOURCES.size());
      long eventMs = Math.max(startMs, arrivalMs - nextLong(malformedRandom, 2001));
      f.time = RFC3339_MILLIS.format(Instant.ofEpochMilli(eventMs));
      f.accountId = accountId(account);
      f.amount = BigDecimal.valueOf(legitCents(malformedRandom), 2);
      f.merchantId = merchantId(merchants.next(malformedRandom));
      f.country = homeCountry[account];
      byte[] shared = f.withSharedDefect(kind.name());
      if (shared != null) {
        return shared;
      }
      switch (kind) {
        case WRONG_TYPE:
          f.type = "payments.refund.v1";
          break;
        case MISSING_ACCOUNT_ID:
          f.accountId = null;
          break;
        case NEGATIVE_AMOUNT:
          f.amount = f.amount.negate();
          break;
        case AMOUNT_THREE_DECIMALS:
          f.amount = f.amount.add(BigDecimal.valueOf(5, 3));
          break;
        case AMOUNT_AS_STRING:
          f.amountText = f.amount.toPlainString();
          f.amount = null;
          break;
        case WRONG_CURRENCY:
          f.currency = "USD";
          break;
        default:
          throw new IllegalStateException("unknown malformed kind " + kind);
      }
      return f.toJson();
    }
  }

  /** A burst start after {@code startMs}, leaving room for the burst before {@code lastMs}. */
  static long burstBegin(SplittableRandom random, long startMs, long span, long lastMs) {
    long low = startMs + 1;
    long high = Math.max(low, lastMs - span);
    return low + nextLong(random, high - low + 1);
  }

  /** {@code size} offsets uniform in {@code [0, span]}, sorted. */
  static long[] sortedOffsets(SplittableRandom random, int size, long span) {
    long[] offsets = new long[size];
    for (int e = 0; e < size; e++) {
      offsets[e] = nextLong(random, span + 1);
    }
    Arrays.sort(offsets);
    return offsets;
  }

  private static String accountId(int account) {
    return String.format(Locale.ROOT, "acct-%05d", account + 1);
  }

  private static String merchantId(int merchant) {
    return String.format(Locale.ROOT, "m-%04d", merchant + 1);
  }

  /** {@code {"advanceProcessingTime":"PT<seconds>[.<fraction>]S"}}. */
  static byte[] directive(long deltaMs) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(48);
    try (JsonGenerator g = JSON.createGenerator(bytes, JsonEncoding.UTF8)) {
      g.writeStartObject();
      g.writeStringField("advanceProcessingTime", isoSeconds(deltaMs));
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write JSON to memory", e);
    }
    return bytes.toByteArray();
  }

  /**
   * An ISO-8601 duration in seconds only, e.g. {@code PT3S}, {@code PT1.5S}, {@code PT4200S}:
   * unlike {@link java.time.Duration#toString()} ({@code PT1H10M}) Joda's parser also accepts it.
   */
  static String isoSeconds(long millis) {
    if (millis < 0) {
      throw new IllegalArgumentException("duration must not be negative: " + millis + " ms");
    }
    return "PT" + BigDecimal.valueOf(millis, 3).stripTrailingZeros().toPlainString() + "S";
  }

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] part : parts) {
      out.writeBytes(part);
    }
    return out.toByteArray();
  }

  /** {@code haystack} with the first {@code needle} replaced; the needle must occur. */
  static byte[] replace(byte[] haystack, byte[] needle, byte[] replacement) {
    for (int i = 0; i + needle.length <= haystack.length; i++) {
      if (Arrays.equals(haystack, i, i + needle.length, needle, 0, needle.length)) {
        return concat(
            Arrays.copyOfRange(haystack, 0, i),
            replacement,
            Arrays.copyOfRange(haystack, i + needle.length, haystack.length));
      }
    }
    throw new IllegalStateException("marker not found");
  }

  // Random helpers built only on nextLong()/nextDouble() and StrictMath, so that the output does
  // not depend on the JDK's bounded-int or Gaussian algorithms or on platform floating point.

  static int[] identity(int n) {
    int[] values = new int[n];
    for (int i = 0; i < n; i++) {
      values[i] = i;
    }
    return values;
  }

  static void shuffle(int[] values, SplittableRandom random) {
    for (int i = values.length - 1; i > 0; i--) {
      int j = nextInt(random, i + 1);
      int tmp = values[i];
      values[i] = values[j];
      values[j] = tmp;
    }
  }

  /** Uniform in {@code [0, bound)}, bound > 0. */
  static long nextLong(SplittableRandom random, long bound) {
    return Math.floorMod(random.nextLong(), bound);
  }

  static int nextInt(SplittableRandom random, int bound) {
    return (int) nextLong(random, bound);
  }

  /** Uniform in the open interval {@code (low, high)}, which must hold at least one value. */
  static long openUniform(SplittableRandom random, long low, long high) {
    return low + 1 + nextLong(random, Math.max(1, high - low - 1));
  }

  static double exponential(SplittableRandom random, double mean) {
    return -mean * StrictMath.log(1.0 - random.nextDouble());
  }

  /** Standard normal by Box-Muller. */
  static double gaussian(SplittableRandom random) {
    double u1 = 1.0 - random.nextDouble();
    double u2 = random.nextDouble();
    return StrictMath.sqrt(-2.0 * StrictMath.log(u1)) * StrictMath.cos(2 * StrictMath.PI * u2);
  }

  /** First index whose cumulative weight exceeds {@code u} in {@code [0, 1)}. */
  static int pick(double[] cumulative, double u) {
    int low = 0;
    int high = cumulative.length - 1;
    while (low < high) {
      int mid = (low + high) >>> 1;
      if (u < cumulative[mid]) {
        high = mid;
      } else {
        low = mid + 1;
      }
    }
    return low;
  }
}
