package dev.tidemark.launcher.it.kafka;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;
import static org.junit.Assert.fail;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tidemark.launcher.KafkaFeed;
import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import kafka.testkit.KafkaClusterTestKit;
import kafka.testkit.TestKitNodes;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.display.DisplayData;
import org.apache.beam.sdk.util.common.ReflectHelpers;
import org.apache.beam.sdk.util.construction.PipelineOptionsTranslation;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A secured Kafka broker for the security tests, no mocks: one KRaft node (broker and controller
 * combined) whose client listeners speak SASL_PLAINTEXT and SASL_SSL (both with PLAIN,
 * SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER, whose tokens Kafka's unsecured JWS validator
 * checks), SSL, and SSL with {@code ssl.client.auth=required} (mutual TLS), with self-signed
 * certificates for the broker and a client made by the JDK's {@code keytool}; and the helpers those
 * tests share: client round trips through {@link KafkaClients}, a client in a fresh JVM ({@link
 * Probe}) whose INFO log can be searched for secrets, and a collector of every transform's display
 * data and Java serialization. Used by {@link KafkaSecurityIT} and {@link KafkaSecretManagerIT}.
 *
 * <p>The log checks run the client in a fresh JVM: slf4j-simple fixes a logger's level when the
 * logger is created, so in a shared test JVM Kafka's loggers may already exist at the WARN level of
 * {@code simplelogger.properties}.
 */
final class SecuredKafka {
  /** The testkit's client listener (also the inter-broker one), switched to SASL_PLAINTEXT. */
  static final String SASL_LISTENER = "EXTERNAL";

  static final String SASL_SSL_LISTENER = "SECURE";
  static final String SSL_LISTENER = "TLS";

  /** SSL that requires a client certificate: the one in {@link #clientKeystore}. */
  static final String MTLS_LISTENER = "MTLS";

  static final String ADMIN_USER = "admin";
  static final String ADMIN_PASSWORD = "admin-Tidemark-31337";
  static final String PLAIN_USER = "tidemark";
  static final String PLAIN_PASSWORD = "s3cr3t-Tidemark-92871";
  static final String SCRAM_USER = "tidemark-scram";
  static final String SCRAM_PASSWORD = "s3cr3t-Tidemark-scram-40417";
  static final String SCRAM_256_USER = "tidemark-scram256";
  static final String SCRAM_256_PASSWORD = "s3cr3t-Tidemark-scram256-18803";
  static final String KEYSTORE_PASSWORD = "broker-keystore-61150";
  static final String TRUSTSTORE_PASSWORD = "s3cr3t-Truststore-55102";

  /** The client key store's password (PKCS12: also the private key's). */
  static final String CLIENT_KEYSTORE_PASSWORD = "s3cr3t-Keystore-70733";

  /** The broker's store of trusted client certificates: the broker's, not a client secret. */
  private static final String CLIENT_TRUST_PASSWORD = "broker-client-trust-20491";

  /**
   * slf4j-simple's level properties: INFO in the probe, for everything and for Kafka's clients by
   * name (a system property wins over {@code simplelogger.properties}).
   */
  private static final String DEFAULT_LOG_LEVEL = "org.slf4j.simpleLogger.defaultLogLevel";

  private static final String KAFKA_LOG_LEVEL = "org.slf4j.simpleLogger.log.org.apache.kafka";

  private final KafkaClusterTestKit cluster;

  /** The SASL_PLAINTEXT listener (PLAIN and SCRAM-SHA-512). */
  final String saslServers;

  /** The SASL_SSL listener (PLAIN and SCRAM-SHA-512). */
  final String saslSslServers;

  /** The SSL listener. */
  final String sslServers;

  /** The SSL listener that requires a client certificate. */
  final String mtlsServers;

  /** The client's certificate and key (PKCS12), trusted by {@link #MTLS_LISTENER}. */
  final Path clientKeystore;

  /** {@link #CLIENT_KEYSTORE_PASSWORD}, as a password file. */
  final Path clientKeystorePasswordFile;

