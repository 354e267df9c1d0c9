package dev.tidemark.drill;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.launcher.check.Reference;
import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.pipelines.Outputs;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.io.ReplayFile;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.testkit.generate.ReplayClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.joda.time.Instant;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * The drill's checks on the outputs of a real run of the pipeline: a batch replay of a generated
 * input on the DirectRunner (the launcher's {@link Reference}), whose outputs stand in for what a
 * job committed. They must pass the drill's exactly-once checks against its {@link Recomputation}
 * (the pipeline and the recomputation agree record for record), and the test hook that drops one
 * committed record must make the drill report the loss with its counts and exit 1.
 */
public class DrillCheckTest {
  @ClassRule public static final TemporaryFolder TEMP = new TemporaryFolder();

  private static final int EVENTS = 300;

  private static Path input;
  private static TidemarkOptions options;
  private static Recomputation recomputation;
  private static Map<String, List<ConsumerRecord<byte[], byte[]>>> committed;
  private static long fed;

  @BeforeClass
  public static void replayTheInput() throws Exception {
    Path dir = TEMP.getRoot().toPath();
    Path generated = dir.resolve("generated.ndjson");
    GeneratorConfig config = DrillCommand.inputConfig(20261205, EVENTS);
    new EventGenerator(config).writeTo(generated);
    input = dir.resolve("events.ndjson");
    ReplayClock.coarsen(generated, input, Math.max(1, (int) (60 * config.eventsPerSecond())));
    options = PipelineOptionsFactory.fromArgs().as(TidemarkOptions.class);
    Reference reference = Reference.compute(input, options, dir.resolve("reference"));
    recomputation = Recomputation.of(input, options);
    fed = recomputation.records();
    assertThat(reference.summary().toJson(), fed > EVENTS, is(true));
    committed = new LinkedHashMap<>();
    for (String name : Outputs.NAMES) {
      List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
      try (Stream<Path> files = Files.walk(dir.resolve("reference"))) {
        for (Path file :
            files
                .filter(f -> f.getParent().getFileName().toString().equals(name))
                .filter(f -> f.getFileName().toString().endsWith(".ndjson"))
                .sorted()
                .toList()) {
          for (byte[] line : ReplayFile.splitLines(Files.readAllBytes(file))) {
            if (line.length > 0) {
              records.add(new ConsumerRecord<>(name, 0, records.size(), null, line));
            }
          }
        }
      }
      if (name.equals("decisions")) {
        // In a topic a window's editions come in version order, as a sink commits them.
        records.sort(
            java.util.Comparator.comparingLong(
                record -> {
                  try {
                    return dev.tidemark.transforms.util.Json.MAPPER
                        .readTree(record.value())
                        .path("version")
                        .asLong();
                  } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                  }
                }));
      }
      committed.put(name, records);
    }
  }

  private static DrillReport report() {
    return new DrillReport(
        (int) fed,
        recomputation,
        org.joda.time.Duration.standardMinutes(5),
        org.joda.time.Duration.standardSeconds(30));
  }

  private static FaultRun.Outcome outcome(Map<String, List<ConsumerRecord<byte[], byte[]>>> of) {
    return new FaultRun.Outcome(
        fed, 0, 0, 0, 0, 0, 0, of, true, Map.of(), Duration.ofSeconds(1), List.of(), List.of());
  }

  @Test
  public void thePipelinesOutputsPassTheRecomputation() {
    DrillReport report = report();
    report.add(KafkaOptions.KafkaSinkMode.transactional, outcome(committed));
    JsonNode run = report.toJson().get("runs").get(0);
    assertThat(run.toPrettyString(), run.get("exactlyOnceHolds").asBoolean(), is(true));
    assertThat(run.toPrettyString(), run.get("identityHolds").asBoolean(), is(true));
    assertThat(run.toPrettyString(), run.get("decisionsCommitted").asLong(), greaterThan(0L));
    assertThat(run.toPrettyString(), run.get("latenessBeyondBound").asLong(), is(0L));
    assertThat(
        run.toPrettyString(), run.get("lateness").get("tooLateByRun").asLong(), greaterThan(0L));
    assertThat(run.toPrettyString(), report.exitCode(), is(0));
  }

  @Test
  public void aDroppedDecisionIsReportedAsALossAndExitsOne() {
    List<String> log = new ArrayList<>();
    DrillReport report = report();
    report.add(
        KafkaOptions.KafkaSinkMode.transactional,
        outcome(FaultRun.dropFirst(committed, "decisions", log)));
    JsonNode run = report.toJson().get("runs").get(0);
    assertThat(log.toString(), log.size(), is(1));
    assertThat(run.toPrettyString(), run.get("passed").asBoolean(), is(false));
    assertThat(run.toPrettyString(), run.get("exactlyOnceHolds").asBoolean(), is(false));
    assertThat(
        run.toPrettyString(),
        run.get("missingVersions").asLong() + run.get("finalStateMismatches").asLong(),
        greaterThan(0L));
    assertThat(
        run.toPrettyString(),
        run.get("decisionsCommitted").asLong(),
        is((long) committed.get("decisions").size() - 1));
    assertThat(report.exitCode(), is(1));
  }

  @Test
  public void aDroppedDeadLetterBreaksTheIdentityWithItsCounts() {
    DrillReport report = report();
    report.add(
        KafkaOptions.KafkaSinkMode.idempotent,
        outcome(FaultRun.dropFirst(committed, "dead-letters", new ArrayList<>())));
    JsonNode run = report.toJson().get("runs").get(0);
    assertThat(run.toPrettyString(), run.get("identityHolds").asBoolean(), is(false));
    assertThat(run.toPrettyString(), run.get("deadLetterMismatches").asLong(), is(1L));
    assertThat(
        run.toPrettyString(),
        run.get("identityViolations").get(0).asText().contains("fed " + fed),
        is(true));
    assertThat(report.exitCode(), is(1));
  }

  @Test
  public void aRepeatedEditionWithOtherContentIsAConflict() {
    List<ConsumerRecord<byte[], byte[]>> decisions = new ArrayList<>(committed.get("decisions"));
    ConsumerRecord<byte[], byte[]> last = decisions.get(decisions.size() - 1);
    decisions.add(last);
    assertThat(EditionCopies.compare(decisions).repeatedCopies(), is(1L));
    assertThat(EditionCopies.compare(decisions).conflicting().size(), is(0));
    String changed =
        new String(last.value(), java.nio.charset.StandardCharsets.UTF_8)
            .replaceFirst("\"score\":([0-9.eE-]+)", "\"score\":0.123456");
    decisions.add(
        new ConsumerRecord<>(
            "decisions",
            0,
            decisions.size(),
            null,
            changed.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    EditionCopies.Result result = EditionCopies.compare(decisions);
    assertThat(result.repeatedCopies(), is(2L));
    assertThat(result.conflicting().size(), is(1));
  }

  @Test
  public void windowsAreBeamsSlidingWindows() {
    List<org.apache.beam.sdk.transforms.windowing.IntervalWindow> windows =
        recomputation.windowsOf(Instant.parse("2026-01-01T00:02:10Z"));
    assertThat(windows.size(), is(10));
    assertThat(windows.get(0).start(), is(Instant.parse("2025-12-31T23:57:30Z")));
    assertThat(windows.get(9).start(), is(Instant.parse("2026-01-01T00:02:00Z")));
  }
}
