package dev.tidemark.pipelines.io.pubsub;

import static dev.tidemark.pipelines.io.pubsub.PubsubFixtures.ALICE;
import static dev.tidemark.pipelines.io.pubsub.PubsubFixtures.binaryAttributes;
import static dev.tidemark.pipelines.io.pubsub.PubsubFixtures.data;
import static dev.tidemark.pipelines.io.pubsub.PubsubFixtures.seconds;
import static dev.tidemark.pipelines.io.pubsub.PubsubFixtures.structured;
import static dev.tidemark.pipelines.io.pubsub.PubsubFixtures.structuredAttributes;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.allOf;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThanOrEqualTo;
import static org.junit.Assume.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.RawRecord;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.beam.runners.direct.DirectOptions;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.extensions.gcp.auth.NoopCredentialFactory;
import org.apache.beam.sdk.io.gcp.pubsub.PubsubOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.joda.time.Instant;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The Pub/Sub source against the Pub/Sub emulator ({@code gcloud beta emulators pubsub start}) with
 * Beam's JSON client and {@code --pubsubRootUrl}: real publish times and message ids, and a message
 * without the timestamp attribute that Beam's client alone would throw on. Skipped when gcloud or
 * its pubsub-emulator component is absent; the emulator's process tree is killed after the test.
 */
@RunWith(JUnit4.class)
public class PubsubEmulatorTest {
  private static final String PROJECT = "tidemark-emulator";
  private static final String TOPIC = "projects/" + PROJECT + "/topics/payments";
  private static final String SUBSCRIPTION = "projects/" + PROJECT + "/subscriptions/payments";
  private static final long STARTUP_SECONDS = 30;

  /** Records seen by the running pipeline, per test run. */
  private static final Map<String, Queue<String>> SEEN = new ConcurrentHashMap<>();

  private final TemporaryFolder folder = new TemporaryFolder();
  private final HttpClient http = HttpClient.newHttpClient();
  private Process emulator;
  private String rootUrl;

