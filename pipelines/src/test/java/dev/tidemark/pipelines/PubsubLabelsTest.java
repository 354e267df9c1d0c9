package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.api.client.util.Clock;
import dev.tidemark.pipelines.io.BackfillSource;
import dev.tidemark.pipelines.io.NdjsonFiles;
import dev.tidemark.pipelines.io.Sources;
import dev.tidemark.pipelines.io.pubsub.PubsubFixtures;
import dev.tidemark.testkit.OutputFiles;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.testkit.generate.LabelStream;
import dev.tidemark.transforms.ParseLabels;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.EvaluationSummary;
import dev.tidemark.transforms.values.Label;
import dev.tidemark.transforms.values.RawRecord;
import java.io.IOException;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.io.gcp.pubsub.PubsubClient;
import org.apache.beam.sdk.io.gcp.pubsub.PubsubClient.IncomingMessage;
import org.apache.beam.sdk.io.gcp.pubsub.PubsubTestClient;
import org.apache.beam.sdk.io.gcp.pubsub.PubsubTestClient.PubsubTestClientFactory;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * Labels from {@code --pubsubLabelsSubscription}, read with Beam's in-process {@link
 * PubsubTestClient} beside a generated payments stream, are judged as the same labels read from
 * files are: in one pipeline both label streams meet the same decisions (of a bounded read of the
 * events, so the run ends), and their evaluations are equal line for line, and so are their
 * unmatched labels.
 */
@RunWith(JUnit4.class)
public class PubsubLabelsTest {
  private static final PubsubClient.SubscriptionPath SUBSCRIPTION =
      PubsubClient.subscriptionPathFromName("tidemark-test", "labels");

  /** The reader's clock, fixed: no ack deadline passes while the test runs. */
  private static final Clock CLOCK = (Clock & Serializable) () -> 673L;

  /** Labels published: fewer than the DirectRunner's unbounded read emits per bundle (10). */
  private static final int MESSAGES = 9;

  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  @Test
  public void labelsFromTheSubscriptionAreJudgedAsTheSameLabelsFromFiles() throws IOException {
    Path root = folder.getRoot().toPath();
    Path generated = root.resolve("generated.ndjson");
    EventGenerator generator =
        new EventGenerator(
            GeneratorConfig.builder()
                .seed(5)
                .numEvents(200)
                .numAccounts(20)
                .eventsPerSecond(0.5)
                .cardTestingBurstsPerThousand(15)
                .build());
    generator.writeTo(generated);
    Path generatedLabels = root.resolve("generated-labels.ndjson");
    LabelStream.write(generator.subjects(), LabelStream.Config.defaults(5), generatedLabels);
    // The first labels, as many as the DirectRunner reads in one bundle: Beam's test client cannot
    // take an acknowledgement of a message that a reader closed between bundles handed back.
    List<String> firstLabels =
        Files.readAllLines(generatedLabels, StandardCharsets.UTF_8).stream()
            .filter(line -> !line.isBlank())
            .limit(MESSAGES)
            .toList();
    Path labels = Files.write(root.resolve("labels.ndjson"), firstLabels, StandardCharsets.UTF_8);

    // Each label published when it was learnt, its time in ce-time; alternately a structured-mode
    // and a binary-mode message.
    List<IncomingMessage> messages = new ArrayList<>();
    for (String line : firstLabels) {
      Label label = Label.parse(line);
      String id = "l" + messages.size();
      messages.add(
          messages.size() % 2 == 1
              ? PubsubFixtures.incomingBinary(id, line, label.time())
              : PubsubFixtures.incoming(
                  id, PubsubFixtures.structuredAttributes(label.time()), line, label.time()));
    }

    TidemarkOptions options =
        PipelineOptionsFactory.fromArgs(
                "--runner=DirectRunner",
                "--source=pubsub",
                "--pubsubLabelsSubscription=" + SUBSCRIPTION.getPath(),
                "--earlyFiringDelay=none")
            .withValidation()
            .as(TidemarkOptions.class);
    Pipeline pipeline = Pipeline.create(options);
    // The events as a backfill: a bounded read, so the run ends soon after the labels are read.
    Outputs outputs =
        TidemarkPipeline.expand(
            pipeline.apply("ReadBackfill", BackfillSource.from(generated.toString())), options);
    try (PubsubTestClientFactory factory =
        PubsubTestClient.createFactoryForPull(CLOCK, SUBSCRIPTION, 60, messages)) {
      PCollection<RawRecord> fromPubsub =
          pipeline.apply(
              "ReadLabelsPubsub",
              Sources.pubsubLabelsSource(options).withClientFactory(factory).withClock(CLOCK));
      PCollection<RawRecord> fromFiles =
          pipeline.apply(
              "ReadLabels",
              BackfillSource.from(labels.toString())
                  .withMaxEventBytes(ParseLabels.MAX_LABEL_BYTES));
      writeJudged("Pubsub", fromPubsub, outputs, options, root.resolve("pubsub"));
      writeJudged("Files", fromFiles, outputs, options, root.resolve("files"));
      pipeline.run().waitUntilFinish();
    }

    List<String> fromPubsub = lines(root.resolve("pubsub/evaluations"));
    List<String> fromFiles = lines(root.resolve("files/evaluations"));
    assertThat(fromPubsub.size(), greaterThan(0));
    long judged = 0;
    for (JsonNode summary : OutputFiles.records(root.resolve("pubsub/evaluations"))) {
      judged += summary.get("labels").asLong();
    }
    assertThat("labels from Pub/Sub were judged", judged, greaterThan(0L));
    assertThat(fromPubsub, is(fromFiles));
    assertThat(lines(root.resolve("pubsub/unmatched")), is(lines(root.resolve("files/unmatched"))));
  }

  /** Judges {@code raw} labels by the run's decisions; writes evaluations and unmatched labels. */
  private static void writeJudged(
      String name,
      PCollection<RawRecord> raw,
      Outputs outputs,
      TidemarkOptions options,
      Path directory) {
    EvaluateDecisions.Result judged =
        raw.apply(
            "Evaluate" + name + "Labels",
            WatchDecisions.evaluation(outputs, options, WatchDecisions.driftReferences(options)));
    PCollection<String> evaluations =
        judged.summaries.apply(
            name + "EvaluationsToJson",
            MapElements.into(TypeDescriptors.strings()).via(EvaluationSummary::toJsonLine));
    PCollection<String> unmatched =
        judged.unmatched.apply(
            name + "UnmatchedToJson",
            MapElements.into(TypeDescriptors.strings()).via(Label::toJsonLine));
    raw.getPipeline()
        .apply(
            "Write" + name + "Judged",
            NdjsonFiles.write(
                Map.of("evaluations", evaluations, "unmatched", unmatched), directory.toString()));
  }

  /** The records of a file output, canonical and sorted; none when it wrote no file. */
  private static List<String> lines(Path directory) throws IOException {
    List<String> sorted = new ArrayList<>();
    if (!Files.isDirectory(directory)) {
      return sorted;
    }
    for (JsonNode record : OutputFiles.records(directory)) {
      sorted.add(Json.canonical(record));
    }
    Collections.sort(sorted);
    return sorted;
  }
}
