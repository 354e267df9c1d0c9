package dev.tidemark.pipelines.io.kafka;

import dev.tidemark.pipelines.KafkaOptions;
import java.io.IOException;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import org.apache.beam.sdk.transforms.SerializableFunction;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * How Tidemark's Kafka clients connect: the bootstrap servers and the security settings.
 *
 * <p>Secrets never travel in the pipeline: this object holds where a secret is (a file path, the
 * name of an environment variable or a Secret Manager secret version), and {@link
 * #connectionConfig()} reads it when a client is created, on the worker; nothing is read when this
 * object is made. A Secret Manager password is fetched once per worker JVM and then cached ({@link
 * SecretManagerSecrets}). {@link #toString()} and the pipeline's display data show no secret, and
 * Kafka's own config logging masks {@code sasl.jaas.config} and store passwords.
 */
public final class KafkaClients implements Serializable {
  private static final long serialVersionUID = 1L;

  static final List<String> PROTOCOLS = List.of("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL");
  static final List<String> MECHANISMS = List.of("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512");

  /**
   * The form of {@code --kafkaPasswordSecret}: projects/PROJECT/secrets/NAME/versions/VERSION, with
   * VERSION a number or {@code latest} (unanchored).
   */
  public static final String PASSWORD_SECRET_REGEX = SecretManagerSecrets.REFERENCE_REGEX;

  /** {@code --secretManagerEndpoint}: host:port, the host a name, IPv4 or bracketed IPv6. */
  private static final Pattern ENDPOINT =
      Pattern.compile("(?:[^:\\s\\[\\]/]+|\\[[0-9A-Fa-f:.]+\\]):[0-9]{1,5}");

  private final String bootstrapServers;
  private final String securityProtocol;
  private final @Nullable String saslMechanism;
  private final @Nullable String username;
  private final @Nullable String passwordFile;
  private final @Nullable String passwordEnv;
  private final @Nullable String passwordSecret;
  private final @Nullable String secretManagerEndpoint;
  private final @Nullable String truststoreFile;
  private final @Nullable String truststorePasswordFile;
  private final String truststoreType;

  private KafkaClients(
      String bootstrapServers,
      String securityProtocol,
      @Nullable String saslMechanism,
      @Nullable String username,
      @Nullable String passwordFile,
      @Nullable String passwordEnv,
      @Nullable String passwordSecret,
      @Nullable String secretManagerEndpoint,
      @Nullable String truststoreFile,
      @Nullable String truststorePasswordFile,
      String truststoreType) {
    this.bootstrapServers = bootstrapServers;
    this.securityProtocol = securityProtocol;
    this.saslMechanism = saslMechanism;
    this.username = username;
    this.passwordFile = passwordFile;
    this.passwordEnv = passwordEnv;
    this.passwordSecret = passwordSecret;
    this.secretManagerEndpoint = secretManagerEndpoint;
    this.truststoreFile = truststoreFile;
    this.truststorePasswordFile = truststorePasswordFile;
    this.truststoreType = truststoreType;
  }

  /** A plain-text connection, as to the embedded broker. */
  public static KafkaClients plaintext(String bootstrapServers) {
    return new KafkaClients(
        bootstrapServers, "PLAINTEXT", null, null, null, null, null, null, null, null, "PKCS12");
  }

  /**
   * The connection the options describe, validated: a clear message for every inconsistent
   * combination, and a check that a password file or variable exists here (its value is not read).
   * A Secret Manager reference is checked for its form only: nothing is fetched here, where the
   * launcher may have no access to the secret that the workers have.
   */
  public static KafkaClients from(KafkaOptions options) {
    String servers = options.getKafkaBootstrapServers();
    if (servers == null || servers.isBlank()) {
      throw new IllegalArgumentException(
          "Kafka needs --kafkaBootstrapServers=host:port[,host:port] (or 'embedded')");
    }
    String protocol = options.getKafkaSecurityProtocol().trim().toUpperCase(Locale.ROOT);
    if (!PROTOCOLS.contains(protocol)) {
      throw new IllegalArgumentException(
          "--kafkaSecurityProtocol="
              + options.getKafkaSecurityProtocol()
              + ": use one of "
              + PROTOCOLS);
    }
    boolean sasl = protocol.startsWith("SASL_");
    String mechanism = options.getKafkaSaslMechanism();
    if (sasl) {
      if (mechanism == null || !MECHANISMS.contains(mechanism.trim().toUpperCase(Locale.ROOT))) {
        throw new IllegalArgumentException(
            "--kafkaSecurityProtocol="
                + protocol
                + " needs --kafkaSaslMechanism, one of "
                + MECHANISMS);
      }
      mechanism = mechanism.trim().toUpperCase(Locale.ROOT);
      if (options.getKafkaUsername() == null || options.getKafkaUsername().isBlank()) {
        throw new IllegalArgumentException("SASL needs --kafkaUsername");
      }
      boolean file = options.getKafkaPasswordFile() != null;
      boolean env = options.getKafkaPasswordEnv() != null;
      boolean secret = options.getKafkaPasswordSecret() != null;
      if ((file ? 1 : 0) + (env ? 1 : 0) + (secret ? 1 : 0) != 1) {
        throw new IllegalArgumentException(
            "SASL needs exactly one of --kafkaPasswordFile=PATH, --kafkaPasswordEnv=VARIABLE or"
                + " --kafkaPasswordSecret="
                + SecretManagerSecrets.FORM
                + "; the password itself is never an option");
      }
      if (secret && !SecretManagerSecrets.isReference(options.getKafkaPasswordSecret().trim())) {
        // The value is not repeated: it might be the password itself, pasted by mistake.
        throw new IllegalArgumentException(
            "--kafkaPasswordSecret is not a Secret Manager secret version: use "
                + SecretManagerSecrets.FORM
                + " with VERSION a number or latest, e.g. --kafkaPasswordSecret="
                + SecretManagerSecrets.example("--kafkaPasswordSecret"));
      }
      String endpoint = options.getSecretManagerEndpoint();
      if (secret && endpoint != null && !ENDPOINT.matcher(endpoint.trim()).matches()) {
        throw new IllegalArgumentException(
            "--secretManagerEndpoint=" + endpoint + ": use host:port (for tests and emulators)");
      }
      if (file && !Files.isReadable(Paths.get(options.getKafkaPasswordFile()))) {
        throw new IllegalArgumentException(
            "--kafkaPasswordFile=" + options.getKafkaPasswordFile() + ": no readable file there");
      }
      if (env && System.getenv(options.getKafkaPasswordEnv()) == null) {
        throw new IllegalArgumentException(
            "--kafkaPasswordEnv=" + options.getKafkaPasswordEnv() + ": that variable is not set");
      }
    } else if (mechanism != null) {
      throw new IllegalArgumentException(
          "--kafkaSaslMechanism needs --kafkaSecurityProtocol=SASL_SSL or SASL_PLAINTEXT");
    }
    boolean tls = protocol.equals("SSL") || protocol.equals("SASL_SSL");
    if (!tls && options.getKafkaTruststoreFile() != null) {
      throw new IllegalArgumentException(
          "--kafkaTruststoreFile needs --kafkaSecurityProtocol=SSL or SASL_SSL");
    }
    if (options.getKafkaTruststoreFile() != null
        && !Files.isReadable(Paths.get(options.getKafkaTruststoreFile()))) {
      throw new IllegalArgumentException(
          "--kafkaTruststoreFile=" + options.getKafkaTruststoreFile() + ": no readable file there");
    }
    return new KafkaClients(
        servers.trim(),
        protocol,
        sasl ? mechanism : null,
        sasl ? options.getKafkaUsername() : null,
        sasl ? options.getKafkaPasswordFile() : null,
        sasl ? options.getKafkaPasswordEnv() : null,
        sasl && options.getKafkaPasswordSecret() != null
            ? options.getKafkaPasswordSecret().trim()
            : null,
        sasl
                && options.getKafkaPasswordSecret() != null
                && options.getSecretManagerEndpoint() != null
            ? options.getSecretManagerEndpoint().trim()
            : null,
        tls ? options.getKafkaTruststoreFile() : null,
        tls ? options.getKafkaTruststorePasswordFile() : null,
        options.getKafkaTruststoreType());
  }

  public String bootstrapServers() {
    return bootstrapServers;
  }

  /** Bootstrap servers and security, secrets included: call only where a client is created. */
  public Map<String, Object> connectionConfig() {
    Map<String, Object> config = new HashMap<>();
    config.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    config.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, securityProtocol);
    if (saslMechanism != null) {
      config.put(SaslConfigs.SASL_MECHANISM, saslMechanism);
      String module =
          saslMechanism.equals("PLAIN")
              ? "org.apache.kafka.common.security.plain.PlainLoginModule"
              : "org.apache.kafka.common.security.scram.ScramLoginModule";
      config.put(
          SaslConfigs.SASL_JAAS_CONFIG,
          module
              + " required username=\""
              + jaasEscape(Objects.requireNonNull(username))
              + "\" password=\""
              + jaasEscape(password())
              + "\";");
    }
    if (truststoreFile != null) {
      config.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, truststoreFile);
      config.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, truststoreType);
      if (truststorePasswordFile != null) {
        config.put(
            SslConfigs.SSL_TRUSTSTORE_PASSWORD_CONFIG, readSecretFile(truststorePasswordFile));
      }
    }
    return config;
  }

  /** A consumer factory for KafkaIO that adds the connection (with secrets) on the worker. */
  public SerializableFunction<Map<String, Object>, Consumer<byte[], byte[]>> consumerFactory() {
    return new ConsumerFactory(this);
  }

  /**
   * {@link #consumerFactory}: a named class with a fixed {@code serialVersionUID}, not a lambda,
   * because Beam's Flink source keeps the Kafka source, this factory in it, Java-serialized in
   * every savepoint and restores the source from there: a lambda's serialized form names a
   * synthetic method that any edit of this class may rename.
   */
  static final class ConsumerFactory
      implements SerializableFunction<Map<String, Object>, Consumer<byte[], byte[]>> {
    private static final long serialVersionUID = 1L;

    private final KafkaClients clients;

    ConsumerFactory(KafkaClients clients) {
      this.clients = clients;
    }

    @Override
    public Consumer<byte[], byte[]> apply(Map<String, Object> config) {
      return new KafkaConsumer<>(clients.merged(config));
    }
  }

  /** A producer factory for KafkaIO that adds the connection (with secrets) on the worker. */
  public <K, V> SerializableFunction<Map<String, Object>, Producer<K, V>> producerFactory() {
    KafkaClients clients = this;
    return config -> new KafkaProducer<>(clients.merged(config));
  }

  public Map<String, Object> merged(Map<String, Object> config) {
    Map<String, Object> merged = new HashMap<>(config);
    merged.putAll(connectionConfig());
    return merged;
  }

  private String password() {
    if (passwordFile != null) {
      return readSecretFile(passwordFile);
    }
    if (passwordSecret != null) {
      return SecretManagerSecrets.password(
          passwordSecret, secretManagerEndpoint, "--kafkaPasswordSecret", "SASL password");
    }
    String value = System.getenv(Objects.requireNonNull(passwordEnv));
    if (value == null) {
      throw new IllegalStateException(
          "environment variable " + passwordEnv + " (--kafkaPasswordEnv) is not set here");
    }
    return value;
  }

  private static String readSecretFile(String file) {
    Path path = Paths.get(file);
    try {
      return firstLine(new String(Files.readAllBytes(path), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new IllegalStateException("cannot read secret file " + path + ": " + e.getMessage());
    }
  }

  /** A secret is the first line of a file or payload, without surrounding white space. */
  static String firstLine(String text) {
    int newline = text.indexOf('\n');
    return (newline < 0 ? text : text.substring(0, newline)).strip();
  }

  private static String jaasEscape(String value) {
    return value.replace("\\", "\\\\").replace("\"", "\\\"");
  }

  /** The connection without secrets: where they come from, never what they are. */
  @Override
  public String toString() {
    StringBuilder out =
        new StringBuilder("KafkaClients{")
            .append(bootstrapServers)
            .append(", ")
            .append(securityProtocol);
    if (saslMechanism != null) {
      out.append(", ").append(saslMechanism).append(" as ").append(username);
      out.append(", password from ")
          .append(
              passwordFile != null
                  ? "file " + passwordFile
                  : passwordSecret != null ? "secret " + passwordSecret : "env " + passwordEnv);
    }
    if (truststoreFile != null) {
      out.append(", truststore ").append(truststoreFile);
    }
    return out.append('}').toString();
  }
}