  @Before
  public void startEmulator() throws Exception {
    Path gcloud = Paths.get("/usr/bin/gcloud");
    String onPath = findOnPath("gcloud");
    assumeTrue("gcloud is not installed", onPath != null || Files.isExecutable(gcloud));
    folder.create();
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    rootUrl = "http://127.0.0.1:" + port;
    emulator =
        new ProcessBuilder(
                onPath != null ? onPath : gcloud.toString(),
                "beta",
                "emulators",
                "pubsub",
                "start",
                "--host-port=127.0.0.1:" + port,
                "--data-dir=" + folder.getRoot(),
                "--quiet")
            .redirectErrorStream(true)
            .start();
    CountDownLatch started = new CountDownLatch(1);
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader lines =
                  new BufferedReader(
                      new InputStreamReader(emulator.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                  if (line.contains("Server started")) {
                    started.countDown();
                  }
                }
              } catch (IOException e) {
                // The emulator went away; the latch tells.
              }
            },
            "pubsub-emulator-output");
    reader.setDaemon(true);
    reader.start();
    // gcloud exits at once when the component is missing: skip then, not after the whole wait.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(STARTUP_SECONDS);
    boolean up = started.await(200, TimeUnit.MILLISECONDS);
    while (!up && emulator.isAlive() && System.nanoTime() < deadline) {
      up = started.await(200, TimeUnit.MILLISECONDS);
    }
    assumeTrue(
        "the Pub/Sub emulator did not start"
            + (emulator.isAlive() ? " within " + STARTUP_SECONDS + " s" : ": gcloud exited")
            + " (is the pubsub-emulator component installed?)",
        up);
  }

  @After
  public void stopEmulator() throws InterruptedException {
    if (emulator != null) {
      emulator.descendants().forEach(ProcessHandle::destroyForcibly);
      emulator.destroyForcibly();
      emulator.waitFor(10, TimeUnit.SECONDS);
    }
    folder.delete();
  }

  private static String findOnPath(String program) {
    String path = System.getenv("PATH");
    if (path == null) {
      return null;
    }
    for (String dir : path.split(java.io.File.pathSeparator)) {
      Path candidate = Paths.get(dir, program);
      if (Files.isExecutable(candidate)) {
        return candidate.toString();
      }
    }
    return null;
  }

  private JsonNode call(String method, String path, String body) throws Exception {
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(URI.create(rootUrl + "/v1/" + path))
                .header("Content-Type", "application/json")
                .method(method, HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(path + ": " + response.body(), response.statusCode(), is(200));
    return Json.MAPPER.readTree(response.body());
  }

  private String publish(Map<String, String> attributes, String body) throws Exception {
    ObjectNode message = Json.MAPPER.createObjectNode();
    message.put("data", Base64.getEncoder().encodeToString(body.getBytes(StandardCharsets.UTF_8)));
    ObjectNode attrs = message.putObject("attributes");
    attributes.forEach(attrs::put);
    ObjectNode request = Json.MAPPER.createObjectNode();
    request.putArray("messages").add(message);
    return call("POST", TOPIC + ":publish", request.toString()).get("messageIds").get(0).asText();
  }

  @Test
  public void readsFromTheEmulatorWithPublishTimeAndDeadLettersAMissingTimestamp()
      throws Exception {
    call("PUT", TOPIC, "{}");
    call("PUT", SUBSCRIPTION, "{\"topic\":\"" + TOPIC + "\"}");
    Instant before = Instant.now();
    String binaryId = publish(binaryAttributes("e1", seconds(10).toString()), data(ALICE, "10.00"));
    String structuredId =
        publish(
            structuredAttributes(seconds(20)), structured("e2", seconds(20), data(ALICE, "20.00")));
    String missingId =
        publish(
            Map.of("content-type", "application/cloudevents+json"),
            structured("e3", seconds(30), data(ALICE, "30.00")));
    Instant after = Instant.now();

    String run = java.util.UUID.randomUUID().toString();
    SEEN.put(run, new ConcurrentLinkedQueue<>());
    INGESTED.clear();
    PubsubOptions options = PipelineOptionsFactory.create().as(PubsubOptions.class);
    options.setPubsubRootUrl(rootUrl);
    options.setProject(PROJECT);
    options.setCredentialFactoryClass(NoopCredentialFactory.class);
    options.as(DirectOptions.class).setBlockOnRun(false);
    Pipeline pipeline = Pipeline.create(options);
    pipeline
        .apply("ReadPubsub", PubsubSource.fromSubscription(SUBSCRIPTION))
        .apply("Collect", ParDo.of(new CollectFn(run)));
    PipelineResult result = pipeline.run();
    Queue<String> seen = SEEN.get(run);
    try {
      long deadline = System.currentTimeMillis() + 20_000;
      while (seen.size() < 3 && System.currentTimeMillis() < deadline) {
        Thread.sleep(100);
      }
    } finally {
      result.cancel();
      SEEN.remove(run);
    }

    Map<String, String> byMessage = new HashMap<>();
    for (String line : seen) {
      String[] parts = line.split(" ", 2);
      byMessage.put(parts[0], parts[1]);
    }
    String origin = "pubsub:" + SUBSCRIPTION + "/";
    assertThat(byMessage.toString(), byMessage.size(), is(3));
    assertThat(
        byMessage.get(origin + binaryId),
        is("ts=" + seconds(10) + " id=e1 time=" + seconds(10) + " ok"));
    assertThat(
        byMessage.get(origin + structuredId),
        is("ts=" + seconds(20) + " id=e2 time=" + seconds(20) + " ok"));
    assertThat(byMessage.get(origin + missingId), is("rejected=missing_attribute"));
    for (String ingested : List.copyOf(INGESTED.values())) {
      Instant time = Instant.parse(ingested);
      // The emulator's publish time: between the calls, to the second (it may truncate).
      assertThat(
          time,
          allOf(greaterThanOrEqualTo(before.minus(1000)), lessThanOrEqualTo(after.plus(1000))));
    }
    assertThat(INGESTED.size(), greaterThanOrEqualTo(3));
  }

  /** Ingestion time per origin, written by the pipeline. */
  private static final Map<String, String> INGESTED = new ConcurrentHashMap<>();

  /** Records each RawRecord as {@code origin summary}. */
  static final class CollectFn extends DoFn<RawRecord, Void> {
    private final String run;

    CollectFn(String run) {
      this.run = run;
    }

    @ProcessElement
    public void processElement(@Element RawRecord record, @Timestamp Instant timestamp)
        throws IOException {
      String summary;
      if (record.sourceError() != null) {
        summary = "rejected=" + record.sourceError().code();
      } else {
        JsonNode event = Json.MAPPER.readTree(record.payload());
        summary =
            "ts="
                + timestamp
                + " id="
                + event.get("id").asText()
                + " time="
                + Instant.parse(event.get("time").asText())
                + " ok";
      }
      INGESTED.put(record.origin(), record.ingestionTime().toString());
      Queue<String> seen = SEEN.get(run);
      if (seen != null) {
        seen.add(record.origin() + " " + summary);
      }
    }
  }
}
