package dev.tidemark.act;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;

import dev.tidemark.act.EditionStream.Line;
import dev.tidemark.testkit.EmbeddedKafka;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The consumer against a real broker and a real PostgreSQL: killed (SIGKILL) with a batch
 * transaction open and restarted, a topic replayed twice, a conflicting reuse of a key, and a
 * replay after the keys have expired.
 */
@RunWith(JUnit4.class)
public class ActConsumerIT {
  private static EmbeddedKafka broker;

  @BeforeClass
  public static void start() {
    broker = EmbeddedKafka.start();
  }

  @AfterClass
  public static void stop() {
    broker.close();
  }

  /** A fresh state directory under target/ (PostgreSQL's user must reach it when run as root). */
  static Path stateDir(String name) throws IOException {
    Path dir = Paths.get("target", "act-it", name).toAbsolutePath();
    LocalPostgres.stop(dir, System.out);
    if (Files.exists(dir)) {
      try (Stream<Path> paths = Files.walk(dir)) {
        for (Path path : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
          Files.delete(path);
        }
      }
    }
    Files.createDirectories(dir);
    return dir;
  }

  /** An in-process consumer's settings: {@code topic} into the given database, 1 s idle. */
  static ActSettings settings(Path state, String bootstrapServers, String topic, String jdbcUrl) {
    return ActSettings.defaults(state)
        .withBootstrapServers(bootstrapServers)
        .withTopic(topic)
        .withIdleTimeout(Duration.ofSeconds(1))
        .withJdbcUrl(jdbcUrl);
  }

