package dev.tidemark.act;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * The consumer's tables, created if missing, all in one place. Each poll batch writes them in one
 * transaction ({@link CaseStore}).
 *
 * <ul>
 *   <li>{@code offsets}: the next offset to read per (consumer name, topic, partition). The only
 *       record of progress: Kafka group offsets are neither committed nor read.
 *   <li>{@code inbox}: one row per (decisionId, version) applied, with the edition's fingerprint
 *       and receipt time; rows older than the key retention are purged.
 *   <li>{@code decisions}: the last applied edition of every decisionId, never purged, so that an
 *       edition not above it is recognised as stale after its inbox key has expired.
 *   <li>{@code cases}: one fraud case per decisionId that was ever judged {@code review}.
 *   <li>{@code outbox}: one event per case change (case_opened, case_closed, case_reopened), for a
 *       relay to publish.
 *   <li>{@code conflicts}: a (decisionId, version) delivered again with other content; never
 *       applied.
 *   <li>{@code rejected}: a record that was not applied for another reason: stale, or not an
 *       edition the consumer can act on ({@code reason}, {@code detail}).
 * </ul>
 *
 * <p>{@code conflicts} and {@code rejected} are keyed by the record's position, so a redelivery of
 * the same record is recognised there too and adds no row.
 */
public final class Schema {
  private Schema() {}

  static final List<String> STATEMENTS =
      List.of(
          """
          CREATE TABLE IF NOT EXISTS offsets (
            consumer_name text NOT NULL,
            topic text NOT NULL,
            kafka_partition integer NOT NULL,
            next_offset bigint NOT NULL,
            updated_at timestamptz NOT NULL,
            PRIMARY KEY (consumer_name, topic, kafka_partition))""",
          """
          CREATE TABLE IF NOT EXISTS inbox (
            decision_id text NOT NULL,
            version bigint NOT NULL,
            fingerprint text NOT NULL,
            topic text NOT NULL,
            kafka_partition integer NOT NULL,
            kafka_offset bigint NOT NULL,
            received_at timestamptz NOT NULL,
            PRIMARY KEY (decision_id, version))""",
          "CREATE INDEX IF NOT EXISTS inbox_received_at ON inbox (received_at)",
          """
          CREATE TABLE IF NOT EXISTS decisions (
            decision_id text PRIMARY KEY,
            account_id text NOT NULL,
            last_version bigint NOT NULL,
            last_decision text NOT NULL,
            last_score double precision NOT NULL,
            last_correction text NOT NULL,
            updated_at timestamptz NOT NULL)""",
          """
          CREATE TABLE IF NOT EXISTS cases (
            decision_id text PRIMARY KEY,
            account_id text NOT NULL,
            window_start timestamptz NOT NULL,
            window_end timestamptz NOT NULL,
            status text NOT NULL CHECK (status IN ('open', 'closed')),
            opened_version bigint NOT NULL,
            closed_version bigint,
            last_version bigint NOT NULL,
            last_score double precision NOT NULL,
            reopened integer NOT NULL DEFAULT 0,
            opened_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL)""",
          """
          CREATE TABLE IF NOT EXISTS outbox (
            id bigserial PRIMARY KEY,
            event_type text NOT NULL
              CHECK (event_type IN ('case_opened', 'case_closed', 'case_reopened')),
            decision_id text NOT NULL,
            version bigint NOT NULL,
            payload jsonb NOT NULL,
            created_at timestamptz NOT NULL,
            UNIQUE (decision_id, version))""",
          """
          CREATE TABLE IF NOT EXISTS conflicts (
            topic text NOT NULL,
            kafka_partition integer NOT NULL,
            kafka_offset bigint NOT NULL,
            decision_id text NOT NULL,
            version bigint NOT NULL,
            applied_fingerprint text NOT NULL,
            fingerprint text NOT NULL,
            received_at timestamptz NOT NULL,
            PRIMARY KEY (topic, kafka_partition, kafka_offset))""",
          """
          CREATE TABLE IF NOT EXISTS rejected (
            topic text NOT NULL,
            kafka_partition integer NOT NULL,
            kafka_offset bigint NOT NULL,
            decision_id text,
            version bigint,
            reason text NOT NULL,
            detail text NOT NULL,
            received_at timestamptz NOT NULL,
            PRIMARY KEY (topic, kafka_partition, kafka_offset))""");

  /** Creates the tables that do not exist yet, in one transaction. */
  public static void create(Connection connection) throws SQLException {
    boolean autoCommit = connection.getAutoCommit();
    connection.setAutoCommit(false);
    try (Statement statement = connection.createStatement()) {
      for (String sql : STATEMENTS) {
        statement.execute(sql);
      }
      connection.commit();
    } catch (SQLException e) {
      connection.rollback();
      throw e;
    } finally {
      connection.setAutoCommit(autoCommit);
    }
  }
}
