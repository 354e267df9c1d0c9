package dev.tidemark.spec;

/**
 * A field of {@code data} that fails its spec: the dead-letter reason the spec gives it and a
 * message that names the field. Control flow of {@link FieldParser}; it has no stack trace.
 */
public final class FieldRejection extends Exception {
  private static final long serialVersionUID = 1L;

  private final String reason;

  FieldRejection(String reason, String message) {
    super(message, null, false, false);
    this.reason = reason;
  }

  /** The dead-letter reason code, e.g. {@code invalid_amount}. */
  public String reason() {
    return reason;
  }
}
