package dev.tidemark.pipelines.io.kafka;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasEntry;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.Assert.assertThrows;

import dev.tidemark.pipelines.KafkaOptions;
import java.io.ByteArrayOutputStream;
import java.io.ObjectOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * {@link KafkaClients} without a broker: the configuration each option combination produces, the
 * client properties file's merge and refusals ({@link KafkaClientProperties}), stores fetched
 * through Beam's file systems into private files ({@link WorkerFiles}), and the messages of refused
 * combinations. The round trips against a real broker are in the launcher ({@code KafkaSecurityIT},
 * {@code KafkaSecretManagerIT}).
 */
@RunWith(JUnit4.class)
public class KafkaClientsTest {
  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  private static final String PASSWORD = "s3cr3t-unit-90210";
  private static final String UNSECURED_HANDLER =
      "org.apache.kafka.common.security.oauthbearer.internals.unsecured"
          + ".OAuthBearerUnsecuredLoginCallbackHandler";

  // --- SCRAM-SHA-256 ---

  @Test
  public void scramSha256UsesTheScramLoginModule() throws Exception {
    Map<String, Object> config =
        KafkaClients.from(
                options(
                    "--kafkaSecurityProtocol=SASL_SSL",
                    "--kafkaSaslMechanism=scram-sha-256",
                    "--kafkaUsername=u",
                    "--kafkaPasswordFile=" + secret("password", PASSWORD)))
            .connectionConfig();

    assertThat(config, hasEntry("sasl.mechanism", "SCRAM-SHA-256"));
    assertThat(
        config,
        hasEntry(
            "sasl.jaas.config",
            "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\""
                + " password=\""
                + PASSWORD
                + "\";"));
  }

  @Test
  public void anUnknownMechanismIsRefusedListingTheKnownOnes() {
    assertRefused(
        "--kafkaSecurityProtocol=SASL_SSL needs --kafkaSaslMechanism, one of [PLAIN,"
            + " SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER]",
        "--kafkaSecurityProtocol=SASL_SSL",
        "--kafkaSaslMechanism=GSSAPI",
        "--kafkaUsername=u",
        "--kafkaPasswordEnv=PATH");
  }

  // --- OAUTHBEARER ---

