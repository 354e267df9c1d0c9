package dev.tidemark.pipelines.io.kafka;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.allOf;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.fail;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.TidemarkPipeline;
import dev.tidemark.transforms.RawRecord;
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
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.runners.TransformHierarchy;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.display.DisplayData;
import org.apache.beam.sdk.util.common.ReflectHelpers;
import org.apache.beam.sdk.util.construction.PipelineOptionsTranslation;
import org.apache.beam.sdk.util.construction.PipelineTranslation;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;
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
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * Kafka client security against a real broker, no mocks: one KRaft node (broker and controller
 * combined) whose client listeners speak SASL_PLAINTEXT, SASL_SSL (both with PLAIN and
 * SCRAM-SHA-512) and SSL, with a self-signed certificate made by the JDK's {@code keytool}. Every
 * client comes from {@link KafkaClients}; the tests prove that records round-trip with each
 * protocol, mechanism and password source, that a wrong password or an untrusted certificate is
 * refused, that inconsistent options are refused with a message that says what to change, and that
 * no secret reaches the options, the display data, the serialized pipeline or Kafka's INFO logs.
 *
 * <p>The log checks run the client in a fresh JVM ({@link Probe}): slf4j-simple fixes a logger's
 * level when the logger is created, so in a shared test JVM Kafka's loggers may already exist at
 * the WARN level of {@code simplelogger.properties}. The fresh JVM also carries the environment
 * variable that {@code --kafkaPasswordEnv} names.
 */
@RunWith(JUnit4.class)
public class KafkaSecurityTest {
  @ClassRule public static final TemporaryFolder FOLDER = new TemporaryFolder();

  /** The testkit's client listener (also the inter-broker one), switched to SASL_PLAINTEXT. */
  private static final String SASL_LISTENER = "EXTERNAL";

  private static final String SASL_SSL_LISTENER = "SECURE";
  private static final String SSL_LISTENER = "TLS";

  private static final String ADMIN_USER = "admin";
  private static final String ADMIN_PASSWORD = "admin-Tidemark-31337";
  private static final String PLAIN_USER = "tidemark";
  private static final String PLAIN_PASSWORD = "s3cr3t-Tidemark-92871";
  private static final String SCRAM_USER = "tidemark-scram";
  private static final String SCRAM_PASSWORD = "s3cr3t-Tidemark-scram-40417";
  private static final String KEYSTORE_PASSWORD = "broker-keystore-61150";
  private static final String TRUSTSTORE_PASSWORD = "s3cr3t-Truststore-55102";

  /** Every client-side secret: none may appear outside the secret files and the client. */
  private static final List<String> SECRETS =
      List.of(PLAIN_PASSWORD, SCRAM_PASSWORD, TRUSTSTORE_PASSWORD);

  /** Set only in the environment of the {@link Probe} JVM. */
  private static final String PASSWORD_ENV = "TIDEMARK_TEST_KAFKA_PASSWORD";

  private static final String UNSET_ENV = "TIDEMARK_TEST_KAFKA_PASSWORD_NEVER_SET";

  /**
   * slf4j-simple's level properties: INFO in the probe, for everything and for Kafka's clients by
   * name (a system property wins over {@code simplelogger.properties}).
   */
  private static final String DEFAULT_LOG_LEVEL = "org.slf4j.simpleLogger.defaultLogLevel";

  private static final String KAFKA_LOG_LEVEL = "org.slf4j.simpleLogger.log.org.apache.kafka";

  private static final String PLAIN_TOPIC = "security.plain";
  private static final String SCRAM_TOPIC = "security.scram";
  private static final String SASL_SSL_TOPIC = "security.sasl-ssl";
  private static final String SSL_TOPIC = "security.ssl";
  private static final String SOURCE_TOPIC = "security.source";

  private static final List<String> EVENTS =
      List.of(
          event("txn-sec-1", "2026-01-01T00:00:00.000Z", "acct-1"),
          event("txn-sec-2", "2026-01-01T00:00:01.000Z", "acct-2"),
          event("txn-sec-3", "2026-01-01T00:00:02.000Z", "acct-1"));

  private static KafkaClusterTestKit cluster;
  private static String saslServers;
  private static String saslSslServers;
  private static String sslServers;
  private static Path truststore;
  private static Path truststorePasswordFile;
  private static Path plainPasswordFile;
  private static Path scramPasswordFile;
  private static Path wrongPasswordFile;
  private static Path replay;

