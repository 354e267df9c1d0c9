package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.closeTo;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.pipelines.io.Sources;
import dev.tidemark.pipelines.launch.ExitCodes;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.testkit.OutputFiles;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.RawRecord;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.coders.VarLongCoder;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.Sum;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The accounting check itself can fail: a run whose counts do not add up is reported as broken and
 * exits 1, and Beam's own late-data drops reach {@code droppedByRunner}.
 */
@RunWith(JUnit4.class)
public class SummaryIT {
  @ClassRule public static final TemporaryFolder FOLDER = new TemporaryFolder();

  /** Counts every record it sees as read a second time: a deliberately broken count. */
  static final class CountReadTwiceFn extends DoFn<RawRecord, Void> {
    @ProcessElement
    public void processElement() {
      TidemarkMetrics.counter(TidemarkMetrics.READ).inc();
    }
  }

  @Test
  public void aBrokenCountIsReportedAndTheRunExitsOne() throws Exception {
    Path root = FOLDER.getRoot().toPath();
    Path replay = root.resolve("events.ndjson");
    new EventGenerator(GeneratorConfig.builder().seed(3).numAccounts(4).numEvents(40).build())
        .writeTo(replay);
    TidemarkOptions options =
        TestReplays.options(replay, root.resolve("out"), "--earlyFiringDelay=none");
    Pipeline pipeline = Launch.build(options);
    Sources.read(pipeline, options).apply("CountReadTwice", ParDo.of(new CountReadTwiceFn()));

    Summary summary = Summary.from(pipeline.run(), Duration.ZERO);

    assertThat(summary.read, is(2 * (summary.valid + summary.deadLetters)));
    assertThat(
        summary.identityViolations(),
        hasItem(
            String.format(
                "read %d != valid %d + deadLetters %d",
                summary.read, summary.valid, summary.deadLetters)));
    assertThat(ExitCodes.of(summary), is(ExitCodes.IDENTITY_BROKEN));
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    summary.print(new PrintStream(printed, true, StandardCharsets.UTF_8), root.resolve("out"));
    assertThat(printed.toString(StandardCharsets.UTF_8), containsString("BROKEN: read"));

    // The score distribution and review share per model version agree with the decisions.
    long review = 0;
    double min = 1;
    double max = 0;
    Set<String> versions = new TreeSet<>();
    List<JsonNode> decisions = OutputFiles.records(root.resolve("out").resolve("decisions"));
    for (JsonNode decision : decisions) {
      versions.add(
          decision.get("model").get("name").asText()
              + ":"
              + decision.get("model").get("version").asText());
      review += decision.get("decision").asText().equals("review") ? 1 : 0;
      min = Math.min(min, decision.get("score").asDouble());
      max = Math.max(max, decision.get("score").asDouble());
    }
    JsonNode models = Json.MAPPER.readTree(summary.toJson()).get("models");
    assertThat(models.toString(), fieldNames(models), is(versions));
    JsonNode model = models.get(versions.iterator().next());
    assertThat(model.get("decisions").asLong(), is((long) decisions.size()));
    assertThat(model.get("review").asLong(), is(review));
    assertThat(
        model.get("reviewShare").asDouble(), closeTo((double) review / decisions.size(), 1e-9));
    assertThat(model.get("score").get("min").asDouble(), closeTo(min, 1e-6));
    assertThat(model.get("score").get("max").asDouble(), closeTo(max, 1e-6));
    long inDeciles = 0;
    for (JsonNode count : model.get("scoreDeciles")) {
      inDeciles += count.asLong();
    }
    assertThat(inDeciles, is((long) decisions.size()));
  }

  private static Set<String> fieldNames(JsonNode node) {
    Set<String> names = new TreeSet<>();
    node.fieldNames().forEachRemaining(names::add);
    return names;
  }

  @Test
  public void droppedByRunnerReadsBeamsLateDataDropCounters() {
    // A windowed sum without Tidemark's too-late gate: Beam itself drops the late element.
    Instant start = Instant.parse("2026-01-01T00:00:00Z");
    TestStream<KV<String, Long>> events =
        TestStream.create(KvCoder.of(StringUtf8Coder.of(), VarLongCoder.of()))
            .addElements(TimestampedValue.of(KV.of("account", 1L), start.plus(1_000)))
            .advanceWatermarkTo(start.plus(Duration.standardMinutes(10)))
            .addElements(TimestampedValue.of(KV.of("account", 2L), start.plus(2_000)))
            .advanceWatermarkToInfinity();
    Pipeline pipeline = Pipeline.create(PipelineOptionsFactory.create());
    pipeline
        .apply(events)
        .apply(
            Window.<KV<String, Long>>into(FixedWindows.of(Duration.standardMinutes(1)))
                .withAllowedLateness(Duration.ZERO)
                .discardingFiredPanes())
        .apply(Sum.longsPerKey());
    PipelineResult result = pipeline.run();
    result.waitUntilFinish();

    Summary summary = Summary.from(result, Duration.ZERO);

    assertThat(summary.droppedByRunner, is(1L));
    assertThat(
        summary.identityViolations(), hasItem("the runner dropped 1 late event-windows itself"));
  }
}
