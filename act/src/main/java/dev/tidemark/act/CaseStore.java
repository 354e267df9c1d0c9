package dev.tidemark.act;

import dev.tidemark.act.CaseRules.CaseStatus;
import dev.tidemark.act.CaseRules.Transition;
import dev.tidemark.act.EditionReader.Read;
import dev.tidemark.act.EditionReader.Rejection;
import dev.tidemark.transforms.values.DecisionCopies;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;

/**
 * The side effect and its bookkeeping, on one JDBC connection whose transaction the caller owns:
 * {@link #apply} decides what one record does and writes it (inbox row, decision, case, outbox
 * event, or a conflict or rejection); {@link #saveOffsets} and {@link #purgeKeys} complete a batch.
 * Nothing here commits; {@link ActConsumer} commits a whole poll batch at once.
 */
public final class CaseStore {
  /** Reason of a stale edition in the {@code rejected} table. */
  public static final String STALE = "stale";

  /** Reason of a record PostgreSQL refused to store (a value no column can hold). */
  public static final String UNSTORABLE = "unstorable";

  /** The most characters of a rejected record's decisionId and detail that are kept. */
  static final int MAX_REJECTED_ID_CHARS = 256;

  static final int MAX_DETAIL_CHARS = 2048;

  /** What a record did. */
  public enum Outcome {
    /** A new edition: applied (its case transition is in {@link Result#transition}). */
    APPLIED,
    /** The same record or the same edition again: nothing changed. */
    REDELIVERED,
    /** A known (decisionId, version) with other content: recorded in {@code conflicts}. */
    CONFLICT,
    /** A version not above the last applied one: recorded in {@code rejected}. */
    STALE,
    /** Not an edition the consumer acts on: recorded in {@code rejected}. */
    UNSUPPORTED,
    /** An edition PostgreSQL cannot store: recorded in {@code rejected}, nothing else changed. */
    UNSTORABLE
  }

  /** The outcome of one record and, when applied, the case transition. */
  public record Result(Outcome outcome, Transition transition) {}

  private final Connection connection;

  public CaseStore(Connection connection) {
    this.connection = connection;
  }

  /** Where a record was read: its idempotency key for anything that has no other. */
  public record Position(String topic, int partition, long offset) {}

  /** Applies one record read at {@code position}, received at {@code now}. */
  public Result apply(Position position, Read read, Instant now) throws SQLException {
    if (read.rejection().isPresent()) {
      Rejection rejection = read.rejection().get();
      boolean recorded = reject(position, null, null, rejection.reason(), rejection.detail(), now);
      return new Result(recorded ? Outcome.UNSUPPORTED : Outcome.REDELIVERED, Transition.NONE);
    }
    Edition edition = read.edition().orElseThrow();
    String fingerprint = edition.fingerprint();
    String applied = appliedFingerprint(edition);
    if (applied != null) {
      // The first copy of a (decisionId, version) is kept; a later one is the same or a conflict.
      if (DecisionCopies.compare(applied, fingerprint) == DecisionCopies.Copy.SAME) {
        return new Result(Outcome.REDELIVERED, Transition.NONE);
      }
      boolean recorded = conflict(position, edition, applied, fingerprint, now);
      return new Result(recorded ? Outcome.CONFLICT : Outcome.REDELIVERED, Transition.NONE);
    }
    OptionalLong lastApplied = lastAppliedVersion(edition.decisionId());
    if (CaseRules.isStale(lastApplied, edition.version())) {
      boolean recorded =
          reject(
              position,
              edition.decisionId(),
              edition.version(),
              STALE,
              "version "
                  + edition.version()
                  + " is not above the last applied version "
                  + lastApplied.getAsLong(),
              now);
      return new Result(recorded ? Outcome.STALE : Outcome.REDELIVERED, Transition.NONE);
    }
    try (PreparedStatement insert =
        connection.prepareStatement(
            "INSERT INTO inbox (decision_id, version, fingerprint, topic, kafka_partition,"
                + " kafka_offset, received_at) VALUES (?, ?, ?, ?, ?, ?, ?)")) {
      insert.setString(1, edition.decisionId());
      insert.setLong(2, edition.version());
      insert.setString(3, fingerprint);
      insert.setString(4, position.topic());
      insert.setInt(5, position.partition());
      insert.setLong(6, position.offset());
      insert.setTimestamp(7, Timestamp.from(now));
      insert.executeUpdate();
    }
    try (PreparedStatement upsert =
        connection.prepareStatement(
            "INSERT INTO decisions (decision_id, account_id, last_version, last_decision,"
                + " last_score, last_correction, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
                + " ON CONFLICT (decision_id) DO UPDATE SET last_version = excluded.last_version,"
                + " last_decision = excluded.last_decision, last_score = excluded.last_score,"
                + " last_correction = excluded.last_correction, updated_at = excluded.updated_at")) {
      upsert.setString(1, edition.decisionId());
      upsert.setString(2, edition.accountId());
      upsert.setLong(3, edition.version());
      upsert.setString(4, edition.verdict().json());
      upsert.setDouble(5, edition.score());
      upsert.setString(6, edition.correction().json());
      upsert.setTimestamp(7, Timestamp.from(now));
      upsert.executeUpdate();
    }
    CaseStatus status = caseStatus(edition.decisionId());
    Transition transition = CaseRules.transition(status, edition.verdict());
    changeCase(edition, status, transition, now);
    if (transition != Transition.NONE) {
      try (PreparedStatement outbox =
          connection.prepareStatement(
              "INSERT INTO outbox (event_type, decision_id, version, payload, created_at)"
                  + " VALUES (?, ?, ?, ?::jsonb, ?)")) {
        outbox.setString(1, transition.event());
        outbox.setString(2, edition.decisionId());
        outbox.setLong(3, edition.version());
        outbox.setString(4, payload(transition, edition));
        outbox.setTimestamp(5, Timestamp.from(now));
        outbox.executeUpdate();
      }
    }
    return new Result(Outcome.APPLIED, transition);
  }

