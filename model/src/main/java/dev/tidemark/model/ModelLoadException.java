package dev.tidemark.model;

/**
 * A model that cannot be used: missing or corrupt file, missing or bad sidecar, wrong engine, or a
 * feature order other than the one Tidemark builds. Thrown at pipeline construction (for models on
 * local paths and the classpath) and at worker start-up ({@code @Setup}), never per element, so a
 * bad model stops the pipeline before it scores anything.
 */
public class ModelLoadException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public ModelLoadException(String message) {
    super(message);
  }

  public ModelLoadException(String message, Throwable cause) {
    super(message, cause);
  }
}
