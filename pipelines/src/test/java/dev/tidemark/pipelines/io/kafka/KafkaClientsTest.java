package dev.tidemark.pipelines.io.kafka;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasEntry;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.Assert.assertThrows;

import dev.tidemark.pipelines.KafkaOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * {@link KafkaClients} without a broker: the configuration each option combination produces, stores
 * fetched through Beam's file systems into private files ({@link WorkerFiles}), and the messages of
 * refused combinations. The round trips against a real broker are in the harness ({@code
 * KafkaSecurityIT}, {@code KafkaSecretManagerIT}).
 */
@RunWith(JUnit4.class)
public class KafkaClientsTest {
  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  private static final String PASSWORD = "s3cr3t-unit-90210"; // --- SCRAM-SHA-256 ---

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
            + " SCRAM-SHA-256, SCRAM-SHA-512]",
        "--kafkaSecurityProtocol=SASL_SSL",
        "--kafkaSaslMechanism=GSSAPI",
        "--kafkaUsername=u",
        "--kafkaPasswordEnv=PATH");
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
        "--kafkaKeystoreType=PEM: use one of [PKCS12, JKS]",
        "--kafkaSecurityProtocol=SSL",
        "--kafkaKeystoreFile=" + store,
        "--kafkaKeystorePasswordFile=" + password,
        "--kafkaKeystoreType=PEM");
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