  /** {@link #SCRAM_256_PASSWORD}, as a password file. */
  final Path scram256PasswordFile;

  /**
   * Trusts the broker's self-signed certificate; its password is in {@link
   * #truststorePasswordFile}.
   */
  final Path truststore;

  final Path truststorePasswordFile;

  /** {@link #PLAIN_PASSWORD}, as a password file. */
  final Path plainPasswordFile;

  /** {@link #SCRAM_PASSWORD}, as a password file. */
  final Path scramPasswordFile;

  private SecuredKafka(
      KafkaClusterTestKit cluster,
      String saslServers,
      String saslSslServers,
      String sslServers,
      String mtlsServers,
      Path truststore,
      Path truststorePasswordFile,
      Path plainPasswordFile,
      Path scramPasswordFile,
      Path scram256PasswordFile,
      Path clientKeystore,
      Path clientKeystorePasswordFile) {
    this.cluster = cluster;
    this.saslServers = saslServers;
    this.saslSslServers = saslSslServers;
    this.sslServers = sslServers;
    this.mtlsServers = mtlsServers;
    this.scram256PasswordFile = scram256PasswordFile;
    this.clientKeystore = clientKeystore;
    this.clientKeystorePasswordFile = clientKeystorePasswordFile;
    this.truststore = truststore;
    this.truststorePasswordFile = truststorePasswordFile;
    this.plainPasswordFile = plainPasswordFile;
    this.scramPasswordFile = scramPasswordFile;
  }