  @Test
  public void oauthBearerBuildsTheJaasConfigFromTheUserThePasswordAndTheFile() throws Exception {
    Path properties =
        file(
            "client.properties",
            "tidemark.jaas.scope=kafka read\n"
                + "sasl.oauthbearer.token.endpoint.url=https://idp.example/token\n");
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaSecurityProtocol=SASL_SSL",
                "--kafkaSaslMechanism=OAUTHBEARER",
                "--kafkaOauthLoginCallbackHandler=" + UNSECURED_HANDLER,
                "--kafkaUsername=client-1",
                "--kafkaPasswordFile=" + secret("client-secret", PASSWORD),
                "--kafkaClientProperties=" + properties));

    Map<String, Object> config = clients.connectionConfig();

    assertThat(config, hasEntry("sasl.mechanism", "OAUTHBEARER"));
    assertThat(config, hasEntry("sasl.login.callback.handler.class", UNSECURED_HANDLER));
    assertThat(
        config, hasEntry("sasl.oauthbearer.token.endpoint.url", "https://idp.example/token"));
    assertThat(
        config,
        hasEntry(
            "sasl.jaas.config",
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required"
                + " clientId=\"client-1\" clientSecret=\""
                + PASSWORD
                + "\" scope=\"kafka read\";"));
    assertThat(config.containsKey("tidemark.jaas.scope"), is(false));
  }

  @Test
  public void oauthBearerWithoutAUserNeedsNoPassword() {
    Map<String, Object> config =
        KafkaClients.from(
                options(
                    "--kafkaSecurityProtocol=SASL_PLAINTEXT",
                    "--kafkaSaslMechanism=OAUTHBEARER",
                    "--kafkaOauthLoginCallbackHandler=" + UNSECURED_HANDLER))
            .connectionConfig();

    assertThat(
        config,
        hasEntry(
            "sasl.jaas.config",
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"));
  }

  @Test
  public void oauthBearerCombinationsAreRefused() throws Exception {
    assertRefused(
        "--kafkaSaslMechanism=OAUTHBEARER needs --kafkaOauthLoginCallbackHandler=CLASS (the"
            + " sasl.login.callback.handler.class that obtains tokens), e.g."
            + " org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
        "--kafkaSecurityProtocol=SASL_SSL",
        "--kafkaSaslMechanism=OAUTHBEARER");
    assertRefused(
        "--kafkaOauthLoginCallbackHandler=com.example.NoSuchHandler: no such class on the class"
            + " path",
        "--kafkaSecurityProtocol=SASL_SSL",
        "--kafkaSaslMechanism=OAUTHBEARER",
        "--kafkaOauthLoginCallbackHandler=com.example.NoSuchHandler");
    assertRefused(
        "--kafkaOauthLoginCallbackHandler=java.lang.String: not an"
            + " org.apache.kafka.common.security.auth.AuthenticateCallbackHandler",
        "--kafkaSecurityProtocol=SASL_SSL",
        "--kafkaSaslMechanism=OAUTHBEARER",
        "--kafkaOauthLoginCallbackHandler=java.lang.String");
    assertRefused(
        "OAUTHBEARER takes --kafkaUsername (the client id) together with one of"
            + " --kafkaPasswordFile=PATH, --kafkaPasswordEnv=VARIABLE or"
            + " --kafkaPasswordSecret=projects/PROJECT/secrets/NAME/versions/VERSION (the client"
            + " secret), or neither",
        "--kafkaSecurityProtocol=SASL_SSL",
        "--kafkaSaslMechanism=OAUTHBEARER",
        "--kafkaOauthLoginCallbackHandler=" + UNSECURED_HANDLER,
        "--kafkaUsername=client-1");
    assertRefused(
        "--kafkaOauthLoginCallbackHandler needs --kafkaSaslMechanism=OAUTHBEARER",
        "--kafkaSecurityProtocol=SASL_SSL",
        "--kafkaSaslMechanism=PLAIN",
        "--kafkaUsername=u",
        "--kafkaPasswordFile=" + secret("password", PASSWORD),
        "--kafkaOauthLoginCallbackHandler=" + UNSECURED_HANDLER);
  }

  // --- The client properties file ---

  @Test
  public void theFileIsMergedIntoEveryClientWithTidemarksSettingsOnTop() throws Exception {
    Path properties =
        file(
            "client.properties",
            "# operator's settings\n"
                + "client.id=ops-client\n"
                + "max.poll.records=7\n"
                + "linger.ms=5\n"
                + "isolation.level=read_committed\n"
                + "security.protocol=SASL_SSL\n");
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaSecurityProtocol=SASL_SSL",
                "--kafkaSaslMechanism=PLAIN",
                "--kafkaUsername=u",
                "--kafkaPasswordFile=" + secret("password", PASSWORD),
                "--kafkaClientProperties=" + properties));
    Map<String, Object> tidemarks = new HashMap<>();
    tidemarks.put("linger.ms", 20);
    tidemarks.put("isolation.level", "read_committed");
    tidemarks.put("group.id", "tidemark");

    Map<String, Object> merged = clients.merged(tidemarks);

    assertThat(merged, hasEntry("client.id", "ops-client"));
    assertThat(merged, hasEntry("max.poll.records", "7"));
    // A setting Tidemark does not own: the operator's value wins.
    assertThat(merged, hasEntry("linger.ms", "5"));
    assertThat(merged, hasEntry("group.id", "tidemark"));
    assertThat(merged, hasEntry("isolation.level", "read_committed"));
    assertThat(merged, hasEntry("security.protocol", "SASL_SSL"));
    assertThat(clients.connectionConfig(), hasEntry("client.id", "ops-client"));
  }

  @Test
  public void aFileThatSetsAnOwnedSettingIsRefusedNamingTheKeyAndTheOption() throws Exception {
    String base = "--kafkaBootstrapServers=localhost:9092";
    Map<String, String> refusals = new HashMap<>();
    refusals.put(
        "security.protocol=SSL",
        "sets security.protocol, which Tidemark owns (a security setting): use --kafkaSecurityProtocol"
            + " instead");
    refusals.put(
        "isolation.level=read_uncommitted",
        "sets isolation.level, which Tidemark owns and sets to read_committed (aborted"
            + " transactions must never be read): remove it from the file");
    refusals.put(
        "enable.idempotence=false",
        "sets enable.idempotence, which Tidemark owns and sets to true (the producers must not"
            + " write a retried record twice): remove it from the file");
    refusals.put(
        "group.id=ops",
        "sets group.id, which Tidemark owns (offsets and the sink's committed sequence live in"
            + " these groups): use --kafkaConsumerGroup (the source) or --kafkaSinkGroupId (the"
            + " transactional sink) instead");
    refusals.put(
        "transactional.id=ops",
        "sets transactional.id, which Tidemark owns (the sink derives one per shard; a"
            + " transactional id on any other producer breaks it): use"
            + " --kafkaSinkMode=transactional with --kafkaSinkGroupId instead");
    refusals.put(
        "sasl.jaas.config=" + PASSWORD,
        "sets sasl.jaas.config, which Tidemark owns (Tidemark builds it, with the password read"
            + " on the worker): use --kafkaUsername with --kafkaPasswordFile, --kafkaPasswordEnv or"
            + " --kafkaPasswordSecret (OAUTHBEARER login options: tidemark.jaas.NAME keys)"
            + " instead");
    refusals.put(
        "ssl.keystore.password=" + PASSWORD,
        "sets ssl.keystore.password, which Tidemark owns (a security setting): use"
            + " --kafkaKeystorePasswordFile or --kafkaKeystorePasswordSecret instead");
    refusals.put(
        "value.deserializer=org.apache.kafka.common.serialization.StringDeserializer",
        "sets value.deserializer, which Tidemark owns (Tidemark reads and writes bytes and"
            + " (de)serializes them itself): remove it from the file");
    refusals.put(
        "tidemark.jaas.scope=kafka",
        "sets tidemark.jaas.scope: tidemark.jaas.NAME keys are login options for"
            + " --kafkaSaslMechanism=OAUTHBEARER only");
    for (Map.Entry<String, String> refusal : refusals.entrySet()) {
      Path properties = file("owned.properties", "client.id=x\n" + refusal.getKey() + "\n");
      IllegalArgumentException e =
          assertThrows(
              refusal.getKey(),
              IllegalArgumentException.class,
              () -> KafkaClients.from(options(base, "--kafkaClientProperties=" + properties)));
      assertThat(
          e.getMessage(),
          equalTo("--kafkaClientProperties=" + properties + " " + refusal.getValue()));
      assertThat(e.getMessage(), not(containsString(PASSWORD)));
    }
  }

  @Test
  public void aFileBehindAUriIsCheckedWhereTheClientIsCreated() throws Exception {
    Path properties = file("late.properties", "client.id=x\nenable.auto.commit=true\n");
    String uri = properties.toUri().toString();
    assertThat(uri, containsString("file:"));

    KafkaClients clients =
        KafkaClients.from(
            options("--kafkaBootstrapServers=localhost:9092", "--kafkaClientProperties=" + uri));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, clients::connectionConfig);

    assertThat(
        e.getMessage(),
        equalTo(
            "--kafkaClientProperties="
                + uri
                + " sets enable.auto.commit, which Tidemark owns and sets to false (offsets are"
                + " committed only when a checkpoint finalizes): remove it from the file"));
  }

  @Test
  public void aMissingFileOrAnUnknownSchemeIsRefusedAtConstruction() {
    Path missing = folder.getRoot().toPath().resolve("missing.properties");
    assertRefused(
        "--kafkaClientProperties=" + missing + ": no readable file there",
        "--kafkaClientProperties=" + missing);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                KafkaClients.from(
                    options(
                        "--kafkaBootstrapServers=localhost:9092",
                        "--kafkaClientProperties=nosuchfs://bucket/client.properties")));
    assertThat(
        e.getMessage(),
        containsString(
            "--kafkaClientProperties=nosuchfs://bucket/client.properties: no Beam file system"
                + " reads this URI here"));
  }

  @Test
  public void theFilesContentReachesNeitherToStringNorTheSerializedClients() throws Exception {
    Path properties = file("secret.properties", "tidemark.jaas.clientAssertion=" + PASSWORD + "\n");
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaSecurityProtocol=SASL_SSL",
                "--kafkaSaslMechanism=OAUTHBEARER",
                "--kafkaOauthLoginCallbackHandler=" + UNSECURED_HANDLER,
                "--kafkaClientProperties=" + properties));

    assertThat(clients.connectionConfig().toString(), containsString(PASSWORD));
    assertThat(clients.toString(), containsString(properties.toString()));
    assertThat(clients.toString(), not(containsString(PASSWORD)));
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(clients);
    }
    assertThat(bytes.toString(ISO_8859_1), containsString(properties.toString()));
    assertThat(bytes.toString(ISO_8859_1), not(containsString(PASSWORD)));
  }

  // --- Stores ---

  @Test
  public void aStoreBehindAUriIsCopiedOnceToAnOwnerOnlyFile() throws Exception {
    byte[] store = "not really a key store".getBytes(UTF_8);
    Path keystore = Files.write(folder.getRoot().toPath().resolve("client.p12"), store);
    Path truststore = Files.write(folder.getRoot().toPath().resolve("trust.p12"), store);
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaSecurityProtocol=SSL",
                "--kafkaKeystoreFile=" + keystore.toUri(),
                "--kafkaKeystorePasswordFile=" + secret("keystore.password", PASSWORD),
                "--kafkaKeyPasswordFile=" + secret("key.password", PASSWORD + "-key"),
                "--kafkaKeystoreType=jks",
                "--kafkaTruststoreFile=" + truststore));

    Map<String, Object> config = clients.connectionConfig();

    Path copy = Paths.get((String) config.get("ssl.keystore.location"));
    assertThat(copy.equals(keystore), is(false));
    assertThat(Files.readAllBytes(copy), equalTo(store));
    assertThat(
        PosixFilePermissions.toString(Files.getPosixFilePermissions(copy)), equalTo("rw-------"));
    assertThat(config, hasEntry("ssl.keystore.type", "JKS"));
    assertThat(config, hasEntry("ssl.keystore.password", PASSWORD));
    assertThat(config, hasEntry("ssl.key.password", PASSWORD + "-key"));
    // A local path is handed to Kafka as it is.
    assertThat(config, hasEntry("ssl.truststore.location", truststore.toString()));
    assertThat(config.get("ssl.truststore.password"), nullValue());
    // Fetched once per JVM: the next client gets the same file, and a removed file is rewritten.
    assertThat(clients.connectionConfig().get("ssl.keystore.location"), equalTo(copy.toString()));
    Files.delete(copy);
    Path again = Paths.get((String) clients.connectionConfig().get("ssl.keystore.location"));
    assertThat(Files.readAllBytes(again), equalTo(store));
  }

  @Test
  public void storeCombinationsAreRefused() throws Exception {
    Path store = file("store.p12", "x");
    Path password = secret("store.password", PASSWORD);
    String secretVersion = "projects/p/secrets/kafka-keystore/versions/1";
    assertRefused(
        "--kafkaKeystoreFile needs --kafkaSecurityProtocol=SSL or SASL_SSL",
        "--kafkaKeystoreFile=" + store,
        "--kafkaKeystorePasswordFile=" + password);
    assertRefused(
        "--kafkaTruststoreSecret needs --kafkaSecurityProtocol=SSL or SASL_SSL",
        "--kafkaTruststoreSecret=" + secretVersion);
    assertRefused(
        "use one of --kafkaKeystoreFile and --kafkaKeystoreSecret, not both",
        "--kafkaSecurityProtocol=SSL",
        "--kafkaKeystoreFile=" + store,
        "--kafkaKeystoreSecret=" + secretVersion,
        "--kafkaKeystorePasswordFile=" + password);
    assertRefused(
        "a key store needs its password: --kafkaKeystorePasswordFile=PATH or"
            + " --kafkaKeystorePasswordSecret=projects/PROJECT/secrets/NAME/versions/VERSION",
        "--kafkaSecurityProtocol=SSL",
        "--kafkaKeystoreFile=" + store);
    assertRefused(
        "--kafkaKeyPasswordFile needs --kafkaKeystoreFile or --kafkaKeystoreSecret",
        "--kafkaSecurityProtocol=SSL",
        "--kafkaKeyPasswordFile=" + password);
    assertRefused(
        "--kafkaTruststorePasswordSecret needs --kafkaTruststoreFile or --kafkaTruststoreSecret",
        "--kafkaSecurityProtocol=SSL",
        "--kafkaTruststorePasswordSecret=" + secretVersion);
    assertRefused(
        "--kafkaKeystoreType=BKS: use one of [PKCS12, JKS, PEM]",
        "--kafkaSecurityProtocol=SSL",
        "--kafkaKeystoreFile=" + store,
        "--kafkaKeystorePasswordFile=" + password,
        "--kafkaKeystoreType=BKS");
    assertRefused(
        "--kafkaKeystoreSecret is not a Secret Manager secret version: use"
            + " projects/PROJECT/secrets/NAME/versions/VERSION with VERSION a number or latest,"
            + " e.g. --kafkaKeystoreSecret=projects/my-project/secrets/kafka-keystore/versions/latest",
        "--kafkaSecurityProtocol=SSL",
        "--kafkaKeystoreSecret=" + PASSWORD,
        "--kafkaKeystorePasswordFile=" + password);
  }

  @Test
  public void toStringNamesWhereEachSecretIsAndNoSecret() throws Exception {
    String keystoreSecret = "projects/p/secrets/kafka-keystore/versions/2";
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaSecurityProtocol=SSL",
                "--kafkaKeystoreSecret=" + keystoreSecret,
                "--kafkaKeystorePasswordSecret=projects/p/secrets/kafka-keystore-password/versions/1",
                "--kafkaTruststoreSecret=projects/p/secrets/kafka-truststore/versions/1"));

    assertThat(
        clients.toString(),
        equalTo(
            "KafkaClients{localhost:9092, SSL, truststore from secret"
                + " projects/p/secrets/kafka-truststore/versions/1, keystore from secret "
                + keystoreSecret
                + "}"));
  }

  // --- User name from Secret Manager ---

  @Test
  public void theUserNameMayComeFromASecretAndIsNamedButNotReadAtValidation() {
    String user = "projects/p/secrets/kafka-user/versions/2";
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaSecurityProtocol=SASL_SSL",
                "--kafkaSaslMechanism=SCRAM-SHA-512",
                "--kafkaUsernameSecret=" + user,
                "--kafkaPasswordSecret=projects/p/secrets/kafka-password/versions/1"));
    assertThat(
        clients.toString(),
        equalTo(
            "KafkaClients{localhost:9092, SASL_SSL, SCRAM-SHA-512 as secret "
                + user
                + ", password from secret projects/p/secrets/kafka-password/versions/1}"));
  }

  @Test
  public void aUserNameAndItsSecretTogetherAreRefused() {
    assertRefused(
        "use one of --kafkaUsername and --kafkaUsernameSecret, not both",
        "--kafkaSecurityProtocol=SASL_SSL",
        "--kafkaSaslMechanism=PLAIN",
        "--kafkaUsername=u",
        "--kafkaUsernameSecret=projects/p/secrets/u/versions/1",
        "--kafkaPasswordSecret=projects/p/secrets/pw/versions/1");
  }

  @Test
  public void aUserNameSecretWithoutSaslOrInTheWrongFormIsRefused() {
    assertRefused(
        "--kafkaUsernameSecret needs --kafkaSecurityProtocol=SASL_SSL or SASL_PLAINTEXT",
        "--kafkaSecurityProtocol=SSL",
        "--kafkaUsernameSecret=projects/p/secrets/u/versions/1");
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                KafkaClients.from(
                    options(
                        "--kafkaSecurityProtocol=SASL_SSL",
                        "--kafkaSaslMechanism=PLAIN",
                        "--kafkaUsernameSecret=alice",
                        "--kafkaPasswordSecret=projects/p/secrets/pw/versions/1")));
    assertThat(e.getMessage(), containsString("--kafkaUsernameSecret is not a Secret Manager"));
    assertThat(e.getMessage(), not(containsString("alice")));
  }

  // --- PEM stores ---

  @Test
  public void pemStoresGoToKafkaWithoutStorePasswords() throws Exception {
    Path trust = file("ca.pem", "-----BEGIN CERTIFICATE-----\n");
    Path key = file("client.pem", "-----BEGIN PRIVATE KEY-----\n");
    Map<String, Object> config =
        KafkaClients.from(
                options(
                    "--kafkaSecurityProtocol=SSL",
                    "--kafkaTruststoreFile=" + trust,
                    "--kafkaTruststoreType=pem",
                    "--kafkaKeystoreFile=" + key,
                    "--kafkaKeystoreType=PEM",
                    "--kafkaKeyPasswordFile=" + secret("key.password", PASSWORD)))
            .connectionConfig();

    assertThat(config, hasEntry("ssl.truststore.type", "PEM"));
    assertThat(config, hasEntry("ssl.keystore.type", "PEM"));
    assertThat(config, hasEntry("ssl.key.password", PASSWORD));
    assertThat(config.get("ssl.truststore.password"), nullValue());
    assertThat(config.get("ssl.keystore.password"), nullValue());
  }

  @Test
  public void aPemStoreWithAStorePasswordIsRefused() throws Exception {
    Path pem = file("ca.pem", "-----BEGIN CERTIFICATE-----\n");
    Path password = secret("store.password", PASSWORD);
    assertRefused(
        "a PEM trust store has no password: drop --kafkaTruststorePasswordFile and"
            + " --kafkaTruststorePasswordSecret",
        "--kafkaSecurityProtocol=SSL",
        "--kafkaTruststoreFile=" + pem,
        "--kafkaTruststoreType=PEM",
        "--kafkaTruststorePasswordFile=" + password);
    assertRefused(
        "a PEM key store has no store password: drop --kafkaKeystorePasswordFile and"
            + " --kafkaKeystorePasswordSecret (an encrypted private key's password goes in"
            + " --kafkaKeyPasswordFile or --kafkaKeyPasswordSecret)",
        "--kafkaSecurityProtocol=SSL",
        "--kafkaKeystoreFile=" + pem,
        "--kafkaKeystoreType=PEM",
        "--kafkaKeystorePasswordFile=" + password);
  }

  // --- Helpers ---

  private Path secret(String name, String value) throws Exception {
    return file(name, value + "\n");
  }

  private Path file(String name, String content) throws Exception {
    return Files.writeString(folder.getRoot().toPath().resolve(name), content, UTF_8);
  }

  private static KafkaOptions options(String... args) {
    List<String> all = new ArrayList<>(Arrays.asList(args));
    if (all.stream().noneMatch(a -> a.startsWith("--kafkaBootstrapServers="))) {
      all.add(0, "--kafkaBootstrapServers=localhost:9092");
    }
    return PipelineOptionsFactory.fromArgs(all.toArray(new String[0])).as(KafkaOptions.class);
  }

  private static void assertRefused(String message, String... args) {
    KafkaOptions options = options(args);
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> KafkaClients.from(options));
    assertThat(e.getMessage(), equalTo(message));
  }
}
