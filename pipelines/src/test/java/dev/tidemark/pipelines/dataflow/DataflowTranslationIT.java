package dev.tidemark.pipelines.dataflow;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.everyItem;
import static org.hamcrest.Matchers.in;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.pipelines.RunnerProfiles;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.testkit.EmbeddedKafka;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.PaymentFeatures;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.beam.runners.dataflow.options.DataflowPipelineOptions;
import org.apache.beam.sdk.extensions.gcp.auth.NoopCredentialFactory;
import org.apache.beam.sdk.extensions.gcp.storage.NoopPathValidator;
import org.apache.beam.sdk.io.gcp.bigquery.RowMutationInformation;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.SerializableFunction;
import org.apache.beam.sdk.util.DoFnInfo;
import org.apache.beam.sdk.util.SerializableUtils;
import org.apache.beam.sdk.util.StringUtils;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The {@code dataflow} profile's whole pipeline translated into a Dataflow job specification with
 * no network: {@code --templateLocation} makes the DataflowRunner write the job JSON and return
 * instead of creating a job; credentials and path checks are no-ops, nothing is staged but the
 * pipeline proto (to a local staging directory), and BigQueryIO does not validate.
 */
@RunWith(JUnit4.class)
public class DataflowTranslationIT {
  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  /** The project directory (tests run in pipelines/). */
  static Path home() {
    Path here = java.nio.file.Paths.get("").toAbsolutePath();
    return Files.isDirectory(here.resolve("runner-profiles")) ? here : here.getParent();
  }

  private TidemarkOptions options(String... extra) {
    Path staging = folder.getRoot().toPath().resolve("staging");
    List<String> overrides = new ArrayList<>();
    overrides.add("--project=tidemark-test");
    overrides.add("--region=europe-west2");
    overrides.add("--jobName=tidemark-translation-test");
    overrides.add("--tempLocation=" + folder.getRoot().toPath().resolve("temp"));
    overrides.add("--stagingLocation=" + staging);
    overrides.add("--templateLocation=" + folder.getRoot().toPath().resolve("job.json"));
    overrides.add("--pubsubSubscription=projects/tidemark-test/subscriptions/events");
    overrides.add("--bigQueryDataset=tidemark-test:tidemark");
    overrides.add("--bigQueryValidate=false");
    overrides.addAll(List.of(extra));
    List<String> arguments = new RunnerProfiles(home()).arguments("dataflow", overrides);
    TidemarkOptions options =
        PipelineOptionsFactory.fromArgs(arguments.toArray(new String[0]))
            .withValidation()
            .as(TidemarkOptions.class);
    DataflowPipelineOptions dataflow = options.as(DataflowPipelineOptions.class);
    dataflow.setCredentialFactoryClass(NoopCredentialFactory.class);
    dataflow.setPathValidatorClass(NoopPathValidator.class);
    dataflow.setFilesToStage(List.of());
    return options;
  }