  private void changeCase(Edition edition, CaseStatus status, Transition transition, Instant now)
      throws SQLException {
    String sql;
    switch (transition) {
      case OPEN:
        sql =
            "INSERT INTO cases (decision_id, account_id, window_start, window_end, status,"
                + " opened_version, last_version, last_score, opened_at, updated_at)"
                + " VALUES (?, ?, ?, ?, 'open', ?, ?, ?, ?, ?)";
        try (PreparedStatement insert = connection.prepareStatement(sql)) {
          insert.setString(1, edition.decisionId());
          insert.setString(2, edition.accountId());
          insert.setObject(3, OffsetDateTime.parse(edition.windowStart()));
          insert.setObject(4, OffsetDateTime.parse(edition.windowEnd()));
          insert.setLong(5, edition.version());
          insert.setLong(6, edition.version());
          insert.setDouble(7, edition.score());
          insert.setTimestamp(8, Timestamp.from(now));
          insert.setTimestamp(9, Timestamp.from(now));
          insert.executeUpdate();
        }
        return;
      case CLOSE:
        sql =
            "UPDATE cases SET status = 'closed', closed_version = ?, last_version = ?,"
                + " last_score = ?, updated_at = ? WHERE decision_id = ?";
        break;
      case REOPEN:
        sql =
            "UPDATE cases SET status = 'open', closed_version = NULL, reopened = reopened + 1,"
                + " last_version = ?, last_score = ?, updated_at = ? WHERE decision_id = ?";
        break;
      case NONE:
        if (status == null) {
          return;
        }
        sql =
            "UPDATE cases SET last_version = ?, last_score = ?, updated_at = ?"
                + " WHERE decision_id = ?";
        break;
      default:
        throw new IllegalStateException("unknown transition " + transition);
    }
    try (PreparedStatement update = connection.prepareStatement(sql)) {
      int i = 1;
      if (transition == Transition.CLOSE) {
        update.setLong(i++, edition.version());
      }
      update.setLong(i++, edition.version());
      update.setDouble(i++, edition.score());
      update.setTimestamp(i++, Timestamp.from(now));
      update.setString(i, edition.decisionId());
      if (update.executeUpdate() != 1) {
        throw new IllegalStateException("no case for " + edition.decisionId());
      }
    }
  }

