package dev.tidemark.model;

import ai.djl.Device;
import ai.djl.MalformedModelException;
import ai.djl.Model;
import ai.djl.inference.Predictor;
import ai.djl.translate.TranslateException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * One model loaded into a DJL engine, with its sidecar. Thread-safe: DJL models may be shared by
 * threads; each thread makes its own {@link Predictor} with {@link #newPredictor()}.
 */
final class LoadedModel implements AutoCloseable {
  /**
   * ONNX Runtime session threads. Beam already runs one DoFn thread per core, so one intra-op
   * thread per call keeps cores from being oversubscribed (XGBoost likewise runs with {@code
   * OMP_NUM_THREADS=1}).
   */
  static final Map<String, String> ONNX_RUNTIME_OPTIONS =
      Map.of("interOpNumThreads", "1", "intraOpNumThreads", "1");

  private final String uri;
  private final ModelMetadata metadata;
  private final Model model;
  private final ModelLocation.LocalCopy files;
  private final long byteSize;
  private final String contentSha256;
  private final long loadMillis;

  private LoadedModel(
      String uri,
      ModelMetadata metadata,
      Model model,
      ModelLocation.LocalCopy files,
      long byteSize,
      String contentSha256,
      long loadMillis) {
    this.contentSha256 = contentSha256;
    this.uri = uri;
    this.metadata = metadata;
    this.model = model;
    this.files = files;
    this.byteSize = byteSize;
    this.loadMillis = loadMillis;
  }

  /**
   * Fetches, checks and loads a model, then scores one row of zeros to prove it accepts Tidemark's
   * input.
   *
   * @throws ModelLoadException with a clear message for every way this can fail
   */
  static LoadedModel load(ScoringConfig config) {
    long started = System.nanoTime();
    ModelLocation.LocalCopy files = ModelLocation.fetch(config.modelUri);
    Model model = null;
    try {
      ModelMetadata metadata;
      try {
        metadata =
            ModelMetadata.parse(Files.readAllBytes(files.sidecarFile), config.modelUri + ".json");
      } catch (IOException e) {
        throw new ModelLoadException(
            "cannot read model sidecar " + files.sidecarFile + ": " + e, e);
      }
      config.check(metadata, config.modelUri + ".json");
      ModelEngine engine = metadata.engine();
      long byteSize = Files.size(files.modelFile);
      String actual = sha256(files.modelFile);
      if (config.modelSha256 != null && !actual.equalsIgnoreCase(config.modelSha256)) {
        throw new ModelLoadException(
            "model file "
                + config.modelUri
                + " is not the content the model watch chose (SHA-256 "
                + actual
                + ", the listing saw "
                + config.modelSha256
                + "): it was overwritten in place since; it is taken once a listing has checked"
                + " the new content");
      }
      if (metadata.modelSha256() != null) {
        if (!actual.equalsIgnoreCase(metadata.modelSha256())) {
          throw new ModelLoadException(
              "model file "
                  + config.modelUri
                  + " does not match its sidecar: SHA-256 "
                  + actual
                  + ", sidecar says "
                  + metadata.modelSha256()
                  + "; the file is corrupt or was replaced without its sidecar");
        }
      }
      try {
        model = Model.newInstance(metadata.name(), Device.cpu(), engine.djlName());
      } catch (RuntimeException | LinkageError e) {
        throw new ModelLoadException(
            "the DJL engine "
                + engine.djlName()
                + " cannot start: "
                + rootMessage(e)
                + "; the job's classpath must carry ai.djl.ml.xgboost:xgboost and"
                + " ai.djl.onnxruntime:onnxruntime-engine with their natives, and for ONNX Runtime"
                + " nothing else may create the JVM's OrtEnvironment before DJL does",
            e);
      }
      try {
        model.load(
            files.modelFile,
            null,
            engine == ModelEngine.ONNX_RUNTIME ? ONNX_RUNTIME_OPTIONS : null);
      } catch (IOException | MalformedModelException | RuntimeException e) {
        throw new ModelLoadException(
            "cannot load "
                + config.modelUri
                + " as a "
                + engine.djlName()
                + " model: "
                + rootMessage(e)
                + "; is the file corrupt, or a model for another engine?",
            e);
      }
      LoadedModel loaded =
          new LoadedModel(
              config.modelUri,
              metadata,
              model,
              files,
              byteSize,
              actual,
              (System.nanoTime() - started) / 1_000_000);
      loaded.smokeTest(metadata.featureNames().size());
      return loaded;
    } catch (IOException e) {
      closeQuietly(model);
      files.close();
      throw new ModelLoadException("cannot read model file " + files.modelFile + ": " + e, e);
    } catch (RuntimeException e) {
      closeQuietly(model);
      files.close();
      throw e;
    }
  }

  /** The SHA-256 (hex) of the model file's bytes that were loaded. */
  String contentSha256() {
    return contentSha256;
  }

  private void smokeTest(int columns) {
    try (Predictor<FeatureBatch, float[]> predictor = newPredictor()) {
      float[] scores = predictor.predict(new FeatureBatch(new float[columns], 1, columns));
      if (scores.length != 1) {
        throw new ModelLoadException(
            "model "
                + uri
                + " returned "
                + scores.length
                + " values for one row; it must return one score per row");
      }
    } catch (TranslateException | RuntimeException e) {
      if (e instanceof ModelLoadException) {
        throw (ModelLoadException) e;
      }
      throw new ModelLoadException(
          "model "
              + uri
              + " loaded but cannot score a row of "
              + columns
              + " float32 features (input [N, "
              + columns
              + "]): "
              + rootMessage(e),
          e);
    }
  }

  /** A predictor for one thread; close it when the thread is done. */
  Predictor<FeatureBatch, float[]> newPredictor() {
    return model.newPredictor(
        new FeatureBatchTranslator(
            metadata.engine() == ModelEngine.ONNX_RUNTIME ? metadata.inputName() : null,
            metadata.outputName()));
  }

  ModelMetadata metadata() {
    return metadata;
  }

  long byteSize() {
    return byteSize;
  }

  long loadMillis() {
    return loadMillis;
  }

  @Override
  public void close() {
    closeQuietly(model);
    files.close();
  }

  private static void closeQuietly(@Nullable Model model) {
    if (model != null) {
      try {
        model.close();
      } catch (RuntimeException e) {
        // Closing is best effort; the model is unusable either way.
      }
    }
  }

  static String sha256(Path file) throws IOException {
    try (InputStream in =
        new DigestInputStream(Files.newInputStream(file), MessageDigest.getInstance("SHA-256"))) {
      in.transferTo(java.io.OutputStream.nullOutputStream());
      return HexFormat.of().formatHex(((DigestInputStream) in).getMessageDigest().digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by every Java runtime", e);
    }
  }

  static String rootMessage(Throwable e) {
    Throwable root = e;
    StringBuilder message = new StringBuilder(String.valueOf(e.getMessage()));
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
      if (root.getMessage() != null && !message.toString().contains(root.getMessage())) {
        message.append(": ").append(root.getMessage());
      }
    }
    return message.toString();
  }
}
