package dev.tidemark.model;

/**
 * The models Tidemark ships, trained by {@code tidemark train} (the tools module) on a synthetic
 * stream (see {@code docs/model.md}): an XGBoost booster (the default) and a logistic regression
 * exported to ONNX. Both live in the {@code tidemark-model} jar under {@code /models/}, so the
 * shaded jar finds them with a {@code classpath:} URI; in a source checkout they are also at {@link
 * #REPO_DIRECTORY} (usable as plain paths).
 */
public final class DefaultModel {
  /** Where the shipped models live in the repository. */
  public static final String REPO_DIRECTORY = "model/src/main/resources/models";

  public static final String XGBOOST_NAME = "tidemark-fraud-xgb";
  public static final String XGBOOST_VERSION = "1";
  public static final String XGBOOST_FILE = "tidemark-fraud-xgb-v1.ubj";

  /** The default model: {@value}. */
  public static final String XGBOOST_URI = "classpath:/models/" + XGBOOST_FILE;

  public static final String ONNX_NAME = "tidemark-fraud-logreg";
  public static final String ONNX_VERSION = "1";
  public static final String ONNX_FILE = "tidemark-fraud-logreg-v1.onnx";

  /** The ONNX alternative: {@value}. */
  public static final String ONNX_URI = "classpath:/models/" + ONNX_FILE;

  /** The training report of the shipped models (markdown), on the classpath. */
  public static final String REPORT_RESOURCE = "/models/tidemark-fraud-v1.md";

  private DefaultModel() {}
}