  /** The outbox event: what a relay would publish about the change. */
  private static String payload(Transition transition, Edition edition) {
    StringBuilder json = new StringBuilder("{");
    json.append("\"type\":").append(quote(transition.event()));
    json.append(",\"decisionId\":").append(quote(edition.decisionId()));
    json.append(",\"version\":").append(edition.version());
    json.append(",\"accountId\":").append(quote(edition.accountId()));
    json.append(",\"windowStart\":").append(quote(edition.windowStart()));
    json.append(",\"windowEnd\":").append(quote(edition.windowEnd()));
    json.append(",\"decision\":").append(quote(edition.verdict().json()));
    json.append(",\"score\":").append(edition.score());
    json.append(",\"correction\":").append(quote(edition.correction().json()));
    return json.append('}').toString();
  }

  private static String quote(String text) {
    StringBuilder quoted = new StringBuilder("\"");
    for (char c : text.toCharArray()) {
      if (c == '"' || c == '\\') {
        quoted.append('\\').append(c);
      } else if (c < 0x20) {
        quoted.append(String.format("\\u%04x", (int) c));
      } else {
        quoted.append(c);
      }
    }
    return quoted.append('"').toString();
  }

  private String appliedFingerprint(Edition edition) throws SQLException {
    try (PreparedStatement select =
        connection.prepareStatement(
            "SELECT fingerprint FROM inbox WHERE decision_id = ? AND version = ?")) {
      select.setString(1, edition.decisionId());
      select.setLong(2, edition.version());
      try (ResultSet rows = select.executeQuery()) {
        return rows.next() ? rows.getString(1) : null;
      }
    }
  }

  private OptionalLong lastAppliedVersion(String decisionId) throws SQLException {
    try (PreparedStatement select =
        connection.prepareStatement("SELECT last_version FROM decisions WHERE decision_id = ?")) {
      select.setString(1, decisionId);
      try (ResultSet rows = select.executeQuery()) {
        return rows.next() ? OptionalLong.of(rows.getLong(1)) : OptionalLong.empty();
      }
    }
  }

  private CaseStatus caseStatus(String decisionId) throws SQLException {
    try (PreparedStatement select =
        connection.prepareStatement("SELECT status FROM cases WHERE decision_id = ?")) {
      select.setString(1, decisionId);
      try (ResultSet rows = select.executeQuery()) {
        return rows.next() ? CaseStatus.ofSql(rows.getString(1)) : null;
      }
    }
  }

