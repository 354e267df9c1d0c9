package dev.tidemark.launcher.it;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.is;

import dev.tidemark.launcher.KafkaFeed;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.testkit.EmbeddedKafka;
import dev.tidemark.testkit.Poll;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * A live Kafka read with the default file sink on the DirectRunner: files appear while the job
 * runs, one set per roll, and hold the dead letters and duplicates a bounded read of the same topic
 * writes at its end.
 */
@RunWith(JUnit4.class)
public class StreamingFilesIT {
  @ClassRule public static final TemporaryFolder TEMP = new TemporaryFolder();

  private static final String TOPIC = "rolling.events";
  private static final Pattern ROLL = Pattern.compile(".*-roll-(\\d{6})-\\d{5}-of-\\d{5}\\.ndjson");
  private static final long WAIT_MILLIS = Long.getLong("tidemark.it.waitMillis", 180_000);

  private static EmbeddedKafka broker;

  @BeforeClass
  public static void start() {
    broker = EmbeddedKafka.start();
  }

  @AfterClass
  public static void stop() {
    broker.close();
  }

  private static TidemarkOptions options(Path output, String group, String... extra) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--runner=DirectRunner",
                "--streaming=true",
                "--blockOnRun=false",
                "--source=kafka",
                "--sink=files",
                "--kafkaBootstrapServers=" + broker.bootstrapServers(),
                "--kafkaInputTopic=" + TOPIC,
                "--kafkaConsumerGroup=" + group,
                "--earlyFiringDelay=none",
                "--output=" + output));
    args.addAll(List.of(extra));
    return PipelineOptionsFactory.fromArgs(args.toArray(new String[0]))
        .withValidation()
        .as(TidemarkOptions.class);
  }

  /** The lines of every {@code *.ndjson} file of one output, sorted. */
  private static TreeSet<String> lines(Path output, String name, Set<String> rolls)
      throws IOException {
    TreeSet<String> lines = new TreeSet<>();
    Path dir = output.resolve(name);
    if (!Files.isDirectory(dir)) {
      return lines;
    }
    try (var files = Files.list(dir)) {
      for (Path file : (Iterable<Path>) files::iterator) {
        String fileName = file.getFileName().toString();
        if (!fileName.endsWith(".ndjson")) {
          continue;
        }
        Matcher roll = ROLL.matcher(fileName);
        if (roll.matches()) {
          rolls.add(roll.group(1));
        }
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
          if (!line.isBlank()) {
            lines.add(line);
          }
        }
      }
    }
    return lines;
  }

  /** Waits for {@code condition}; a timeout reports the job's counters so far. */
  private static void await(String what, PipelineResult result, BooleanSupplier condition)
      throws InterruptedException {
    Poll.until(
        what,
        Duration.ofMillis(WAIT_MILLIS),
        () -> {},
        condition,
        () -> {
          Map<String, Long> counters = new java.util.TreeMap<>();
          result
              .metrics()
              .allMetrics()
              .getCounters()
              .forEach(c -> counters.merge(c.getName().getName(), c.getAttempted(), Long::sum));
          return "job " + result.getState() + ", " + counters;
        });
  }

  private static int count(Path output, String name) {
    try {
      return lines(output, name, new TreeSet<>()).size();
    } catch (IOException e) {
      return -1;
    }
  }

  @Test
  public void liveReadWritesRolledFilesWhileRunning() throws Exception {
    Path events = TEMP.getRoot().toPath().resolve("events.ndjson");
    new EventGenerator(
            GeneratorConfig.builder()
                .seed(11)
                .numEvents(120)
                .numAccounts(6)
                .eventsPerSecond(1)
                .lateFraction(0)
                .tooLateFraction(0)
                .duplicateRate(0.1)
                .malformedFraction(0.1)
                .build())
        .writeTo(events);
    List<String> all = Files.readAllLines(events, StandardCharsets.UTF_8);
    Path first = TEMP.getRoot().toPath().resolve("first.ndjson");
    Path second = TEMP.getRoot().toPath().resolve("second.ndjson");
    Files.write(first, all.subList(0, all.size() / 2), StandardCharsets.UTF_8);
    Files.write(second, all.subList(all.size() / 2, all.size()), StandardCharsets.UTF_8);
    EmbeddedKafka.createTopics(
        broker.bootstrapServers(), 2, List.of(TOPIC), Map.of("retention.ms", "-1"));

    Path live = TEMP.newFolder("live").toPath();
    TidemarkOptions liveOptions = options(live, "rolling-live", "--fileRollInterval=PT2S");
    KafkaClients clients = KafkaClients.from(liveOptions);
    Pipeline pipeline = Launch.build(liveOptions);
    PipelineResult result = pipeline.run();
    Path bounded = TEMP.newFolder("bounded").toPath();
    TreeSet<String> deadLetters;
    TreeSet<String> duplicates;
    Set<String> boundedRolls = new TreeSet<>();
    Set<String> rolls = new TreeSet<>();
    try {
      int fed = KafkaFeed.produce(clients, TOPIC, first, KafkaFeed.Mode.MIXED).records;
      await("the first dead letters", result, () -> count(live, "dead-letters") > 0);
      int afterFirst = count(live, "dead-letters");
      assertThat(result.getState(), is(PipelineResult.State.RUNNING));

      fed += KafkaFeed.produce(clients, TOPIC, second, KafkaFeed.Mode.MIXED).records;
      await("more dead letters", result, () -> count(live, "dead-letters") > afterFirst);

      // The same topic read bounded, by another group, while the live job runs: one set of files
      // at the end, which the live job's rolls must come to hold.
      TidemarkOptions boundedOptions = options(bounded, "rolling-bounded");
      boundedOptions.setKafkaMaxRecords((long) fed);
      Summary summary = Launch.run(boundedOptions);
      assertThat(summary.identityHolds(), is(true));
      deadLetters = lines(bounded, "dead-letters", boundedRolls);
      duplicates = lines(bounded, "duplicates", new TreeSet<>());
      await(
          "the live files to hold every dead letter and duplicate of the bounded read",
          result,
          () -> {
            try {
              return lines(live, "dead-letters", new TreeSet<>()).equals(deadLetters)
                  && lines(live, "duplicates", new TreeSet<>()).equals(duplicates);
            } catch (IOException e) {
              return false;
            }
          });
      assertThat(result.getState(), is(PipelineResult.State.RUNNING));
      lines(live, "dead-letters", rolls);
    } finally {
      result.cancel();
    }
    assertThat(rolls.toString(), rolls.size(), greaterThanOrEqualTo(2));

    assertThat(deadLetters.size(), greaterThan(5));
    assertThat(boundedRolls.isEmpty(), is(true));
    assertThat(lines(live, "dead-letters", new TreeSet<>()), is(deadLetters));
    assertThat(lines(live, "duplicates", new TreeSet<>()), is(duplicates));
  }
}
