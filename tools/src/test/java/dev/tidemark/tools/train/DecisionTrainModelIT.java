package dev.tidemark.tools.train;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.model.ModelMetadata;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.testkit.generate.LabelStream;
import dev.tidemark.testkit.generate.ReplayClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import ml.dmlc.xgboost4j.java.Booster;
import ml.dmlc.xgboost4j.java.XGBoost;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * The loop from a run to a new model: a generated stream and its labels (their own stream), a run
 * of the pipeline that decides on the stream, and a model trained from those decisions and labels,
 * written as the next version beside the first with sidecars that name the data.
 */
public class DecisionTrainModelIT {
  @ClassRule public static final TemporaryFolder TMP = new TemporaryFolder();

  @Test
  public void aRunsDecisionsAndTheLaterLabelsTrainTheNextVersion() throws Exception {
    Path root = TMP.getRoot().toPath();
    Path generated = root.resolve("generated.ndjson");
    EventGenerator generator =
        new EventGenerator(
            GeneratorConfig.builder()
                .seed(17)
                .numEvents(900)
                .numAccounts(60)
                .eventsPerSecond(0.5)
                .cardTestingBurstsPerThousand(12)
                .takeoverBurstsPerThousand(8)
                .build());
    generator.writeTo(generated);
    Path replay = root.resolve("replay.ndjson");
    ReplayClock.coarsen(generated, replay, 10);
    Path labels = root.resolve("labels.ndjson");
    LabelStream.write(generator.subjects(), LabelStream.Config.defaults(17), labels);

    Path output = root.resolve("run");
    TidemarkOptions options =
        PipelineOptionsFactory.fromArgs(
                "--runner=DirectRunner",
                "--enforceImmutability=false", // a graph walk per bundle
                "--targetParallelism=1",
                "--source=replay",
                "--input=" + replay,
                "--output=" + output,
                "--earlyFiringDelay=none")
            .withValidation()
            .as(TidemarkOptions.class);
    Summary summary = Launch.run(options);
    assertThat(summary.toJson(), summary.identityHolds(), is(true));

    PipelineSpec spec = SpecLoader.loadBundled("payments");
    TrainConfig config = SpecTrainModel.configFor(spec);
    Path models = root.resolve("models");
    Files.createDirectories(models);
    Files.writeString(models.resolve(config.xgboostName() + "-v1.ubj"), "the version in force");

    DecisionTrainModel.Report report =
        DecisionTrainModel.train(
            spec, output.resolve("decisions"), labels, Set.of("fraud"), models, config);
    System.out.println(report.summary());

    assertThat(report.version(), is("2"));
    assertThat(
        report.xgboostModel().getFileName().toString(), is(config.xgboostName() + "-v2.ubj"));
    DecisionExamples.Result data = report.data();
    assertThat(
        data.examples().size(), is(report.trainRows() + report.evalRows() + report.purged()));
    assertThat(data.onTimeEditions(), greaterThan(0L));
    assertThat("the unknown subjects", data.unmatchedLabels(), greaterThan(0L));
    assertThat(data.repeatedLabels(), greaterThan(0L));
    for (Path model : new Path[] {report.xgboostModel(), report.onnxModel()}) {
      ModelMetadata sidecar =
          ModelMetadata.parse(
              Files.readAllBytes(ModelMetadata.sidecarOf(model)), model.getFileName().toString());
      assertThat(sidecar.version(), is("2"));
      assertThat(sidecar.featureNames(), is(spec.featureNames()));
      JsonNode trainingData = sidecar.trainingData();
      assertThat(trainingData.get("from").asText(), is("decisions and labels"));
      assertThat(trainingData.get("examples").asLong(), is((long) data.examples().size()));
      assertThat(trainingData.get("labelRecords").asLong(), is(data.labelLines()));
      assertThat(trainingData.get("labelsSha256").asText().length(), is(64));
      assertThat(trainingData.get("decisionsSha256").asText().length(), is(64));
      // The drift tests' reference: the model's scores on the evaluation examples.
      assertThat(sidecar.scoreReference().rows(), is((long) report.evalRows()));
    }
    // The booster loads and scores the examples: the positives above the negatives on average.
    Booster booster = XGBoost.loadModel(Files.readAllBytes(report.xgboostModel()));
    float[][] x = TrainModel.features(data.rows());
    float[][] scores = booster.predict(TrainModel.matrix(x));
    booster.dispose();
    double positive = 0;
    double negative = 0;
    int positives = 0;
    for (int i = 0; i < x.length; i++) {
      if (data.examples().get(i).row().positive()) {
        positive += scores[i][0];
        positives++;
      } else {
        negative += scores[i][0];
      }
    }
    assertThat(positives, greaterThan(0));
    assertThat(positive / positives, greaterThan(negative / (x.length - positives)));
  }
}