  private JsonNode translate(TidemarkOptions options) throws Exception {
    String jobId = Launch.submit(options);
    assertThat("a template run creates no job", jobId == null, is(true));
    Path job = folder.getRoot().toPath().resolve("job.json");
    assertThat("job specification written", Files.exists(job), is(true));
    // Kept for reading: target/dataflow-job.json is the last translated job.
    Files.copy(
        job,
        java.nio.file.Paths.get("target", "dataflow-job.json"),
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    return Json.MAPPER.readTree(job.toFile());
  }

  private static String name(JsonNode step) {
    return step.get("properties").get("user_name").get("value").asText();
  }

  /** A step property's text, whether written as a string or as {@code {"value": ...}}. */
  private static String property(JsonNode step, String name) {
    JsonNode value = step.get("properties").get(name);
    assertThat("step property " + name, value == null, is(false));
    return value.has("value") ? value.get("value").asText() : value.asText();
  }

  private static JsonNode step(JsonNode job, String name) {
    for (JsonNode step : job.get("steps")) {
      if (name(step).equals(name)) {
        return step;
      }
    }
    throw new AssertionError("no step " + name + " in the job");
  }

  /** The DoFn a ParallelDo step carries, deserialized as a Dataflow worker would. */
  private static Object doFn(JsonNode step) {
    String serialized = step.get("properties").get("serialized_fn").get("value").asText();
    DoFnInfo<?, ?> info =
        (DoFnInfo<?, ?>)
            SerializableUtils.deserializeFromByteArray(
                StringUtils.jsonStringToByteArray(serialized), name(step));
    return info.getDoFn();
  }

  private static Object field(Object target, String name) throws ReflectiveOperationException {
    for (Class<?> type = target.getClass(); type != null; type = type.getSuperclass()) {
      try {
        Field field = type.getDeclaredField(name);
        field.setAccessible(true);
        return field.get(target);
      } catch (NoSuchFieldException e) {
        // look in the superclass
      }
    }
    throw new NoSuchFieldException(name + " in " + target.getClass());
  }

  private static void assertTranslated(JsonNode job) throws Exception {
    assertThat(job.get("type").asText(), is("JOB_TYPE_STREAMING"));
    assertThat(
        job.get("environment").get("experiments").toString(),
        containsString("enable_streaming_engine"));

    // Every step is of a kind Dataflow's v1 translator produces; none was left untranslated.
    Set<String> kinds = new TreeSet<>();
    for (JsonNode step : job.get("steps")) {
      kinds.add(step.get("kind").asText());
    }
    assertThat(
        kinds,
        everyItem(
            in(
                List.of(
                    "ParallelRead",
                    "ParallelDo",
                    "GroupByKey",
                    "CombineValues",
                    "Flatten",
                    "Bucket"))));

    // The stateful dedup runs on keyed state, and so does the too-late gate.
    JsonNode dedup = step(job, "ScoreCloudEvents/DeduplicateEvents/FirstCopyPerIdentity");
    assertThat(dedup.get("properties").get("uses_keyed_state").get("value").asText(), is("true"));
    assertThat(dedup.get("properties").get("display_data").toString(), containsString("firstSeen"));
    assertThat(
        step(job, "ScoreCloudEvents/ComputeFeatures/GateTooLateEvents")
            .get("properties")
            .get("uses_keyed_state")
            .get("value")
            .asText(),
        is("true"));

    // All four tables through the Storage Write API at-least-once path, none by streaming inserts.
    for (String write :
        List.of(
            "WriteDecisionsToBigQuery",
            "WriteDeadLettersToBigQuery",
            "WriteDuplicatesToBigQuery",
            "WriteTooLateToBigQuery")) {
      step(job, write + "/StorageApiLoads/StorageApiWriteInconsistent/Write Records");
    }
    assertThat(job.get("steps").toString(), not(containsString("StreamingInserts")));

    // The decisions' conversion carries the CDC upsert with the pane index as sequence number.
    Object convert =
        doFn(step(job, "WriteDecisionsToBigQuery/StorageApiLoads/Convert/Convert to message"));
    @SuppressWarnings("unchecked")
    SerializableFunction<Decision, RowMutationInformation> mutation =
        (SerializableFunction<Decision, RowMutationInformation>) field(convert, "rowMutationFn");
    assertThat("CDC row mutation function", mutation == null, is(false));
    Instant start = Instant.parse("2026-01-01T00:00:00Z");
    Decision pane =
        Decision.unscored(
            "acct-1",
            start,
            start.plus(Duration.standardMinutes(5)),
            "LATE",
            11,
            false,
            true,
            PaymentFeatures.of(1, 100, 100, 1, 1, start, start),
            start);
    RowMutationInformation info = mutation.apply(pane);
    assertThat(info.getMutationType(), is(RowMutationInformation.MutationType.UPSERT));
    assertThat(Long.parseLong(info.getChangeSequenceNumber(), 16), is(11L));
  }

  @Test
  public void pubsubToBigQueryTranslatesToAStreamingJob() throws Exception {
    JsonNode job = translate(options("--pubsubIdAttribute=tidemark-id"));
    assertTranslated(job);
    JsonNode read = step(job, "ReadPubsub/ReadPubsub/PubsubUnboundedSource");
    assertThat(read.get("kind").asText(), is("ParallelRead"));
    // The service-side source gets the event-time and id attributes by name.
    assertThat(property(read, "pubsub_timestamp_label"), is("ce-time"));
    assertThat(property(read, "pubsub_id_label"), is("tidemark-id"));
    JsonNode pipelineOptions = job.get("environment").get("sdkPipelineOptions").get("options");
    assertThat(pipelineOptions.get("source").asText(), is("pubsub"));
    assertThat(pipelineOptions.get("sink").asText(), is("bigquery"));
  }

  /**
   * Kafka in: on Dataflow the legacy unbounded read is split when the job is translated, so the
   * launcher lists the topic's partitions (a real broker here, in this JVM). With SASL that means
   * the launcher also reads the password (from Secret Manager with --kafkaPasswordSecret): a Flex
   * Template launcher runs as the worker service account, which holds the accessor role.
   */
  @Test
  public void kafkaInTranslatesAfterListingThePartitions() throws Exception {
    try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
      kafka.createTopics(3, List.of("tidemark.events"));
      JsonNode job =
          translate(
              options(
                  "--source=kafka",
                  "--kafkaBootstrapServers=" + kafka.bootstrapServers(),
                  "--kafkaInputTopic=tidemark.events"));
      assertTranslated(job);
      JsonNode pipelineOptions = job.get("environment").get("sdkPipelineOptions").get("options");
      assertThat(pipelineOptions.get("source").asText(), is("kafka"));
      assertThat(job.get("steps").toString(), containsString("ReadKafka"));
    }
  }
}
