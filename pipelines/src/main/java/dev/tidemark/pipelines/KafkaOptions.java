package dev.tidemark.pipelines;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.Hidden;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * Kafka in and out: the broker, topics, the sink mode, client security and the operator's own
 * client settings. Secrets are never options: an option names where a secret is (a file, an
 * environment variable, a Secret Manager secret version), and the secret is read on the worker when
 * a client is created, never at pipeline construction. The rules (which options go together, which
 * Kafka settings the client properties file may not set) are in {@code KafkaClients} and {@code
 * KafkaClientProperties}.
 */
public interface KafkaOptions extends PipelineOptions {
  /** How decisions (and the other outputs) reach Kafka. */
  enum KafkaSinkMode {
    /** KafkaIO exactly-once sink: Kafka transactions committed per checkpointed bundle. */
    transactional,
    /** Idempotent producer, no transactions: at-least-once records, low latency. */
    idempotent
  }

  @Description(
      "Kafka bootstrap servers (host:port,...). 'embedded' starts a one-node KRaft broker in this"
          + " JVM, creates the topics and feeds it --input: the local live demo.")
  String getKafkaBootstrapServers();

  void setKafkaBootstrapServers(String servers);

  @Description("Topic the CloudEvents are read from (binary or structured mode).")
  @Default.String("tidemark.events")
  String getKafkaInputTopic();

  void setKafkaInputTopic(String topic);

  @Description(
      "Labels from Kafka: a topic of tidemark.label.v1 CloudEvents (structured or binary mode),"
          + " read without end beside --kafkaInputTopic with the same brokers, security and"
          + " consumer group, timestamped and watermarked by each label's own time. Instead of"
          + " --labelsInput, with --source=kafka (docs/labels.md).")
  String getKafkaLabelsTopic();

  void setKafkaLabelsTopic(String topic);

  @Description("Consumer group of the source; offsets are committed when a checkpoint finalizes.")
  @Default.String("tidemark")
  String getKafkaConsumerGroup();

  void setKafkaConsumerGroup(String group);

  @Description(
      "Where a consumer group with no committed offset starts: earliest or latest (auto.offset"
          + ".reset).")
  @Default.String("earliest")
  String getKafkaStartOffset();

  void setKafkaStartOffset(String reset);

  @Description(
      "A partition with no new record for this long (processing time) stops holding the"
          + " watermark back (ISO-8601).")
  @Default.String("PT10S")
  String getKafkaIdleTimeout();

  void setKafkaIdleTimeout(String duration);

  @Description(
      "Stop after reading this many records (a bounded read: the job ends by itself). Unset:"
          + " read forever.")
  Long getKafkaMaxRecords();

  void setKafkaMaxRecords(Long records);

  @Description(
      "Topic for decisions: key = decisionId, value = decision JSON. Unless given, the spec's"
          + " outputs.<profile>.names.decisions, or tidemark.decisions.")
  @Default.InstanceFactory(SpecDefaults.DecisionsTopic.class)
  String getKafkaDecisionsTopic();

  void setKafkaDecisionsTopic(String topic);

  @Description(
      "Topic for dead letters (same JSON as dead-letters/ files). Unless given, the spec's name"
          + " for the profile, or tidemark.dead-letters.")
  @Default.InstanceFactory(SpecDefaults.DeadLettersTopic.class)
  String getKafkaDeadLettersTopic();

  void setKafkaDeadLettersTopic(String topic);

  @Description(
      "Topic for duplicates (same JSON as duplicates/ files). Unless given, the spec's name for"
          + " the profile, or tidemark.duplicates.")
  @Default.InstanceFactory(SpecDefaults.DuplicatesTopic.class)
  String getKafkaDuplicatesTopic();

  void setKafkaDuplicatesTopic(String topic);

  @Description(
      "Topic for too-late records (same JSON as too-late/ files). Unless given, the spec's name"
          + " for the profile, or tidemark.too-late.")
  @Default.InstanceFactory(SpecDefaults.TooLateTopic.class)
  String getKafkaTooLateTopic();

