package dev.tidemark.testkit.generate;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.everyItem;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.hasItems;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;
import static org.junit.Assert.assertArrayEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.spec.FieldParser;
import dev.tidemark.spec.FieldRejection;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.testkit.generate.EventGenerator.Stats;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * The logins workload read back with {@code specs/logins.yaml}'s own parser: valid lines are login
 * attempts the spec accepts, malformed lines are rejected, the counts, duplicates, conflicts and
 * late arrivals are what the generator says, legit users and takeover episodes look as described,
 * and the bundled samples are exactly what the generator writes (so they cannot drift).
 */
public class LoginsGeneratorTest {
  private static final Path HOME =
      Paths.get(System.getProperty("tidemark.home", "..")).toAbsolutePath().normalize();
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** {@code ./tidemark generate --spec=specs/logins.yaml} with the bundled sample's flags. */
  static final String LOGINS_SAMPLE_COMMAND =
      "./tidemark generate --spec=specs/logins.yaml --output=samples/logins-replay.ndjson"
          + " --labels=samples/logins-labels.ndjson --no-inlineLabels"
          + " --events=2000 --accounts=200 --eventsPerSecond=0.3 --takeoverBurstsPerThousand=3";

  private static PipelineSpec spec;
  private static GeneratorConfig config;
  private static byte[] output;
  private static Stats stats;
  private static Read read;

  @BeforeClass
  public static void generateTheSample() throws IOException {
    spec = SpecLoader.load(HOME.resolve("specs/logins.yaml"));
    config =
        GeneratorConfig.builder()
            .workload(Workload.LOGINS)
            .numEvents(2000)
            .numAccounts(200)
            .eventsPerSecond(0.3)
            .takeoverBurstsPerThousand(3)
            .windowSize(spec.windows().size())
            .allowedLateness(spec.windows().allowedLateness())
            .maxOutOfOrderness(spec.clocks().maxOutOfOrderness())
            .inlineLabels(false)
            .build();
    EventGenerator generator = new EventGenerator(config);
    output = generate(generator);
    stats = generator.stats();
    // The stream's truth is read from data.label: the same stream with its labels inline.
    read =
        new Read(
            spec,
            config,
            generate(new EventGenerator(config.toBuilder().inlineLabels(true).build())));
  }

