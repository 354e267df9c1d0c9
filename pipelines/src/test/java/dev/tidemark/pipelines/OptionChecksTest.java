package dev.tidemark.pipelines;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import dev.tidemark.model.ScoreFeatures;
import dev.tidemark.pipelines.io.Sources;
import dev.tidemark.pipelines.launch.OptionChecks;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.joda.time.Duration;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The checks of --fileRollInterval, --maxFutureSkew, --gateShards, --outputFormat,
 * --modelWatchInterval, --shadowModelUri, --kafkaLabelsTopic and --pubsubLabelsSubscription name
 * the option and how to fix it; --gateShards defaults to the runner's parallelism.
 */
@RunWith(JUnit4.class)
public class OptionChecksTest {
  private static TidemarkOptions options(String... args) {
    return PipelineOptionsFactory.fromArgs(args).as(TidemarkOptions.class);
  }

  /** Each set of arguments reads labels, and reading them is refused saying {@code why}. */
  private static void assertLabelsRefused(String[][] refused, String[] why) {
    for (int i = 0; i < refused.length; i++) {
      TidemarkOptions options = options(refused[i]);
      assertThat(Sources.readsLabels(options), is(true));
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> Sources.readLabels(org.apache.beam.sdk.Pipeline.create(options), options));
      assertThat(e.getMessage(), containsString(why[i]));
    }
  }

  @Test
  public void aLabelsTopicIsReadBesideAKafkaSourceWithoutEnd() {
    String[][] refused = {
      {"--source=kafka", "--kafkaLabelsTopic=labels", "--labelsInput=labels.ndjson"},
      {"--source=replay", "--kafkaLabelsTopic=labels"},
      {"--source=kafka", "--kafkaLabelsTopic=labels", "--kafkaMaxRecords=10"},
    };
    String[] why = {"give one labels stream", "--source=replay give the labels", "never finish"};
    assertLabelsRefused(refused, why);
    assertThat(Sources.readsLabels(options("--source=kafka")), is(false));
  }

  @Test
  public void aLabelsSubscriptionIsReadBesideAPubsubSourceAlone() {
    String sub = "--pubsubLabelsSubscription=projects/tidemark-test/subscriptions/labels";
    String[][] refused = {
      {"--source=pubsub", sub, "--labelsInput=labels.ndjson"},
      {"--source=kafka", sub, "--kafkaLabelsTopic=labels"},
      {"--source=pubsub", sub, "--kafkaLabelsTopic=labels", "--labelsInput=labels.ndjson"},
      {"--source=kafka", sub},
      {"--source=replay", sub},
      {"--source=pubsub", "--pubsubLabelsSubscription= "},
    };
    String[] why = {
      "--labelsInput and --pubsubLabelsSubscription both name labels: give one labels stream",
      "--kafkaLabelsTopic and --pubsubLabelsSubscription both name labels",
      "--labelsInput and --kafkaLabelsTopic and --pubsubLabelsSubscription all name labels",
      "with --source=kafka give the labels as files, --labelsInput=GLOB, or as a topic,"
          + " --kafkaLabelsTopic=TOPIC",
      "with --source=replay give the labels as files, --labelsInput=GLOB",
      "--pubsubLabelsSubscription is empty",
    };
    assertLabelsRefused(refused, why);
    TidemarkOptions accepted = options("--source=pubsub", sub, "--pubsubTimestampAttribute=ts");
    assertThat(Sources.readsLabels(accepted), is(true));
    assertThat(
        Sources.readLabels(org.apache.beam.sdk.Pipeline.create(accepted), accepted).getName(),
        containsString("ReadLabelsPubsub"));
    assertThat(Sources.readsLabels(options("--source=pubsub")), is(false));
  }

  @Test
  public void labelsInAReplayAreSplitOffAReplayAlone() {
    String[][] refused = {
      {"--source=kafka", "--labelsInReplay=true"},
      {"--source=replay", "--labelsInReplay=true", "--labelsInput=labels.ndjson"},
    };
    String[] why = {
      "--labelsInReplay splits labels off a replay (--source=replay); with --source=kafka",
      "--labelsInput and --labelsInReplay both name labels: give one labels stream",
    };
    for (int i = 0; i < refused.length; i++) {
      TidemarkOptions options = options(refused[i]);
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> Sources.labelsInReplay(options));
      assertThat(e.getMessage(), containsString(why[i]));
    }
    TidemarkOptions accepted = options("--source=replay", "--labelsInReplay=true");
    assertThat(Sources.readsLabels(accepted), is(true));
    assertThat(Sources.labelsInReplay(accepted), is(true));
    assertThat(Sources.labelsInReplay(options("--source=replay")), is(false));
  }

  @Test
  public void modelWatchIntervalMustBePositive() {
    for (String bad : new String[] {"PT0S", "PT-1M"}) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> TidemarkPipeline.scorer(options("--modelWatchInterval=" + bad)));
      assertThat(e.getMessage(), containsString("--modelWatchInterval=" + bad + " must be"));
    }
    IllegalArgumentException notADuration =
        assertThrows(
            IllegalArgumentException.class,
            () -> TidemarkPipeline.scorer(options("--modelWatchInterval=1m")));
    assertThat(notADuration.getMessage(), containsString("--modelWatchInterval=1m"));
  }

  @Test
  public void theShadowModelIsOneFileAndAFiniteSourceReadsTheModelsOnce() {
    ScoreFeatures scorer =
        TidemarkPipeline.scorer(
            options(
                "--source=kafka",
                "--shadowModelUri=classpath:/models/tidemark-fraud-logreg-v1.onnx",
                "--modelWatchInterval=PT5S"));
    assertThat(scorer.shadowModelUri(), is("classpath:/models/tidemark-fraud-logreg-v1.onnx"));
    assertThat(scorer.modelWatchInterval(), is(Duration.standardSeconds(5)));
    assertThat(scorer.watchModels(), is(true));
    assertThat(TidemarkPipeline.scorer(options("--source=replay")).watchModels(), is(false));
    assertThat(TidemarkPipeline.scorer(options("--source=backfill")).watchModels(), is(false));
    assertThat(TidemarkPipeline.scorer(options()).shadowModelUri(), is((String) null));
    IllegalArgumentException pattern =
        assertThrows(
            IllegalArgumentException.class,
            () -> TidemarkPipeline.scorer(options("--shadowModelUri=gs://bucket/models/")));
    assertThat(pattern.getMessage(), containsString("not a directory or pattern"));
  }

  @Test
  public void fileRollIntervalMustBePositive() {
    for (String bad : new String[] {"PT0S", "PT-1M"}) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> OptionChecks.check(options("--fileRollInterval=" + bad)));
      assertThat(e.getMessage(), containsString("--fileRollInterval=" + bad + " must be positive"));
    }
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> OptionChecks.check(options("--fileRollInterval=soon")));
    assertThat(e.getMessage(), containsString("--fileRollInterval=soon is not an ISO-8601"));
    OptionChecks.check(options("--fileRollInterval=PT5S"));
  }

  @Test
  public void gateShardsDefaultToTheJobsParallelism() {
    assertThat(
        TidemarkPipeline.gateShardsOf(
            options("--runner=FlinkRunner", "--parallelism=3", "--streaming=true")),
        is(3));
    assertThat(
        TidemarkPipeline.gateShardsOf(options("--runner=FlinkRunner", "--streaming=true")), is(1));
    assertThat(
        TidemarkPipeline.gateShardsOf(options("--runner=DirectRunner", "--targetParallelism=4")),
        is(4));
    assertThat(
        TidemarkPipeline.gateShardsOf(
            options("--runner=FlinkRunner", "--parallelism=3", "--gateShards=2")),
        is(2));
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> TidemarkPipeline.gateShardsOf(options("--gateShards=0")));
    assertThat(e.getMessage(), containsString("--gateShards=0 must be at least 1"));
  }

  @Test
  public void maxFutureSkewMustNotBeNegative() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> OptionChecks.check(options("--maxFutureSkew=PT-1M")));
    assertThat(e.getMessage(), containsString("--maxFutureSkew=PT-1M must not be negative"));
    OptionChecks.check(options("--maxFutureSkew=PT0S"));
  }

  @Test
  public void cloudEventsOutputNeedsTheKafkaSink() {
    for (String sink : new String[] {"files", "bigquery"}) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () ->
                  OptionChecks.check(
                      options("--sink=" + sink, "--outputFormat=cloudevents-binary")));
      assertThat(
          e.getMessage(), containsString("--outputFormat=cloudevents-binary needs --sink=kafka"));
    }
    OptionChecks.check(options("--sink=files", "--outputFormat=json"));
    OptionChecks.check(options("--sink=kafka", "--outputFormat=cloudevents-structured"));
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> OptionChecks.check(options("--sink=kafka", "--outputFormat=avro")));
    assertThat(e.getMessage(), containsString("--outputFormat=avro: use one of json,"));
  }
}