  void setKafkaTooLateTopic(String topic);

  @Description(
      "Kafka sink mode: transactional (exactly-once records for read_committed consumers,"
          + " visible at checkpoints; needs checkpointing) or idempotent (at-least-once records,"
          + " exactly-once state for a keep-latest-version consumer, low latency).")
  @Default.Enum("idempotent")
  KafkaSinkMode getKafkaSinkMode();

  void setKafkaSinkMode(KafkaSinkMode mode);

  @Description(
      "Transactional sink: the group id that stores the sink's committed sequence in Kafka. It"
          + " identifies this pipeline's sink across restarts and must not be shared with another"
          + " pipeline. Default: tidemark-<kafkaDecisionsTopic>.")
  String getKafkaSinkGroupId();

  void setKafkaSinkGroupId(String group);

  @Description("Transactional sink: shards, i.e. concurrent transactional producers per topic.")
  @Default.Integer(1)
  Integer getKafkaSinkShards();

  void setKafkaSinkShards(Integer shards);

  @Description("Security protocol: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.")
  @Default.String("PLAINTEXT")
  String getKafkaSecurityProtocol();

  void setKafkaSecurityProtocol(String protocol);

  @Description(
      "SASL mechanism: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER (with SASL_PLAINTEXT or"
          + " SASL_SSL). OAUTHBEARER needs --kafkaOauthLoginCallbackHandler.")
  String getKafkaSaslMechanism();

  void setKafkaSaslMechanism(String mechanism);

  @Description(
      "SASL user name. With OAUTHBEARER: the OAuth client id (clientId), optional, together with"
          + " a password source for the client secret. Alternative: --kafkaUsernameSecret.")
  String getKafkaUsername();

  void setKafkaUsername(String user);

  @Description(
      "Secret Manager secret version holding the SASL user name (first line):"
          + " projects/PROJECT/secrets/NAME/versions/VERSION, instead of --kafkaUsername. Read on"
          + " the worker with the password, not at launch. Never logged.")
  String getKafkaUsernameSecret();

  void setKafkaUsernameSecret(String secretVersion);

  @Description(
      "File holding the SASL password (first line). Read where the client starts; never logged."
          + " One of three password sources, with --kafkaPasswordEnv and --kafkaPasswordSecret.")
  String getKafkaPasswordFile();

  void setKafkaPasswordFile(String path);

  @Description(
      "Name of the environment variable holding the SASL password (alternative to"
          + " --kafkaPasswordFile and --kafkaPasswordSecret). Never logged.")
  String getKafkaPasswordEnv();

  void setKafkaPasswordEnv(String variable);

  @Description(
      "Secret Manager secret version holding the SASL password (first line):"
          + " projects/PROJECT/secrets/NAME/versions/VERSION, VERSION a number or latest"
          + " (alternative to --kafkaPasswordFile and --kafkaPasswordEnv). Read once per worker"
          + " JVM when its first Kafka client is created, not at launch; the workers' service"
          + " account needs roles/secretmanager.secretAccessor on the secret. Never logged.")
  String getKafkaPasswordSecret();

  void setKafkaPasswordSecret(String secretVersion);

  /**
   * For tests and emulators only: where {@link #getKafkaPasswordSecret} is read from, spoken to in
   * plain-text gRPC and without credentials. Hidden from {@code --help} and from the Flex Template.
   */
  @Hidden
  @Description(
      "For tests and emulators only: host:port of a Secret Manager endpoint spoken to in plain"
          + " text, without credentials. Unset: Google's Secret Manager with the default"
          + " credentials.")
  String getSecretManagerEndpoint();

  void setSecretManagerEndpoint(String hostAndPort);

