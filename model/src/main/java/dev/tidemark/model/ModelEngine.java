package dev.tidemark.model;

import java.util.Locale;

/** The DJL engines {@link ScoreFeatures} can score with. */
public enum ModelEngine {
  /** XGBoost boosters (JSON, UBJSON or legacy binary model files) through DJL's XGBoost engine. */
  XGBOOST("XGBoost"),
  /** ONNX models through DJL's ONNX Runtime engine. */
  ONNX_RUNTIME("OnnxRuntime");

  private final String djlName;

  ModelEngine(String djlName) {
    this.djlName = djlName;
  }

  /** The DJL engine name, also written in the sidecar and in each decision's {@code model}. */
  public String djlName() {
    return djlName;
  }

  /**
   * Parses an engine name: the DJL name ({@code XGBoost}, {@code OnnxRuntime}), the enum name, or
   * {@code onnx}, case-insensitively.
   */
  public static ModelEngine fromName(String name) {
    if (name != null) {
      String n = name.trim().toLowerCase(Locale.ROOT);
      for (ModelEngine engine : values()) {
        if (n.equals(engine.djlName.toLowerCase(Locale.ROOT))
            || n.equals(engine.name().toLowerCase(Locale.ROOT))) {
          return engine;
        }
      }
      if (n.equals("onnx") || n.equals("ort")) {
        return ONNX_RUNTIME;
      }
    }
    throw new IllegalArgumentException(
        "unknown model engine '" + name + "'; use XGBoost or OnnxRuntime");
  }

  @Override
  public String toString() {
    return djlName;
  }
}
