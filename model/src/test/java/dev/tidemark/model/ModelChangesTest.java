package dev.tidemark.model;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.endsWith;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.Assert.assertThrows;

import dev.tidemark.transforms.values.PaymentFeatures;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import org.apache.beam.sdk.values.KV;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * A refused model is tried again at the next listing: a model whose bytes could not be read right
 * once (a transient error) is not refused for good, on the watching worker or on a scoring one. The
 * file keeps its size and last-modified time throughout, as a file a read failed on does.
 */
@RunWith(JUnit4.class)
public class ModelChangesTest {
  @Rule public final TemporaryFolder tmp = new TemporaryFolder();

  /** An XGBoost model with its sidecar in {@code dir}, and its good bytes. */
  private static byte[] model(Path dir, Path file) throws Exception {
    Path raw = TestModels.xgboost(Files.createTempDirectory(dir, "raw"));
    byte[] bytes = Files.readAllBytes(raw);
    Files.write(file, bytes);
    ModelMetadata.of("retry", "1", ModelEngine.XGBOOST, PaymentFeatures.SCHEMA.names())
        .withModelSha256(LoadedModel.sha256(file))
        .writeTo(ModelMetadata.sidecarOf(file));
    return bytes;
  }

  /** Writes {@code bytes} to {@code file} and gives it the last-modified time {@code time}. */
  private static void write(Path file, byte[] bytes, FileTime time) throws Exception {
    Files.write(file, bytes);
    Files.setLastModifiedTime(file, time);
  }

  private static byte[] damaged(byte[] good) {
    byte[] bad = good.clone();
    bad[bad.length / 2] ^= 0x5A;
    return bad;
  }

  @Test
  public void theWatchChecksARefusedFileAgainAtTheNextListing() throws Exception {
    Path watched = tmp.newFolder("watched").toPath();
    Path file = watched.resolve("model.ubj");
    byte[] good = model(tmp.getRoot().toPath(), file);
    FileTime time = Files.getLastModifiedTime(file);
    write(file, damaged(good), time);

    ScoringConfig config = ScoreFeatures.of(watched + "/").config();
    ModelDirectory directory = new ModelDirectory(config);
    assertThat(directory.newest(), is(nullValue()));
    assertThat(directory.refusals().size(), is(1));
    // Refused again at the next listing, and reported once.
    assertThat(directory.newest(), is(nullValue()));
    assertThat(directory.refusals().size(), is(0));

    write(file, good, time);
    ModelDirectory.Found found = directory.newest();
    assertThat(found.uri(), endsWith("model.ubj"));
  }

  /** An ONNX logistic regression with bias {@code bias} at {@code file}, sidecar version. */
  private static void onnx(Path file, float bias, String version) throws Exception {
    Files.write(
        file, new OnnxLogisticRegression(TestModels.ONNX_WEIGHTS, bias).toOnnx("changes", "test"));
    ModelMetadata.of("changes", version, ModelEngine.ONNX_RUNTIME, PaymentFeatures.SCHEMA.names())
        .withInputOutput(OnnxLogisticRegression.INPUT, OnnxLogisticRegression.OUTPUT)
        .withModelSha256(LoadedModel.sha256(file))
        .writeTo(ModelMetadata.sidecarOf(file));
  }

  @Test
  public void aModelOverwrittenInPlaceIsANewModelOnEveryWorker() throws Exception {
    Path watched = tmp.newFolder("overwritten").toPath();
    Path file = watched.resolve("model.onnx");
    onnx(file, -4.2f, "1");
    Files.setLastModifiedTime(file, FileTime.fromMillis(1_000_000_000_000L));
    ScoringConfig config = ScoreFeatures.of(watched + "/").config();
    ModelDirectory directory = new ModelDirectory(config);
    ModelIdentity first = directory.newest().identity();
    assertThat(first.sha256(), is(LoadedModel.sha256(file)));

    ModelSwitch modelSwitch = new ModelSwitch(config, null);
    ModelSession session = modelSwitch.switchTo(null, KV.of(1L, first.format()));
    try {
      assertThat(session.modelRef().version(), is("1"));
      // The same name, other bytes (and a later last-modified time).
      onnx(file, -1.0f, "2");
      Files.setLastModifiedTime(file, FileTime.fromMillis(1_000_000_060_000L));
      ModelIdentity second = directory.newest().identity();
      assertThat(second.uri(), is(first.uri()));
      assertThat(second.sha256().equals(first.sha256()), is(false));
      KV<Long, String> listed = KV.of(2L, second.format());
      assertThat(modelSwitch.shouldTry(session, listed), is(true));
      session = modelSwitch.switchTo(session, listed);
      assertThat(session.modelRef().version(), is("2"));
      // A worker that starts now and reads the older listing does not take the new bytes for
      // the old model: it fails rather than score under the wrong identity.
      ModelLoadException refused =
          assertThrows(
              ModelLoadException.class,
              () -> new ModelSwitch(config, null).switchTo(null, KV.of(1L, first.format())));
      assertThat(refused.getMessage(), containsString("overwritten in place"));
    } finally {
      session.close();
    }
  }

  @Test
  public void aScoringWorkerTriesARefusedModelAgainWhenALaterListingNamesIt() throws Exception {
    Path dir = tmp.newFolder("models").toPath();
    Path current = dir.resolve("current.ubj");
    model(dir, current);
    Path next = dir.resolve("next.ubj");
    byte[] good = model(dir, next);
    FileTime time = Files.getLastModifiedTime(next);
    write(next, damaged(good), time);

    ScoringConfig config = ScoreFeatures.of(current.toString()).config();
    ModelSwitch modelSwitch = new ModelSwitch(config, null);
    ModelSession session = ModelSession.open(config, null);
    try {
      KV<Long, String> first = KV.of(1L, next.toString());
      assertThat(modelSwitch.shouldTry(session, first), is(true));
      session = modelSwitch.switchTo(session, first);
      assertThat(
          "refused: the current model keeps scoring", session.modelUri(), endsWith("current.ubj"));
      assertThat(modelSwitch.shouldTry(session, first), is(false));

      write(next, good, time);
      KV<Long, String> second = KV.of(2L, next.toString());
      assertThat(modelSwitch.shouldTry(session, second), is(true));
      session = modelSwitch.switchTo(session, second);
      assertThat(session.modelUri(), endsWith("next.ubj"));
    } finally {
      session.close();
    }
  }
}
