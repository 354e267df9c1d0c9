package dev.tidemark.launcher.it;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.comparesEqualTo;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.endsWith;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.notNullValue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.launcher.KafkaFeed;
import dev.tidemark.launcher.LiveRun;
import dev.tidemark.pipelines.Outputs;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.testkit.EmbeddedKafka;
import dev.tidemark.testkit.PortForward;
import dev.tidemark.transforms.util.Json;
import java.io.File;
import java.math.BigDecimal;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.beam.runners.flink.EmbeddedFlinkJobsShim;
import org.apache.beam.runners.flink.FlinkPipelineOptions;
import org.apache.flink.runtime.checkpoint.RestoredCheckpointStats;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;

/**
 * Every committed savepoint fixture ({@link SavepointFixture}, one per release under {@code
 * savepoints/}) restores into the current build with its state.
 *
 * <p>Each run starts a fresh broker, recreates the fixture's topics and re-produces its input, so
 * the input topic's offsets are the fixture's, then resumes the current build's pipeline from the
 * fixture's savepoint. Flink restores with {@code allowNonRestoredState} off ({@link
 * EmbeddedFlinkJobsShim}): a savepoint whose state some operator of this build does not take (an
 * operator uid that changed) fails the submission instead of being dropped. Then it sends:
 *
 * <ul>
 *   <li>a copy of an event read before the savepoint (the manifest's {@code dedupProbe}, whose
 *       identity occurs once in the input): it must come out on the duplicates topic, with the
 *       first copy's event time, which only the restored dedup state knows;
 *   <li>three new events of one account into a window that was open at the savepoint (the
 *       manifest's {@code openWindows}, with the features of the window's last pane before it): the
 *       window's final decision must count the events before the savepoint and these, and its panes
 *       must go on from the pane index before it;
 *   <li>end markers, which close every window.
 * </ul>
 *
 * <p>{@link #withoutTheSavepointNeitherStateShows} sends the same records to the same pipeline
 * started without the savepoint, and shows what the first test would see had the state been lost:
 * the copy passes as a first copy and the window counts only the new events.
 */
@RunWith(Parameterized.class)
public class SavepointRestoreIT {
  @Rule public final TemporaryFolder temp = new TemporaryFolder();

  private final String release;
  private final Path fixture;
  private final JsonNode manifest;
  private EmbeddedKafka broker;
  private PortForward forward;

  /** The release directories under {@code savepoints/}, each one fixture. */
  @Parameterized.Parameters(name = "{0}")
  public static List<Object[]> fixtures() throws URISyntaxException {
    URL root = SavepointRestoreIT.class.getResource("/savepoints");
    assertThat("the savepoint fixtures are on the test class path", root, notNullValue());
    List<Object[]> releases = new ArrayList<>();
    File[] directories = new File(root.toURI()).listFiles(File::isDirectory);
    for (File directory : directories == null ? new File[0] : directories) {
      releases.add(new Object[] {directory.getName(), directory.toPath()});
    }
    releases.sort(Comparator.comparing(r -> (String) r[0]));
    assertThat("at least one savepoint fixture", releases.size(), greaterThan(0));
    return releases;
  }

  public SavepointRestoreIT(String release, Path fixture) throws Exception {
    this.release = release;
    this.fixture = fixture;
    this.manifest = Json.MAPPER.readTree(fixture.resolve(SavepointFixture.MANIFEST).toFile());
  }

  @Before
  public void startBroker() throws Exception {
    broker = EmbeddedKafka.start();
    forward = PortForward.open(SavepointFixture.BOOTSTRAP_PORT, broker.bootstrapServers());
  }

  @After
  public void stopBroker() throws Exception {
    if (forward != null) {
      forward.close();
    }
    if (broker != null) {
      broker.close();
    }
  }

