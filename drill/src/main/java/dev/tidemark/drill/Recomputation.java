package dev.tidemark.drill;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.launcher.check.OutputView;
import dev.tidemark.model.DecisionScorer;
import dev.tidemark.model.ScoreFeatures;
import dev.tidemark.pipelines.Durations;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.TidemarkPipeline;
import dev.tidemark.pipelines.io.ReplayFile;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecFeaturesFn;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.transforms.ParseCloudEvents;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.util.Utf8;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.DuplicateRecord;
import dev.tidemark.transforms.values.Event;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.RawRecord;
import dev.tidemark.transforms.values.TooLateRecord;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.beam.sdk.transforms.windowing.IntervalWindow;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * What a run should have committed, recomputed in this JVM from the records it was fed and from the
 * lateness decisions it made itself, with the pipeline's own parser, identity rule, feature
 * aggregation and scorer. This is the exactly-once side of the drill: whatever the watermark did,
 * every event the run accepted must be counted once in each window it accepted it into, every
 * invalid record dead-lettered once with its reason, every later copy recorded once as a duplicate.
 *
 * <p>The input is read as {@link dev.tidemark.launcher.KafkaFeed#produce} feeds it: in file order,
 * each record stamped with the replay clock (the first event's time, moved by {@code
 * advanceProcessingTime}). The first valid copy of an identity ({@code source}+{@code id}) in that
 * order is the one windowed (the feed keys records by account, so an account's copies keep their
 * order). A window's expected final state is the accumulation, over the accepted events in it, of
 * the payments spec's {@link SpecFeaturesFn}, scored by the run's model; an event the run recorded
 * as too late is left out of the windows its too-late record names ({@code missedWindows}).
 *
 * <p>The watermark side is judged apart ({@link #lateness}): the reference watermark at an event's
 * arrival is the bounded out-of-orderness watermark of the records fed before it (their latest
 * readable event time minus {@code --maxOutOfOrderness}), the one the batch reference of the input
 * follows; an event the run and that watermark judge differently is a lateness difference, with its
 * distance from the reference watermark.
 */
final class Recomputation {
  /** One valid first copy: the event and the reference watermark when it arrived. */
  private record Accepted(Event event, Instant referenceWatermark) {}

  private final TidemarkOptions options;
  private final Duration windowSize;
  private final Duration period;
  private final Duration allowedLateness;

  /** Every valid copy of each identity, in feed order. */
  private final Map<String, List<Accepted>> copies = new LinkedHashMap<>();

  private final List<Long> eventTimeAfter = new ArrayList<>();
  private long records;

  private Recomputation(TidemarkOptions options) {
    this.options = options;
    this.windowSize = Durations.parse("windowSize", options.getWindowSize());
    this.period = Durations.parse("windowPeriod", options.getWindowPeriod());
    this.allowedLateness = Durations.parse("allowedLateness", options.getAllowedLateness());
  }

  /** Reads {@code input} as the feed sends it, with the parsing options of {@code options}. */
  static Recomputation of(Path input, TidemarkOptions options) {
    Recomputation recomputation = new Recomputation(options);
    try {
      recomputation.read(ReplayFile.splitLines(Files.readAllBytes(input)));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the drill's input " + input, e);
    }
    return recomputation;
  }

  private void read(List<byte[]> lines) {
    ParseCloudEvents.Parser parser = TidemarkPipeline.parser(options).newParser();
    Duration maxOutOfOrderness =
        Durations.parse("maxOutOfOrderness", options.getMaxOutOfOrderness());
    Duration maxFutureSkew = Durations.parse("maxFutureSkew", options.getMaxFutureSkew());
    Long clock = null;
    long maxEventTime = Long.MIN_VALUE;
    for (byte[] bytes : lines) {
      String line = Utf8.decodeOrNull(bytes);
      if (line != null && line.isBlank()) {
        continue;
      }
      JsonNode node = line == null ? null : tryParse(line);
      if (node != null && node.isObject() && node.has("advanceProcessingTime")) {
        if (clock != null) {
          clock += java.time.Duration.parse(node.get("advanceProcessingTime").asText()).toMillis();
        }
        continue;
      }
      if (node != null
          && node.isObject()
          && !node.has("specversion")
          && (node.has("advanceWatermarkTo") || node.has("advanceWatermarkToInfinity"))) {
        continue;
      }
      Long eventTime = eventTimeMillis(node);
      if (clock == null) {
        clock = eventTime;
      }
      Instant ingestion = new Instant(clock == null ? 0L : clock);
      Instant watermark =
          maxEventTime == Long.MIN_VALUE
              ? new Instant(Long.MIN_VALUE / 2)
              : new Instant(maxEventTime).minus(maxOutOfOrderness);
      records++;
      RawRecord raw = RawRecord.of(bytes, ingestion, "drill-input:" + records);
      Event event = parser.parse(raw, letter -> invariantLetters.add(bytes(letter.toJson())));
      // The source's watermark follows every readable event time that is not in the future.
      if (eventTime != null && eventTime <= ingestion.plus(maxFutureSkew).getMillis()) {
        maxEventTime = Math.max(maxEventTime, eventTime);
      }
      eventTimeAfter.add(maxEventTime);
      if (event == null) {
        continue;
      }
      copies
          .computeIfAbsent(event.source() + "|" + event.id(), k -> new ArrayList<>())
          .add(new Accepted(event, watermark));
    }
  }

  /**
   * The copy of each identity the run windowed: the first in feed order, unless the run's
   * duplicates output names that one and leaves exactly one other copy unnamed. Copies of one
   * identity that name different accounts go to different partitions, and a restored job may read
   * one partition's backlog before the other's: which copy comes first is then the run's, as which
   * events are too late is.
   */
  private List<Accepted> firstCopies(OutputView observed) {
    List<Accepted> first = new ArrayList<>();
    copies.forEach(
        (identity, list) -> {
          int chosen = 0;
          if (list.size() > 1) {
            Set<String> diverted = new java.util.HashSet<>();
            for (String record : observed.duplicates().getOrDefault(identity, List.of())) {
              JsonNode duplicate = parse(record);
              diverted.add(
                  duplicate.path("eventTime").asText()
                      + "|"
                      + duplicate.path("ingestionTime").asText());
            }
            List<Integer> undiverted = new ArrayList<>();
            for (int i = 0; i < list.size(); i++) {
              Event copy = list.get(i).event();
              if (!diverted.contains(
                  bytesToText(
                      new DuplicateRecord(
                              copy.source(),
                              copy.id(),
                              copy.eventTime(),
                              true,
                              copy.eventTime(),
                              copy.ingestionTime())
                          .toJson()))) {
                undiverted.add(i);
              }
            }
            if (undiverted.size() == 1) {
              chosen = undiverted.get(0);
            }
          }
          first.add(list.get(chosen));
        });
    return first;
  }

  /** {@code eventTime|ingestionTime} of a duplicate record's JSON, as the run's are keyed. */
  private static String bytesToText(String json) {
    JsonNode node = parse(json);
    return node.path("eventTime").asText() + "|" + node.path("ingestionTime").asText();
  }

  /** The duplicate records of every identity's copies but {@code first}. */
  private void addDuplicates(List<Accepted> first, OutputView expected) {
    Map<String, Event> firstOf = new HashMap<>();
    for (Accepted one : first) {
      firstOf.put(one.event().source() + "|" + one.event().id(), one.event());
    }
    copies.forEach(
        (identity, list) -> {
          Event kept = firstOf.get(identity);
          for (Accepted copy : list) {
            Event event = copy.event();
            if (event == kept) {
              continue;
            }
            expected.addDuplicate(
                bytes(
                    new DuplicateRecord(
                            event.source(),
                            event.id(),
                            event.eventTime(),
                            Arrays.equals(kept.fingerprint(), event.fingerprint()),
                            kept.eventTime(),
                            event.ingestionTime())
                        .toJson()));
          }
        });
  }

  /** Records in the input (directives and blank lines left out): what the feed sends. */
  long records() {
    return records;
  }

  /**
   * The latest readable event time among the first {@code fed} records (epoch millis), for
   * measuring a backlog in event time; {@link Long#MIN_VALUE} before any.
   */
  long eventTimeAfter(long fed) {
    if (fed <= 0) {
      return Long.MIN_VALUE;
    }
    return eventTimeAfter.get((int) Math.min(fed, eventTimeAfter.size()) - 1);
  }

  /**
   * The outputs the run should have committed, given its own too-late records ({@code observed}'s):
   * the dead letters and duplicates of the input, a too-late record for each accepted event the run
   * recorded as too late (its {@code missedWindows} as the run decided them), and the final
   * decision of every window over the events the run accepted into it.
   */
  OutputView expected(OutputView observed) {
    OutputView expected = new OutputView();
    invariantLetters.forEach(expected::addDeadLetter);
    List<Accepted> accepted = firstCopies(observed);
    addDuplicates(accepted, expected);
    Map<String, Set<IntervalWindow>> missedByRun = missedWindows(observed);
    Map<String, SpecFeaturesFn.Accumulator> windows = new TreeMap<>();
    Map<String, String[]> windowKeys = new HashMap<>();
    SpecFeaturesFn aggregate = SpecFeaturesFn.of(PAYMENTS);
    for (Accepted one : accepted) {
      Event event = one.event();
      List<IntervalWindow> all = windowsOf(event.eventTime());
      Set<IntervalWindow> missed =
          missedByRun.getOrDefault(event.source() + "|" + event.id(), Set.of());
      List<IntervalWindow> missedInOrder = new ArrayList<>();
      for (IntervalWindow window : all) {
        if (missed.contains(window)) {
          missedInOrder.add(window);
          continue;
        }
        String key = Decision.decisionId(event.key(), window.start(), window.end());
        windowKeys.putIfAbsent(
            key,
            new String[] {
              event.key(),
              String.valueOf(window.start().getMillis()),
              String.valueOf(window.end().getMillis())
            });
        aggregate.addInput(
            windows.computeIfAbsent(key, k -> aggregate.createAccumulator()), event.fields());
      }
      if (!missed.isEmpty()) {
        // The run's own decision, as the pipeline writes it; windows it names that the event does
        // not fall in make the record differ from the observed one.
        List<IntervalWindow> named = new ArrayList<>(missedInOrder);
        for (IntervalWindow window : missed) {
          if (!all.contains(window)) {
            named.add(window);
          }
        }
        named.sort((a, b) -> a.start().compareTo(b.start()));
        expected.addTooLate(
            bytes(
                new TooLateRecord(
                        event.source(),
                        event.id(),
                        "accountId",
                        event.key(),
                        event.eventTime(),
                        named,
                        missedInOrder.size() < all.size(),
                        event.ingestionTime(),
                        event.ingestionTime())
                    .toJson()));
      }
    }
    score(windows, windowKeys, aggregate, expected);
    return expected;
  }

  private final List<byte[]> invariantLetters = new ArrayList<>();

  /** The spec of the drill's runs: the bundled payments spec. */
  private static final PipelineSpec PAYMENTS = SpecLoader.loadBundled(SpecLoader.DEFAULT_BUNDLED);

  private void score(
      Map<String, SpecFeaturesFn.Accumulator> windows,
      Map<String, String[]> windowKeys,
      SpecFeaturesFn aggregate,
      OutputView expected) {
    List<Decision> unscored = new ArrayList<>();
    windows.forEach(
        (key, accumulator) -> {
          String[] parts = windowKeys.get(key);
          unscored.add(
              Decision.unscored(
                  parts[0],
                  new Instant(Long.parseLong(parts[1])),
                  new Instant(Long.parseLong(parts[2])),
                  "ON_TIME",
                  0,
                  true,
                  true,
                  new Features(aggregate.schema(), aggregate.extractOutput(accumulator)),
                  new Instant(0)));
        });
    try (DecisionScorer scorer = DecisionScorer.open(scorer(options))) {
      DecisionScorer.Batch batch = scorer.newBatch();
      List<String> failures = new ArrayList<>();
      for (Decision decision : unscored) {
        if (batch.add(decision)) {
          scorer.score(
              batch, d -> expected.addDecision(bytes(d.toJson())), f -> failures.add(f.toJson()));
        }
      }
      scorer.score(
          batch, d -> expected.addDecision(bytes(d.toJson())), f -> failures.add(f.toJson()));
      if (!failures.isEmpty()) {
        throw new IllegalStateException(
            "the recomputation could not score "
                + failures.size()
                + " windows: "
                + failures.get(0));
      }
    }
  }

  /**
   * Where the run's lateness decisions differ from the reference watermark's, per accepted event:
   * the windows each judged too late. See {@link Lateness}.
   */
  Lateness lateness(OutputView observed, Map<String, String> runWatermarks) {
    Map<String, Set<IntervalWindow>> missedByRun = missedWindows(observed);
    Lateness lateness = new Lateness();
    for (Accepted one : firstCopies(observed)) {
      Event event = one.event();
      List<IntervalWindow> all = windowsOf(event.eventTime());
      Set<IntervalWindow> byRun =
          missedByRun.getOrDefault(event.source() + "|" + event.id(), Set.of());
      Set<IntervalWindow> byReference = new LinkedHashSet<>();
      for (IntervalWindow window : all) {
        if (deadline(window).isBefore(one.referenceWatermark())) {
          byReference.add(window);
        }
      }
      if (byReference.isEmpty() && byRun.isEmpty()) {
        continue;
      }
      lateness.tooLateByReference += byReference.isEmpty() ? 0 : 1;
      lateness.tooLateByRun += byRun.isEmpty() ? 0 : 1;
      if (byReference.equals(byRun)) {
        continue;
      }
      // The first window on which they differ: its deadline against the reference watermark.
      IntervalWindow differing = null;
      for (IntervalWindow window : all) {
        if (byReference.contains(window) != byRun.contains(window)) {
          differing = window;
          break;
        }
      }
      if (differing == null) {
        differing = all.get(0);
      }
      long distance = one.referenceWatermark().getMillis() - deadline(differing).getMillis();
      lateness.differences.add(
          new Lateness.Difference(
              event.source() + "|" + event.id(),
              event.key(),
              event.eventTime(),
              event.ingestionTime(),
              byRun.size(),
              byReference.size(),
              all.size(),
              distance,
              runWatermarks.get(event.source() + "|" + event.id())));
    }
    return lateness;
  }

  /** When a window stops taking events: its last millisecond plus the allowed lateness. */
  private Instant deadline(IntervalWindow window) {
    return window.maxTimestamp().plus(allowedLateness);
  }

  /** Per {@code source|id}, the windows the run's too-late records name. */
  private static Map<String, Set<IntervalWindow>> missedWindows(OutputView observed) {
    Map<String, Set<IntervalWindow>> missed = new HashMap<>();
    observed
        .tooLate()
        .forEach(
            (key, records) -> {
              Set<IntervalWindow> windows = new LinkedHashSet<>();
              for (String record : records) {
                JsonNode node = parse(record);
                for (JsonNode window : node.path("missedWindows")) {
                  windows.add(
                      new IntervalWindow(
                          Instant.parse(window.path("start").asText()),
                          Instant.parse(window.path("end").asText())));
                }
              }
              missed.put(key, windows);
            });
    return missed;
  }

  /** The sliding windows an event time falls in, as Beam's {@code SlidingWindows} assigns them. */
  List<IntervalWindow> windowsOf(Instant time) {
    List<IntervalWindow> windows = new ArrayList<>();
    long size = windowSize.getMillis();
    long every = period.getMillis();
    long lastStart = time.getMillis() - Math.floorMod(time.getMillis(), every);
    for (long start = lastStart; start > time.getMillis() - size; start -= every) {
      windows.add(new IntervalWindow(new Instant(start), new Instant(start + size)));
    }
    windows.sort((a, b) -> a.start().compareTo(b.start()));
    return windows;
  }

  /** The run's model, threshold and batch size, without a watch (nothing here runs for long). */
  private static ScoreFeatures scorer(TidemarkOptions options) {
    return TidemarkPipeline.scorer(options).withoutModelWatch();
  }

  private static @Nullable Long eventTimeMillis(@Nullable JsonNode node) {
    if (node == null || !node.path("time").isTextual()) {
      return null;
    }
    try {
      return java.time.OffsetDateTime.parse(node.get("time").asText()).toInstant().toEpochMilli();
    } catch (RuntimeException e) {
      return null;
    }
  }

  private static @Nullable JsonNode tryParse(String line) {
    try {
      return Json.MAPPER.readTree(line);
    } catch (IOException e) {
      return null;
    }
  }

  private static JsonNode parse(String json) {
    try {
      return Json.MAPPER.readTree(json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static byte[] bytes(String json) {
    return json.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * The run's lateness decisions against the reference watermark's: how many events each judged too
   * late (in one window or more), and every event they judged differently, with its distance.
   */
  static final class Lateness {
    /**
     * One event judged differently.
     *
     * @param distanceMillis the reference watermark at the event's arrival minus the deadline (last
     *     millisecond plus allowed lateness) of the first window on which the two differ: positive
     *     when the reference judged that window too late by so much, negative when it was still
     *     open by so much
     */
    record Difference(
        String identity,
        String accountId,
        Instant eventTime,
        Instant ingestionTime,
        int windowsMissedByRun,
        int windowsMissedByReference,
        int windows,
        long distanceMillis,
        @Nullable String runWatermark) {
      Map<String, Object> toMap() {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("event", identity);
        map.put("accountId", accountId);
        map.put("eventTime", eventTime.toString());
        map.put("ingestionTime", ingestionTime.toString());
        map.put("windowsMissedByRun", windowsMissedByRun);
        map.put("windowsMissedByReference", windowsMissedByReference);
        map.put("windows", windows);
        map.put("distanceSeconds", distanceMillis / 1000.0);
        if (runWatermark != null) {
          map.put("runWatermark", runWatermark);
        }
        return map;
      }
    }

    long tooLateByReference;
    long tooLateByRun;
    final List<Difference> differences = new ArrayList<>();
  }
}