  /** Records a conflict; false if this record's conflict was recorded before. */
  private boolean conflict(
      Position position, Edition edition, String applied, String fingerprint, Instant now)
      throws SQLException {
    try (PreparedStatement insert =
        connection.prepareStatement(
            "INSERT INTO conflicts (topic, kafka_partition, kafka_offset, decision_id, version,"
                + " applied_fingerprint, fingerprint, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                + " ON CONFLICT DO NOTHING")) {
      insert.setString(1, position.topic());
      insert.setInt(2, position.partition());
      insert.setLong(3, position.offset());
      insert.setString(4, edition.decisionId());
      insert.setLong(5, edition.version());
      insert.setString(6, applied);
      insert.setString(7, fingerprint);
      insert.setTimestamp(8, Timestamp.from(now));
      return insert.executeUpdate() == 1;
    }
  }

  /**
   * Whether {@code e} says that PostgreSQL cannot store a value of the record, so that the record
   * is to be rejected rather than the batch retried: a data exception (class 22: a NUL character,
   * an invalid byte sequence, a timestamp or number out of range), an integrity constraint (class
   * 23) or a program limit (class 54: a value too large for an index). Anything else (a lost
   * connection, a serialization failure) fails the batch, and a restart reads it again.
   */
  public static boolean isUnstorable(SQLException e) {
    String state = e.getSQLState();
    return state != null
        && (state.startsWith("22") || state.startsWith("23") || state.startsWith("54"));
  }

  /**
   * Records a record that PostgreSQL refused to store, after the caller rolled back what it had
   * written of it: a {@code rejected} row with reason {@value #UNSTORABLE} and PostgreSQL's error.
   */
  public Result unstorable(Position position, Read read, SQLException e, Instant now)
      throws SQLException {
    String decisionId = read.edition().map(Edition::decisionId).orElse(null);
    Long version = read.edition().map(Edition::version).orElse(null);
    boolean recorded =
        reject(
            position,
            decisionId,
            version,
            UNSTORABLE,
            "PostgreSQL cannot store it (SQLState " + e.getSQLState() + "): " + e.getMessage(),
            now);
    return new Result(recorded ? Outcome.UNSTORABLE : Outcome.REDELIVERED, Transition.NONE);
  }

  /**
   * {@code text} as a PostgreSQL {@code text} value can hold it: NUL characters and unpaired
   * surrogates become U+FFFD, and at most {@code maxChars} characters are kept (marked with an
   * ellipsis).
   */
  static String storable(String text, int maxChars) {
    StringBuilder out = new StringBuilder(Math.min(text.length(), maxChars + 1));
    for (int i = 0; i < text.length() && out.length() < maxChars; i++) {
      char c = text.charAt(i);
      if (Character.isHighSurrogate(c)
          && i + 1 < text.length()
          && Character.isLowSurrogate(text.charAt(i + 1))) {
        out.append(c).append(text.charAt(++i));
      } else if (c == 0 || Character.isSurrogate(c)) {
        out.append('\uFFFD');
      } else {
        out.append(c);
      }
    }
    if (out.length() < text.length() && out.length() >= maxChars) {
      out.append('\u2026');
    }
    return out.toString();
  }

  /** Records a rejection; false if this record was rejected before. */
  private boolean reject(
      Position position, String decisionId, Long version, String reason, String detail, Instant now)
      throws SQLException {
    try (PreparedStatement insert =
        connection.prepareStatement(
            "INSERT INTO rejected (topic, kafka_partition, kafka_offset, decision_id, version,"
                + " reason, detail, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                + " ON CONFLICT DO NOTHING")) {
      insert.setString(1, position.topic());
      insert.setInt(2, position.partition());
      insert.setLong(3, position.offset());
      insert.setString(4, decisionId == null ? null : storable(decisionId, MAX_REJECTED_ID_CHARS));
      insert.setObject(5, version);
      insert.setString(6, reason);
      insert.setString(7, storable(detail, MAX_DETAIL_CHARS));
      insert.setTimestamp(8, Timestamp.from(now));
      return insert.executeUpdate() == 1;
    }
  }

  /** The stored next offset per partition of {@code topic} for {@code consumerName}. */
  public Map<Integer, Long> offsets(String consumerName, String topic) throws SQLException {
    Map<Integer, Long> offsets = new HashMap<>();
    try (PreparedStatement select =
        connection.prepareStatement(
            "SELECT kafka_partition, next_offset FROM offsets"
                + " WHERE consumer_name = ? AND topic = ?")) {
      select.setString(1, consumerName);
      select.setString(2, topic);
      try (ResultSet rows = select.executeQuery()) {
        while (rows.next()) {
          offsets.put(rows.getInt(1), rows.getLong(2));
        }
      }
    }
    return offsets;
  }

  /** Stores the next offset of each partition in {@code next}. */
  public void saveOffsets(String consumerName, String topic, Map<Integer, Long> next, Instant now)
      throws SQLException {
    try (PreparedStatement upsert =
        connection.prepareStatement(
            "INSERT INTO offsets (consumer_name, topic, kafka_partition, next_offset, updated_at)"
                + " VALUES (?, ?, ?, ?, ?) ON CONFLICT (consumer_name, topic, kafka_partition)"
                + " DO UPDATE SET next_offset = excluded.next_offset,"
                + " updated_at = excluded.updated_at")) {
      for (Map.Entry<Integer, Long> entry : next.entrySet()) {
        upsert.setString(1, consumerName);
        upsert.setString(2, topic);
        upsert.setInt(3, entry.getKey());
        upsert.setLong(4, entry.getValue());
        upsert.setTimestamp(5, Timestamp.from(now));
        upsert.addBatch();
      }
      upsert.executeBatch();
    }
  }

  /** Forgets this consumer's offsets of {@code topic}: the next run reads it from the start. */
  public int resetOffsets(String consumerName, String topic) throws SQLException {
    try (PreparedStatement delete =
        connection.prepareStatement("DELETE FROM offsets WHERE consumer_name = ? AND topic = ?")) {
      delete.setString(1, consumerName);
      delete.setString(2, topic);
      return delete.executeUpdate();
    }
  }

  /** Deletes the inbox keys received before {@code now - retention}; returns how many. */
  public int purgeKeys(Duration retention, Instant now) throws SQLException {
    try (PreparedStatement delete =
        connection.prepareStatement("DELETE FROM inbox WHERE received_at < ?")) {
      delete.setTimestamp(1, Timestamp.from(now.minus(retention)));
      return delete.executeUpdate();
    }
  }
}
