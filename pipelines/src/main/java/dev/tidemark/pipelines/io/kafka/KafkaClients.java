package dev.tidemark.pipelines.io.kafka;

import dev.tidemark.pipelines.KafkaOptions;
import java.io.IOException;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
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
import org.apache.kafka.common.security.auth.AuthenticateCallbackHandler;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * How Tidemark's Kafka clients connect: the bootstrap servers, the security settings and the
 * operator's client properties file ({@link KafkaClientProperties}).
 *
 * <p>Secrets never travel in the pipeline: this object holds where a secret is (a file path, the
 * name of an environment variable, a Secret Manager secret version, a Beam file system URI), and
 * {@link #connectionConfig()} reads it when a client is created, on the worker; nothing secret is
 * read when this object is made (only a local client properties file is, to refuse a bad one early,
 * and then forgotten). Secret Manager secrets and files behind URIs are fetched once per worker JVM
 * and then cached ({@link SecretManagerSecrets}, {@link WorkerFiles}). {@link #toString()} and the
 * pipeline's display data show no secret, and Kafka's own config logging masks {@code
 * sasl.jaas.config} and store passwords.
 *
 * <p>Beam's Flink source keeps this object Java-serialized in savepoints ({@link ConsumerFactory}):
 * fields are only ever added, and those added later are null in an object restored from an older
 * savepoint, which means "not used".
 */
public final class KafkaClients implements Serializable {
  private static final long serialVersionUID = 1L;

  static final List<String> PROTOCOLS = List.of("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL");
  static final List<String> MECHANISMS =
      List.of("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER");
  static final List<String> STORE_TYPES = List.of("PKCS12", "JKS", "PEM");

  /** The store type whose files carry no store password (Kafka refuses one). */
  static final String PEM = "PEM";

  static final String OAUTHBEARER = "OAUTHBEARER";

  /**
   * The form of {@code --kafkaPasswordSecret} and the other secret version options:
   * projects/PROJECT/secrets/NAME/versions/VERSION, with VERSION a number or {@code latest}
   * (unanchored).
   */
  public static final String PASSWORD_SECRET_REGEX = SecretManagerSecrets.REFERENCE_REGEX;

  /** {@code --secretManagerEndpoint}: host:port, the host a name, IPv4 or bracketed IPv6. */
  private static final Pattern ENDPOINT =
      Pattern.compile("(?:[^:\\s\\[\\]/]+|\\[[0-9A-Fa-f:.]+\\]):[0-9]{1,5}");

  private static final String PASSWORD_SOURCES =
      "--kafkaPasswordFile=PATH, --kafkaPasswordEnv=VARIABLE or --kafkaPasswordSecret="
          + SecretManagerSecrets.FORM;

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
  private final @Nullable String oauthLoginCallbackHandler;
  private final @Nullable String clientProperties;
  private final @Nullable String truststoreSecret;
  private final @Nullable String truststorePasswordSecret;
  private final @Nullable String keystoreFile;
  private final @Nullable String keystoreSecret;
  private final @Nullable String keystorePasswordFile;
  private final @Nullable String keystorePasswordSecret;
  private final @Nullable String keyPasswordFile;
  private final @Nullable String keyPasswordSecret;
  private final @Nullable String keystoreType;
  private final @Nullable String usernameSecret;

  /** The fields, gathered while the options are checked. */
  private static final class Builder {
    String bootstrapServers = "";
    String securityProtocol = "PLAINTEXT";
    @Nullable String saslMechanism;
    @Nullable String username;
    @Nullable String passwordFile;
    @Nullable String passwordEnv;
    @Nullable String passwordSecret;
    @Nullable String secretManagerEndpoint;
    @Nullable String truststoreFile;
    @Nullable String truststorePasswordFile;
    String truststoreType = "PKCS12";
    @Nullable String oauthLoginCallbackHandler;
    @Nullable String clientProperties;
    @Nullable String truststoreSecret;
    @Nullable String truststorePasswordSecret;
    @Nullable String keystoreFile;
    @Nullable String keystoreSecret;
    @Nullable String keystorePasswordFile;
    @Nullable String keystorePasswordSecret;
    @Nullable String keyPasswordFile;
    @Nullable String keyPasswordSecret;
    @Nullable String keystoreType;
    @Nullable String usernameSecret;
  }

  private KafkaClients(Builder b) {
    this.bootstrapServers = b.bootstrapServers;
    this.securityProtocol = b.securityProtocol;
    this.saslMechanism = b.saslMechanism;
    this.username = b.username;
    this.passwordFile = b.passwordFile;
    this.passwordEnv = b.passwordEnv;
    this.passwordSecret = b.passwordSecret;
    this.secretManagerEndpoint = b.secretManagerEndpoint;
    this.truststoreFile = b.truststoreFile;
    this.truststorePasswordFile = b.truststorePasswordFile;
    this.truststoreType = b.truststoreType;
    this.oauthLoginCallbackHandler = b.oauthLoginCallbackHandler;
    this.clientProperties = b.clientProperties;
    this.truststoreSecret = b.truststoreSecret;
    this.truststorePasswordSecret = b.truststorePasswordSecret;
    this.keystoreFile = b.keystoreFile;
    this.keystoreSecret = b.keystoreSecret;
    this.keystorePasswordFile = b.keystorePasswordFile;
    this.keystorePasswordSecret = b.keystorePasswordSecret;
    this.keyPasswordFile = b.keyPasswordFile;
    this.keyPasswordSecret = b.keyPasswordSecret;
    this.keystoreType = b.keystoreType;
    this.usernameSecret = b.usernameSecret;
  }

  /** A plain-text connection, as to the embedded broker. */
  public static KafkaClients plaintext(String bootstrapServers) {
    Builder b = new Builder();
    b.bootstrapServers = bootstrapServers;
    return new KafkaClients(b);
  }

  /**
   * The connection the options describe, validated: a clear message for every inconsistent
   * combination, a check that each local file exists here and each URI's scheme has a Beam file
   * system (no secret's value is read), and a local client properties file read and checked. A
   * Secret Manager reference is checked for its form only: nothing is fetched here, where the
   * launcher may have no access to the secret that the workers have.
   */
  public static KafkaClients from(KafkaOptions options) {
    Builder b = new Builder();
    String servers = options.getKafkaBootstrapServers();
    if (servers == null || servers.isBlank()) {
      throw new IllegalArgumentException(
          "Kafka needs --kafkaBootstrapServers=host:port[,host:port] (or 'embedded')");
    }
    b.bootstrapServers = servers.trim();
    String protocol = options.getKafkaSecurityProtocol().trim().toUpperCase(Locale.ROOT);
    if (!PROTOCOLS.contains(protocol)) {
      throw new IllegalArgumentException(
          "--kafkaSecurityProtocol="
              + options.getKafkaSecurityProtocol()
              + ": use one of "
              + PROTOCOLS);
    }
    b.securityProtocol = protocol;
    List<String> secrets = new ArrayList<>();
    boolean sasl = protocol.startsWith("SASL_");
    String mechanism = options.getKafkaSaslMechanism();
    String handler = blankToNull(options.getKafkaOauthLoginCallbackHandler());
    if (sasl) {
      if (mechanism == null || !MECHANISMS.contains(mechanism.trim().toUpperCase(Locale.ROOT))) {
        throw new IllegalArgumentException(
            "--kafkaSecurityProtocol="
                + protocol
                + " needs --kafkaSaslMechanism, one of "
                + MECHANISMS);
      }
      mechanism = mechanism.trim().toUpperCase(Locale.ROOT);
      checkSasl(options, mechanism, handler);
      b.saslMechanism = mechanism;
      b.username = blankToNull(options.getKafkaUsername());
      b.usernameSecret = secret("--kafkaUsernameSecret", options.getKafkaUsernameSecret(), secrets);
      b.passwordFile = options.getKafkaPasswordFile();
      b.passwordEnv = options.getKafkaPasswordEnv();
      b.passwordSecret = secret("--kafkaPasswordSecret", options.getKafkaPasswordSecret(), secrets);
      b.oauthLoginCallbackHandler = mechanism.equals(OAUTHBEARER) ? handler : null;
    } else if (mechanism != null) {
      throw new IllegalArgumentException(
          "--kafkaSaslMechanism needs --kafkaSecurityProtocol=SASL_SSL or SASL_PLAINTEXT");
    } else if (options.getKafkaUsernameSecret() != null) {
      throw new IllegalArgumentException(
          "--kafkaUsernameSecret needs --kafkaSecurityProtocol=SASL_SSL or SASL_PLAINTEXT");
    }
    if (handler != null && !OAUTHBEARER.equals(b.saslMechanism)) {
      throw new IllegalArgumentException(
          "--kafkaOauthLoginCallbackHandler needs --kafkaSaslMechanism=OAUTHBEARER");
    }
    boolean tls = protocol.equals("SSL") || protocol.equals("SASL_SSL");
    // Trust store: which CAs the client trusts.
    b.truststoreFile =
        store(
            "--kafkaTruststoreFile",
            options.getKafkaTruststoreFile(),
            "--kafkaTruststoreSecret",
            options.getKafkaTruststoreSecret(),
            tls,
            options);
    b.truststoreSecret =
        secret("--kafkaTruststoreSecret", options.getKafkaTruststoreSecret(), secrets);
    boolean truststore = b.truststoreFile != null || b.truststoreSecret != null;
    b.truststorePasswordFile =
        passwordFile(
            "--kafkaTruststorePasswordFile",
            options.getKafkaTruststorePasswordFile(),
            "--kafkaTruststorePasswordSecret",
            options.getKafkaTruststorePasswordSecret(),
            truststore,
            "--kafkaTruststoreFile or --kafkaTruststoreSecret");
    b.truststorePasswordSecret =
        secret(
            "--kafkaTruststorePasswordSecret", options.getKafkaTruststorePasswordSecret(), secrets);
    b.truststoreType = storeType("--kafkaTruststoreType", options.getKafkaTruststoreType());
    if (PEM.equals(b.truststoreType)
        && (b.truststorePasswordFile != null || b.truststorePasswordSecret != null)) {
      throw new IllegalArgumentException(
          "a PEM trust store has no password: drop --kafkaTruststorePasswordFile and"
              + " --kafkaTruststorePasswordSecret");
    }
    // Key store: the client's own certificate, for mutual TLS.
    b.keystoreFile =
        store(
            "--kafkaKeystoreFile",
            options.getKafkaKeystoreFile(),
            "--kafkaKeystoreSecret",
            options.getKafkaKeystoreSecret(),
            tls,
            options);
    b.keystoreSecret = secret("--kafkaKeystoreSecret", options.getKafkaKeystoreSecret(), secrets);
    boolean keystore = b.keystoreFile != null || b.keystoreSecret != null;
    String keystoreOptions = "--kafkaKeystoreFile or --kafkaKeystoreSecret";
    b.keystorePasswordFile =
        passwordFile(
            "--kafkaKeystorePasswordFile",
            options.getKafkaKeystorePasswordFile(),
            "--kafkaKeystorePasswordSecret",
            options.getKafkaKeystorePasswordSecret(),
            keystore,
            keystoreOptions);
    b.keystorePasswordSecret =
        secret("--kafkaKeystorePasswordSecret", options.getKafkaKeystorePasswordSecret(), secrets);
    boolean pemKeystore =
        keystore && PEM.equals(storeType("--kafkaKeystoreType", options.getKafkaKeystoreType()));
    boolean keystorePassword = b.keystorePasswordFile != null || b.keystorePasswordSecret != null;
    if (pemKeystore && keystorePassword) {
      throw new IllegalArgumentException(
          "a PEM key store has no store password: drop --kafkaKeystorePasswordFile and"
              + " --kafkaKeystorePasswordSecret (an encrypted private key's password goes in"
              + " --kafkaKeyPasswordFile or --kafkaKeyPasswordSecret)");
    }
    if (keystore && !pemKeystore && !keystorePassword) {
      throw new IllegalArgumentException(
          "a key store needs its password: --kafkaKeystorePasswordFile=PATH or"
              + " --kafkaKeystorePasswordSecret="
              + SecretManagerSecrets.FORM);
    }
    b.keyPasswordFile =
        passwordFile(
            "--kafkaKeyPasswordFile",
            options.getKafkaKeyPasswordFile(),
            "--kafkaKeyPasswordSecret",
            options.getKafkaKeyPasswordSecret(),
            keystore,
            keystoreOptions);
    b.keyPasswordSecret =
        secret("--kafkaKeyPasswordSecret", options.getKafkaKeyPasswordSecret(), secrets);
    b.keystoreType =
        keystore ? storeType("--kafkaKeystoreType", options.getKafkaKeystoreType()) : null;
    String endpoint = options.getSecretManagerEndpoint();
    if (!secrets.isEmpty() && endpoint != null) {
      if (!ENDPOINT.matcher(endpoint.trim()).matches()) {
        throw new IllegalArgumentException(
            "--secretManagerEndpoint=" + endpoint + ": use host:port (for tests and emulators)");
      }
      b.secretManagerEndpoint = endpoint.trim();
    }
    String properties = blankToNull(options.getKafkaClientProperties());
    if (properties != null) {
      WorkerFiles.check(properties, KafkaClientProperties.OPTION, options);
      b.clientProperties = properties;
    }
    KafkaClients clients = new KafkaClients(b);
    if (properties != null && !WorkerFiles.isUri(properties)) {
      // Cheap and local: a bad file fails here, not on every worker. Its content is dropped.
      clients.checkedProperties();
    }
    return clients;
  }

  /** The SASL options for {@code mechanism}, checked. */
  private static void checkSasl(KafkaOptions options, String mechanism, @Nullable String handler) {
    boolean userName = blankToNull(options.getKafkaUsername()) != null;
    boolean userSecret = options.getKafkaUsernameSecret() != null;
    if (userName && userSecret) {
      throw new IllegalArgumentException(
          "use one of --kafkaUsername and --kafkaUsernameSecret, not both");
    }
    boolean user = userName || userSecret;
    boolean file = options.getKafkaPasswordFile() != null;
    boolean env = options.getKafkaPasswordEnv() != null;
    boolean secret = options.getKafkaPasswordSecret() != null;
    int sources = (file ? 1 : 0) + (env ? 1 : 0) + (secret ? 1 : 0);
    if (mechanism.equals(OAUTHBEARER)) {
      if (handler == null) {
        throw new IllegalArgumentException(
            "--kafkaSaslMechanism=OAUTHBEARER needs --kafkaOauthLoginCallbackHandler=CLASS (the"
                + " sasl.login.callback.handler.class that obtains tokens), e.g."
                + " org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler");
      }
      checkHandler(handler);
      if (sources > 1 || user != (sources == 1)) {
        throw new IllegalArgumentException(
            "OAUTHBEARER takes --kafkaUsername (the client id) together with one of "
                + PASSWORD_SOURCES
                + " (the client secret), or neither");
      }
    } else {
      if (!user) {
        throw new IllegalArgumentException(
            "SASL needs --kafkaUsername or --kafkaUsernameSecret=" + SecretManagerSecrets.FORM);
      }
      if (sources != 1) {
        throw new IllegalArgumentException(
            "SASL needs exactly one of "
                + PASSWORD_SOURCES
                + "; the password itself is never an option");
      }
    }
    if (file && !Files.isReadable(Paths.get(options.getKafkaPasswordFile()))) {
      throw new IllegalArgumentException(
          "--kafkaPasswordFile=" + options.getKafkaPasswordFile() + ": no readable file there");
    }
    if (env && System.getenv(options.getKafkaPasswordEnv()) == null) {
      throw new IllegalArgumentException(
          "--kafkaPasswordEnv=" + options.getKafkaPasswordEnv() + ": that variable is not set");
    }
  }

  /** The login callback handler class must be loadable here and be a callback handler. */
  private static void checkHandler(String handler) {
    Class<?> type;
    try {
      type = Class.forName(handler, false, KafkaClients.class.getClassLoader());
    } catch (ClassNotFoundException | LinkageError e) {
      throw new IllegalArgumentException(
          "--kafkaOauthLoginCallbackHandler=" + handler + ": no such class on the class path");
    }
    if (!AuthenticateCallbackHandler.class.isAssignableFrom(type)) {
      throw new IllegalArgumentException(
          "--kafkaOauthLoginCallbackHandler="
              + handler
              + ": not an "
              + AuthenticateCallbackHandler.class.getName());
    }
  }

  /**
   * A store's file option, checked: at most one of it and its secret option, TLS only, and a local
   * file readable here or a URI some Beam file system reads.
   */
  private static @Nullable String store(
      String fileOption,
      @Nullable String file,
      String secretOption,
      @Nullable String secret,
      boolean tls,
      KafkaOptions options) {
    file = blankToNull(file);
    String given = oneOf(fileOption, file, secretOption, secret);
    if (given != null && !tls) {
      throw new IllegalArgumentException(given + " needs --kafkaSecurityProtocol=SSL or SASL_SSL");
    }
    if (file != null) {
      WorkerFiles.check(file, fileOption, options);
    }
    return file;
  }

  /**
   * A store password's file option, checked: at most one of it and its secret option, only with the
   * store, and a readable local file.
   */
  private static @Nullable String passwordFile(
      String fileOption,
      @Nullable String file,
      String secretOption,
      @Nullable String secret,
      boolean store,
      String storeOptions) {
    file = blankToNull(file);
    String given = oneOf(fileOption, file, secretOption, secret);
    if (given != null && !store) {
      throw new IllegalArgumentException(given + " needs " + storeOptions);
    }
    if (file != null && !Files.isReadable(Paths.get(file))) {
      throw new IllegalArgumentException(fileOption + "=" + file + ": no readable file there");
    }
    return file;
  }

  /** Which of a file option and its secret option is given (null: neither); both is an error. */
  private static @Nullable String oneOf(
      String fileOption, @Nullable String file, String secretOption, @Nullable String secret) {
    if (file != null && secret != null) {
      throw new IllegalArgumentException(
          "use one of " + fileOption + " and " + secretOption + ", not both");
    }
    return file != null ? fileOption : secret != null ? secretOption : null;
  }

  /**
   * A secret version option, checked for its form only; {@code used} collects the options given.
   * The value is not repeated in a message: it might be the secret itself, pasted by mistake.
   */
  private static @Nullable String secret(String option, @Nullable String value, List<String> used) {
    if (value == null) {
      return null;
    }
    if (!SecretManagerSecrets.isReference(value.trim())) {
      throw new IllegalArgumentException(
          option
              + " is not a Secret Manager secret version: use "
              + SecretManagerSecrets.FORM
              + " with VERSION a number or latest, e.g. "
              + option
              + "="
              + SecretManagerSecrets.example(option));
    }
    used.add(option);
    return value.trim();
  }

  private static String storeType(String option, @Nullable String type) {
    String upper = type == null ? "PKCS12" : type.trim().toUpperCase(Locale.ROOT);
    if (!STORE_TYPES.contains(upper)) {
      throw new IllegalArgumentException(option + "=" + type + ": use one of " + STORE_TYPES);
    }
    return upper;
  }

  private static @Nullable String blankToNull(@Nullable String value) {
    return value == null || value.isBlank() ? null : value.trim();
  }

  public String bootstrapServers() {
    return bootstrapServers;
  }

  /**
   * Bootstrap servers, security and the client properties file's settings, secrets included: call
   * only where a client is created. The file's settings come first, Tidemark's on top.
   */
  public Map<String, Object> connectionConfig() {
    Map<String, Object> config = new HashMap<>();
    Map<String, String> jaasOptions = Map.of();
    if (clientProperties != null) {
      KafkaClientProperties.Checked checked = checkedProperties();
      config.putAll(checked.kafka());
      jaasOptions = checked.jaas();
    }
    config.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    config.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, securityProtocol);
    if (saslMechanism != null) {
      config.put(SaslConfigs.SASL_MECHANISM, saslMechanism);
      config.put(SaslConfigs.SASL_JAAS_CONFIG, jaasConfig(jaasOptions));
      if (oauthLoginCallbackHandler != null) {
        config.put(SaslConfigs.SASL_LOGIN_CALLBACK_HANDLER_CLASS, oauthLoginCallbackHandler);
      }
    }
    if (truststoreFile != null || truststoreSecret != null) {
      config.put(
          SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG,
          truststoreFile != null
              ? WorkerFiles.storePath(truststoreFile, "--kafkaTruststoreFile")
              : WorkerFiles.storePath(
                  truststoreSecret,
                  secretManagerEndpoint,
                  "--kafkaTruststoreSecret",
                  "trust store"));
      config.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, truststoreType);
      String password =
          secretValue(
              truststorePasswordFile,
              truststorePasswordSecret,
              "--kafkaTruststorePasswordSecret",
              "trust store password");
      if (password != null) {
        config.put(SslConfigs.SSL_TRUSTSTORE_PASSWORD_CONFIG, password);
      }
    }
    if (keystoreFile != null || keystoreSecret != null) {
      config.put(
          SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG,
          keystoreFile != null
              ? WorkerFiles.storePath(keystoreFile, "--kafkaKeystoreFile")
              : WorkerFiles.storePath(
                  keystoreSecret, secretManagerEndpoint, "--kafkaKeystoreSecret", "key store"));
      config.put(SslConfigs.SSL_KEYSTORE_TYPE_CONFIG, keystoreType);
      String keystorePassword =
          secretValue(
              keystorePasswordFile,
              keystorePasswordSecret,
              "--kafkaKeystorePasswordSecret",
              "key store password");
      if (keystorePassword != null) {
        config.put(SslConfigs.SSL_KEYSTORE_PASSWORD_CONFIG, keystorePassword);
      }
      String keyPassword =
          secretValue(
              keyPasswordFile, keyPasswordSecret, "--kafkaKeyPasswordSecret", "key password");
      if (keyPassword != null) {
        config.put(SslConfigs.SSL_KEY_PASSWORD_CONFIG, keyPassword);
      }
    }
    return config;
  }

  /** The client properties file, read (from the cache for a URI) and checked. */
  private KafkaClientProperties.Checked checkedProperties() {
    String location = Objects.requireNonNull(clientProperties);
    return KafkaClientProperties.check(
        WorkerFiles.read(location, KafkaClientProperties.OPTION),
        location,
        optionValues(),
        OAUTHBEARER.equals(saslMechanism));
  }

  /** The values the options give the owned Kafka settings that are not secrets. */
  private Map<String, String> optionValues() {
    Map<String, String> values = new LinkedHashMap<>();
    values.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    values.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, securityProtocol);
    if (saslMechanism != null) {
      values.put(SaslConfigs.SASL_MECHANISM, saslMechanism);
    }
    if (oauthLoginCallbackHandler != null) {
      values.put(SaslConfigs.SASL_LOGIN_CALLBACK_HANDLER_CLASS, oauthLoginCallbackHandler);
    }
    if (truststoreFile != null || truststoreSecret != null) {
      values.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, truststoreType);
    }
    if (keystoreType != null) {
      values.put(SslConfigs.SSL_KEYSTORE_TYPE_CONFIG, keystoreType);
    }
    return values;
  }

  /** The JAAS login of {@link #saslMechanism}, with the password read now. */
  private String jaasConfig(Map<String, String> jaasOptions) {
    String mechanism = Objects.requireNonNull(saslMechanism);
    if (mechanism.equals(OAUTHBEARER)) {
      StringBuilder jaas =
          new StringBuilder(
              "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required");
      if (username != null || usernameSecret != null) {
        jaas.append(" clientId=\"")
            .append(jaasEscape(username()))
            .append("\" clientSecret=\"")
            .append(jaasEscape(password()))
            .append('"');
      }
      return jaas.append(KafkaClientProperties.jaasOptions(jaasOptions)).append(';').toString();
    }
    String module =
        mechanism.equals("PLAIN")
            ? "org.apache.kafka.common.security.plain.PlainLoginModule"
            : "org.apache.kafka.common.security.scram.ScramLoginModule";
    return module
        + " required username=\""
        + jaasEscape(username())
        + "\" password=\""
        + jaasEscape(password())
        + "\";";
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

  /** The SASL user name: the option's, or read now from its secret version. */
  private String username() {
    if (username != null) {
      return username;
    }
    return SecretManagerSecrets.password(
        Objects.requireNonNull(usernameSecret),
        secretManagerEndpoint,
        "--kafkaUsernameSecret",
        "SASL user name");
  }

  private String password() {
    String fromFileOrSecret =
        secretValue(passwordFile, passwordSecret, "--kafkaPasswordSecret", "SASL password");
    if (fromFileOrSecret != null) {
      return fromFileOrSecret;
    }
    String value = System.getenv(Objects.requireNonNull(passwordEnv));
    if (value == null) {
      throw new IllegalStateException(
          "environment variable " + passwordEnv + " (--kafkaPasswordEnv) is not set here");
    }
    return value;
  }

  /** A password from its file or secret version; null when it has neither. */
  private @Nullable String secretValue(
      @Nullable String file, @Nullable String secret, String secretOption, String what) {
    if (file != null) {
      return readSecretFile(file);
    }
    if (secret != null) {
      return SecretManagerSecrets.password(secret, secretManagerEndpoint, secretOption, what);
    }
    return null;
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

  static String jaasEscape(String value) {
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
      out.append(", ").append(saslMechanism);
      if (username != null || usernameSecret != null) {
        out.append(" as ").append(username != null ? username : "secret " + usernameSecret);
        out.append(", password from ")
            .append(
                passwordFile != null
                    ? "file " + passwordFile
                    : passwordSecret != null ? "secret " + passwordSecret : "env " + passwordEnv);
      }
    }
    if (oauthLoginCallbackHandler != null) {
      out.append(", login handler ").append(oauthLoginCallbackHandler);
    }
    if (truststoreFile != null) {
      out.append(", truststore ").append(truststoreFile);
    } else if (truststoreSecret != null) {
      out.append(", truststore from secret ").append(truststoreSecret);
    }
    if (keystoreFile != null) {
      out.append(", keystore ").append(keystoreFile);
    } else if (keystoreSecret != null) {
      out.append(", keystore from secret ").append(keystoreSecret);
    }
    if (clientProperties != null) {
      out.append(", client properties ").append(clientProperties);
    }
    return out.append('}').toString();
  }
}
