package dev.tidemark.model;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.closeTo;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.nullValue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.DriftReference;
import dev.tidemark.transforms.values.DriftReferences;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.beam.sdk.util.SerializableUtils;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The drift references of a watched model directory's versions, found in their sidecars while the
 * pipeline runs: a version copied in after the pipeline was built gets its score reference.
 */
@RunWith(JUnit4.class)
public class SidecarDriftLookupTest {
  @Rule public final TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void aWatchedDirectorysVersionsAreFoundInTheirSidecarsAfterTheBuild() throws Exception {
    Path dir = tmp.newFolder("models").toPath();
    copyBundled(dir.resolve("v1.ubj"), null);
    DriftReferences references =
        SerializableUtils.clone(ScoreFeatures.driftReferencesOf(List.of(dir.toString())));
    assertThat(references.known().isEmpty(), is(true));

    DriftReference first = references.of("tidemark-fraud-xgb:1");
    assertThat(first.score().mean(), closeTo(bundledMean(), 1e-12));

    // A later version, copied in while the pipeline runs, with a reference of its own.
    copyBundled(dir.resolve("v2.ubj"), "2");
    DriftReference second = references.of("tidemark-fraud-xgb:2");
    assertThat(second.score().mean(), closeTo(0.5, 1e-12));
    assertThat(references.of("tidemark-fraud-xgb:3").score(), is(nullValue()));
  }

  @Test
  public void aModelFileIsReadWhenThePipelineIsBuilt() {
    DriftReferences references = ScoreFeatures.driftReferencesOf(List.of("default"));
    assertThat(
        references.known().get("tidemark-fraud-xgb:1").score().mean(),
        closeTo(bundledMean(), 1e-12));
  }

  private static double bundledMean() {
    return ModelMetadata.parse(bundled(DefaultModel.XGBOOST_FILE + ".json"), "bundled")
        .scoreReference()
        .mean();
  }

  /**
   * The bundled XGBoost model and its sidecar at {@code model}; with {@code version}, the sidecar
   * names that version and a score reference whose mean is 0.5 (one row in the middle bin).
   */
  private static void copyBundled(Path model, String version) throws Exception {
    Files.write(model, bundled(DefaultModel.XGBOOST_FILE));
    byte[] sidecar = bundled(DefaultModel.XGBOOST_FILE + ".json");
    if (version != null) {
      ObjectNode json = (ObjectNode) Json.MAPPER.readTree(sidecar);
      json.put("version", version);
      ObjectNode reference = json.putObject("scoreReference");
      reference.put("rows", 1);
      reference.put("mean", 0.5);
      reference.put("binWidth", 0.1);
      reference.set("counts", Json.MAPPER.valueToTree(List.of(0, 0, 0, 0, 0, 1, 0, 0, 0, 0)));
      sidecar = Json.MAPPER.writeValueAsBytes(json);
    }
    Files.write(Path.of(model + ModelMetadata.SIDECAR_SUFFIX), sidecar);
  }

  private static byte[] bundled(String file) {
    try (InputStream in = SidecarDriftLookupTest.class.getResourceAsStream("/models/" + file)) {
      return in.readAllBytes();
    } catch (Exception e) {
      throw new IllegalStateException("cannot read the bundled " + file, e);
    }
  }
}
