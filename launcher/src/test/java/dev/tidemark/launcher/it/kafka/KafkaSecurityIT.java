package dev.tidemark.launcher.it.kafka;

import static dev.tidemark.launcher.it.kafka.SecuredKafka.CLIENT_KEYSTORE_PASSWORD;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.PLAIN_PASSWORD;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.PLAIN_USER;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.SCRAM_256_PASSWORD;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.SCRAM_256_USER;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.SCRAM_PASSWORD;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.SCRAM_USER;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.TRUSTSTORE_PASSWORD;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.assertKafkaConfigLoggedWithoutSecrets;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.assertKafkaLoggedWithoutSecrets;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.byteSerializers;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.javaSerialized;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.options;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.probe;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.readWithConsumerFactory;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.secretFile;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.values;
import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.allOf;
import static org.hamcrest.Matchers.anyOf;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.instanceOf;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.Assert.assertThrows;

import dev.tidemark.launcher.KafkaFeed;
import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.TidemarkPipeline;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.io.kafka.KafkaCloudEvents;
import dev.tidemark.pipelines.io.kafka.KafkaSinks;
import dev.tidemark.pipelines.io.kafka.KafkaSource;
import dev.tidemark.transforms.values.RawRecord;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.util.construction.PipelineTranslation;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * Kafka client security against a real broker, no mocks ({@link SecuredKafka}: SASL_PLAINTEXT,
 * SASL_SSL with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512, OAUTHBEARER, SSL and mutual TLS). Every
 * client comes from {@link KafkaClients}; the tests prove that records round-trip with each
 * protocol, mechanism and password source, that a wrong password, an untrusted certificate or a
 * missing client certificate is refused, that the client properties file reaches the clients and
 * may not override what Tidemark owns, that inconsistent options are refused with a message that
 * says what to change, and that no secret reaches the options, the display data, the serialized
 * pipeline or Kafka's INFO logs.
 *
 * <p>Stores and the client properties file behind URIs are read through Beam's {@code FileSystems}:
 * with {@code file:} URIs, and from {@link InMemoryFileSystem}, a file system other than the local
 * one that is found by its scheme as {@code gs://} is, so nothing talks to Google.
 *
 * <p>The log checks run the client in a fresh JVM ({@link SecuredKafka.Probe}), which also carries
 * the environment variable that {@code --kafkaPasswordEnv} names. The Secret Manager password
 * source is tested in {@link KafkaSecretManagerIT}.
 */
@RunWith(JUnit4.class)
public class KafkaSecurityIT {
  @ClassRule public static final TemporaryFolder FOLDER = new TemporaryFolder();

  /** A secret in a client properties file: an OAUTHBEARER login option. */
  private static final String PROPERTIES_SECRET = "s3cr3t-Properties-66120";

  /** Every client-side secret: none may appear outside the secret files and the client. */
  private static final List<String> SECRETS =
      List.of(
          PLAIN_PASSWORD,
          SCRAM_PASSWORD,
          SCRAM_256_PASSWORD,
          TRUSTSTORE_PASSWORD,
          CLIENT_KEYSTORE_PASSWORD,
          PROPERTIES_SECRET);

  /** Set only in the environment of the {@link Probe} JVM. */
  private static final String PASSWORD_ENV = "TIDEMARK_TEST_KAFKA_PASSWORD";

  private static final String UNSET_ENV = "TIDEMARK_TEST_KAFKA_PASSWORD_NEVER_SET";

  private static final String PLAIN_TOPIC = "security.plain";
  private static final String SCRAM_TOPIC = "security.scram";
  private static final String SASL_SSL_TOPIC = "security.sasl-ssl";
  private static final String SSL_TOPIC = "security.ssl";
  private static final String SOURCE_TOPIC = "security.source";
  private static final String SCRAM_256_TOPIC = "security.scram256";
  private static final String MTLS_TOPIC = "security.mtls";
  private static final String PEM_TOPIC = "security.pem";
  private static final String MTLS_PROBE_TOPIC = "security.mtls-probe";
  private static final String MTLS_REMOTE_TOPIC = "security.mtls-remote";
  private static final String OAUTH_TOPIC = "security.oauth";
  private static final String OAUTH_PROBE_TOPIC = "security.oauth-probe";
  private static final String PROPERTIES_TOPIC = "security.properties";

  private static final String UNSECURED_HANDLER =
      "org.apache.kafka.common.security.oauthbearer.internals.unsecured"
          + ".OAuthBearerUnsecuredLoginCallbackHandler";

  private static final List<String> EVENTS =
      List.of(
          event("txn-sec-1", "2026-01-01T00:00:00.000Z", "acct-1"),
          event("txn-sec-2", "2026-01-01T00:00:01.000Z", "acct-2"),
          event("txn-sec-3", "2026-01-01T00:00:02.000Z", "acct-1"));

  private static SecuredKafka kafka;
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
    wrongPasswordFile = secretFile(dir, "wrong.password", "not-the-password");
    replay = dir.resolve("security.ndjson");
    List<String> lines = new ArrayList<>(EVENTS);
    lines.add(1, "{\"advanceProcessingTime\":\"PT1S\"}");
    Files.write(replay, lines, UTF_8);
    kafka =
        SecuredKafka.start(
            dir,
            List.of(
                PLAIN_TOPIC,
                SCRAM_TOPIC,
                SASL_SSL_TOPIC,
                SSL_TOPIC,
                SOURCE_TOPIC,
                SCRAM_256_TOPIC,
                MTLS_TOPIC,
                PEM_TOPIC,
                MTLS_PROBE_TOPIC,
                MTLS_REMOTE_TOPIC,
                OAUTH_TOPIC,
                OAUTH_PROBE_TOPIC,
                PROPERTIES_TOPIC));
    saslServers = kafka.saslServers;
    saslSslServers = kafka.saslSslServers;
    sslServers = kafka.sslServers;
    truststore = kafka.truststore;
    truststorePasswordFile = kafka.truststorePasswordFile;
    plainPasswordFile = kafka.plainPasswordFile;
    scramPasswordFile = kafka.scramPasswordFile;
  }

  @AfterClass
  public static void stopBroker() throws Exception {
    if (kafka != null) {
      kafka.close();
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
        clients.<byte[], byte[]>producerFactory().apply(byteSerializers())) {
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
            FOLDER.getRoot().toPath(),
            Map.of(PASSWORD_ENV, SCRAM_PASSWORD),
            SCRAM_TOPIC,
            "--kafkaBootstrapServers=" + saslServers,
            "--kafkaSecurityProtocol=SASL_PLAINTEXT",
            "--kafkaSaslMechanism=SCRAM-SHA-512",
            "--kafkaUsername=" + SCRAM_USER,
            "--kafkaPasswordEnv=" + PASSWORD_ENV);

    assertThat(output, containsString("PROBE read [probe-0, probe-1, probe-2]"));
    assertThat(output, containsString("sasl.mechanism = SCRAM-SHA-512"));
    assertKafkaLoggedWithoutSecrets(output, SECRETS);
  }

  @Test
  public void saslSslWithPlainAndTruststorePasswordRoundTripsInAFreshJvmAndLogsNoSecret()
      throws Exception {
    String output =
        probe(
            FOLDER.getRoot().toPath(),
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
    assertKafkaLoggedWithoutSecrets(output, SECRETS);
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
    BoundedReads.runToEnd(pipeline);
  }

  @Test
  public void scramSha256WithPasswordFileRoundTrips() throws Exception {
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaBootstrapServers=" + saslServers,
                "--kafkaSecurityProtocol=SASL_PLAINTEXT",
                "--kafkaSaslMechanism=SCRAM-SHA-256",
                "--kafkaUsername=" + SCRAM_256_USER,
                "--kafkaPasswordFile=" + kafka.scram256PasswordFile));

    KafkaFeed.Fed fed =
        KafkaFeed.produce(clients, SCRAM_256_TOPIC, replay, KafkaFeed.Mode.STRUCTURED);

    assertThat(fed.records, is(3));
    assertThat(values(KafkaFeed.readAll(clients, SCRAM_256_TOPIC)), equalTo(EVENTS));
    assertThat(clients.connectionConfig().get("sasl.mechanism"), equalTo("SCRAM-SHA-256"));
  }

  @Test
  public void scramSha256WithTheSha512PasswordIsRefused() {
    // The user has only a SCRAM-SHA-256 credential: the 512 mechanism must not log it in.
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaBootstrapServers=" + saslServers,
                "--kafkaSecurityProtocol=SASL_PLAINTEXT",
                "--kafkaSaslMechanism=SCRAM-SHA-512",
                "--kafkaUsername=" + SCRAM_256_USER,
                "--kafkaPasswordFile=" + kafka.scram256PasswordFile));

    SaslAuthenticationException e =
        assertThrows(
            SaslAuthenticationException.class, () -> KafkaFeed.readAll(clients, SCRAM_256_TOPIC));

    assertThat(e.getMessage(), containsString("SCRAM-SHA-512"));
  }

  @Test
  public void mutualTlsWithStoresFromFileUrisRoundTripsInAFreshJvmAndLogsNoSecret()
      throws Exception {
    // file: URIs are read through Beam's FileSystems and copied to private files, as gs:// is.
    String output =
        probe(
            FOLDER.getRoot().toPath(),
            Map.of(),
            MTLS_PROBE_TOPIC,
            "--kafkaBootstrapServers=" + kafka.mtlsServers,
            "--kafkaSecurityProtocol=SSL",
            "--kafkaTruststoreFile=" + truststore.toUri(),
            "--kafkaTruststorePasswordFile=" + truststorePasswordFile,
            "--kafkaKeystoreFile=" + kafka.clientKeystore.toUri(),
            "--kafkaKeystorePasswordFile=" + kafka.clientKeystorePasswordFile);

    assertThat(output, containsString("PROBE read [probe-0, probe-1, probe-2]"));
    assertThat(output, containsString("ssl.keystore.password = [hidden]"));
    assertThat(output, containsString("ssl.keystore.location = /"));
    assertThat(output, not(containsString("ssl.keystore.location = " + kafka.clientKeystore)));
    assertKafkaConfigLoggedWithoutSecrets(output, SECRETS);
  }

  @Test
  public void mutualTlsWithALocalKeystoreRoundTripsAndItsCopyIsPrivate() throws Exception {
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaBootstrapServers=" + kafka.mtlsServers,
                "--kafkaSecurityProtocol=SSL",
                "--kafkaTruststoreFile=" + truststore,
                "--kafkaTruststorePasswordFile=" + truststorePasswordFile,
                "--kafkaKeystoreFile=" + kafka.clientKeystore.toUri(),
                "--kafkaKeystorePasswordFile=" + kafka.clientKeystorePasswordFile,
                "--kafkaKeyPasswordFile=" + kafka.clientKeystorePasswordFile));

    KafkaFeed.Fed fed = KafkaFeed.produce(clients, MTLS_TOPIC, replay, KafkaFeed.Mode.STRUCTURED);

    assertThat(fed.records, is(3));
    assertThat(values(KafkaFeed.readAll(clients, MTLS_TOPIC)), equalTo(EVENTS));
    Path copy = Path.of((String) clients.connectionConfig().get("ssl.keystore.location"));
    assertThat(Files.readAllBytes(copy), equalTo(Files.readAllBytes(kafka.clientKeystore)));
    assertThat(
        PosixFilePermissions.toString(Files.getPosixFilePermissions(copy)), equalTo("rw-------"));
  }

  /**
   * PEM stores, as Strimzi and librdkafka users hold them: the broker's CA certificate, and the
   * client's PKCS#8 key followed by its certificate, both without a store password, converted here
   * from the PKCS12 stores the other tests use.
   */
  @Test
  public void mutualTlsWithPemStoresRoundTrips() throws Exception {
    Path dir = FOLDER.getRoot().toPath();
    java.security.KeyStore trust = java.security.KeyStore.getInstance("PKCS12");
    try (java.io.InputStream in = Files.newInputStream(truststore)) {
      trust.load(in, TRUSTSTORE_PASSWORD.toCharArray());
    }
    StringBuilder ca = new StringBuilder();
    for (String alias : java.util.Collections.list(trust.aliases())) {
      ca.append(pem("CERTIFICATE", trust.getCertificate(alias).getEncoded()));
    }
    java.security.KeyStore client = java.security.KeyStore.getInstance("PKCS12");
    try (java.io.InputStream in = Files.newInputStream(kafka.clientKeystore)) {
      client.load(in, CLIENT_KEYSTORE_PASSWORD.toCharArray());
    }
    String alias = client.aliases().nextElement();
    StringBuilder key =
        new StringBuilder(
            pem(
                "PRIVATE KEY",
                client.getKey(alias, CLIENT_KEYSTORE_PASSWORD.toCharArray()).getEncoded()));
    for (java.security.cert.Certificate c : client.getCertificateChain(alias)) {
      key.append(pem("CERTIFICATE", c.getEncoded()));
    }
    Path caFile = Files.writeString(dir.resolve("ca.pem"), ca, UTF_8);
    Path keyFile = Files.writeString(dir.resolve("client.pem"), key, UTF_8);

    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaBootstrapServers=" + kafka.mtlsServers,
                "--kafkaSecurityProtocol=SSL",
                "--kafkaTruststoreFile=" + caFile,
                "--kafkaTruststoreType=PEM",
                "--kafkaKeystoreFile=" + keyFile,
                "--kafkaKeystoreType=PEM"));
    KafkaFeed.Fed fed = KafkaFeed.produce(clients, PEM_TOPIC, replay, KafkaFeed.Mode.STRUCTURED);

    assertThat(fed.records, is(3));
    assertThat(values(KafkaFeed.readAll(clients, PEM_TOPIC)), equalTo(EVENTS));
    assertThat(clients.connectionConfig().get("ssl.keystore.type"), equalTo("PEM"));
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN "
        + type
        + "-----\n"
        + java.util.Base64.getMimeEncoder(64, "\n".getBytes(UTF_8)).encodeToString(der)
        + "\n-----END "
        + type
        + "-----\n";
  }

  @Test
  public void storesAndClientPropertiesOnANonLocalFileSystemAreFetchedOncePerJvm()
      throws Exception {
    // Another Beam file system than the local one, found by its scheme as gs:// is.
    String keystore = InMemoryFileSystem.SCHEME + "://stores/client.p12";
    String trust = InMemoryFileSystem.SCHEME + "://stores/truststore.p12";
    String properties = InMemoryFileSystem.SCHEME + "://conf/client.properties";
    InMemoryFileSystem.FILES.put(keystore, Files.readAllBytes(kafka.clientKeystore));
    InMemoryFileSystem.FILES.put(trust, Files.readAllBytes(truststore));
    InMemoryFileSystem.FILES.put(properties, "client.id=tidemark-remote\n".getBytes(UTF_8));
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaBootstrapServers=" + kafka.mtlsServers,
                "--kafkaSecurityProtocol=SSL",
                "--kafkaTruststoreFile=" + trust,
                "--kafkaTruststorePasswordFile=" + truststorePasswordFile,
                "--kafkaKeystoreFile=" + keystore,
                "--kafkaKeystorePasswordFile=" + kafka.clientKeystorePasswordFile,
                "--kafkaClientProperties=" + properties));
    for (String uri : List.of(keystore, trust, properties)) {
      assertThat("opened at construction: " + uri, InMemoryFileSystem.OPENS.get(uri), nullValue());
    }

    Set<String> ids;
    try (Producer<byte[], byte[]> producer =
        clients.<byte[], byte[]>producerFactory().apply(byteSerializers())) {
      producer.send(new ProducerRecord<>(MTLS_REMOTE_TOPIC, "remote-0".getBytes(UTF_8))).get();
      ids = clientIds(producer.metrics().keySet());
    }

    assertThat(
        readWithConsumerFactory(clients, MTLS_REMOTE_TOPIC, 1), equalTo(List.of("remote-0")));
    assertThat(ids, equalTo(Set.of("tidemark-remote")));
    // A producer and a consumer, one fetch each.
    for (String uri : List.of(keystore, trust, properties)) {
      assertThat(uri, InMemoryFileSystem.OPENS.get(uri), is(1));
    }
  }

  @Test
  public void aClientWithoutACertificateIsRefusedByTheMutualTlsListener() {
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaBootstrapServers=" + kafka.mtlsServers,
                "--kafkaSecurityProtocol=SSL",
                "--kafkaTruststoreFile=" + truststore,
                "--kafkaTruststorePasswordFile=" + truststorePasswordFile));

    SslAuthenticationException e =
        assertThrows(
            SslAuthenticationException.class, () -> KafkaFeed.readAll(clients, MTLS_TOPIC));

    // TLS 1.3: the broker refuses the missing certificate after the client's side of the
    // handshake, which Kafka reports as a failure to process post-handshake messages.
    assertThat(
        e.getMessage(),
        anyOf(
            containsString("SSL handshake failed"),
            containsString("Failed to process post-handshake messages")));
  }

  @Test
  public void oauthBearerLogsInThroughTheConfiguredHandlerAndRoundTrips() throws Exception {
    Path properties =
        Files.writeString(
            FOLDER.getRoot().toPath().resolve("oauth.properties"),
            "tidemark.jaas.unsecuredLoginStringClaim_sub=tidemark-oauth\n",
            UTF_8);
    int tokensBefore = CountingOAuthLoginHandler.TOKENS.get();
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaBootstrapServers=" + saslServers,
                "--kafkaSecurityProtocol=SASL_PLAINTEXT",
                "--kafkaSaslMechanism=OAUTHBEARER",
                "--kafkaOauthLoginCallbackHandler=" + CountingOAuthLoginHandler.class.getName(),
                "--kafkaClientProperties=" + properties));

    KafkaFeed.Fed fed = KafkaFeed.produce(clients, OAUTH_TOPIC, replay, KafkaFeed.Mode.STRUCTURED);

    assertThat(fed.records, is(3));
    assertThat(values(KafkaFeed.readAll(clients, OAUTH_TOPIC)), equalTo(EVENTS));
    assertThat(CountingOAuthLoginHandler.TOKENS.get(), greaterThan(tokensBefore));
  }

  @Test
  public void oauthBearerWithoutThePrincipalClaimFailsTheLogin() throws Exception {
    // The unsecured handler makes no token without a subject: the file's login options matter.
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaBootstrapServers=" + saslServers,
                "--kafkaSecurityProtocol=SASL_PLAINTEXT",
                "--kafkaSaslMechanism=OAUTHBEARER",
                "--kafkaOauthLoginCallbackHandler=" + UNSECURED_HANDLER));

    SaslAuthenticationException e =
        assertThrows(
            SaslAuthenticationException.class, () -> KafkaFeed.readAll(clients, OAUTH_TOPIC));

    assertThat(e.getMessage(), containsString("No OAuth Bearer tokens in Subject's private"));
  }

  @Test
  public void oauthBearerInAFreshJvmLogsNoLoginOptionFromTheFile() throws Exception {
    Path properties =
        Files.writeString(
            FOLDER.getRoot().toPath().resolve("oauth-secret.properties"),
            "tidemark.jaas.unsecuredLoginStringClaim_sub=tidemark-oauth\n"
                + "tidemark.jaas.unsecuredLoginStringClaim_note="
                + PROPERTIES_SECRET
                + "\nclient.id=tidemark-probe\n",
            UTF_8);

    String output =
        probe(
            FOLDER.getRoot().toPath(),
            Map.of(),
            OAUTH_PROBE_TOPIC,
            "--kafkaBootstrapServers=" + saslServers,
            "--kafkaSecurityProtocol=SASL_PLAINTEXT",
            "--kafkaSaslMechanism=OAUTHBEARER",
            "--kafkaOauthLoginCallbackHandler=" + UNSECURED_HANDLER,
            "--kafkaClientProperties=" + properties);

    assertThat(output, containsString("PROBE read [probe-0, probe-1, probe-2]"));
    assertThat(output, containsString("sasl.mechanism = OAUTHBEARER"));
    assertThat(
        output, containsString("sasl.login.callback.handler.class = class " + UNSECURED_HANDLER));
    // A setting from the file reached both clients (Kafka logs its non-secret settings).
    assertThat(output, containsString("client.id = tidemark-probe"));
    assertKafkaLoggedWithoutSecrets(output, SECRETS);
  }

  @Test
  public void clientPropertiesReachTheConsumerAndTheProducerOfTheFactories() throws Exception {
    Path properties =
        Files.writeString(
            FOLDER.getRoot().toPath().resolve("client.properties"),
            "client.id=tidemark-ops\nmax.poll.records=1\n",
            UTF_8);
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaBootstrapServers=" + saslServers,
                "--kafkaSecurityProtocol=SASL_PLAINTEXT",
                "--kafkaSaslMechanism=PLAIN",
                "--kafkaUsername=" + PLAIN_USER,
                "--kafkaPasswordFile=" + plainPasswordFile,
                "--kafkaClientProperties=" + properties));

    Set<String> producerIds;
    try (Producer<byte[], byte[]> producer =
        clients.<byte[], byte[]>producerFactory().apply(byteSerializers())) {
      for (int i = 0; i < 3; i++) {
        producer.send(new ProducerRecord<>(PROPERTIES_TOPIC, ("p-" + i).getBytes(UTF_8))).get();
      }
      producerIds = clientIds(producer.metrics().keySet());
    }
    Map<String, Object> config = new HashMap<>();
    config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
    config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 500);
    List<Integer> batches = new ArrayList<>();
    Set<String> consumerIds;
    try (Consumer<byte[], byte[]> consumer = clients.consumerFactory().apply(config)) {
      TopicPartition partition = new TopicPartition(PROPERTIES_TOPIC, 0);
      consumer.assign(List.of(partition));
      consumer.seekToBeginning(List.of(partition));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      int read = 0;
      while (read < 3 && System.nanoTime() < deadline) {
        ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
        if (!records.isEmpty()) {
          batches.add(records.count());
          read += records.count();
        }
      }
      consumerIds = clientIds(consumer.metrics().keySet());
    }

    assertThat(producerIds, equalTo(Set.of("tidemark-ops")));
    assertThat(consumerIds, equalTo(Set.of("tidemark-ops")));
    // The file's max.poll.records=1 won over the 500 of the caller's settings.
    assertThat(batches, equalTo(List.of(1, 1, 1)));
  }

  @Test
  public void aFileBehindAUriThatSetsAnOwnedSettingFailsTheClientNamingTheOption()
      throws Exception {
    Path properties =
        Files.writeString(
            FOLDER.getRoot().toPath().resolve("owned.properties"),
            "client.id=x\nisolation.level=read_uncommitted\n",
            UTF_8);
    String uri = properties.toUri().toString();
    KafkaClients clients =
        KafkaClients.from(
            options("--kafkaBootstrapServers=" + sslServers, "--kafkaClientProperties=" + uri));

    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> clients.consumerFactory().apply(Map.of()));

    assertThat(
        e.getMessage(),
        equalTo(
            "--kafkaClientProperties="
                + uri
                + " sets isolation.level, which Tidemark owns and sets to read_committed (aborted"
                + " transactions must never be read): remove it from the file"));
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
            + " SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER]",
        "--kafkaSecurityProtocol=SASL_PLAINTEXT",
        "--kafkaUsername=" + PLAIN_USER,
        "--kafkaPasswordFile=" + plainPasswordFile);
    assertRefused(
        "--kafkaSecurityProtocol=SASL_SSL needs --kafkaSaslMechanism, one of [PLAIN,"
            + " SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER]",
        "--kafkaSecurityProtocol=sasl_ssl",
        "--kafkaSaslMechanism=GSSAPI",
        "--kafkaUsername=" + PLAIN_USER,
        "--kafkaPasswordFile=" + plainPasswordFile);
  }

  @Test
  public void saslWithoutAUserIsRefused() {
    assertRefused(
        "SASL needs --kafkaUsername or"
            + " --kafkaUsernameSecret=projects/PROJECT/secrets/NAME/versions/VERSION",
        "--kafkaSecurityProtocol=SASL_PLAINTEXT",
        "--kafkaSaslMechanism=PLAIN",
        "--kafkaPasswordFile=" + plainPasswordFile);
  }

  @Test
  public void saslNeedsExactlyOnePasswordSource() {
    String message =
        "SASL needs exactly one of --kafkaPasswordFile=PATH, --kafkaPasswordEnv=VARIABLE or"
            + " --kafkaPasswordSecret=projects/PROJECT/secrets/NAME/versions/VERSION; the password"
            + " itself is never an option";
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
    Path properties =
        Files.writeString(
            FOLDER.getRoot().toPath().resolve("exposed.properties"),
            "client.id=" + PROPERTIES_SECRET + "\n",
            UTF_8);
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
                "--kafkaTruststorePasswordFile=" + truststorePasswordFile,
                "--kafkaKeystoreFile=" + kafka.clientKeystore.toUri(),
                "--kafkaKeystorePasswordFile=" + kafka.clientKeystorePasswordFile,
                "--kafkaClientProperties=" + properties)
            .withValidation()
            .as(TidemarkOptions.class);
    KafkaClients clients = KafkaClients.from(options);
    Pipeline pipeline = Pipeline.create(options);
    PCollection<RawRecord> raw =
        pipeline.apply("ReadKafka", KafkaSource.of(clients, SOURCE_TOPIC, "security-test"));
    KafkaSinks.write(TidemarkPipeline.expand(raw, options), options, clients);
    SecuredKafka.GraphCollector graph = new SecuredKafka.GraphCollector();
    pipeline.traverseTopologically(graph);

    Map<String, String> exposed = SecuredKafka.exposedPlaces(options, clients, graph);
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
        allOf(
            containsString(PLAIN_PASSWORD),
            containsString(TRUSTSTORE_PASSWORD),
            containsString(CLIENT_KEYSTORE_PASSWORD),
            containsString(PROPERTIES_SECRET)));
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
      assertThat(place, exposed.get(place), containsString(properties.toString()));
    }
    // The key store's bytes (its private key) are nowhere either.
    String keystoreBytes = new String(Files.readAllBytes(kafka.clientKeystore), ISO_8859_1);
    // ... and no secret is there.
    for (Map.Entry<String, String> entry : exposed.entrySet()) {
      for (String secret : SECRETS) {
        assertThat(entry.getKey(), entry.getValue(), not(containsString(secret)));
      }
      assertThat(entry.getKey(), entry.getValue().contains(keystoreBytes), is(false));
    }
  }

  // --- Helpers ---

  /** The {@code client-id} tags of a client's metrics. */
  private static Set<String> clientIds(Set<MetricName> metrics) {
    Set<String> ids = new HashSet<>();
    for (MetricName metric : metrics) {
      String id = metric.tags().get("client-id");
      if (id != null) {
        ids.add(id);
      }
    }
    return ids;
  }

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

  private static void assertRefused(String message, String... args) {
    List<String> all = new ArrayList<>(List.of("--kafkaBootstrapServers=" + saslServers));
    all.addAll(List.of(args));
    KafkaOptions options = options(all.toArray(new String[0]));

    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> KafkaClients.from(options));

    assertThat(e.getMessage(), equalTo(message));
  }
}
