package dev.tidemark.drill;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.cluster.LocalCluster;
import dev.tidemark.launcher.KafkaFeed;
import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * A running job on the local cluster ({@link SharedCluster}: JobManager, two TaskManagers and a
 * broker as separate processes) picks up a new model version: it starts with {@code --modelUri}
 * naming a directory that holds version 1 of the shipped XGBoost model, watched every two seconds,
 * and a shadow model; once it has decided with version 1, version 2 is copied into the directory,
 * and the decisions made after that carry version 2, without a restart (the same job id, no job
 * restart). Every decision carries the shadow model's verdict.
 */
public class ModelSwapClusterIT {
  private static final String XGB = "tidemark-fraud-xgb-v1.ubj";
  private static final String SHADOW = "classpath:/models/tidemark-fraud-logreg-v1.onnx";

  private static Path dir;
  private static LocalCluster cluster;

  @BeforeClass
  public static void holdCluster() throws Exception {
    cluster = SharedCluster.hold();
    dir = Files.createTempDirectory("tidemark-model-swap-it");
  }

  @AfterClass
  public static void releaseCluster() throws IOException {
    try {
      if (dir != null) {
        try (Stream<Path> files = Files.walk(dir)) {
          files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
      }
    } finally {
      SharedCluster.release();
    }
  }

  @Test
  public void aRunningJobPicksUpANewModelVersion() throws Exception {
    Path home = Path.of(System.getProperty("tidemark.home", ".."));
    Path shipped = home.resolve("model/src/main/resources/models");
    Path watched = Files.createDirectories(dir.resolve("models"));
    Path v1 = watched.resolve("xgb-v1.ubj");
    Files.copy(shipped.resolve(XGB), v1);
    Files.copy(shipped.resolve(XGB + ".json"), watched.resolve("xgb-v1.ubj.json"));
    setModified(v1, Instant.now().minusSeconds(3600));
    // Version 2: the same trees under a sidecar that says version 2; staged outside the directory.
    Path staged = Files.createDirectories(dir.resolve("staged"));
    Files.copy(shipped.resolve(XGB), staged.resolve("xgb-v2.ubj"));
    ObjectNode sidecar =
        (ObjectNode) Json.MAPPER.readTree(Files.readString(shipped.resolve(XGB + ".json")));
    sidecar.put("version", "2");
    Files.writeString(staged.resolve("xgb-v2.ubj.json"), sidecar.toString());

    Path events = dir.resolve("events.ndjson");
    new EventGenerator(
            GeneratorConfig.builder()
                .seed(20261204)
                .numEvents(400)
                .numAccounts(20)
                .eventsPerSecond(2)
                .lateFraction(0)
                .tooLateFraction(0)
                .build())
        .writeTo(events);
    List<String> lines = Files.readAllLines(events, StandardCharsets.UTF_8);
    Path firstHalf = dir.resolve("first-half.ndjson");
    Path secondHalf = dir.resolve("second-half.ndjson");
    Files.write(firstHalf, lines.subList(0, lines.size() / 2));
    Files.write(secondHalf, lines.subList(lines.size() / 2, lines.size()));

    DrillJobs jobs = new DrillJobs(cluster.settings());
    DrillJobs.Topics topics = new DrillJobs.Topics("swap");
    TidemarkOptions options =
        jobs.options(
            topics,
            dir.resolve("job"),
            List.of(
                "--modelUri=" + watched + "/",
                "--modelWatchInterval=PT2S",
                "--shadowModelUri=" + SHADOW,
                "--earlyFiringDelay=PT1S",
                DrillJobs.sinkMode(KafkaOptions.KafkaSinkMode.idempotent)));
    Map<String, String> outputs = jobs.createTopics(options, 2);
    String decisions = outputs.get("decisions");
    String jobId = jobs.submit(options, null);
    try {
      KafkaFeed.Fed first =
          KafkaFeed.produce(
              jobs.clients(), topics.input(), firstHalf, KafkaFeed.Mode.MIXED, 100, null);
      jobs.awaitRecords(jobId, decisions, 1, Duration.ofMinutes(3));

      Instant swapped = Instant.now();
      // The sidecar first, then the model: the watch never sees a model without its sidecar.
      Files.copy(staged.resolve("xgb-v2.ubj.json"), watched.resolve("xgb-v2.ubj.json"));
      Files.copy(staged.resolve("xgb-v2.ubj"), watched.resolve("xgb-v2.ubj"));
      KafkaFeed.produce(
          jobs.clients(), topics.input(), secondHalf, KafkaFeed.Mode.MIXED, 100, first.clockMillis);

      long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
      Map<String, Long> byVersion = versions(jobs, decisions, swapped).byVersion;
      while (byVersion.getOrDefault("2", 0L) == 0 && System.nanoTime() < deadline) {
        Thread.sleep(1000);
        byVersion = versions(jobs, decisions, swapped).byVersion;
      }
      Versions seen = versions(jobs, decisions, swapped);
      System.out.println("model swap: committed decisions by model version " + seen.byVersion);
      assertThat(
          "decisions by version: " + seen.byVersion, seen.byVersion.get("2"), greaterThan(0L));
      assertThat(
          "decisions by version: " + seen.byVersion, seen.byVersion.get("1"), greaterThan(0L));
      assertThat("version 2 before the copy", seen.version2BeforeSwap, is(0L));
      assertThat("decisions without a shadow", seen.withoutShadow, is(0L));
      // Swapped in place: the same job, never restarted.
      assertThat(jobs.rest().job(jobId).state(), equalTo("RUNNING"));
      assertThat(jobs.rest().restarts(jobId), is(0L));
    } finally {
      jobs.cancelQuietly(jobId);
    }
  }

  /** What the committed decisions say about the models that made them. */
  private static final class Versions {
    final Map<String, Long> byVersion = new TreeMap<>();
    long version2BeforeSwap;
    long withoutShadow;
  }

  private static Versions versions(DrillJobs jobs, String topic, Instant swapped)
      throws IOException {
    Versions versions = new Versions();
    for (ConsumerRecord<byte[], byte[]> record : KafkaFeed.readAll(jobs.clients(), topic)) {
      JsonNode decision = Json.MAPPER.readTree(record.value());
      String version = decision.path("model").path("version").asText();
      versions.byVersion.merge(version, 1L, Long::sum);
      Instant decided = Instant.parse(decision.path("clocks").path("decisionTime").asText());
      if ("2".equals(version) && decided.isBefore(swapped)) {
        versions.version2BeforeSwap++;
      }
      JsonNode shadow = decision.path("shadow");
      if (!"tidemark-fraud-logreg".equals(shadow.path("model").path("name").asText())
          || !shadow.path("score").isNumber()) {
        versions.withoutShadow++;
      }
    }
    return versions;
  }

  private static void setModified(Path model, Instant time) throws IOException {
    Files.setLastModifiedTime(model, FileTime.from(time));
    Files.setLastModifiedTime(Path.of(model + ".json"), FileTime.from(time));
  }
}