  @Description(
      "OAUTHBEARER: the login callback handler class that obtains tokens"
          + " (sasl.login.callback.handler.class), e.g."
          + " org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler; its"
          + " settings (sasl.oauthbearer.token.endpoint.url, tidemark.jaas.scope, ...) go in"
          + " --kafkaClientProperties.")
  String getKafkaOauthLoginCallbackHandler();

  void setKafkaOauthLoginCallbackHandler(String className);

  @Description(
      "Kafka client settings in Java properties format (UTF-8), merged into every consumer and"
          + " producer: a local path or a Beam file system URI (file:, gs://). Read where the"
          + " client starts; never logged by Tidemark. It may not set the settings Tidemark owns"
          + " (security, group ids, idempotence, isolation, (de)serializers): see the docs.")
  String getKafkaClientProperties();

  void setKafkaClientProperties(String location);

  @Description(
      "TLS trust store (PKCS12, JKS, or PEM: X.509 certificates, as Strimzi and librdkafka keep"
          + " them) for SSL and SASL_SSL: a local path or a Beam file system URI (file:, gs://)."
          + " Alternative to --kafkaTruststoreSecret. Unset: the JDK's CAs.")
  String getKafkaTruststoreFile();

  void setKafkaTruststoreFile(String path);

  @Description(
      "Secret Manager secret version holding the trust store's bytes (alternative to"
          + " --kafkaTruststoreFile).")
  String getKafkaTruststoreSecret();

  void setKafkaTruststoreSecret(String secretVersion);

  @Description(
      "File holding the trust store password, if it has one (a PEM trust store has none). Never"
          + " logged.")
  String getKafkaTruststorePasswordFile();

  void setKafkaTruststorePasswordFile(String path);

  @Description(
      "Secret Manager secret version holding the trust store password (first line; alternative"
          + " to --kafkaTruststorePasswordFile). Never logged.")
  String getKafkaTruststorePasswordSecret();

  void setKafkaTruststorePasswordSecret(String secretVersion);

  @Description("TLS trust store type: PKCS12, JKS or PEM.")
  @Default.String("PKCS12")
  String getKafkaTruststoreType();

  void setKafkaTruststoreType(String type);

  @Description(
      "Mutual TLS: the client's key store for SSL and SASL_SSL (PKCS12, JKS, or PEM: a PKCS#8"
          + " private key followed by its certificate chain), a local path or a Beam file system URI"
          + " (file:, gs://). Alternative to --kafkaKeystoreSecret.")
  String getKafkaKeystoreFile();

  void setKafkaKeystoreFile(String path);

  @Description(
      "Mutual TLS: Secret Manager secret version holding the client key store's bytes"
          + " (alternative to --kafkaKeystoreFile).")
  String getKafkaKeystoreSecret();

  void setKafkaKeystoreSecret(String secretVersion);

  @Description(
      "File holding the key store password (first line). A PKCS12 or JKS key store needs this"
          + " or --kafkaKeystorePasswordSecret; a PEM one has none. Never logged.")
  String getKafkaKeystorePasswordFile();

  void setKafkaKeystorePasswordFile(String path);

  @Description(
      "Secret Manager secret version holding the key store password (first line). Never logged.")
  String getKafkaKeystorePasswordSecret();

  void setKafkaKeystorePasswordSecret(String secretVersion);

  @Description(
      "File holding the private key's password, if it differs from the key store password (PEM:"
          + " the encrypted private key's password). Never logged.")
  String getKafkaKeyPasswordFile();

  void setKafkaKeyPasswordFile(String path);

  @Description(
      "Secret Manager secret version holding the private key's password (alternative to"
          + " --kafkaKeyPasswordFile). Never logged.")
  String getKafkaKeyPasswordSecret();

  void setKafkaKeyPasswordSecret(String secretVersion);

  @Description("Mutual TLS key store type: PKCS12, JKS or PEM.")
  @Default.String("PKCS12")
  String getKafkaKeystoreType();

  void setKafkaKeystoreType(String type);
}
