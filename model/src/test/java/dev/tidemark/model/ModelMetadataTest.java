package dev.tidemark.model;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.closeTo;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.Assert.assertThrows;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.transforms.values.DriftReference;
import dev.tidemark.transforms.values.ScoreReference;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.Test;

/** The sidecar's optional score reference and the drift reference read from it. */
public class ModelMetadataTest {
  private static final List<String> FEATURES = List.of("txnCount", "amountSum");

  private static ModelMetadata parse(String json) {
    return ModelMetadata.parse(json.getBytes(StandardCharsets.UTF_8), "test.json");
  }

  @Test
  public void scoreReferenceRoundTripsThroughTheSidecar() {
    ScoreReference reference = ScoreReference.of(new double[] {0.01, 0.02, 0.55, 0.97, 1.0});
    ModelMetadata metadata =
        ModelMetadata.of("m", "1", ModelEngine.XGBOOST, FEATURES).withScoreReference(reference);

    ModelMetadata parsed = parse(metadata.toJson());

    assertThat(parsed.scoreReference(), equalTo(reference));
    assertThat(reference.counts(), equalTo(List.of(2L, 0L, 0L, 0L, 0L, 1L, 0L, 0L, 0L, 2L)));
    assertThat(reference.mean(), closeTo(0.51, 1e-9));
    assertThat(parsed.toJson(), equalTo(metadata.toJson()));
  }

  @Test
  public void driftReferenceTakesTheErrorRateFromTheModelMetrics() {
    ObjectNode metrics = JsonNodeFactory.instance.objectNode();
    ObjectNode model = metrics.putObject("model");
    model.put("rows", 1000);
    model.put("falsePositives", 3);
    model.put("falseNegatives", 7);
    ModelMetadata metadata =
        ModelMetadata.of("m", "1", ModelEngine.XGBOOST, FEATURES).withMetrics(metrics);

    DriftReference drift = parse(metadata.toJson()).driftReference();

    assertThat(drift.errorRate(), closeTo(0.01, 1e-12));
    assertThat(drift.score(), nullValue());
  }

  @Test
  public void aSidecarWithoutEitherHasAnEmptyDriftReference() {
    DriftReference drift =
        ModelMetadata.of("m", "1", ModelEngine.XGBOOST, FEATURES).driftReference();

    assertThat(drift, equalTo(DriftReference.none()));
  }

  @Test
  public void aMalformedScoreReferenceIsRefusedWithItsReason() {
    String json =
        "{\"name\":\"m\",\"version\":\"1\",\"engine\":\"XGBoost\",\"featureNames\":[\"a\"],"
            + "\"scoreReference\":{\"rows\":3,\"mean\":0.1,\"counts\":[1,1]}}";

    ModelLoadException e = assertThrows(ModelLoadException.class, () -> parse(json));

    assertThat(e.getMessage(), containsString("10 bin counts"));
  }
}