  /**
   * Starts the broker with its files in {@code dir}, creates {@code topicNames} (one partition
   * each) and the SCRAM user, and waits until the broker accepts that user.
   */
  static SecuredKafka start(Path dir, List<String> topicNames) throws Exception {
    Path plainPasswordFile = secretFile(dir, "plain.password", PLAIN_PASSWORD);
    Path scramPasswordFile = secretFile(dir, "scram.password", SCRAM_PASSWORD);
    Path scram256PasswordFile = secretFile(dir, "scram256.password", SCRAM_256_PASSWORD);
    Path clientKeystorePasswordFile =
        secretFile(dir, "client-keystore.password", CLIENT_KEYSTORE_PASSWORD);
    Path truststorePasswordFile = secretFile(dir, "truststore.password", TRUSTSTORE_PASSWORD);
    Path keystore = dir.resolve("broker.p12");
    Path certificate = dir.resolve("broker.pem");
    Path truststore = dir.resolve("truststore.p12");
    keytool(
        dir,
        "-genkeypair",
        "-alias",
        "broker",
        "-keyalg",
        "EC",
        "-groupname",
        "secp256r1",
        "-validity",
        "2",
        "-dname",
        "CN=localhost",
        "-ext",
        "SAN=dns:localhost,ip:127.0.0.1",
        "-keystore",
        keystore.toString(),
        "-storetype",
        "PKCS12",
        "-storepass",
        KEYSTORE_PASSWORD);
    keytool(
        dir,
        "-exportcert",
        "-rfc",
        "-alias",
        "broker",
        "-keystore",
        keystore.toString(),
        "-storetype",
        "PKCS12",
        "-storepass",
        KEYSTORE_PASSWORD,
        "-file",
        certificate.toString());
    keytool(
        dir,
        "-importcert",
        "-noprompt",
        "-alias",
        "broker",
        "-file",
        certificate.toString(),
        "-keystore",
        truststore.toString(),
        "-storetype",
        "PKCS12",
        "-storepass",
        TRUSTSTORE_PASSWORD);
    Path clientKeystore = dir.resolve("client.p12");
    Path clientCertificate = dir.resolve("client.pem");
    Path clientTrust = dir.resolve("client-trust.p12");
    keytool(
        dir,
        "-genkeypair",
        "-alias",
        "client",
        "-keyalg",
        "EC",
        "-groupname",
        "secp256r1",
        "-validity",
        "2",
        "-dname",
        "CN=tidemark-client",
        "-keystore",
        clientKeystore.toString(),
        "-storetype",
        "PKCS12",
        "-storepass",
        CLIENT_KEYSTORE_PASSWORD);
    keytool(
        dir,
        "-exportcert",
        "-rfc",
        "-alias",
        "client",
        "-keystore",
        clientKeystore.toString(),
        "-storetype",
        "PKCS12",
        "-storepass",
        CLIENT_KEYSTORE_PASSWORD,
        "-file",
        clientCertificate.toString());
    keytool(
        dir,
        "-importcert",
        "-noprompt",
        "-alias",
        "client",
        "-file",
        clientCertificate.toString(),
        "-keystore",
        clientTrust.toString(),
        "-storetype",
        "PKCS12",
        "-storepass",
        CLIENT_TRUST_PASSWORD);

    String plainJaas =
        "org.apache.kafka.common.security.plain.PlainLoginModule required"
            + (" username=\"" + ADMIN_USER + "\" password=\"" + ADMIN_PASSWORD + "\"")
            + (" user_" + ADMIN_USER + "=\"" + ADMIN_PASSWORD + "\"")
            + (" user_" + PLAIN_USER + "=\"" + PLAIN_PASSWORD + "\";");
    String scramJaas = "org.apache.kafka.common.security.scram.ScramLoginModule required;";
    // The broker's own OAUTHBEARER login; clients' tokens are checked by Kafka's default
    // server-side handler for OAUTHBEARER, the unsecured JWS validator.
    String oauthJaas =
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required"
            + " unsecuredLoginStringClaim_sub=\""
            + ADMIN_USER
            + "\";";
    String mtls = new ListenerName(MTLS_LISTENER).configPrefix();
    KafkaClusterTestKit.Builder builder =
        new KafkaClusterTestKit.Builder(
                new TestKitNodes.Builder()
                    .setCombined(true)
                    .setNumBrokerNodes(1)
                    .setNumControllerNodes(1)
                    .build())
            // The testkit sets these four with putIfAbsent: ours win. The controller listener
            // stays PLAINTEXT; the client listeners are secured. No authorizer: authentication
            // only.
            .setConfigProp(
                "listeners",
                String.join(
                    ",",
                    SASL_LISTENER + "://localhost:0",
                    SASL_SSL_LISTENER + "://localhost:0",
                    SSL_LISTENER + "://localhost:0",
                    MTLS_LISTENER + "://localhost:0",
                    "CONTROLLER://localhost:0"))
            .setConfigProp(
                "listener.security.protocol.map",
                String.join(
                    ",",
                    SASL_LISTENER + ":SASL_PLAINTEXT",
                    SASL_SSL_LISTENER + ":SASL_SSL",
                    SSL_LISTENER + ":SSL",
                    MTLS_LISTENER + ":SSL",
                    "CONTROLLER:PLAINTEXT"))
            .setConfigProp("inter.broker.listener.name", SASL_LISTENER)
            .setConfigProp(
                "sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER")
            .setConfigProp("sasl.mechanism.inter.broker.protocol", "PLAIN")
            .setConfigProp("ssl.keystore.location", keystore.toString())
            .setConfigProp("ssl.keystore.type", "PKCS12")
            .setConfigProp("ssl.keystore.password", KEYSTORE_PASSWORD)
            .setConfigProp("ssl.key.password", KEYSTORE_PASSWORD)
            // Mutual TLS: this listener requires a certificate its own trust store holds.
            .setConfigProp(mtls + "ssl.client.auth", "required")
            .setConfigProp(mtls + "ssl.truststore.location", clientTrust.toString())
            .setConfigProp(mtls + "ssl.truststore.type", "PKCS12")
            .setConfigProp(mtls + "ssl.truststore.password", CLIENT_TRUST_PASSWORD)
            // One node: the internal topics cannot have more than one replica.
            .setConfigProp("offsets.topic.replication.factor", "1")
            .setConfigProp("offsets.topic.num.partitions", "1")
            .setConfigProp("transaction.state.log.replication.factor", "1")
            .setConfigProp("transaction.state.log.min.isr", "1")
            .setConfigProp("group.initial.rebalance.delay.ms", "0")
            .setConfigProp("auto.create.topics.enable", "false");
    for (String listener : List.of(SASL_LISTENER, SASL_SSL_LISTENER)) {
      String prefix = new ListenerName(listener).configPrefix();
      builder
          .setConfigProp(prefix + "plain.sasl.jaas.config", plainJaas)
          .setConfigProp(prefix + "scram-sha-256.sasl.jaas.config", scramJaas)
          .setConfigProp(prefix + "scram-sha-512.sasl.jaas.config", scramJaas)
          .setConfigProp(prefix + "oauthbearer.sasl.jaas.config", oauthJaas);
    }
    KafkaClusterTestKit cluster = builder.build();
    try {
      return start(
          cluster,
          topicNames,
          truststore,
          truststorePasswordFile,
          plainPasswordFile,
          scramPasswordFile,
          scram256PasswordFile,
          clientKeystore,
          clientKeystorePasswordFile);
    } catch (Exception | Error e) {
      // A broker that failed to come up is stopped too.
      try {
        cluster.close();
      } catch (Exception suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  private static SecuredKafka start(
      KafkaClusterTestKit cluster,
      List<String> topicNames,
      Path truststore,
      Path truststorePasswordFile,
      Path plainPasswordFile,
      Path scramPasswordFile,
      Path scram256PasswordFile,
      Path clientKeystore,
      Path clientKeystorePasswordFile)
      throws Exception {
    cluster.format();
    cluster.startup();
    // Not cluster.waitForReadyBrokers(): its retry loop needs JUnit 5 on the class path. The
    // admin calls below wait for the broker's metadata themselves.
    cluster
        .controllers()
        .values()
        .iterator()
        .next()
        .controller()
        .waitForReadyBrokers(1)
        .get(60, TimeUnit.SECONDS);
    String saslServers = cluster.bootstrapServers();
    String saslSslServers = "localhost:" + boundPort(cluster, SASL_SSL_LISTENER);
    String sslServers = "localhost:" + boundPort(cluster, SSL_LISTENER);
    String mtlsServers = "localhost:" + boundPort(cluster, MTLS_LISTENER);

    Map<String, Object> admin = new HashMap<>();
    admin.put("bootstrap.servers", saslServers);
    admin.put("security.protocol", "SASL_PLAINTEXT");
    admin.put("sasl.mechanism", "PLAIN");
    admin.put(
        "sasl.jaas.config",
        "org.apache.kafka.common.security.plain.PlainLoginModule required username=\""
            + ADMIN_USER
            + "\" password=\""
            + ADMIN_PASSWORD
            + "\";");
    try (Admin client = Admin.create(admin)) {
      List<NewTopic> topics = new ArrayList<>();
      for (String topic : topicNames) {
        // Kept forever: the feeds stamp records with their events' times, months old, which the
        // broker's 7-day retention would delete at its first check, 30 s after the start.
        topics.add(new NewTopic(topic, 1, (short) 1).configs(Map.of("retention.ms", "-1")));
      }
      client.createTopics(topics).all().get(30, TimeUnit.SECONDS);
      client
          .alterUserScramCredentials(
              List.of(
                  new UserScramCredentialUpsertion(
                      SCRAM_USER,
                      new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096),
                      SCRAM_PASSWORD),
                  new UserScramCredentialUpsertion(
                      SCRAM_256_USER,
                      new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096),
                      SCRAM_256_PASSWORD)))
          .all()
          .get(30, TimeUnit.SECONDS);
    }
    awaitScramCredential(saslServers, "SCRAM-SHA-512", SCRAM_USER, scramPasswordFile);
    awaitScramCredential(saslServers, "SCRAM-SHA-256", SCRAM_256_USER, scram256PasswordFile);
    return new SecuredKafka(
        cluster,
        saslServers,
        saslSslServers,
        sslServers,
        mtlsServers,
        truststore,
        truststorePasswordFile,
        plainPasswordFile,
        scramPasswordFile,
        scram256PasswordFile,
        clientKeystore,
        clientKeystorePasswordFile);
  }

  /** Stops the broker. */
  void close() throws Exception {
    cluster.close();
  }

  static KafkaOptions options(String... args) {
    return PipelineOptionsFactory.fromArgs(args).as(KafkaOptions.class);
  }

  static Path secretFile(Path dir, String name, String secret) throws IOException {
    return Files.writeString(dir.resolve(name), secret + "\n", UTF_8);
  }

  private static void keytool(Path dir, String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(Paths.get(System.getProperty("java.home"), "bin", "keytool").toString());
    command.addAll(List.of(args));
    Path log = Files.createTempFile(dir, "keytool", ".log");
    Process process =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
      process.destroyForcibly();
      fail("keytool " + args[0] + " failed: " + Files.readString(log, UTF_8));
    }
  }

