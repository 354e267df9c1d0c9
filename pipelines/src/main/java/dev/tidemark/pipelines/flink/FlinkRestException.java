package dev.tidemark.pipelines.flink;

import java.io.IOException;

/**
 * A Flink cluster did not do what was asked: it could not be reached, it does not know the job, or
 * the operation (a savepoint, a cancel) failed there. The message says which, and what to check. It
 * is checked, and not a runtime exception, so that the command line prints this message rather than
 * the cause's (a bare {@code ConnectException} has none).
 */
public final class FlinkRestException extends IOException {
  private static final long serialVersionUID = 1L;

  public FlinkRestException(String message) {
    super(message);
  }

  public FlinkRestException(String message, Throwable cause) {
    super(message, cause);
  }
}