  private static byte[] generate(EventGenerator generator) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    generator.writeTo(out);
    return out.toByteArray();
  }

  @Test
  public void theBundledLoginsSampleIsWhatTheGeneratorWrites() throws IOException {
    byte[] bundled = Files.readAllBytes(HOME.resolve("samples/logins-replay.ndjson"));
    assertThat(
        "samples/logins-replay.ndjson differs from the generator's output; regenerate it with "
            + LOGINS_SAMPLE_COMMAND,
        Arrays.equals(bundled, output),
        is(true));
    assertThat(
        "samples/logins-labels.ndjson differs from the generator's output; regenerate it with "
            + LOGINS_SAMPLE_COMMAND,
        Arrays.equals(
            Files.readAllBytes(HOME.resolve("samples/logins-labels.ndjson")),
            labels(new EventGenerator(config))),
        is(true));
  }

  /** The labels stream of a generator's events, as {@code generate --labels} writes it. */
  private static byte[] labels(EventGenerator generator) throws IOException {
    generate(generator);
    Path file = Files.createTempFile("labels", ".ndjson");
    try {
      LabelStream.write(
          generator.subjects(), LabelStream.Config.defaults(GeneratorConfig.DEFAULT_SEED), file);
      return Files.readAllBytes(file);
    } finally {
      Files.delete(file);
    }
  }

  @Test
  public void theBundledSamplesCarryNoLabelInTheirEvents() {
    assertThat(new String(output, StandardCharsets.UTF_8).contains("\"label\""), is(false));
  }

  @Test
  public void paymentsStayTheDefaultWorkloadAndTheBundledPaymentsSampleIsUnchanged()
      throws IOException {
    GeneratorConfig payments =
        GeneratorConfig.builder()
            .numEvents(2000)
            .numAccounts(200)
            .eventsPerSecond(0.3)
            .inlineLabels(false)
            .build();
    assertThat(payments.workload(), equalTo(Workload.PAYMENTS));
    assertArrayEquals(
        Files.readAllBytes(HOME.resolve("samples/sample-replay.ndjson")),
        generate(new EventGenerator(payments)));
    assertArrayEquals(
        Files.readAllBytes(HOME.resolve("samples/sample-labels.ndjson")),
        labels(new EventGenerator(payments)));
  }

  @Test
  public void sameSeedSameBytesAnotherSeedOtherBytes() throws IOException {
    assertArrayEquals(output, generate(new EventGenerator(config)));
    byte[] other = generate(new EventGenerator(config.toBuilder().seed(7).build()));
    assertThat(Arrays.equals(output, other), is(false));
  }

  @Test
  public void everyValidLineIsALoginOfTheSpec() {
    assertThat(read.shapeErrors, empty());
    assertThat((long) read.distinct.size(), equalTo(stats.eventsWritten()));
    assertThat(read.distinct.size(), equalTo(config.numEvents()));
    assertThat(read.lines, equalTo(stats.lines()));
  }

  @Test
  public void malformedLinesAreRejectedUnlabelledAndOfEveryKind() {
    assertThat(read.malformed, equalTo(stats.malformed()));
    assertThat(read.malformed, equalTo(Math.round(config.numEvents() * 0.01)));
    assertThat(read.malformedErrors, empty());
    // One reason per kind of defect: the envelope's and each field's of the spec.
    assertThat(
        read.rejectionReasons,
        hasItems(
            "invalid_utf8",
            "oversized_record",
            "invalid_json",
            "not_a_cloudevent",
            "missing_attribute",
            "invalid_time",
            "unsupported_type",
            "invalid_user_id",
            "invalid_success",
            "invalid_ip",
            "invalid_country"));
  }

  @Test
  public void duplicatesAndConflictsMatchStatsAndConflictsFlipOnlySuccess() {
    assertThat(read.duplicates, equalTo(stats.duplicates()));
    assertThat(read.duplicates, equalTo(Math.round(config.numEvents() * 0.03)));
    assertThat(read.conflicts, equalTo(stats.conflicts()));
    assertThat(read.conflicts, greaterThan(0L));
    assertThat(read.badConflicts, empty());
  }

  @Test
  public void lateAndTooLateArrivalsAreAimedAtTheSpecsWindows() {
    assertThat(read.late, equalTo(stats.late()));
    assertThat(read.tooLate, equalTo(stats.tooLate()));
    assertThat(read.late, greaterThan(0L));
    assertThat(read.tooLate, greaterThan(0L));
    assertThat(read.lateness, empty());
    assertThat(read.eventsReadBeforeTheirTime, is(0));
  }

  @Test
  public void legitUsersFailRarelyAndEveryFailedSessionEndsInASuccess() {
    Set<String> allowed = new HashSet<>(Arrays.asList(EventGenerator.HOME_COUNTRIES));
    allowed.addAll(Arrays.asList(LoginsContent.TRAVEL_COUNTRIES));
    long failures = 0;
    List<String> problems = new ArrayList<>();
    for (Login e : read.distinct) {
      if (e.takeover) {
        continue;
      }
      if (e.country != null && !allowed.contains(e.country)) {
        problems.add(e.id + ": legit login from " + e.country);
      }
      if (!e.success) {
        failures++;
        boolean retried =
            read.distinct.stream()
                .anyMatch(
                    s ->
                        !s.takeover
                            && s.success
                            && s.user.equals(e.user)
                            && s.ip.equals(e.ip)
                            && s.timeMs > e.timeMs
                            && s.timeMs <= e.timeMs + Duration.ofMinutes(4).toMillis());
        if (!retried) {
          problems.add(e.id + ": a legit failure with no success after it");
        }
      }
    }
    assertThat(problems, empty());
    assertThat(failures, greaterThan(0L));
    assertThat((double) failures / read.distinct.size(), lessThan(0.15));
  }

  @Test
  public void takeoversAreFailureBurstsFromAbroadThatEndInOneSuccess() {
    Set<String> attack = Set.of(LoginsContent.ATTACK_COUNTRIES);
    Map<String, List<Login>> byUser = new HashMap<>();
    for (Login e : read.distinct) {
      if (e.takeover) {
        byUser.computeIfAbsent(e.user, u -> new ArrayList<>()).add(e);
      }
    }
    List<List<Login>> episodes = new ArrayList<>();
    for (List<Login> logins : byUser.values()) {
      logins.sort((a, b) -> Long.compare(a.timeMs, b.timeMs));
      List<Login> episode = new ArrayList<>();
      for (Login e : logins) {
        if (!episode.isEmpty() && e.timeMs - episode.get(episode.size() - 1).timeMs > 600_000) {
          episodes.add(episode);
          episode = new ArrayList<>();
        }
        episode.add(e);
      }
      episodes.add(episode);
    }
    assertThat(episodes.size(), equalTo((int) Math.round(config.numEvents() * 3 / 1000.0)));
    long positives = 0;
    for (List<Login> episode : episodes) {
      positives += episode.size();
      Login last = episode.get(episode.size() - 1);
      assertThat(last.id, last.success, is(true));
      assertThat(
          episode.subList(0, episode.size() - 1).stream().filter(e -> e.success).count(),
          equalTo(0L));
      assertThat(episode.stream().map(e -> e.country).toList(), everyItem(is(oneOf(attack))));
      assertThat(
          episode.get(episode.size() - 1).timeMs - episode.get(0).timeMs,
          lessThan(Duration.ofMinutes(8).toMillis() + 1));
    }
    assertThat(positives, equalTo(stats.fraudEvents()));
    // Some episodes use many addresses: what distinctIps is for.
    assertThat(
        episodes.stream()
            .mapToLong(ep -> ep.stream().map(e -> e.ip).distinct().count())
            .max()
            .getAsLong(),
        greaterThan(5L));
  }

  private static org.hamcrest.Matcher<String> oneOf(Set<String> values) {
    return org.hamcrest.Matchers.in(values);
  }

  /** A distinct valid login as read back. */
  private record Login(
      String source,
      String id,
      long timeMs,
      String user,
      String ip,
      boolean success,
      String country,
      boolean takeover) {}

  /** The file read front to back like a replay reader, each event checked with the spec. */
  private static final class Read {
    final List<Login> distinct = new ArrayList<>();
    final List<String> shapeErrors = new ArrayList<>();
    final List<String> malformedErrors = new ArrayList<>();
    final List<String> badConflicts = new ArrayList<>();
    final List<String> lateness = new ArrayList<>();
    final Set<String> rejectionReasons = new TreeSet<>();
    long lines;
    long malformed;
    long duplicates;
    long conflicts;
    long late;
    long tooLate;
    int eventsReadBeforeTheirTime;

    Read(PipelineSpec spec, GeneratorConfig config, byte[] bytes) {
      FieldParser parser = FieldParser.of(spec);
      Map<String, JsonNode> first = new HashMap<>();
      long clockMs = Long.MIN_VALUE;
      long maxEventMs = Long.MIN_VALUE;
      int start = 0;
      for (int i = 0; i < bytes.length; i++) {
        if (bytes[i] != '\n') {
          continue;
        }
        byte[] raw = Arrays.copyOfRange(bytes, start, i);
        start = i + 1;
        lines++;
        JsonNode node = parse(raw);
        if (node != null && node.has("advanceProcessingTime")) {
          clockMs += Duration.parse(node.get("advanceProcessingTime").asText()).toMillis();
          continue;
        }
        String reason = rejection(spec, parser, raw, node);
        if (reason != null) {
          malformed++;
          rejectionReasons.add(reason);
          if (node != null && node.path("data").has("label")) {
            malformedErrors.add("a rejected line has a label: " + reason);
          }
          if (node != null
              && node.isObject()
              && !node.path("id").asText("bad-").startsWith("bad-")) {
            malformedErrors.add("a rejected line has an event id: " + node.get("id"));
          }
          continue;
        }
        long timeMs = OffsetDateTime.parse(node.get("time").asText()).toInstant().toEpochMilli();
        if (clockMs == Long.MIN_VALUE) {
          clockMs = timeMs;
        }
        if (timeMs >= clockMs + 1000) {
          eventsReadBeforeTheirTime++;
        }
        String key = node.get("source").asText() + "\n" + node.get("id").asText();
        JsonNode original = first.get(key);
        if (original != null) {
          duplicates++;
          if (!original.equals(node)) {
            conflicts++;
            ObjectNode repaired = node.deepCopy();
            ((ObjectNode) repaired.get("data"))
                .put("success", !node.at("/data/success").asBoolean());
            if (!repaired.equals(original)) {
              badConflicts.add(key + ": more than success changed");
            }
          }
        } else {
          first.put(key, node);
          Login login = login(node, timeMs);
          checkShape(config, node, login);
          distinct.add(login);
          Lateness.Kind kind = Lateness.classify(config, clockMs - timeMs);
          late += kind == Lateness.Kind.LATE ? 1 : 0;
          tooLate += kind == Lateness.Kind.TOO_LATE ? 1 : 0;
          if (kind == Lateness.Kind.UNCLASSIFIED
              || !Lateness.watermarkAgrees(config, kind, timeMs, maxEventMs)) {
            lateness.add(login.id() + " " + kind + " read " + (clockMs - timeMs) + " ms late");
          }
        }
        maxEventMs = Math.max(maxEventMs, timeMs);
      }
    }

    private static Login login(JsonNode node, long timeMs) {
      JsonNode data = node.get("data");
      return new Login(
          node.get("source").asText(),
          node.get("id").asText(),
          timeMs,
          data.get("userId").asText(),
          data.get("ip").asText(),
          data.get("success").asBoolean(),
          data.has("country") ? data.get("country").asText() : null,
          data.get("label").asText().equals("takeover"));
    }

    private void checkShape(GeneratorConfig config, JsonNode node, Login login) {
      String id = login.id();
      check(id.matches("login-\\d{6}"), id + ": id");
      check(LoginsContent.SOURCES.contains(login.source()), id + ": source");
      check(
          login.user().matches("user-\\d{5}")
              && Integer.parseInt(login.user().substring(5)) <= config.numAccounts(),
          id + ": userId");
      check(login.ip().matches("\\d{1,3}(\\.\\d{1,3}){3}"), id + ": ip");
      String label = node.at("/data/label").asText();
      check(label.equals("legit") || label.equals("takeover"), id + ": label " + label);
    }

    private void check(boolean ok, String what) {
      if (!ok) {
        shapeErrors.add(what);
      }
    }

    /** Why the pipeline would reject {@code raw} under {@code spec}, or null if it accepts it. */
    private static String rejection(
        PipelineSpec spec, FieldParser parser, byte[] raw, JsonNode node) {
      if (raw.length > spec.events().maxEventBytes()) {
        return "oversized_record";
      }
      try {
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .decode(ByteBuffer.wrap(raw));
      } catch (CharacterCodingException e) {
        return "invalid_utf8";
      }
      if (node == null) {
        return "invalid_json";
      }
      if (!node.isObject() || !"1.0".equals(node.path("specversion").asText())) {
        return "not_a_cloudevent";
      }
      for (String attribute : List.of("id", "source", "type")) {
        if (node.path(attribute).asText("").isEmpty()) {
          return "missing_attribute";
        }
      }
      if (!spec.events().types().contains(node.get("type").asText())) {
        return "unsupported_type";
      }
      long timeMs;
      try {
        timeMs = OffsetDateTime.parse(node.path("time").asText()).toInstant().toEpochMilli();
      } catch (RuntimeException e) {
        return "invalid_time";
      }
      try {
        parser.parse(node.get("data"), timeMs, timeMs);
      } catch (FieldRejection e) {
        return e.reason();
      }
      return null;
    }

    private static JsonNode parse(byte[] raw) {
      try {
        return MAPPER.readTree(raw);
      } catch (IOException e) {
        return null;
      }
    }
  }
}