  private static int boundPort(KafkaClusterTestKit cluster, String listener) {
    return cluster.brokers().values().iterator().next().boundPort(new ListenerName(listener));
  }

  /** Waits until the broker accepts the SCRAM user: credentials reach it through the metadata. */
  private static void awaitScramCredential(
      String saslServers, String mechanism, String user, Path passwordFile) throws Exception {
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaBootstrapServers=" + saslServers,
                "--kafkaSecurityProtocol=SASL_PLAINTEXT",
                "--kafkaSaslMechanism=" + mechanism,
                "--kafkaUsername=" + user,
                "--kafkaPasswordFile=" + passwordFile));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      try (Admin admin = Admin.create(clients.connectionConfig())) {
        admin.describeCluster().clusterId().get(30, TimeUnit.SECONDS);
        return;
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof SaslAuthenticationException)
            || System.nanoTime() > deadline) {
          throw e;
        }
        Thread.sleep(100);
      }
    }
  }

  static Map<String, Object> byteSerializers() {
    Map<String, Object> config = new HashMap<>();
    config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    return config;
  }

  static List<String> values(List<ConsumerRecord<byte[], byte[]>> records) {
    List<String> values = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> record : records) {
      values.add(new String(record.value(), UTF_8));
    }
    return values;
  }

  /** Reads {@code count} records of partition 0 with the consumer KafkaIO would create. */
  static List<String> readWithConsumerFactory(KafkaClients clients, String topic, int count) {
    Map<String, Object> config = new HashMap<>();
    config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
    try (Consumer<byte[], byte[]> consumer = clients.consumerFactory().apply(config)) {
      TopicPartition partition = new TopicPartition(topic, 0);
      consumer.assign(List.of(partition));
      consumer.seekToBeginning(List.of(partition));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (records.size() < count && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(200)).forEach(records::add);
      }
    }
    return values(records);
  }

  /**
   * Runs {@link Probe} in a fresh JVM on this test's class path, with Kafka's client loggers at
   * INFO and {@code environment} added; returns everything it printed.
   */
  static String probe(Path dir, Map<String, String> environment, String topic, String... options)
      throws IOException, InterruptedException {
    // The class path goes through an argument file: it may be longer than one argument may be.
    Path argFile = Files.createTempFile(dir, "probe", ".args");
    Files.writeString(argFile, "-cp \"" + System.getProperty("java.class.path") + "\"\n", UTF_8);
    Path log = Files.createTempFile(dir, "probe", ".log");
    List<String> command = new ArrayList<>();
    command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    command.add("@" + argFile);
    command.add("-Xmx256m");
    command.add("-XX:TieredStopAtLevel=1");
    command.add("-D" + DEFAULT_LOG_LEVEL + "=info");
    command.add("-D" + KAFKA_LOG_LEVEL + "=info");
    command.add(Probe.class.getName());
    command.add(topic);
    command.addAll(List.of(options));
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    builder.environment().putAll(environment);
    Process process = builder.start();
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      fail("the probe did not finish in 60 s:\n" + Files.readString(log, UTF_8));
    }
    String output = Files.readString(log, UTF_8);
    assertThat("probe exit code, output:\n" + output, process.exitValue(), is(0));
    return output;
  }

  /**
   * Plain Java serialization, uncompressed (Beam's {@code SerializableUtils} Snappy-compresses, in
   * which a string need not appear literally).
   */
  static byte[] javaSerialized(Object object) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(object);
    }
    return bytes.toByteArray();
  }

  /** Kafka logged its client configuration and a SASL login at INFO, and no secret. */
  static void assertKafkaLoggedWithoutSecrets(String output, List<String> secrets) {
    assertThat(output, containsString("sasl.jaas.config = [hidden]"));
    assertThat(output, containsString("Successfully logged in."));
    assertKafkaConfigLoggedWithoutSecrets(output, secrets);
  }

  /** Kafka logged its client configuration at INFO, and no secret. */
  static void assertKafkaConfigLoggedWithoutSecrets(String output, List<String> secrets) {
    assertThat(output, containsString("INFO org.apache.kafka.clients.producer.ProducerConfig"));
    assertThat(output, containsString("INFO org.apache.kafka.clients.consumer.ConsumerConfig"));
    for (String secret : secrets) {
      assertThat(output, not(containsString(secret)));
    }
  }

  /**
   * The display data of every transform, composite and primitive, and the Java serialization
   * (uncompressed) of every transform that is serializable.
   */
  /**
   * The places a secret must never reach, by name: the options (text, JSON, proto), the clients'
   * text and the pipeline's display data. Callers add their own places.
   */
  static Map<String, String> exposedPlaces(
      PipelineOptions options, KafkaClients clients, GraphCollector graph) throws Exception {
    Map<String, String> exposed = new LinkedHashMap<>();
    exposed.put("options.toString()", options.toString());
    exposed.put("KafkaClients.toString()", clients.toString());
    exposed.put("display data", graph.displayData.toString());
    exposed.put(
        "options JSON",
        new ObjectMapper()
            .registerModules(ObjectMapper.findModules(ReflectHelpers.findClassLoader()))
            .writeValueAsString(options));
    exposed.put("options proto", PipelineOptionsTranslation.toProto(options).toString());
    return exposed;
  }

  static final class GraphCollector extends Pipeline.PipelineVisitor.Defaults {
    final List<DisplayData> displayData = new ArrayList<>();
    final ByteArrayOutputStream serialized = new ByteArrayOutputStream();
    int serializedTransforms;

    @Override
    public CompositeBehavior enterCompositeTransform(TransformHierarchy.Node node) {
      if (!node.isRootNode()) {
        collect(node.getTransform());
      }
      return CompositeBehavior.ENTER_TRANSFORM;
    }

    @Override
    public void visitPrimitiveTransform(TransformHierarchy.Node node) {
      collect(node.getTransform());
    }

    private void collect(PTransform<?, ?> transform) {
      displayData.add(DisplayData.from(transform));
      try {
        serialized.writeBytes(javaSerialized(transform));
        serializedTransforms++;
      } catch (IOException e) {
        // Not serializable: a runner does not ship it either.
      }
    }
  }

  /**
   * A Kafka client in its own JVM: {@code args} are a topic and Kafka options; produces three
   * records with {@link KafkaClients#producerFactory} and prints what {@link KafkaFeed#readAll}
   * reads back.
   */
  public static final class Probe {
    private Probe() {}

    public static void main(String[] args) throws Exception {
      String topic = args[0];
      KafkaClients clients = KafkaClients.from(options(Arrays.copyOfRange(args, 1, args.length)));
      try (Producer<byte[], byte[]> producer =
          clients.<byte[], byte[]>producerFactory().apply(byteSerializers())) {
        for (int i = 0; i < 3; i++) {
          producer.send(new ProducerRecord<>(topic, ("probe-" + i).getBytes(UTF_8))).get();
        }
      }
      System.out.println("PROBE read " + values(KafkaFeed.readAll(clients, topic)));
    }
  }
}