  @Test
  public void theSavepointRestoresWithItsDedupAndWindowState() throws Exception {
    assertThat(manifest.get("release").asText(), is(release));
    JsonNode window = probeWindow();
    TidemarkOptions options = options(pipelineArgs());
    KafkaClients clients = KafkaClients.from(options);
    Map<String, String> topics = SavepointFixture.createTopics(forward.address(), options);
    KafkaFeed.produce(
        clients,
        options.getKafkaInputTopic(),
        fixture.resolve(SavepointFixture.INPUT),
        KafkaFeed.Mode.valueOf(manifest.path("input").get("produceMode").asText()));
    Map<Integer, Long> offsets = new TreeMap<>();
    manifest
        .get("offsetsConsumed")
        .fields()
        .forEachRemaining(e -> offsets.put(Integer.parseInt(e.getKey()), e.getValue().asLong()));
    assertThat(
        "the re-produced input has the fixture's offsets",
        SavepointFixture.endOffsets(clients, options.getKafkaInputTopic()),
        is(offsets));
    int markers = sendAfterSavepoint(clients, options.getKafkaInputTopic(), window);

    Path savepoint = temp.newFolder("savepoint").toPath();
    SavepointFixture.copyDirectory(fixture.resolve(SavepointFixture.SAVEPOINT), savepoint);
    options.as(FlinkPipelineOptions.class).setSavepointPath(savepoint.toUri().toString());
    Outputs outputs =
        run(options, clients, topics, markers, savepoint, window.get("decisionId").asText());

    JsonNode probe = manifest.path("state").get("dedupProbe");
    assertThat("one duplicate: the copy of the event read before", outputs.duplicates, hasSize(1));
    JsonNode duplicate = outputs.duplicates.get(0);
    assertThat(duplicate.get("source").asText(), is(probe.get("source").asText()));
    assertThat(duplicate.get("id").asText(), is(probe.get("id").asText()));
    assertThat(duplicate.get("identicalPayload").asBoolean(), is(true));
    assertThat(
        "the first copy's event time, from the restored dedup state",
        Instant.parse(duplicate.get("firstEventTime").asText()),
        is(Instant.parse(probe.get("time").asText())));

    List<JsonNode> panes = outputs.panesOf(window.get("decisionId").asText());
    long before = window.get("version").asLong();
    assertThat(
        "the window's panes go on from its pane index before the savepoint",
        panes.get(0).get("version").asLong(),
        is(before + 1));
    JsonNode last = panes.get(panes.size() - 1);
    assertThat(last.path("pane").get("timing").asText(), is("ON_TIME"));
    assertThat(
        "the events before the savepoint and the three after it",
        last.path("features").get("txnCount").asLong(),
        is(window.get("txnCount").asLong() + NEW_EVENTS));
    assertThat(
        last.path("features").get("amountSum").decimalValue(),
        comparesEqualTo(window.get("amountSum").decimalValue().add(NEW_AMOUNT_SUM)));
  }

  /** The same records after the savepoint, to the same pipeline started without it. */
  @Test
  public void withoutTheSavepointNeitherStateShows() throws Exception {
    JsonNode window = probeWindow();
    List<String> args = new ArrayList<>();
    for (String arg : pipelineArgs()) {
      args.add(arg.replace("fixture", "reference"));
    }
    TidemarkOptions options = options(args);
    KafkaClients clients = KafkaClients.from(options);
    Map<String, String> topics = SavepointFixture.createTopics(forward.address(), options);
    int markers = sendAfterSavepoint(clients, options.getKafkaInputTopic(), window);
    Outputs outputs =
        run(options, clients, topics, markers, null, window.get("decisionId").asText());

    assertThat("the copy passes as a first copy", outputs.duplicates, is(empty()));
    List<JsonNode> panes = outputs.panesOf(window.get("decisionId").asText());
    assertThat(panes.get(0).get("version").asLong(), is(0L));
    JsonNode last = panes.get(panes.size() - 1);
    assertThat(last.path("features").get("txnCount").asLong(), is((long) NEW_EVENTS));
    assertThat(
        last.path("features").get("amountSum").decimalValue(), comparesEqualTo(NEW_AMOUNT_SUM));
  }

  private static final int NEW_EVENTS = 3;

  /** 1.00 + 2.00 + 3.00. */
  private static final BigDecimal NEW_AMOUNT_SUM = new BigDecimal("6.00");

  /** The open window with the latest end: the farthest from the watermark at the savepoint. */
  private JsonNode probeWindow() {
    JsonNode best = null;
    for (JsonNode window : manifest.path("state").get("openWindows")) {
      if (best == null
          || Instant.parse(window.get("windowEnd").asText())
              .isAfter(Instant.parse(best.get("windowEnd").asText()))
          || (window.get("windowEnd").asText().equals(best.get("windowEnd").asText())
              && window.get("txnCount").asLong() > best.get("txnCount").asLong())) {
        best = window;
      }
    }
    assertThat("an open window in the manifest", best, notNullValue());
    assertThat(best.get("txnCount").asLong(), greaterThan(0L));
    return best;
  }

  /**
   * The fixture's pipeline options; a release that had no {@code --windowAggregation} built its
   * windows in one stage, which its state is in.
   */
  private List<String> pipelineArgs() {
    List<String> args = new ArrayList<>();
    manifest.get("pipelineArgs").forEach(arg -> args.add(arg.asText()));
    if (args.stream().noneMatch(arg -> arg.startsWith("--windowAggregation="))) {
      args.add("--windowAggregation=ONE_STAGE");
    }
    return args;
  }

  private TidemarkOptions options(List<String> args) throws Exception {
    return SavepointFixture.options(
        args, forward.address(), temp.newFolder().toPath().resolve("out"));
  }