  @Test
  public void aConsumerKilledWithABatchOpenLosesNothingAndRepeatsNothing() throws Exception {
    String topic = "act.crash";
    Path state = stateDir("crash");
    EditionStream stream = new EditionStream(7, 900);
    assertThat(stream.lines.size(), greaterThan(2_500));
    // A conflicting copy of some editions in an aborted producer transaction: read_committed
    // never shows it, or it would show up as conflicts.
    List<Line> aborted = new ArrayList<>();
    for (Line line : stream.lines.subList(0, 50)) {
      aborted.add(new Line(line.key(), line.value().replace("\"acct-", "\"ghost-")));
    }
    EmbeddedKafka.createTopics(broker.bootstrapServers(), 3, List.of(topic), Map.of());
    EditionStream.produce(broker.bootstrapServers(), topic, stream.lines, 100, aborted);
    Map<Integer, Long> ends = EditionStream.endOffsets(broker.bootstrapServers(), topic);
    long end = ends.values().stream().mapToLong(Long::longValue).sum();

    List<String> command = new ArrayList<>();
    command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx256m");
    command.add("-cp");
    command.add(
        System.getProperty("tidemark.act.jar")
            + ":"
            + Files.readString(
                    Path.of(System.getProperty("tidemark.act.classpath.file")),
                    StandardCharsets.UTF_8)
                .trim());
    command.add(ActCommand.class.getName());
    command.add("--kafkaBootstrapServers=" + broker.bootstrapServers());
    command.add("--decisionsTopic=" + topic);
    command.add("--stateDir=" + state);
    command.add("--maxPollRecords=40");
    command.add("--idleTimeout=PT2S");

    Process first = null;
    Process second = null;
    try {
      first = start(command, state.resolve("first.log"));
      Map<Integer, Long> atKill;
      long appliedAtKill;
      try (Tables tables = awaitDatabase(state, first)) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (true) {
          assertThat(
              "the consumer ended before it could be killed: " + log(state.resolve("first.log")),
              first.isAlive(),
              is(true));
          assertThat("no open batch seen in time", System.nanoTime(), lessThan(deadline));
          if (committedSome(tables, topic, end) && openBatch(tables)) {
            first.destroyForcibly();
            break;
          }
          Thread.sleep(2);
        }
        assertThat(first.waitFor(30, TimeUnit.SECONDS), is(true));
        assertThat(first.exitValue(), is(137));
        atKill = tables.offsets(ActSettings.DEFAULT_CONSUMER_NAME, topic);
        appliedAtKill = tables.count("SELECT count(*) FROM inbox");
      }
      long readAtKill = atKill.values().stream().mapToLong(Long::longValue).sum();
      assertThat(readAtKill, greaterThan(0L));
      assertThat(readAtKill, lessThan(end));
      // Nothing stopped the killed consumer's PostgreSQL: the restart finds and reuses it.
      assertThat(LocalPostgres.runningPid(state).isPresent(), is(true));

      second = start(command, state.resolve("second.log"));
      assertThat(second.waitFor(120, TimeUnit.SECONDS), is(true));
      String secondLog = log(state.resolve("second.log"));
      assertThat(secondLog, second.exitValue(), is(0));
      assertThat(secondLog, LocalPostgres.runningPid(state).isPresent(), is(false));
      // The restart read exactly what the killed consumer had not committed, and none of it had
      // been applied: the open batch's case changes went with its offsets.
      assertThat(
          secondLog,
          summaryLine(secondLog, "records read"),
          is(stream.lines.size() - appliedAtKill));
      assertThat(secondLog, summaryLine(secondLog, "redelivered"), is(0L));

      try (LocalPostgres postgres = LocalPostgres.start(state, System.out);
          Tables tables = new Tables(postgres.jdbcUrl())) {
        assertThat(tables.cases(), is(stream.expectedCases()));
        Map<String, Long> events = new TreeMap<>();
        stream.cases.forEach((id, c) -> events.put(id, (long) c.events()));
        assertThat(tables.outboxPerDecision(), is(events));
        assertThat(tables.count("SELECT count(*) FROM outbox"), is((long) stream.outboxEvents));
        assertThat(tables.offsets(ActSettings.DEFAULT_CONSUMER_NAME, topic), is(ends));
        assertThat(tables.count("SELECT count(*) FROM inbox"), is((long) stream.lines.size()));
        assertThat(tables.rows("SELECT * FROM conflicts"), is(empty()));
        assertThat(tables.rows("SELECT * FROM rejected"), is(empty()));
      }
    } finally {
      for (Process process : new Process[] {first, second}) {
        if (process != null && process.isAlive()) {
          process.destroyForcibly().waitFor();
        }
      }
      LocalPostgres.stop(state, System.out);
    }
  }

  @Test
  public void aReplayChangesNothingAndCountsEveryRecordAsRedelivered() throws Exception {
    String topic = "act.replay";
    Path state = stateDir("replay");
    EditionStream stream = new EditionStream(11, 150);
    List<Line> lines = new ArrayList<>(stream.lines);
    // Not editions to act on: recorded once, never lost, and redeliveries like the rest.
    lines.add(EditionStream.garbage("g1"));
    lines.add(
        new Line(
            "dx",
            Editions.json("dx", "acct-x", 0, 0.9, "review", null, -1, 0, null, Instant.now())));
    EmbeddedKafka.createTopics(broker.bootstrapServers(), 2, List.of(topic), Map.of());
    EditionStream.produce(broker.bootstrapServers(), topic, lines);
    Path database = state.resolve("db");
    Files.createDirectories(database);
    try (LocalPostgres postgres = LocalPostgres.start(database, System.out);
        Tables tables = new Tables(postgres.jdbcUrl())) {
      ActSettings settings =
          ActConsumerIT.settings(state, broker.bootstrapServers(), topic, postgres.jdbcUrl());
      ActSummary once = new ActConsumer(settings, System.out).run();
      assertThat(once.read(), is((long) lines.size()));
      assertThat(once.applied(), is((long) stream.lines.size()));
      assertThat(once.unsupported(), is(2L));
      assertThat(once.opened(), is((long) stream.cases.size()));
      assertThat(once.redelivered(), is(0L));
      assertThat(tables.cases(), is(stream.expectedCases()));
      assertThat(
          tables.rows("SELECT reason FROM rejected ORDER BY 1"),
          contains(EditionReader.INVALID_JSON, EditionReader.NO_CORRECTION));
      List<String> after = tables.sideEffect();

      for (int replay = 0; replay < 2; replay++) {
        ActSummary again = new ActConsumer(settings.withReplay(true), System.out).run();
        assertThat(again.read(), is((long) lines.size()));
        assertThat(again.redelivered(), is((long) lines.size()));
        assertThat(again.applied() + again.unsupported() + again.stale(), is(0L));
        assertThat(again.opened() + again.closed() + again.reopened(), is(0L));
        assertThat(tables.sideEffect(), is(after));
      }

      // A replay older than the key retention: the keys are gone, the decisions table is not.
      tables.execute("DELETE FROM inbox");
      ActSummary late = new ActConsumer(settings.withReplay(true), System.out).run();
      assertThat(late.stale(), is((long) stream.lines.size()));
      assertThat(late.applied(), is(0L));
      assertThat(tables.cases(), is(stream.expectedCases()));
      assertThat(tables.count("SELECT count(*) FROM outbox"), is((long) stream.outboxEvents));
      assertThat(
          tables.count("SELECT count(*) FROM rejected WHERE reason = 'stale'"),
          is((long) stream.lines.size()));
    } finally {
      LocalPostgres.stop(database, System.out);
    }
  }

  @Test
  public void aConflictingReuseOfAKeyIsRecordedAndNeverApplied() throws Exception {
    String topic = "act.conflict";
    Path state = stateDir("conflict");
    Instant now = Instant.now();
    List<Line> lines =
        List.of(
            new Line(
                "c1", Editions.json("c1", "acct-1", 0, 0.9, "review", "none", -1, 0, null, now)),
            // The same key, the same edition, later: a redelivery.
            new Line(
                "c1",
                Editions.json(
                    "c1", "acct-1", 0, 0.9, "review", "none", -1, 0, null, now.plusSeconds(60))),
            // The same key with another score: a conflict.
            new Line(
                "c1", Editions.json("c1", "acct-1", 0, 0.95, "review", "none", -1, 0, null, now)),
            new Line(
                "c1",
                Editions.json("c1", "acct-1", 1, 0.2, "allow", "reversed", 0, 0.9, "review", now)),
            // Version 1 of c2 arrives before version 0: version 0 is then stale.
            new Line(
                "c2",
                Editions.json("c2", "acct-2", 1, 0.8, "review", "refined", 0, 0.7, "review", now)),
            new Line(
                "c2", Editions.json("c2", "acct-2", 0, 0.7, "review", "none", -1, 0, null, now)));
    EmbeddedKafka.createTopics(broker.bootstrapServers(), 1, List.of(topic), Map.of());
    EditionStream.produce(broker.bootstrapServers(), topic, lines);
    Path database = state.resolve("db");
    Files.createDirectories(database);
    try (LocalPostgres postgres = LocalPostgres.start(database, System.out)) {
      ActSettings settings =
          ActConsumerIT.settings(state, broker.bootstrapServers(), topic, postgres.jdbcUrl());
      ActSummary summary = new ActConsumer(settings, System.out).run();
      assertThat(summary.read(), is(6L));
      assertThat(summary.applied(), is(3L));
      assertThat(summary.redelivered(), is(1L));
      assertThat(summary.conflicts(), is(1L));
      assertThat(summary.stale(), is(1L));
      assertThat(summary.opened(), is(2L));
      assertThat(summary.closed(), is(1L));
      try (Tables tables = new Tables(postgres.jdbcUrl())) {
        assertThat(
            tables.rows(
                "SELECT decision_id, status, closed_version, last_version, last_score FROM cases"
                    + " ORDER BY 1"),
            contains("c1 closed 1 1 0.2", "c2 open null 1 0.8"));
        assertThat(
            tables.rows(
                "SELECT decision_id, version, kafka_offset,"
                    + " applied_fingerprint <> fingerprint FROM conflicts"),
            contains("c1 0 2 t"));
        assertThat(
            tables.rows("SELECT decision_id, version, reason FROM rejected"),
            contains("c2 0 stale"));
        assertThat(
            tables.rows("SELECT event_type, decision_id, version FROM outbox ORDER BY id"),
            contains("case_opened c1 0", "case_closed c1 1", "case_opened c2 1"));
        // The consumer's own PostgreSQL was not started: the database given was used.
        assertThat(Files.exists(LocalPostgres.dataDir(state)), is(false));
      }
    } finally {
      LocalPostgres.stop(database, System.out);
    }
  }

  private static boolean committedSome(Tables tables, String topic, long end) {
    try {
      long read =
          tables.offsets(ActSettings.DEFAULT_CONSUMER_NAME, topic).values().stream()
              .mapToLong(Long::longValue)
              .sum();
      // Well into the topic, and not at its end.
      return read > end / 3 && read < end && tables.count("SELECT count(*) FROM cases") > 0;
    } catch (SQLException e) {
      return false; // the tables are not there yet
    }
  }

  /** Whether the consumer's connection is inside a transaction that has written something. */
  private static boolean openBatch(Tables tables) throws SQLException {
    return tables.count(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = '"
                + ActSettings.DEFAULT_CONSUMER_NAME
                + "' AND xact_start IS NOT NULL AND backend_xid IS NOT NULL")
        > 0;
  }

  private static Process start(List<String> command, Path log) throws IOException {
    return new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(log.toFile())
        .start();
  }

  /** A connection to the database of the consumer's PostgreSQL once it accepts one. */
  private static Tables awaitDatabase(Path state, Process consumer) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      assertThat("the consumer ended early", consumer.isAlive(), is(true));
      try {
        int port =
            Integer.parseInt(
                Files.readString(state.resolve("postgres.port"), StandardCharsets.UTF_8).trim());
        return new Tables(
            "jdbc:postgresql://127.0.0.1:"
                + port
                + "/"
                + LocalPostgres.DATABASE
                + "?user=postgres");
      } catch (IOException | NumberFormatException | SQLException e) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError("the consumer's database did not come up", e);
        }
        Thread.sleep(20);
      }
    }
  }

  /** The count of a line of the printed summary. */
  private static long summaryLine(String log, String name) {
    for (String line : log.split("\n")) {
      if (line.trim().startsWith(name + " ")) {
        return Long.parseLong(
            line.trim().substring(name.length()).trim().split(" ")[0].replace(",", ""));
      }
    }
    throw new AssertionError("no '" + name + "' in the summary");
  }

  private static String log(Path file) throws IOException {
    return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "(no log)";
  }
}
