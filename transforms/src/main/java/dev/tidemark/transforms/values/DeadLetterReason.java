package dev.tidemark.transforms.values;

/**
 * Why a record was dead-lettered. {@link #code()} is the stable, machine-readable value written in
 * the {@code reason} field of every dead-letter record; dashboards and replays rely on it, so codes
 * are only ever added, never renamed.
 */
public enum DeadLetterReason {
  /** The record's bytes are not valid UTF-8. */
  INVALID_UTF8("invalid_utf8"),
  /** The record is larger than the configured maximum ({@code --maxEventBytes}). */
  OVERSIZED_RECORD("oversized_record"),
  /** The record is not parseable JSON. */
  INVALID_JSON("invalid_json"),
  /** The record is JSON but not a structured-mode CloudEvent (not an object, no specversion). */
  NOT_A_CLOUDEVENT("not_a_cloudevent"),
  /** The CloudEvent's specversion is not 1.0. */
  UNSUPPORTED_SPECVERSION("unsupported_specversion"),
  /** A required context attribute (id, source, type, time) is missing, empty or not a string. */
  MISSING_ATTRIBUTE("missing_attribute"),
  /**
   * The {@code id}, {@code source} or {@code type} attribute holds a control character (U+0000 to
   * U+001F, U+007F to U+009F) or an unpaired surrogate: an identity that logs, terminals and other
   * consumers would show or encode differently.
   */
  INVALID_ATTRIBUTE("invalid_attribute"),
  /** The {@code time} attribute is not an RFC 3339 timestamp. */
  INVALID_TIME("invalid_time"),
  /**
   * The event's {@code time} lies more than the allowed skew after its ingestion time (a producer
   * with a wrong clock); it is rejected before it can move a watermark or create state.
   */
  TIME_IN_FUTURE("time_in_future"),
  /** The {@code type} attribute is not in the allow-list. */
  UNSUPPORTED_TYPE("unsupported_type"),
  /** The CloudEvents SDK rejected the event (for example a source that is not a URI-reference). */
  INVALID_CLOUDEVENT("invalid_cloudevent"),
  /** The event has no {@code data}, or its data is not a JSON object. */
  INVALID_DATA("invalid_data"),
  // The bundled payments spec's field reasons (specs/payments.yaml gives each field its reason and
  // the spec's field parser the message). They stay constants because dead letters of coder format
  // 1 name them, and a spec field's own reason is a code of its own (DeadLetter.reasonCode()).

  /** The payments spec's reason for a bad {@code data.accountId}. */
  INVALID_ACCOUNT_ID("invalid_account_id"),
  /** The payments spec's reason for a bad {@code data.amount}. */
  INVALID_AMOUNT("invalid_amount"),
  /** The payments spec's reason for a bad {@code data.currency}. */
  INVALID_CURRENCY("invalid_currency"),
  /** The payments spec's reason for a bad {@code data.merchantId}. */
  INVALID_MERCHANT_ID("invalid_merchant_id"),
  /** The payments spec's reason for a bad {@code data.country}. */
  INVALID_COUNTRY("invalid_country"),
  /** A replay-file line that looks like a directive but cannot be applied. */
  INVALID_DIRECTIVE("invalid_directive"),
  /** A replay-file line after {@code advanceWatermarkToInfinity}: the replay had already ended. */
  AFTER_END_OF_REPLAY("after_end_of_replay"),
  /** A feature row the model could not score. */
  SCORING_FAILED("scoring_failed"),
  /** A sink refused the record (for example a row BigQuery rejected); the payload is the row. */
  SINK_REJECTED("sink_rejected");

  private final String code;

  DeadLetterReason(String code) {
    this.code = code;
  }

  /** The stable machine-readable code, e.g. {@code invalid_json}. */
  public String code() {
    return code;
  }

  private static final java.util.Map<String, DeadLetterReason> BY_CODE = byCode();

  private static java.util.Map<String, DeadLetterReason> byCode() {
    java.util.Map<String, DeadLetterReason> byCode = new java.util.HashMap<>();
    for (DeadLetterReason reason : values()) {
      byCode.put(reason.code, reason);
    }
    return java.util.Map.copyOf(byCode);
  }

  /** The reason whose {@link #code} is {@code code}, or null when it is none of these. */
  public static @org.checkerframework.checker.nullness.qual.Nullable DeadLetterReason ofCode(
      String code) {
    return BY_CODE.get(code);
  }
}