  /**
   * Produces the records after the savepoint: three new events of the window's account inside the
   * window (its last seconds), a copy of the dedup probe's line from the input, then the end
   * markers; returns the number of markers.
   */
  private int sendAfterSavepoint(KafkaClients clients, String topic, JsonNode window)
      throws Exception {
    JsonNode probe = manifest.path("state").get("dedupProbe");
    ObjectNode template = null;
    String probeLine = null;
    for (String line :
        Files.readAllLines(fixture.resolve(SavepointFixture.INPUT), StandardCharsets.UTF_8)) {
      JsonNode node = Json.MAPPER.readTree(line);
      if (!node.has("specversion")) {
        continue;
      }
      if (template == null
          && node.path("data")
              .path("accountId")
              .asText()
              .equals(window.get("accountId").asText())) {
        template = (ObjectNode) node;
      }
      if (node.get("source").asText().equals(probe.get("source").asText())
          && node.get("id").asText().equals(probe.get("id").asText())) {
        probeLine = line;
      }
    }
    assertThat("an event of the window's account in the input", template, notNullValue());
    assertThat("the dedup probe in the input", probeLine, notNullValue());
    Instant end = Instant.parse(window.get("windowEnd").asText());
    List<String> lines = new ArrayList<>();
    for (int i = 1; i <= NEW_EVENTS; i++) {
      ObjectNode event = template.deepCopy();
      event.put("id", "restore-probe-" + i);
      event.put("source", "/tidemark/restore-test");
      event.put("time", end.minus(Duration.standardSeconds(NEW_EVENTS + 1 - i)).toString());
      ObjectNode data = (ObjectNode) event.get("data");
      data.put("amount", new BigDecimal(i + ".00"));
      data.put("merchantId", "m-restore");
      lines.add(event.toString());
    }
    lines.add(probeLine);
    Path after = temp.newFile("after-savepoint.ndjson").toPath();
    Files.write(after, lines, StandardCharsets.UTF_8);
    KafkaFeed.produce(clients, topic, after, KafkaFeed.Mode.MIXED);
    return LiveRun.sendEndMarkers(clients, topic, end.getMillis(), Duration.standardDays(1));
  }

  /** What a run committed, read back with read_committed. */
  private static final class Outputs {
    final List<JsonNode> decisions = new ArrayList<>();
    final List<JsonNode> duplicates = new ArrayList<>();

    /** The panes of one decision, by version, each version once. */
    List<JsonNode> panesOf(String decisionId) {
      Map<Long, JsonNode> byVersion = new TreeMap<>();
      for (JsonNode decision : decisions) {
        if (decision.get("decisionId").asText().equals(decisionId)) {
          byVersion.put(decision.get("version").asLong(), decision);
        }
      }
      assertThat("panes of decision " + decisionId, byVersion.size(), greaterThan(0));
      assertThat(
          "versions without a gap",
          new TreeSet<>(byVersion.keySet()).last() - byVersion.keySet().iterator().next() + 1,
          is((long) byVersion.size()));
      return new ArrayList<>(byVersion.values());
    }
  }

  /**
   * Runs the pipeline until every marker is through, the window {@code decisionId} has its on-time
   * pane and the outputs are quiet, and reads them back; with a savepoint, also checks that Flink
   * restored the job from it.
   */
  private static Outputs run(
      TidemarkOptions options,
      KafkaClients clients,
      Map<String, String> topics,
      int markers,
      Path savepoint,
      String decisionId)
      throws Exception {
    EmbeddedFlinkJobsShim.Job job = EmbeddedFlinkJobsShim.start(Launch.build(options));
    Map<String, List<ConsumerRecord<byte[], byte[]>>> committed;
    try {
      committed =
          LiveRun.awaitQuiet(
              clients,
              topics,
              markers,
              Duration.standardMinutes(4),
              LiveRun.quietPeriod(options),
              job::checkRunning,
              done -> hasOnTimePane(done.get("decisions"), decisionId));
      if (savepoint != null) {
        RestoredCheckpointStats restored = job.checkpointStats().getLatestRestoredCheckpoint();
        assertThat("Flink restored the job from a savepoint", restored, notNullValue());
        assertThat(restored.getExternalPath(), endsWith(savepoint.toString().replaceAll("/$", "")));
      }
    } finally {
      job.cancel();
    }
    Outputs outputs = new Outputs();
    for (ConsumerRecord<byte[], byte[]> record : committed.get("decisions")) {
      outputs.decisions.add(Json.MAPPER.readTree(record.value()));
    }
    for (ConsumerRecord<byte[], byte[]> record : committed.get("duplicates")) {
      outputs.duplicates.add(Json.MAPPER.readTree(record.value()));
    }
    return outputs;
  }

  /** Whether the window {@code decisionId} has its on-time pane among {@code decisions}. */
  private static boolean hasOnTimePane(
      List<ConsumerRecord<byte[], byte[]>> decisions, String decisionId) {
    for (ConsumerRecord<byte[], byte[]> record : decisions) {
      try {
        JsonNode decision = Json.MAPPER.readTree(record.value());
        if (decision.path("decisionId").asText().equals(decisionId)
            && decision.path("pane").path("timing").asText().equals("ON_TIME")) {
          return true;
        }
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
    return false;
  }
}