  @BeforeClass
  public static void startSecuredBroker() throws Exception {
    Path dir = FOLDER.getRoot().toPath();
    plainPasswordFile = secretFile(dir, "plain.password", PLAIN_PASSWORD);
    scramPasswordFile = secretFile(dir, "scram.password", SCRAM_PASSWORD);
    wrongPasswordFile = secretFile(dir, "wrong.password", "not-the-password");
    truststorePasswordFile = secretFile(dir, "truststore.password", TRUSTSTORE_PASSWORD);
    replay = dir.resolve("security.ndjson");
    List<String> lines = new ArrayList<>(EVENTS);
    lines.add(1, "{\"advanceProcessingTime\":\"PT1S\"}");
    Files.write(replay, lines, UTF_8);

    Path keystore = dir.resolve("broker.p12");
    Path certificate = dir.resolve("broker.pem");
    truststore = dir.resolve("truststore.p12");
    keytool(
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

    String plainJaas =
        "org.apache.kafka.common.security.plain.PlainLoginModule required"
            + (" username=\"" + ADMIN_USER + "\" password=\"" + ADMIN_PASSWORD + "\"")
            + (" user_" + ADMIN_USER + "=\"" + ADMIN_PASSWORD + "\"")
            + (" user_" + PLAIN_USER + "=\"" + PLAIN_PASSWORD + "\";");
    String scramJaas = "org.apache.kafka.common.security.scram.ScramLoginModule required;";
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
                    "CONTROLLER://localhost:0"))
            .setConfigProp(
                "listener.security.protocol.map",
                String.join(
                    ",",
                    SASL_LISTENER + ":SASL_PLAINTEXT",
                    SASL_SSL_LISTENER + ":SASL_SSL",
                    SSL_LISTENER + ":SSL",
                    "CONTROLLER:PLAINTEXT"))
            .setConfigProp("inter.broker.listener.name", SASL_LISTENER)
            .setConfigProp("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-512")
            .setConfigProp("sasl.mechanism.inter.broker.protocol", "PLAIN")
            .setConfigProp("ssl.keystore.location", keystore.toString())
            .setConfigProp("ssl.keystore.type", "PKCS12")
            .setConfigProp("ssl.keystore.password", KEYSTORE_PASSWORD)
            .setConfigProp("ssl.key.password", KEYSTORE_PASSWORD)
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
          .setConfigProp(prefix + "scram-sha-512.sasl.jaas.config", scramJaas);
    }
    cluster = builder.build();
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
    saslServers = cluster.bootstrapServers();
    saslSslServers = "localhost:" + boundPort(SASL_SSL_LISTENER);
    sslServers = "localhost:" + boundPort(SSL_LISTENER);

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
      for (String topic :
          List.of(PLAIN_TOPIC, SCRAM_TOPIC, SASL_SSL_TOPIC, SSL_TOPIC, SOURCE_TOPIC)) {
        topics.add(new NewTopic(topic, 1, (short) 1));
      }
      client.createTopics(topics).all().get(30, TimeUnit.SECONDS);
      client
          .alterUserScramCredentials(
              List.of(
                  new UserScramCredentialUpsertion(
                      SCRAM_USER,
                      new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096),
                      SCRAM_PASSWORD)))
          .all()
          .get(30, TimeUnit.SECONDS);
    }
    awaitScramCredential();
  }

  @AfterClass
  public static void stopBroker() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  // --- Round trips with each protocol, mechanism and password source ---

  @Test
  public void plainWithPasswordFileRoundTripsThroughFeedAndFactories() throws Exception {
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaBootstrapServers=" + saslServers,
                "--kafkaSecurityProtocol=SASL_PLAINTEXT",
                "--kafkaSaslMechanism=PLAIN",
                "--kafkaUsername=" + PLAIN_USER,
                "--kafkaPasswordFile=" + plainPasswordFile));

    KafkaFeed.Fed fed = KafkaFeed.produce(clients, PLAIN_TOPIC, replay, KafkaFeed.Mode.STRUCTURED);
    try (Producer<byte[], byte[]> producer =
        clients.<byte[], byte[]>producerFactory(false).apply(byteSerializers())) {
      producer.send(new ProducerRecord<>(PLAIN_TOPIC, "from-factory".getBytes(UTF_8))).get();
    }

    List<String> expected = new ArrayList<>(EVENTS);
    expected.add("from-factory");
    assertThat(fed.records, is(3));
    assertThat(values(KafkaFeed.readAll(clients, PLAIN_TOPIC)), equalTo(expected));
    assertThat(readWithConsumerFactory(clients, PLAIN_TOPIC, 4), equalTo(expected));
  }

  @Test
  public void scramWithPasswordEnvRoundTripsInAFreshJvmAndLogsNoSecret() throws Exception {
    String output =
        probe(
            Map.of(PASSWORD_ENV, SCRAM_PASSWORD),
            SCRAM_TOPIC,
            "--kafkaBootstrapServers=" + saslServers,
            "--kafkaSecurityProtocol=SASL_PLAINTEXT",
            "--kafkaSaslMechanism=SCRAM-SHA-512",
            "--kafkaUsername=" + SCRAM_USER,
            "--kafkaPasswordEnv=" + PASSWORD_ENV);

    assertThat(output, containsString("PROBE read [probe-0, probe-1, probe-2]"));
    assertThat(output, containsString("sasl.mechanism = SCRAM-SHA-512"));
    assertKafkaLoggedWithoutSecrets(output);
  }

  @Test
  public void saslSslWithPlainAndTruststorePasswordRoundTripsInAFreshJvmAndLogsNoSecret()
      throws Exception {
    String output =
        probe(
            Map.of(),
            SASL_SSL_TOPIC,
            "--kafkaBootstrapServers=" + saslSslServers,
            "--kafkaSecurityProtocol=SASL_SSL",
            "--kafkaSaslMechanism=PLAIN",
            "--kafkaUsername=" + PLAIN_USER,
            "--kafkaPasswordFile=" + plainPasswordFile,
            "--kafkaTruststoreFile=" + truststore,
            "--kafkaTruststorePasswordFile=" + truststorePasswordFile);

    assertThat(output, containsString("PROBE read [probe-0, probe-1, probe-2]"));
    assertThat(output, containsString("security.protocol = SASL_SSL"));
    assertThat(output, containsString("ssl.truststore.password = [hidden]"));
    assertKafkaLoggedWithoutSecrets(output);
  }

  @Test
  public void sslWithTruststoreRoundTrips() throws Exception {
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaBootstrapServers=" + sslServers,
                "--kafkaSecurityProtocol=SSL",
                "--kafkaTruststoreFile=" + truststore,
                "--kafkaTruststorePasswordFile=" + truststorePasswordFile));

    KafkaFeed.Fed fed = KafkaFeed.produce(clients, SSL_TOPIC, replay, KafkaFeed.Mode.STRUCTURED);

    assertThat(fed.records, is(3));
    assertThat(values(KafkaFeed.readAll(clients, SSL_TOPIC)), equalTo(EVENTS));
  }

  @Test
  public void kafkaSourceReadsOverSaslSslWithScramOnTheDirectRunner() throws Exception {
    KafkaOptions options =
        options(
            "--runner=DirectRunner",
            "--kafkaBootstrapServers=" + saslSslServers,
            "--kafkaSecurityProtocol=SASL_SSL",
            "--kafkaSaslMechanism=SCRAM-SHA-512",
            "--kafkaUsername=" + SCRAM_USER,
            "--kafkaPasswordFile=" + scramPasswordFile,
            "--kafkaTruststoreFile=" + truststore,
            "--kafkaTruststorePasswordFile=" + truststorePasswordFile);
    KafkaClients clients = KafkaClients.from(options);
    KafkaFeed.produce(clients, SOURCE_TOPIC, replay, KafkaFeed.Mode.BINARY);

    Pipeline pipeline = Pipeline.create(options);
    PCollection<String> origins =
        pipeline
            .apply(
                "ReadKafka",
                KafkaSource.of(clients, SOURCE_TOPIC, "security-test").withMaxRecords(3))
            .apply("Origins", MapElements.into(TypeDescriptors.strings()).via(RawRecord::origin));
    PAssert.that(origins)
        .containsInAnyOrder(
            KafkaCloudEvents.origin(SOURCE_TOPIC, 0, 0),
            KafkaCloudEvents.origin(SOURCE_TOPIC, 0, 1),
            KafkaCloudEvents.origin(SOURCE_TOPIC, 0, 2));
    pipeline.run().waitUntilFinish();
  }

  // --- Refused credentials ---

  @Test
  public void wrongPlainPasswordFailsAuthentication() {
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaBootstrapServers=" + saslServers,
                "--kafkaSecurityProtocol=SASL_PLAINTEXT",
                "--kafkaSaslMechanism=PLAIN",
                "--kafkaUsername=" + PLAIN_USER,
                "--kafkaPasswordFile=" + wrongPasswordFile));

    SaslAuthenticationException e =
        assertThrows(
            SaslAuthenticationException.class, () -> KafkaFeed.readAll(clients, PLAIN_TOPIC));

    assertThat(e.getMessage(), equalTo("Authentication failed: Invalid username or password"));
  }

  @Test
  public void wrongScramPasswordFailsAuthenticationForProducerAndConsumer() {
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaBootstrapServers=" + saslServers,
                "--kafkaSecurityProtocol=SASL_PLAINTEXT",
                "--kafkaSaslMechanism=SCRAM-SHA-512",
                "--kafkaUsername=" + SCRAM_USER,
                "--kafkaPasswordFile=" + wrongPasswordFile));

    SaslAuthenticationException consumer =
        assertThrows(
            SaslAuthenticationException.class, () -> KafkaFeed.readAll(clients, SCRAM_TOPIC));
    IOException producer =
        assertThrows(
            IOException.class,
            () -> KafkaFeed.produce(clients, SCRAM_TOPIC, replay, KafkaFeed.Mode.STRUCTURED));

    String refused =
        "Authentication failed during authentication due to invalid credentials with SASL"
            + " mechanism SCRAM-SHA-512";
    assertThat(consumer.getMessage(), containsString(refused));
    assertThat(producer.getCause(), instanceOf(SaslAuthenticationException.class));
    assertThat(producer.getCause().getMessage(), containsString(refused));
  }

  @Test
  public void brokerCertificateOutsideTheTruststoreFailsTheHandshake() {
    // SSL without --kafkaTruststoreFile trusts only the JDK's CAs, not the self-signed broker.
    KafkaClients clients =
        KafkaClients.from(
            options("--kafkaBootstrapServers=" + sslServers, "--kafkaSecurityProtocol=SSL"));

    SslAuthenticationException e =
        assertThrows(SslAuthenticationException.class, () -> KafkaFeed.readAll(clients, SSL_TOPIC));

    assertThat(e.getMessage(), containsString("SSL handshake failed"));
  }

  // --- Refused option combinations ---

  @Test
  public void saslWithoutAMechanismIsRefused() {
    assertRefused(
        "--kafkaSecurityProtocol=SASL_PLAINTEXT needs --kafkaSaslMechanism, one of [PLAIN,"
            + " SCRAM-SHA-512]",
        "--kafkaSecurityProtocol=SASL_PLAINTEXT",
        "--kafkaUsername=" + PLAIN_USER,
        "--kafkaPasswordFile=" + plainPasswordFile);
    assertRefused(
        "--kafkaSecurityProtocol=SASL_SSL needs --kafkaSaslMechanism, one of [PLAIN,"
            + " SCRAM-SHA-512]",
        "--kafkaSecurityProtocol=sasl_ssl",
        "--kafkaSaslMechanism=GSSAPI",
        "--kafkaUsername=" + PLAIN_USER,
        "--kafkaPasswordFile=" + plainPasswordFile);
  }

  @Test
  public void saslWithoutAUserIsRefused() {
    assertRefused(
        "SASL needs --kafkaUsername",
        "--kafkaSecurityProtocol=SASL_PLAINTEXT",
        "--kafkaSaslMechanism=PLAIN",
        "--kafkaPasswordFile=" + plainPasswordFile);
  }

  @Test
  public void saslNeedsExactlyOnePasswordSource() {
    String message =
        "SASL needs exactly one of --kafkaPasswordFile=PATH or --kafkaPasswordEnv=VARIABLE; the"
            + " password itself is never an option";
    assertRefused(
        message,
        "--kafkaSecurityProtocol=SASL_PLAINTEXT",
        "--kafkaSaslMechanism=PLAIN",
        "--kafkaUsername=" + PLAIN_USER,
        "--kafkaPasswordFile=" + plainPasswordFile,
        "--kafkaPasswordEnv=" + PASSWORD_ENV);
    assertRefused(
        message,
        "--kafkaSecurityProtocol=SASL_PLAINTEXT",
        "--kafkaSaslMechanism=PLAIN",
        "--kafkaUsername=" + PLAIN_USER);
  }

  @Test
  public void missingPasswordSourcesAreRefused() {
    Path missing = FOLDER.getRoot().toPath().resolve("no-such.password");
    assertRefused(
        "--kafkaPasswordFile=" + missing + ": no readable file there",
        "--kafkaSecurityProtocol=SASL_PLAINTEXT",
        "--kafkaSaslMechanism=PLAIN",
        "--kafkaUsername=" + PLAIN_USER,
        "--kafkaPasswordFile=" + missing);
    assertThat(System.getenv(UNSET_ENV), nullValue());
    assertRefused(
        "--kafkaPasswordEnv=" + UNSET_ENV + ": that variable is not set",
        "--kafkaSecurityProtocol=SASL_SSL",
        "--kafkaSaslMechanism=SCRAM-SHA-512",
        "--kafkaUsername=" + SCRAM_USER,
        "--kafkaPasswordEnv=" + UNSET_ENV);
  }

  @Test
  public void tlsAndSaslSettingsWithoutTheirProtocolAreRefused() {
    assertRefused(
        "--kafkaTruststoreFile needs --kafkaSecurityProtocol=SSL or SASL_SSL",
        "--kafkaTruststoreFile=" + truststore);
    assertRefused(
        "--kafkaTruststoreFile needs --kafkaSecurityProtocol=SSL or SASL_SSL",
        "--kafkaSecurityProtocol=SASL_PLAINTEXT",
        "--kafkaSaslMechanism=PLAIN",
        "--kafkaUsername=" + PLAIN_USER,
        "--kafkaPasswordFile=" + plainPasswordFile,
        "--kafkaTruststoreFile=" + truststore);
    assertRefused(
        "--kafkaSaslMechanism needs --kafkaSecurityProtocol=SASL_SSL or SASL_PLAINTEXT",
        "--kafkaSecurityProtocol=SSL",
        "--kafkaSaslMechanism=PLAIN");
    Path missing = FOLDER.getRoot().toPath().resolve("no-such.p12");
    assertRefused(
        "--kafkaTruststoreFile=" + missing + ": no readable file there",
        "--kafkaSecurityProtocol=SSL",
        "--kafkaTruststoreFile=" + missing);
    assertRefused(
        "--kafkaSecurityProtocol=TLS: use one of [PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL]",
        "--kafkaSecurityProtocol=TLS");
  }

  @Test
  public void aPasswordIsNotAnOption() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> options("--kafkaBootstrapServers=" + saslServers, "--kafkaPassword=x"));

    assertThat(e.getMessage(), containsString("missing a property named 'kafkaPassword'"));
  }

  // --- No secret outside the client ---

  @Test
  public void secretsReachNeitherOptionsNorDisplayDataNorTheSerializedPipeline() throws Exception {
    TidemarkOptions options =
        PipelineOptionsFactory.fromArgs(
                "--runner=DirectRunner",
                "--source=kafka",
                "--sink=kafka",
                "--kafkaBootstrapServers=" + saslSslServers,
                "--kafkaSecurityProtocol=SASL_SSL",
                "--kafkaSaslMechanism=PLAIN",
                "--kafkaUsername=" + PLAIN_USER,
                "--kafkaPasswordFile=" + plainPasswordFile,
                "--kafkaTruststoreFile=" + truststore,
                "--kafkaTruststorePasswordFile=" + truststorePasswordFile)
            .withValidation()
            .as(TidemarkOptions.class);
    KafkaClients clients = KafkaClients.from(options);
    Pipeline pipeline = Pipeline.create(options);
    PCollection<RawRecord> raw =
        pipeline.apply("ReadKafka", KafkaSource.of(clients, SOURCE_TOPIC, "security-test"));
    KafkaSinks.write(TidemarkPipeline.expand(raw, options), options, clients);
    GraphCollector graph = new GraphCollector();
    pipeline.traverseTopologically(graph);

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
    // The proto's Java payloads are Snappy-compressed: the serialized transforms are checked
    // uncompressed below.
    exposed.put(
        "pipeline proto",
        new String(PipelineTranslation.toProto(pipeline).toByteArray(), ISO_8859_1));
    exposed.put("serialized transforms", graph.serialized.toString(ISO_8859_1));
    exposed.put("serialized KafkaClients", new String(javaSerialized(clients), ISO_8859_1));

    // The secrets are one call away (the checks below can fail) ...
    assertThat(
        clients.connectionConfig().toString(),
        allOf(containsString(PLAIN_PASSWORD), containsString(TRUSTSTORE_PASSWORD)));
    // ... each place was really looked at ...
    assertThat(graph.displayData.size() > 20, is(true));
    assertThat(graph.serializedTransforms > 20, is(true));
    assertThat(
        exposed.get("display data"),
        allOf(containsString(saslSslServers), containsString("tidemark.decisions")));
    for (String place :
        List.of(
            "options.toString()",
            "KafkaClients.toString()",
            "options JSON",
            "options proto",
            "serialized transforms",
            "serialized KafkaClients")) {
      assertThat(place, exposed.get(place), containsString(plainPasswordFile.toString()));
    }
    // ... and no secret is there.
    for (Map.Entry<String, String> entry : exposed.entrySet()) {
      for (String secret : SECRETS) {
        assertThat(entry.getKey(), entry.getValue(), not(containsString(secret)));
      }
    }
  }

  // --- Helpers ---

  private static String event(String id, String time, String account) {
    return "{\"specversion\":\"1.0\",\"id\":\""
        + id
        + "\",\"source\":\"/tidemark/security-test\",\"type\":\"payments.transaction.v1\","
        + "\"time\":\""
        + time
        + "\",\"datacontenttype\":\"application/json\",\"data\":{\"accountId\":\""
        + account
        + "\",\"amount\":12.5,\"currency\":\"GBP\",\"merchantId\":\"m-1\",\"country\":\"GB\"}}";
  }

  private static KafkaOptions options(String... args) {
    return PipelineOptionsFactory.fromArgs(args).as(KafkaOptions.class);
  }

  private static void assertRefused(String message, String... args) {
    List<String> all = new ArrayList<>(List.of("--kafkaBootstrapServers=" + saslServers));
    all.addAll(List.of(args));
    KafkaOptions options = options(all.toArray(new String[0]));

    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> KafkaClients.from(options));

    assertThat(e.getMessage(), equalTo(message));
  }

  private static Path secretFile(Path dir, String name, String secret) throws IOException {
    return Files.writeString(dir.resolve(name), secret + "\n", UTF_8);
  }

  private static void keytool(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(Paths.get(System.getProperty("java.home"), "bin", "keytool").toString());
    command.addAll(List.of(args));
    Path log = Files.createTempFile(FOLDER.getRoot().toPath(), "keytool", ".log");
    Process process =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
      process.destroyForcibly();
      fail("keytool " + args[0] + " failed: " + Files.readString(log, UTF_8));
    }
  }

  private static int boundPort(String listener) {
    return cluster.brokers().values().iterator().next().boundPort(new ListenerName(listener));
  }

  /** Waits until the broker accepts the SCRAM user: credentials reach it through the metadata. */
  private static void awaitScramCredential() throws Exception {
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaBootstrapServers=" + saslServers,
                "--kafkaSecurityProtocol=SASL_PLAINTEXT",
                "--kafkaSaslMechanism=SCRAM-SHA-512",
                "--kafkaUsername=" + SCRAM_USER,
                "--kafkaPasswordFile=" + scramPasswordFile));
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

  private static Map<String, Object> byteSerializers() {
    Map<String, Object> config = new HashMap<>();
    config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
    return config;
  }

  private static List<String> values(List<ConsumerRecord<byte[], byte[]>> records) {
    List<String> values = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> record : records) {
      values.add(new String(record.value(), UTF_8));
    }
    return values;
  }

  /** Reads {@code count} records of partition 0 with the consumer KafkaIO would create. */
  private static List<String> readWithConsumerFactory(
      KafkaClients clients, String topic, int count) {
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
  private static String probe(Map<String, String> environment, String topic, String... options)
      throws IOException, InterruptedException {
    Path dir = FOLDER.getRoot().toPath();
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
  private static byte[] javaSerialized(Object object) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(object);
    }
    return bytes.toByteArray();
  }

  /** Kafka logged its client configuration and a SASL login at INFO, and no secret. */
  private static void assertKafkaLoggedWithoutSecrets(String output) {
    assertThat(output, containsString("INFO org.apache.kafka.clients.producer.ProducerConfig"));
    assertThat(output, containsString("INFO org.apache.kafka.clients.consumer.ConsumerConfig"));
    assertThat(output, containsString("sasl.jaas.config = [hidden]"));
    assertThat(output, containsString("Successfully logged in."));
    for (String secret : SECRETS) {
      assertThat(output, not(containsString(secret)));
    }
  }

  /**
   * The display data of every transform, composite and primitive, and the Java serialization
   * (uncompressed) of every transform that is serializable.
   */
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
          clients.<byte[], byte[]>producerFactory(false).apply(byteSerializers())) {
        for (int i = 0; i < 3; i++) {
          producer.send(new ProducerRecord<>(topic, ("probe-" + i).getBytes(UTF_8))).get();
        }
      }
      System.out.println("PROBE read " + values(KafkaFeed.readAll(clients, topic)));
    }
  }
}
