package dev.tidemark.act;

import dev.tidemark.pipelines.io.kafka.KafkaClients;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The settings of one run of the consumer ({@link ActCommand} parses them from the command line).
 *
 * @param kafka the connection to the brokers: bootstrap servers, security and the client properties
 *     file, as the pipeline's {@code --kafka*} options give it ({@link KafkaClients})
 * @param jdbcUrl an existing database; empty: start PostgreSQL under {@code stateDir}
 * @param idleTimeout stop after this long without a record, once every partition is read to its end
 *     (unless {@code follow})
 * @param follow run until stopped (SIGTERM, Ctrl-C)
 * @param keyRetention how long an inbox key is kept after its receipt
 * @param replay forget this consumer's offsets first: read the topic from its beginning
 * @param maxPollRecords records per poll, and so per database transaction
 */
public record ActSettings(
    KafkaClients kafka,
    String topic,
    String consumerName,
    Path stateDir,
    Optional<String> jdbcUrl,
    Duration idleTimeout,
    boolean follow,
    Duration keyRetention,
    boolean replay,
    int maxPollRecords) {

  public static final String DEFAULT_BOOTSTRAP_SERVERS = "127.0.0.1:9092";
  public static final String DEFAULT_TOPIC = "tidemark.decisions";
  public static final String DEFAULT_CONSUMER_NAME = "tidemark-act";
  public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(10);
  public static final Duration DEFAULT_KEY_RETENTION = Duration.ofHours(24);
  public static final int DEFAULT_MAX_POLL_RECORDS = 500;

  public ActSettings {
    Objects.requireNonNull(kafka, "kafka");
    String bootstrapServers = kafka.bootstrapServers();
    Objects.requireNonNull(topic, "topic");
    Objects.requireNonNull(consumerName, "consumerName");
    Objects.requireNonNull(stateDir, "stateDir");
    Objects.requireNonNull(jdbcUrl, "jdbcUrl");
    check(!bootstrapServers.isBlank(), "--kafkaBootstrapServers must not be empty");
    check(
        !bootstrapServers.equals("embedded"),
        "--kafkaBootstrapServers=embedded is the pipeline's in-JVM demo broker, gone when its run"
            + " ends; pass a broker's host:port (127.0.0.1:9092 for ./tidemark cluster)");
    check(!topic.isBlank(), "--decisionsTopic must not be empty");
    check(!consumerName.isBlank(), "--consumerName must not be empty");
    check(
        jdbcUrl.isEmpty() || jdbcUrl.get().startsWith("jdbc:postgresql:"),
        "--jdbcUrl must be a PostgreSQL JDBC URL (jdbc:postgresql://host:port/database?user=...)");
    check(
        !idleTimeout.isNegative() && !idleTimeout.isZero(),
        "--idleTimeout must be positive, e.g. PT10S");
    check(!keyRetention.isNegative(), "--keyRetention must not be negative, e.g. PT24H");
    check(
        maxPollRecords >= 1 && maxPollRecords <= 100_000,
        "--maxPollRecords must be between 1 and 100000");
  }

  /** The brokers the consumer reads: {@code kafka}'s bootstrap servers. */
  public String bootstrapServers() {
    return kafka.bootstrapServers();
  }

  /** The defaults, with the state under {@code stateDir}. */
  public static ActSettings defaults(Path stateDir) {
    return new ActSettings(
        KafkaClients.plaintext(DEFAULT_BOOTSTRAP_SERVERS),
        DEFAULT_TOPIC,
        DEFAULT_CONSUMER_NAME,
        stateDir,
        Optional.empty(),
        DEFAULT_IDLE_TIMEOUT,
        false,
        DEFAULT_KEY_RETENTION,
        false,
        DEFAULT_MAX_POLL_RECORDS);
  }

  /** A plain-text connection to {@code value}. */
  public ActSettings withBootstrapServers(String value) {
    return withKafka(KafkaClients.plaintext(value));
  }

  public ActSettings withKafka(KafkaClients value) {
    return new ActSettings(
        value,
        topic,
        consumerName,
        stateDir,
        jdbcUrl,
        idleTimeout,
        follow,
        keyRetention,
        replay,
        maxPollRecords);
  }

  public ActSettings withTopic(String value) {
    return new ActSettings(
        kafka,
        value,
        consumerName,
        stateDir,
        jdbcUrl,
        idleTimeout,
        follow,
        keyRetention,
        replay,
        maxPollRecords);
  }

  public ActSettings withJdbcUrl(String value) {
    return new ActSettings(
        kafka,
        topic,
        consumerName,
        stateDir,
        Optional.of(value),
        idleTimeout,
        follow,
        keyRetention,
        replay,
        maxPollRecords);
  }

  public ActSettings withIdleTimeout(Duration value) {
    return new ActSettings(
        kafka,
        topic,
        consumerName,
        stateDir,
        jdbcUrl,
        value,
        follow,
        keyRetention,
        replay,
        maxPollRecords);
  }

  public ActSettings withReplay(boolean value) {
    return new ActSettings(
        kafka,
        topic,
        consumerName,
        stateDir,
        jdbcUrl,
        idleTimeout,
        follow,
        keyRetention,
        value,
        maxPollRecords);
  }

  private static void check(boolean condition, String message) {
    if (!condition) {
      throw new IllegalArgumentException(message);
    }
  }
}
