package dev.tidemark.testkit.generate;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.everyItem;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;
import static org.hamcrest.Matchers.lessThanOrEqualTo;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.oneOf;
import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.fail;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.testkit.generate.EventGenerator.MalformedKind;
import dev.tidemark.testkit.generate.EventGenerator.Stats;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.BeforeClass;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * Reads the generator's output back, independently of how it was made, and checks it against the
 * replay-file contract and the generator's own {@link Stats}.
 */
public class EventGeneratorTest {

  private static final ObjectMapper MAPPER =
      JsonMapper.builder()
          .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
          .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES)
          .build();

  private static final List<String> EVENT_FIELDS =
      List.of("specversion", "id", "source", "type", "time", "datacontenttype", "data");
  private static final List<String> DATA_FIELDS =
      List.of("accountId", "amount", "currency", "merchantId", "country", "label");
  private static final Set<String> HOME_COUNTRIES = Set.of("GB", "IE", "FR", "DE", "NL", "ES");
  private static final Set<String> TAKEOVER_COUNTRIES = Set.of("RU", "BR", "NG", "VN");
  private static final String TIME_PATTERN = "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z";
  private static final int MAX_RECORD_BYTES = 64 * 1024;
  private static final BigDecimal SMALL = new BigDecimal("3.00");
  private static final BigDecimal LARGE = new BigDecimal("500.00");

  private static GeneratorConfig config;
  private static byte[] output;
  private static Stats stats;
  private static Replay replay;

  @Rule public TemporaryFolder temp = new TemporaryFolder();

  @BeforeClass
  public static void generateDefault() throws IOException {
    config = GeneratorConfig.defaults();
    EventGenerator generator = new EventGenerator(config);
    output = generate(generator);
    stats = generator.stats();
    replay = Replay.read(output, config);
  }

  private static byte[] generate(EventGenerator generator) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    generator.writeTo(out);
    return out.toByteArray();
  }

  // ---- determinism --------------------------------------------------------------------------

  @Test
  public void sameSeedGivesIdenticalBytes() throws IOException {
    byte[] again = generate(new EventGenerator(GeneratorConfig.defaults()));
    assertArrayEquals(output, again);
  }

  @Test
  public void writingTwiceWithOneGeneratorGivesIdenticalBytesAndStats() throws IOException {
    EventGenerator generator = new EventGenerator(config);
    byte[] first = generate(generator);
    Stats firstStats = generator.stats();
    assertArrayEquals(first, generate(generator));
    assertThat(generator.stats(), equalTo(firstStats));
  }

  @Test
  public void differentSeedGivesDifferentBytes() throws IOException {
    byte[] other = generate(new EventGenerator(config.toBuilder().seed(43).build()));
    assertThat(Arrays.equals(output, other), is(false));
  }

  @Test
  public void writeToPathWritesTheSameBytes() throws IOException {
    Path file = temp.getRoot().toPath().resolve("replay.ndjson");
    EventGenerator generator = new EventGenerator(config);
    generator.writeTo(file);
    assertArrayEquals(output, Files.readAllBytes(file));
    assertThat(generator.stats(), equalTo(stats));
  }

  @Test
  public void statsBeforeWritingIsAnError() {
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> new EventGenerator(config).stats());
    assertThat(e.getMessage(), containsString("writeTo"));
  }

  // ---- file shape ---------------------------------------------------------------------------

  @Test
  public void defaultFileIsSmallAndUsesNewlineEndings() {
    assertThat(output.length, lessThan(3 * 1024 * 1024));
    assertThat(output[output.length - 1], equalTo((byte) '\n'));
    for (byte b : output) {
      if (b == '\r') {
        fail("file contains a carriage return");
      }
    }
  }

  @Test
  public void lineAndDirectiveCountsMatchStats() {
    assertThat(replay.lines, equalTo(stats.lines()));
    assertThat(replay.directives, equalTo(stats.directives()));
    assertThat(replay.directives, greaterThan(100L));
  }

  @Test
  public void firstLineIsTheEventAtStartAndDirectivesAreFollowedByLines() {
    assertThat(replay.firstLineWasEvent, is(true));
    assertThat(replay.firstClockMs, equalTo(config.start().toEpochMilli()));
    assertThat(replay.consecutiveDirectives, is(0));
  }

  @Test
  public void directivesAreStrictlyPositiveAndParseWithJavaTimeAndJoda() {
    assertThat(replay.directiveMillis.isEmpty(), is(false));
    assertThat(replay.directiveMillis, everyItem(greaterThanOrEqualTo(1000L)));
  }

  @Test
  public void everyEventIsReadAtOrAfterItsEventTime() {
    // Arrival >= event time and the reconstructed clock lags the arrival by less than 1 s.
    assertThat(replay.eventsReadBeforeTheirTime, is(0));
  }

  @Test
  public void isoSecondsIsParsedBackExactlyByJavaTimeAndJoda() {
    assertThat(EventGenerator.isoSeconds(3000), equalTo("PT3S"));
    assertThat(EventGenerator.isoSeconds(1500), equalTo("PT1.5S"));
    assertThat(EventGenerator.isoSeconds(1), equalTo("PT0.001S"));
    assertThat(EventGenerator.isoSeconds(4_200_250), equalTo("PT4200.25S"));
    for (long millis : new long[] {1, 999, 1000, 1500, 61_000, 4_200_250, 86_400_000}) {
      String text = EventGenerator.isoSeconds(millis);
      assertThat(text, Duration.parse(text).toMillis(), equalTo(millis));
      assertThat(text, org.joda.time.Duration.parse(text).getMillis(), equalTo(millis));
    }
  }

  // ---- events -------------------------------------------------------------------------------

  @Test
  public void eventCountsMatchStats() {
    assertThat(replay.distinct.size(), equalTo(config.numEvents()));
    assertThat((long) replay.distinct.size(), equalTo(stats.eventsWritten()));
    assertThat(replay.duplicates, equalTo(stats.duplicates()));
    assertThat(replay.conflicts, equalTo(stats.conflicts()));
    assertThat(replay.fraud, equalTo(stats.fraudEvents()));
    assertThat(stats.duplicates(), equalTo(Math.round(config.numEvents() * 0.03)));
    assertThat(stats.conflicts(), greaterThan(0L));
    assertThat(stats.conflicts(), lessThan(stats.duplicates()));
  }

  @Test
  public void conflictsChangeOnlyTheAmountByOnePound() {
    assertThat(replay.badConflicts, equalTo(List.of()));
  }

  @Test
  public void sameIdUnderDifferentSourcesIsNotADuplicate() {
    Map<String, Integer> sourcesPerId = new HashMap<>();
    for (Event e : replay.distinct) {
      sourcesPerId.merge(e.id, 1, Integer::sum);
    }
    assertThat(sourcesPerId.get("txn-000001"), equalTo(3));
  }

  @Test
  public void validEventsHaveTheExpectedShape() {
    assertThat(replay.shapeErrors, equalTo(List.of()));
  }

  @Test
  public void amountsHaveExactlyTwoDecimalsAndAreNotNegative() {
    for (Event e : replay.distinct) {
      assertThat(e.id, e.amount.scale(), equalTo(2));
      assertThat(e.id, e.amount.signum(), greaterThanOrEqualTo(0));
    }
  }

  @Test
  public void legitEventsUseTheHomeCountryAndCappedAmounts() {
    Map<String, String> home = homeCountries();
    for (Event e : replay.distinct) {
      if (!e.fraud) {
        assertThat(e.id, e.country, equalTo(home.get(e.accountId)));
        assertThat(e.id, e.amount, lessThanOrEqualTo(new BigDecimal("2000.00")));
      }
    }
    assertThat(new HashSet<>(home.values()).size(), greaterThan(2));
  }

  @Test
  public void fraudEventsAreCardTestingOrTakeover() {
    Map<String, String> home = homeCountries();
    for (Event e : replay.distinct) {
      if (e.fraud) {
        boolean cardTesting =
            e.amount.compareTo(new BigDecimal("0.50")) >= 0 && e.amount.compareTo(SMALL) <= 0;
        boolean takeover =
            e.amount.compareTo(LARGE) >= 0
                && e.amount.compareTo(new BigDecimal("1900.00")) <= 0
                && TAKEOVER_COUNTRIES.contains(e.country)
                && !e.country.equals(home.get(e.accountId));
        assertThat(e.id + " " + e.amount + " " + e.country, cardTesting || takeover, is(true));
      }
    }
  }

  @Test
  public void oneMerchantCardTestingChangesOnlyTheCardTesting() throws IOException {
    GeneratorConfig oneMerchant =
        config.toBuilder().cardTestingStyle(CardTestingStyle.ONE_MERCHANT).build();
    Replay other = Replay.read(generate(new EventGenerator(oneMerchant)), oneMerchant);
    assertThat(other.distinct.size(), equalTo(replay.distinct.size()));
    Map<String, Set<String>> merchantsByAccount = new HashMap<>();
    int cardTesting = 0;
    for (int i = 0; i < replay.distinct.size(); i++) {
      Event spread = replay.distinct.get(i);
      Event event = other.distinct.get(i);
      assertThat(event.id, equalTo(spread.id));
      boolean wasCardTesting = spread.fraud && spread.amount.compareTo(SMALL) <= 0;
      if (!wasCardTesting) {
        assertThat(event.id, event.amount, equalTo(spread.amount));
        assertThat(event.id, event.merchantId, equalTo(spread.merchantId));
        continue;
      }
      cardTesting++;
      assertThat(event.id, event.fraud, is(true));
      assertThat(event.id, event.amount, equalTo(spread.amount.multiply(new BigDecimal(4))));
      merchantsByAccount
          .computeIfAbsent(event.accountId, a -> new HashSet<>())
          .add(event.merchantId);
    }
    assertThat(cardTesting, greaterThanOrEqualTo(8));
    // A burst is at one merchant: an account's card testing names few merchants (one a burst).
    for (Set<String> merchants : merchantsByAccount.values()) {
      assertThat(merchants.toString(), merchants.size(), lessThanOrEqualTo(2));
    }
  }

  @Test
  public void cardTestingStyleIsAPaymentsPattern() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                GeneratorConfig.builder()
                    .workload(Workload.LOGINS)
                    .cardTestingStyle(CardTestingStyle.ONE_MERCHANT)
                    .build());
    assertThat(e.getMessage(), containsString("no card testing"));
  }

  @Test
  public void thereIsACardTestingBurst() {
    assertThat(
        countBursts(e -> e.amount.compareTo(SMALL) <= 0, 8, Duration.ofMinutes(3), true),
        greaterThanOrEqualTo(1));
  }

  @Test
  public void thereIsATakeoverBurst() {
    assertThat(
        countBursts(e -> e.amount.compareTo(LARGE) >= 0, 3, Duration.ofMinutes(5), false),
        greaterThanOrEqualTo(1));
  }

  // ---- lateness -----------------------------------------------------------------------------

  @Test
  public void everyFirstArrivalIsOnTimeLateOrTooLate() {
    assertThat(replay.unclassifiedDelays, equalTo(List.of()));
  }

  @Test
  public void lateAndTooLateCountsMatchStats() {
    assertThat(replay.late, equalTo(stats.late()));
    assertThat(replay.tooLate, equalTo(stats.tooLate()));
    assertThat(stats.late(), equalTo(Math.round(config.numEvents() * config.lateFraction())));
    assertThat(stats.tooLate(), equalTo(Math.round(config.numEvents() * config.tooLateFraction())));
  }

  @Test
  public void tooLateEventsArriveAfterWindowPlusAllowedLateness() {
    assertThat(replay.tooLateLags.isEmpty(), is(false));
    long bound = config.windowSize().plus(config.allowedLateness()).toMillis();
    assertThat(replay.tooLateLags, everyItem(greaterThan(bound)));
  }

  @Test
  public void lateEventsAreBehindTheWatermarkButWithinAllowedLateness() {
    assertThat(replay.lateButNotBehindWatermark, equalTo(List.of()));
    assertThat(replay.tooLateButNotExpired, equalTo(List.of()));
  }

  @Test
  public void shortStreamHasNoTooLateEvents() throws IOException {
    GeneratorConfig shortConfig = config.toBuilder().numEvents(1000).build(); // ~33 minutes
    EventGenerator generator = new EventGenerator(shortConfig);
    Replay shortReplay = Replay.read(generate(generator), shortConfig);
    assertThat(generator.stats().tooLate(), equalTo(0L));
    assertThat(shortReplay.tooLate, equalTo(0L));
    assertThat(shortReplay.unclassifiedDelays, equalTo(List.of()));
    assertThat(shortReplay.lateButNotBehindWatermark, equalTo(List.of()));
    assertThat(shortReplay.distinct.size(), equalTo(1000));
  }

  @Test
  public void smallAndExtremeConfigsStayConsistent() throws IOException {
    List<GeneratorConfig> configs =
        List.of(
            GeneratorConfig.builder().numEvents(1).build(),
            GeneratorConfig.builder().numEvents(2).numAccounts(1).build(),
            GeneratorConfig.builder().numEvents(50).malformedFraction(1).duplicateRate(1).build(),
            GeneratorConfig.builder()
                .numEvents(3000)
                .eventsPerSecond(20)
                .meanDelay(Duration.ZERO)
                .maxOutOfOrderness(Duration.ZERO)
                .cardTestingBurstsPerThousand(50)
                .takeoverBurstsPerThousand(50)
                .build(),
            GeneratorConfig.builder()
                .numEvents(400)
                .eventsPerSecond(0.01)
                .lateFraction(0.5)
                .tooLateFraction(0.5)
                .conflictFraction(1)
                .build());
    for (GeneratorConfig c : configs) {
      EventGenerator generator = new EventGenerator(c);
      Replay r = Replay.read(generate(generator), c);
      Stats s = generator.stats();
      String what = c.toString();
      assertThat(what, r.firstLineWasEvent, is(true));
      assertThat(what, (long) r.distinct.size(), equalTo(s.eventsWritten()));
      assertThat(what, r.distinct.size(), equalTo(c.numEvents()));
      assertThat(what, r.duplicates, equalTo(s.duplicates()));
      assertThat(what, r.conflicts, equalTo(s.conflicts()));
      assertThat(what, r.fraud, equalTo(s.fraudEvents()));
      assertThat(what, r.fraud, lessThanOrEqualTo((long) c.numEvents() / 2));
      assertThat(what, r.late, equalTo(s.late()));
      assertThat(what, r.tooLate, equalTo(s.tooLate()));
      assertThat(what, r.lines, equalTo(s.lines()));
      assertThat(what, r.eventsReadBeforeTheirTime, is(0));
      assertThat(what, r.unclassifiedDelays, equalTo(List.of()));
      assertThat(what, r.lateButNotBehindWatermark, equalTo(List.of()));
      assertThat(what, r.tooLateButNotExpired, equalTo(List.of()));
      assertThat(what, r.shapeErrors, equalTo(List.of()));
      assertThat(what, r.malformedErrors, equalTo(List.of()));
      assertThat(what, r.badConflicts, equalTo(List.of()));
    }
  }

  // ---- malformed lines ----------------------------------------------------------------------

  @Test
  public void everyMalformedKindAppears() {
    for (MalformedKind kind : MalformedKind.values()) {
      assertThat(kind.name(), replay.malformedByKind.getOrDefault(kind, 0), greaterThan(0));
    }
  }

  @Test
  public void malformedCountMatchesStats() {
    long total = replay.malformedByKind.values().stream().mapToLong(Integer::longValue).sum();
    assertThat(total, equalTo(stats.malformed()));
    assertThat(total, equalTo(Math.round(config.numEvents() * config.malformedFraction())));
  }

  @Test
  public void malformedLinesAreUnlabelledAndHaveExactlyOneDefect() {
    assertThat(replay.malformedErrors, equalTo(List.of()));
  }

  // ---- config -------------------------------------------------------------------------------

  @Test
  public void configRejectsBadValuesWithAHint() {
    IllegalArgumentException fraction =
        assertThrows(
            IllegalArgumentException.class,
            () -> GeneratorConfig.builder().lateFraction(1.5).build());
    assertThat(fraction.getMessage(), containsString("lateFraction"));
    assertThat(fraction.getMessage(), containsString("[0, 1]"));
    IllegalArgumentException count =
        assertThrows(
            IllegalArgumentException.class, () -> GeneratorConfig.builder().numEvents(0).build());
    assertThat(count.getMessage(), containsString("numEvents"));
    IllegalArgumentException rate =
        assertThrows(
            IllegalArgumentException.class,
            () -> GeneratorConfig.builder().eventsPerSecond(Double.NaN).build());
    assertThat(rate.getMessage(), containsString("eventsPerSecond"));
    IllegalArgumentException lateness =
        assertThrows(
            IllegalArgumentException.class,
            () -> GeneratorConfig.builder().allowedLateness(Duration.ofMinutes(5)).build());
    assertThat(lateness.getMessage(), containsString("lateFraction to 0"));
    GeneratorConfig.builder().allowedLateness(Duration.ofMinutes(5)).lateFraction(0).build();
    assertThrows(
        IllegalArgumentException.class,
        () -> GeneratorConfig.builder().windowSize(Duration.ZERO).build());
    assertThrows(
        IllegalArgumentException.class,
        () -> GeneratorConfig.builder().meanDelay(Duration.ofSeconds(-1)).build());
  }

  @Test
  public void defaultsAndDerivedDelaysMatchTheContract() {
    assertThat(config.toBuilder().build(), equalTo(config));
    assertThat(config.lateDelayMin(), equalTo(Duration.ofMinutes(6)));
    assertThat(config.lateDelayMax(), equalTo(Duration.ofMinutes(60)));
    assertThat(config.tooLateDelayMin(), equalTo(Duration.ofMinutes(70)));
    assertThat(config.tooLateDelayMax(), equalTo(Duration.ofMinutes(85)));
  }

  // ---- helpers ------------------------------------------------------------------------------

  /** Home country of each account, from its legit events (which must agree). */
  private static Map<String, String> homeCountries() {
    Map<String, String> home = new HashMap<>();
    for (Event e : replay.distinct) {
      if (!e.fraud) {
        String previous = home.putIfAbsent(e.accountId, e.country);
        assertThat(e.accountId, previous == null || previous.equals(e.country), is(true));
      }
    }
    return home;
  }

  /**
   * Number of accounts with at least {@code minEvents} fraud events matching {@code test} within
   * {@code span} (at distinct merchants if asked).
   */
  private static int countBursts(
      Predicate<Event> test, int minEvents, Duration span, boolean distinctMerchants) {
    Map<String, List<Event>> byAccount = new HashMap<>();
    for (Event e : replay.distinct) {
      if (e.fraud && test.test(e)) {
        byAccount.computeIfAbsent(e.accountId, a -> new ArrayList<>()).add(e);
      }
    }
    int bursts = 0;
    for (List<Event> events : byAccount.values()) {
      events.sort(Comparator.comparingLong(e -> e.timeMs));
      for (int i = 0; i + minEvents <= events.size(); i++) {
        List<Event> window = events.subList(i, i + minEvents);
        long width = window.get(minEvents - 1).timeMs - window.get(0).timeMs;
        Set<String> merchants = new HashSet<>();
        window.forEach(e -> merchants.add(e.merchantId));
        if (width <= span.toMillis() && (!distinctMerchants || merchants.size() == minEvents)) {
          bursts++;
          break;
        }
      }
    }
    return bursts;
  }

  /** A distinct valid event as read back. */
  private static final class Event {
    final String source;
    final String id;
    final long timeMs;
    final String accountId;
    final BigDecimal amount;
    final String merchantId;
    final String country;
    final boolean fraud;

    Event(JsonNode node) {
      source = node.get("source").asText();
      id = node.get("id").asText();
      timeMs = OffsetDateTime.parse(node.get("time").asText()).toInstant().toEpochMilli();
      JsonNode data = node.get("data");
      accountId = data.get("accountId").asText();
      amount = data.get("amount").decimalValue();
      merchantId = data.get("merchantId").asText();
      country = data.get("country").asText();
      fraud = data.get("label").asText().equals("fraud");
    }
  }

  /** Everything learnt from reading one replay file front to back, like a replay reader would. */
  private static final class Replay {
    final GeneratorConfig config;
    long lines;
    long directives;
    final List<Long> directiveMillis = new ArrayList<>();
    boolean firstLineWasEvent;
    long firstClockMs;
    int consecutiveDirectives;
    int eventsReadBeforeTheirTime;
    final List<Event> distinct = new ArrayList<>();
    final Map<String, byte[]> firstBytes = new HashMap<>();
    final Map<String, JsonNode> firstNode = new HashMap<>();
    long duplicates;
    long conflicts;
    long fraud;
    long late;
    long tooLate;
    final List<Long> tooLateLags = new ArrayList<>();
    final List<String> badConflicts = new ArrayList<>();
    final List<String> shapeErrors = new ArrayList<>();
    final List<String> unclassifiedDelays = new ArrayList<>();
    final List<String> lateButNotBehindWatermark = new ArrayList<>();
    final List<String> tooLateButNotExpired = new ArrayList<>();
    final Map<MalformedKind, Integer> malformedByKind = new EnumMap<>(MalformedKind.class);
    final List<String> malformedErrors = new ArrayList<>();

    private long clockMs;
    private long maxEventTimeMs = Long.MIN_VALUE;
    private boolean previousWasDirective;

    private Replay(GeneratorConfig config) {
      this.config = config;
    }

    static Replay read(byte[] bytes, GeneratorConfig config) {
      Replay replay = new Replay(config);
      Iterator<byte[]> lines = splitLines(bytes).iterator();
      while (lines.hasNext()) {
        replay.line(lines.next());
      }
      return replay;
    }

    private void line(byte[] raw) {
      lines++;
      boolean first = lines == 1;
      if (!isUtf8(raw)) {
        malformed(MalformedKind.INVALID_UTF8, raw);
        return;
      }
      JsonNode node;
      try {
        node = MAPPER.readTree(raw);
      } catch (JsonProcessingException e) {
        malformed(MalformedKind.TRUNCATED_JSON, raw);
        return;
      } catch (IOException e) {
        throw new AssertionError(e);
      }
      if (node.isObject() && node.size() == 1 && node.has("advanceProcessingTime")) {
        directive(node.get("advanceProcessingTime").asText(), first);
        return;
      }
      previousWasDirective = false;
      MalformedKind defect = defect(node);
      if (defect != null && node.path("data").has("label")) {
        malformedErrors.add("malformed line has a label: " + defect);
      }
      if (raw.length > MAX_RECORD_BYTES) {
        if (defect != MalformedKind.OVERSIZED) {
          malformedErrors.add("oversized line with defect " + defect);
        }
        malformed(MalformedKind.OVERSIZED, raw);
        return;
      }
      if (defect != null) {
        if (defect == MalformedKind.OVERSIZED) {
          malformedErrors.add("padding in a small line");
        }
        malformed(defect, raw);
        return;
      }
      if (first) {
        firstLineWasEvent = true;
        clockMs = new Event(node).timeMs;
        firstClockMs = clockMs;
      }
      event(node, raw);
    }

    private void directive(String text, boolean first) {
      directives++;
      if (first) {
        shapeErrors.add("the first line is a directive");
      }
      if (previousWasDirective) {
        consecutiveDirectives++;
      }
      previousWasDirective = true;
      long javaMillis = Duration.parse(text).toMillis();
      long jodaMillis = org.joda.time.Duration.parse(text).getMillis();
      if (javaMillis != jodaMillis) {
        shapeErrors.add("directive " + text + " parses differently in java.time and Joda");
      }
      directiveMillis.add(javaMillis);
      clockMs += javaMillis;
    }

    private void malformed(MalformedKind kind, byte[] raw) {
      previousWasDirective = false;
      malformedByKind.merge(kind, 1, Integer::sum);
      if (kind == MalformedKind.INVALID_UTF8) {
        // Apart from the bad bytes it must look valid.
        JsonNode node = parseLossy(raw);
        if (node == null || defect(node) != null || node.path("data").has("label")) {
          malformedErrors.add("invalid UTF-8 line has another defect");
        }
        if (!containsBadSequence(raw)) {
          malformedErrors.add("invalid UTF-8 line without 0xC3 0x28");
        }
      }
      if (kind == MalformedKind.TRUNCATED_JSON
          && !new String(raw, StandardCharsets.UTF_8).startsWith("{\"specversion\":\"1.0\"")) {
        malformedErrors.add("truncated line is not a truncated event");
      }
    }

    private void event(JsonNode node, byte[] raw) {
      checkShape(node);
      Event e = new Event(node);
      if (e.timeMs >= clockMs + 1000) {
        eventsReadBeforeTheirTime++;
      }
      String key = e.source + "\n" + e.id;
      byte[] firstSeen = firstBytes.get(key);
      if (firstSeen != null) {
        duplicates++;
        if (!Arrays.equals(firstSeen, raw)) {
          conflicts++;
          checkConflict(firstNode.get(key), node);
        }
      } else {
        firstBytes.put(key, raw);
        firstNode.put(key, node);
        distinct.add(e);
        if (e.fraud) {
          fraud++;
        }
        classifyDelay(e);
      }
      maxEventTimeMs = Math.max(maxEventTimeMs, e.timeMs);
    }

    /** The true delay is in [lag, lag + 1 s) because the clock lags the arrival by < 1 s. */
    private void classifyDelay(Event e) {
      long lag = clockMs - e.timeMs;
      Lateness.Kind kind = Lateness.classify(config, lag);
      boolean agrees = Lateness.watermarkAgrees(config, kind, e.timeMs, maxEventTimeMs);
      switch (kind) {
        case LATE:
          late++;
          if (!agrees) {
            lateButNotBehindWatermark.add(e.source + " " + e.id);
          }
          break;
        case TOO_LATE:
          tooLate++;
          tooLateLags.add(lag);
          if (!agrees) {
            tooLateButNotExpired.add(e.source + " " + e.id);
          }
          break;
        case UNCLASSIFIED:
          unclassifiedDelays.add(e.source + " " + e.id + " read " + lag + " ms after its time");
          break;
        default:
          break;
      }
    }

    private void checkConflict(JsonNode original, JsonNode conflict) {
      JsonNode changed = conflict.deepCopy();
      BigDecimal amount = changed.get("data").get("amount").decimalValue();
      BigDecimal originalAmount = original.get("data").get("amount").decimalValue();
      if (amount.subtract(originalAmount).compareTo(BigDecimal.ONE) != 0) {
        badConflicts.add(
            conflict.get("id").asText() + ": amount " + originalAmount + " -> " + amount);
      }
      ((ObjectNode) changed.get("data")).set("amount", original.get("data").get("amount"));
      if (!changed.equals(original)) {
        badConflicts.add(conflict.get("id").asText() + ": more than the amount changed");
      }
    }

    private void checkShape(JsonNode node) {
      String id = node.get("id").asText();
      if (!fieldNames(node).equals(EVENT_FIELDS)) {
        shapeErrors.add(id + ": fields " + fieldNames(node));
      }
      JsonNode data = node.get("data");
      if (!fieldNames(data).equals(DATA_FIELDS)) {
        shapeErrors.add(id + ": data fields " + fieldNames(data));
      }
      check(id.matches("txn-\\d{6}"), id + ": id");
      check(EventGenerator.SOURCES.contains(node.get("source").asText()), id + ": source");
      check(node.get("time").asText().matches(TIME_PATTERN), id + ": time format");
      check(node.get("datacontenttype").asText().equals("application/json"), id + ": content");
      String account = data.get("accountId").asText();
      check(
          account.matches("acct-\\d{5}")
              && Integer.parseInt(account.substring(5)) >= 1
              && Integer.parseInt(account.substring(5)) <= config.numAccounts(),
          id + ": accountId " + account);
      check(data.get("merchantId").asText().matches("m-0\\d{3}|m-0500"), id + ": merchantId");
      check(data.get("amount").isNumber(), id + ": amount is a number");
      String label = data.get("label").asText();
      check(label.equals("fraud") || label.equals("legit"), id + ": label");
    }

    private void check(boolean ok, String what) {
      if (!ok) {
        shapeErrors.add(what);
      }
    }
  }

  /** The single defect of a parsed line, or null if it is a valid event. */
  private static MalformedKind defect(JsonNode node) {
    if (!node.isObject()) {
      return MalformedKind.NOT_A_CLOUDEVENT_ARRAY;
    }
    if (!node.has("specversion")) {
      return MalformedKind.NOT_A_CLOUDEVENT_OBJECT;
    }
    if (!node.path("id").isTextual() || node.get("id").asText().isEmpty()) {
      return MalformedKind.MISSING_ID;
    }
    if (node.path("source").asText().isEmpty()) {
      return MalformedKind.EMPTY_SOURCE;
    }
    try {
      OffsetDateTime.parse(node.path("time").asText());
    } catch (DateTimeParseException e) {
      return MalformedKind.UNPARSEABLE_TIME;
    }
    if (!node.path("type").asText().equals(EventGenerator.EVENT_TYPE)) {
      return MalformedKind.WRONG_TYPE;
    }
    JsonNode data = node.path("data");
    if (!data.has("accountId")) {
      return MalformedKind.MISSING_ACCOUNT_ID;
    }
    JsonNode amount = data.path("amount");
    if (amount.isTextual()) {
      return MalformedKind.AMOUNT_AS_STRING;
    }
    if (amount.decimalValue().signum() < 0) {
      return MalformedKind.NEGATIVE_AMOUNT;
    }
    if (amount.decimalValue().scale() > 2) {
      return MalformedKind.AMOUNT_THREE_DECIMALS;
    }
    if (!data.path("currency").asText().equals("GBP")) {
      return MalformedKind.WRONG_CURRENCY;
    }
    String country = data.path("country").asText();
    if (country.equals("XX")) {
      return MalformedKind.COUNTRY_XX;
    }
    if (country.equals("GBR")) {
      return MalformedKind.COUNTRY_GBR;
    }
    assertThat(country, oneOf(allCountries()));
    if (data.has("padding")) {
      return MalformedKind.OVERSIZED;
    }
    assertThat(node.path("specversion").asText(), not(equalTo("")));
    return null;
  }

  private static String[] allCountries() {
    Set<String> all = new HashSet<>(HOME_COUNTRIES);
    all.addAll(TAKEOVER_COUNTRIES);
    return all.toArray(new String[0]);
  }

  private static List<String> fieldNames(JsonNode node) {
    List<String> names = new ArrayList<>();
    node.fieldNames().forEachRemaining(names::add);
    return names;
  }

  private static List<byte[]> splitLines(byte[] bytes) {
    List<byte[]> lines = new ArrayList<>();
    int start = 0;
    for (int i = 0; i < bytes.length; i++) {
      if (bytes[i] == '\n') {
        lines.add(Arrays.copyOfRange(bytes, start, i));
        start = i + 1;
      }
    }
    assertThat("bytes after the last newline", start, equalTo(bytes.length));
    return lines;
  }

  private static boolean isUtf8(byte[] raw) {
    try {
      StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(raw));
      return true;
    } catch (CharacterCodingException e) {
      return false;
    }
  }

  private static JsonNode parseLossy(byte[] raw) {
    try {
      return MAPPER.readTree(new String(raw, StandardCharsets.UTF_8));
    } catch (JsonProcessingException e) {
      return null;
    }
  }

  private static boolean containsBadSequence(byte[] raw) {
    for (int i = 0; i + 1 < raw.length; i++) {
      if (raw[i] == (byte) 0xC3 && raw[i + 1] == (byte) 0x28) {
        return true;
      }
    }
    return false;
  }
}
