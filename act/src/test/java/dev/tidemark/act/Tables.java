package dev.tidemark.act;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/** Reads the consumer's tables for the tests' assertions. */
final class Tables implements AutoCloseable {
  private final Connection connection;

  Tables(String jdbcUrl) throws SQLException {
    Properties properties = new Properties();
    properties.setProperty("ApplicationName", "act-it");
    connection = DriverManager.getConnection(jdbcUrl, properties);
  }

  /** Rows of {@code sql}, each as its columns joined by a space. */
  List<String> rows(String sql) throws SQLException {
    List<String> rows = new ArrayList<>();
    try (Statement statement = connection.createStatement();
        ResultSet result = statement.executeQuery(sql)) {
      ResultSetMetaData meta = result.getMetaData();
      while (result.next()) {
        StringBuilder row = new StringBuilder();
        for (int i = 1; i <= meta.getColumnCount(); i++) {
          row.append(i == 1 ? "" : " ").append(result.getString(i));
        }
        rows.add(row.toString());
      }
    }
    return rows;
  }

  long count(String sql) throws SQLException {
    return Long.parseLong(rows(sql).get(0));
  }

  void execute(String sql) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }

  /** decisionId to "status closedVersion reopened". */
  Map<String, String> cases() throws SQLException {
    Map<String, String> cases = new TreeMap<>();
    for (String row :
        rows("SELECT decision_id, status, closed_version, reopened FROM cases ORDER BY 1")) {
      int space = row.indexOf(' ');
      cases.put(row.substring(0, space), row.substring(space + 1));
    }
    return cases;
  }

  /** The outbox events per decisionId. */
  Map<String, Long> outboxPerDecision() throws SQLException {
    Map<String, Long> events = new TreeMap<>();
    for (String row : rows("SELECT decision_id, count(*) FROM outbox GROUP BY 1")) {
      String[] fields = row.split(" ");
      events.put(fields[0], Long.parseLong(fields[1]));
    }
    return events;
  }

  /** partition to next offset of {@code consumer} on {@code topic}. */
  Map<Integer, Long> offsets(String consumer, String topic) throws SQLException {
    Map<Integer, Long> offsets = new TreeMap<>();
    for (String row :
        rows(
            "SELECT kafka_partition, next_offset FROM offsets WHERE consumer_name = '"
                + consumer
                + "' AND topic = '"
                + topic
                + "'")) {
      String[] fields = row.split(" ");
      offsets.put(Integer.parseInt(fields[0]), Long.parseLong(fields[1]));
    }
    return offsets;
  }

  /** Everything the side effect consists of, without receipt times. */
  List<String> sideEffect() throws SQLException {
    List<String> all = new ArrayList<>();
    all.addAll(
        rows(
            "SELECT decision_id, account_id, status, opened_version, closed_version,"
                + " last_version, last_score, reopened, opened_at, updated_at FROM cases"
                + " ORDER BY 1"));
    all.addAll(rows("SELECT id, event_type, decision_id, version, payload FROM outbox ORDER BY 1"));
    all.addAll(rows("SELECT * FROM decisions ORDER BY 1"));
    all.addAll(rows("SELECT * FROM inbox ORDER BY 1, 2"));
    all.addAll(rows("SELECT * FROM conflicts ORDER BY 1, 2, 3"));
    all.addAll(rows("SELECT * FROM rejected ORDER BY 1, 2, 3"));
    return all;
  }

  @Override
  public void close() throws SQLException {
    connection.close();
  }
}
