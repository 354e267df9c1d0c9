package dev.tidemark.launcher.it.kafka;

import static dev.tidemark.launcher.it.kafka.SecuredKafka.CLIENT_KEYSTORE_PASSWORD;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.PLAIN_PASSWORD;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.PLAIN_USER;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.SCRAM_PASSWORD;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.SCRAM_USER;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.TRUSTSTORE_PASSWORD;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.assertKafkaLoggedWithoutSecrets;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.byteSerializers;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.javaSerialized;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.options;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.probe;
import static dev.tidemark.launcher.it.kafka.SecuredKafka.readWithConsumerFactory;
import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.allOf;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;
import static org.junit.Assert.assertThrows;

import com.google.cloud.secretmanager.v1.AccessSecretVersionRequest;
import com.google.cloud.secretmanager.v1.AccessSecretVersionResponse;
import com.google.cloud.secretmanager.v1.SecretPayload;
import com.google.protobuf.ByteString;
import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.TidemarkPipeline;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.io.kafka.KafkaSinks;
import dev.tidemark.pipelines.io.kafka.KafkaSource;
import dev.tidemark.transforms.values.RawRecord;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32C;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.values.PCollection;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The SASL password from Secret Manager ({@code --kafkaPasswordSecret}), against the secured broker
 * of {@link SecuredKafka} and a fake Secret Manager: a real gRPC server on a loopback port that
 * answers {@code AccessSecretVersion} for the secrets it knows, {@code PERMISSION_DENIED} for the
 * project {@value #DENIED_PROJECT} and {@code NOT_FOUND} for everything else, and counts the calls.
 * The client reaches it through the hidden {@code --secretManagerEndpoint} (plain text, no
 * credentials): nothing here talks to Google.
 *
 * <p>The key and trust stores and their passwords come from the fake too, for mutual TLS ({@code
 * --kafkaKeystoreSecret} and the rest): the stores' bytes are written to private files on the
 * "worker".
 *
 * <p>The tests prove that the password round-trips to the broker (in this JVM and in a fresh one
 * whose Kafka INFO log is searched for it), that nothing is fetched while options are validated and
 * the pipeline is built and then once per JVM and secret version, that a missing or denied secret
 * fails with a message naming the secret and the role to grant, that bad references are refused
 * with an example, and that the password reaches neither options, display data, the serialized
 * {@link KafkaClients} nor the logs.
 *
 * <p>The fake's service is declared by hand ({@link #ACCESS}): the generated {@code
 * SecretManagerServiceGrpc} stub artifact is not available to this build, and the client needs only
 * the method's name and message types.
 */
@RunWith(JUnit4.class)
public class KafkaSecretManagerIT {
  @ClassRule public static final TemporaryFolder FOLDER = new TemporaryFolder();

  private static final String PROJECT = "tidemark-test";
  private static final String DENIED_PROJECT = "forbidden-project";

  /** The PLAIN user's password, for the round trip in this JVM. */
  private static final String PLAIN_SECRET =
      "projects/" + PROJECT + "/secrets/kafka-plain/versions/latest";

  /** The SCRAM user's password, for the fresh JVM (whose cache starts empty). */
  private static final String SCRAM_SECRET =
      "projects/" + PROJECT + "/secrets/kafka-scram/versions/3";

  /** The PLAIN user's name, for the user-name-from-a-secret test. */
  private static final String USER_SECRET =
      "projects/" + PROJECT + "/secrets/kafka-user/versions/1";

  /** The PLAIN password again, used only by the call-counting test. */
  private static final String COUNTED_SECRET =
      "projects/" + PROJECT + "/secrets/kafka-counted/versions/1";

  /** The PLAIN password again, used only by the exposure test. */
  private static final String EXPOSED_SECRET =
      "projects/" + PROJECT + "/secrets/kafka-exposed/versions/latest";

  private static final String MISSING_SECRET =
      "projects/" + PROJECT + "/secrets/no-such-secret/versions/latest";
  private static final String DENIED_SECRET =
      "projects/" + DENIED_PROJECT + "/secrets/kafka-plain/versions/latest";

  private static final String KEYSTORE_SECRET =
      "projects/" + PROJECT + "/secrets/kafka-keystore/versions/1";
  private static final String KEYSTORE_PASSWORD_SECRET =
      "projects/" + PROJECT + "/secrets/kafka-keystore-password/versions/1";
  private static final String TRUSTSTORE_SECRET =
      "projects/" + PROJECT + "/secrets/kafka-truststore/versions/1";
  private static final String TRUSTSTORE_PASSWORD_SECRET =
      "projects/" + PROJECT + "/secrets/kafka-truststore-password/versions/1";

  private static final String ROLE = "roles/secretmanager.secretAccessor";

  private static final List<String> SECRETS = List.of(PLAIN_PASSWORD, SCRAM_PASSWORD);

  private static final String PLAIN_TOPIC = "secret-manager.plain";
  private static final String SCRAM_TOPIC = "secret-manager.scram";
  private static final String COUNTED_TOPIC = "secret-manager.counted";
  private static final String SOURCE_TOPIC = "secret-manager.source";
  private static final String MTLS_TOPIC = "secret-manager.mtls";
  private static final String USER_TOPIC = "secret-manager.user";

  /** {@code AccessSecretVersion} of {@code google.cloud.secretmanager.v1.SecretManagerService}. */
  private static final MethodDescriptor<AccessSecretVersionRequest, AccessSecretVersionResponse>
      ACCESS =
          MethodDescriptor.<AccessSecretVersionRequest, AccessSecretVersionResponse>newBuilder()
              .setType(MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(
                  MethodDescriptor.generateFullMethodName(
                      "google.cloud.secretmanager.v1.SecretManagerService", "AccessSecretVersion"))
              .setRequestMarshaller(
                  ProtoUtils.marshaller(AccessSecretVersionRequest.getDefaultInstance()))
              .setResponseMarshaller(
                  ProtoUtils.marshaller(AccessSecretVersionResponse.getDefaultInstance()))
              .build();

  private static SecuredKafka kafka;
  private static FakeSecretManager secretManager;

  @BeforeClass
  public static void startBrokerAndSecretManager() throws Exception {
    kafka =
        SecuredKafka.start(
            FOLDER.getRoot().toPath(),
            List.of(PLAIN_TOPIC, SCRAM_TOPIC, COUNTED_TOPIC, SOURCE_TOPIC, MTLS_TOPIC, USER_TOPIC));
    Map<String, byte[]> secrets = new HashMap<>();
    secrets.put(PLAIN_SECRET, PLAIN_PASSWORD.getBytes(UTF_8));
    secrets.put(SCRAM_SECRET, (SCRAM_PASSWORD + "\n").getBytes(UTF_8));
    secrets.put(COUNTED_SECRET, PLAIN_PASSWORD.getBytes(UTF_8));
    secrets.put(USER_SECRET, (PLAIN_USER + "\n").getBytes(UTF_8));
    secrets.put(EXPOSED_SECRET, PLAIN_PASSWORD.getBytes(UTF_8));
    secrets.put(KEYSTORE_SECRET, Files.readAllBytes(kafka.clientKeystore));
    secrets.put(KEYSTORE_PASSWORD_SECRET, (CLIENT_KEYSTORE_PASSWORD + "\n").getBytes(UTF_8));
    secrets.put(TRUSTSTORE_SECRET, Files.readAllBytes(kafka.truststore));
    secrets.put(TRUSTSTORE_PASSWORD_SECRET, TRUSTSTORE_PASSWORD.getBytes(UTF_8));
    secretManager = FakeSecretManager.start(secrets);
  }

  @AfterClass
  public static void stop() throws Exception {
    if (kafka != null) {
      kafka.close();
    }
    if (secretManager != null) {
      secretManager.close();
    }
  }

  // --- Round trips ---

  @Test
  public void plainWithASecretManagerPasswordRoundTripsThroughTheFactories() throws Exception {
    KafkaClients clients = KafkaClients.from(saslOptions("PLAIN", PLAIN_USER, PLAIN_SECRET));

    try (Producer<byte[], byte[]> producer =
        clients.<byte[], byte[]>producerFactory().apply(byteSerializers())) {
      for (String value : List.of("sm-0", "sm-1", "sm-2")) {
        producer.send(new ProducerRecord<>(PLAIN_TOPIC, value.getBytes(UTF_8))).get();
      }
    }

    assertThat(
        readWithConsumerFactory(clients, PLAIN_TOPIC, 3), equalTo(List.of("sm-0", "sm-1", "sm-2")));
    assertThat(secretManager.calls(PLAIN_SECRET), is(1));
  }

  @Test
  public void theUserNameMayComeFromSecretManagerWithThePassword() throws Exception {
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaBootstrapServers=" + kafka.saslServers,
                "--kafkaSecurityProtocol=SASL_PLAINTEXT",
                "--kafkaSaslMechanism=PLAIN",
                "--kafkaUsernameSecret=" + USER_SECRET,
                "--kafkaPasswordSecret=" + PLAIN_SECRET,
                "--secretManagerEndpoint=" + secretManager.endpoint()));
    assertThat("calls while validating", secretManager.calls(USER_SECRET), is(0));

    try (Producer<byte[], byte[]> producer =
        clients.<byte[], byte[]>producerFactory().apply(byteSerializers())) {
      producer.send(new ProducerRecord<>(USER_TOPIC, "user-0".getBytes(UTF_8))).get();
    }

    assertThat(readWithConsumerFactory(clients, USER_TOPIC, 1), equalTo(List.of("user-0")));
    assertThat(secretManager.calls(USER_SECRET), is(1));
    assertThat(clients.toString(), containsString("PLAIN as secret " + USER_SECRET + ","));
  }

  @Test
  public void scramWithASecretManagerPasswordRoundTripsInAFreshJvmAndLogsNoSecret()
      throws Exception {
    String output =
        probe(
            FOLDER.getRoot().toPath(),
            Map.of(),
            SCRAM_TOPIC,
            "--kafkaBootstrapServers=" + kafka.saslServers,
            "--kafkaSecurityProtocol=SASL_PLAINTEXT",
            "--kafkaSaslMechanism=SCRAM-SHA-512",
            "--kafkaUsername=" + SCRAM_USER,
            "--kafkaPasswordSecret=" + SCRAM_SECRET,
            "--secretManagerEndpoint=" + secretManager.endpoint());

    assertThat(output, containsString("PROBE read [probe-0, probe-1, probe-2]"));
    assertThat(output, containsString("sasl.mechanism = SCRAM-SHA-512"));
    assertThat(
        output,
        containsString(
            "Kafka SASL password read from Secret Manager secret version " + SCRAM_SECRET));
    assertKafkaLoggedWithoutSecrets(output, SECRETS);
    // The probe's producer and consumer share one fetch.
    assertThat(secretManager.calls(SCRAM_SECRET), is(1));
  }

  @Test
  public void mutualTlsWithStoresAndPasswordsFromSecretManagerRoundTrips() throws Exception {
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaBootstrapServers=" + kafka.mtlsServers,
                "--kafkaSecurityProtocol=SSL",
                "--kafkaTruststoreSecret=" + TRUSTSTORE_SECRET,
                "--kafkaTruststorePasswordSecret=" + TRUSTSTORE_PASSWORD_SECRET,
                "--kafkaKeystoreSecret=" + KEYSTORE_SECRET,
                "--kafkaKeystorePasswordSecret=" + KEYSTORE_PASSWORD_SECRET,
                "--secretManagerEndpoint=" + secretManager.endpoint()));
    byte[] serialized = javaSerialized(clients);
    assertThat("calls while validating", secretManager.calls(KEYSTORE_SECRET), is(0));

    try (Producer<byte[], byte[]> producer =
        clients.<byte[], byte[]>producerFactory().apply(byteSerializers())) {
      for (String value : List.of("mtls-0", "mtls-1")) {
        producer.send(new ProducerRecord<>(MTLS_TOPIC, value.getBytes(UTF_8))).get();
      }
    }

    assertThat(
        readWithConsumerFactory(deserialized(serialized), MTLS_TOPIC, 2),
        equalTo(List.of("mtls-0", "mtls-1")));
    Map<String, Object> config = clients.connectionConfig();
    for (String key : List.of("ssl.keystore.location", "ssl.truststore.location")) {
      Path store = Path.of((String) config.get(key));
      assertThat(
          key,
          PosixFilePermissions.toString(Files.getPosixFilePermissions(store)),
          equalTo("rw-------"));
    }
    assertThat(
        Files.readAllBytes(Path.of((String) config.get("ssl.keystore.location"))),
        equalTo(Files.readAllBytes(kafka.clientKeystore)));
    // Once per JVM, however many clients: a producer, a consumer and the call above.
    for (String secret :
        List.of(
            KEYSTORE_SECRET,
            KEYSTORE_PASSWORD_SECRET,
            TRUSTSTORE_SECRET,
            TRUSTSTORE_PASSWORD_SECRET)) {
      assertThat(secret, secretManager.calls(secret), is(1));
    }
    String shipped = new String(serialized, ISO_8859_1);
    assertThat(shipped, containsString(KEYSTORE_SECRET));
    for (String secret : List.of(CLIENT_KEYSTORE_PASSWORD, TRUSTSTORE_PASSWORD)) {
      assertThat(shipped, not(containsString(secret)));
    }
    assertThat(
        shipped.contains(new String(Files.readAllBytes(kafka.clientKeystore), ISO_8859_1)),
        is(false));
  }

  @Test
  public void aMissingKeystoreSecretFailsNamingItsOption() {
    String missing = "projects/" + PROJECT + "/secrets/no-such-keystore/versions/1";
    KafkaClients clients =
        KafkaClients.from(
            options(
                "--kafkaBootstrapServers=" + kafka.mtlsServers,
                "--kafkaSecurityProtocol=SSL",
                "--kafkaKeystoreSecret=" + missing,
                "--kafkaKeystorePasswordSecret=" + KEYSTORE_PASSWORD_SECRET,
                "--secretManagerEndpoint=" + secretManager.endpoint()));

    IllegalStateException e = assertThrows(IllegalStateException.class, clients::connectionConfig);

    assertThat(
        e.getMessage(),
        containsString(
            "Secret Manager has no secret version " + missing + " (--kafkaKeystoreSecret)"));
  }

  // --- When Secret Manager is called ---

  @Test
  public void nothingIsFetchedBeforeTheFirstClientAndThenOncePerJvm() throws Exception {
    TidemarkOptions options = pipelineOptions(COUNTED_SECRET);
    KafkaClients clients = KafkaClients.from(options);
    buildPipeline(options, clients);
    KafkaClients shipped = deserialized(javaSerialized(clients));

    assertThat("calls while validating and building", secretManager.calls(COUNTED_SECRET), is(0));

    assertThat(clients.connectionConfig().toString(), containsString(PLAIN_PASSWORD));
    assertThat("calls after the first client", secretManager.calls(COUNTED_SECRET), is(1));

    try (Producer<byte[], byte[]> producer =
        shipped.<byte[], byte[]>producerFactory().apply(byteSerializers())) {
      producer.send(new ProducerRecord<>(COUNTED_TOPIC, "counted".getBytes(UTF_8))).get();
    }
    assertThat(readWithConsumerFactory(shipped, COUNTED_TOPIC, 1), equalTo(List.of("counted")));
    assertThat(
        KafkaClients.from(pipelineOptions(COUNTED_SECRET)).connectionConfig().toString(),
        containsString(PLAIN_PASSWORD));
    assertThat("calls after more clients", secretManager.calls(COUNTED_SECRET), is(1));
  }

  // --- Refused secrets ---

  @Test
  public void aMissingSecretFailsNamingTheSecretAndTheRole() {
    KafkaClients clients = KafkaClients.from(saslOptions("PLAIN", PLAIN_USER, MISSING_SECRET));

    IllegalStateException e =
        assertThrows(
            IllegalStateException.class, () -> clients.producerFactory().apply(byteSerializers()));

    assertThat(
        e.getMessage(),
        equalTo(
            "Secret Manager has no secret version "
                + MISSING_SECRET
                + " (--kafkaPasswordSecret): check the project, the secret name and that the"
                + " version exists and is enabled; to read it, the workers' service account needs "
                + ROLE
                + " on secret projects/"
                + PROJECT
                + "/secrets/no-such-secret (gcloud secrets add-iam-policy-binding)"));
    assertNoSecretIn(e);
  }

  @Test
  public void aDeniedSecretFailsNamingTheSecretAndTheRoleAndIsAskedForAgain() {
    KafkaClients clients = KafkaClients.from(saslOptions("PLAIN", PLAIN_USER, DENIED_SECRET));

    IllegalStateException first =
        assertThrows(IllegalStateException.class, clients::connectionConfig);
    IllegalStateException second =
        assertThrows(IllegalStateException.class, () -> clients.consumerFactory().apply(Map.of()));

    assertThat(
        first.getMessage(),
        equalTo(
            "Secret Manager refused to read secret version "
                + DENIED_SECRET
                + " (--kafkaPasswordSecret): the workers' service account needs "
                + ROLE
                + " on secret projects/"
                + DENIED_PROJECT
                + "/secrets/kafka-plain (gcloud secrets add-iam-policy-binding)"));
    assertThat(second.getMessage(), equalTo(first.getMessage()));
    assertNoSecretIn(first);
    // A failure is not cached: once the grant is fixed, the next client succeeds.
    assertThat(secretManager.calls(DENIED_SECRET), is(2));
  }

  // --- Refused options ---

  @Test
  public void badReferencesAreRefusedWithAnExampleAndWithoutRepeatingTheValue() {
    String message =
        "--kafkaPasswordSecret is not a Secret Manager secret version: use"
            + " projects/PROJECT/secrets/NAME/versions/VERSION with VERSION a number or latest,"
            + " e.g. --kafkaPasswordSecret=projects/my-project/secrets/kafka-password/versions/latest";
    int callsBefore = secretManager.totalCalls();
    for (String bad :
        List.of(
            PLAIN_PASSWORD,
            "projects/" + PROJECT + "/secrets/kafka-plain",
            "projects/" + PROJECT + "/secrets/kafka-plain/versions/",
            "projects/" + PROJECT + "/secrets/kafka-plain/versions/0",
            "projects/" + PROJECT + "/secrets/kafka-plain/versions/newest",
            "projects/" + PROJECT + "/secrets/kafka plain/versions/1",
            "projects//secrets/kafka-plain/versions/1",
            "secrets/kafka-plain/versions/1")) {
      IllegalArgumentException e =
          assertThrows(
              bad,
              IllegalArgumentException.class,
              () -> KafkaClients.from(saslOptions("PLAIN", PLAIN_USER, bad)));
      assertThat(bad, e.getMessage(), equalTo(message));
    }
    assertThat(secretManager.totalCalls(), is(callsBefore));
  }

  @Test
  public void aSecretAndAnotherPasswordSourceAreRefused() {
    String message =
        "SASL needs exactly one of --kafkaPasswordFile=PATH, --kafkaPasswordEnv=VARIABLE or"
            + " --kafkaPasswordSecret=projects/PROJECT/secrets/NAME/versions/VERSION; the password"
            + " itself is never an option";
    List<List<String>> twoSources =
        List.of(
            List.of("--kafkaPasswordFile=" + kafka.plainPasswordFile),
            List.of("--kafkaPasswordEnv=PATH"),
            List.of("--kafkaPasswordFile=" + kafka.plainPasswordFile, "--kafkaPasswordEnv=PATH"));
    for (List<String> other : twoSources) {
      List<String> args = saslArgs("PLAIN", PLAIN_USER, PLAIN_SECRET);
      args.addAll(other);
      IllegalArgumentException e =
          assertThrows(
              other.toString(),
              IllegalArgumentException.class,
              () -> KafkaClients.from(options(args.toArray(new String[0]))));
      assertThat(other.toString(), e.getMessage(), equalTo(message));
    }
  }

  @Test
  public void aBadEndpointIsRefused() {
    List<String> args = saslArgs("PLAIN", PLAIN_USER, PLAIN_SECRET);
    args.set(args.size() - 1, "--secretManagerEndpoint=http://localhost");

    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> KafkaClients.from(options(args.toArray(new String[0]))));

    assertThat(
        e.getMessage(),
        equalTo(
            "--secretManagerEndpoint=http://localhost: use host:port (for tests and emulators)"));
  }

  // --- No secret outside the client ---

  @Test
  public void thePasswordReachesNeitherOptionsNorDisplayDataNorTheSerializedClients()
      throws Exception {
    TidemarkOptions options = pipelineOptions(EXPOSED_SECRET);
    KafkaClients clients = KafkaClients.from(options);
    SecuredKafka.GraphCollector graph = buildPipeline(options, clients);

    Map<String, String> exposed = SecuredKafka.exposedPlaces(options, clients, graph);
    exposed.put("serialized transforms", graph.serialized.toString(ISO_8859_1));

    // The password is one call away, and it was fetched after the places were collected ...
    assertThat(clients.connectionConfig().toString(), containsString(PLAIN_PASSWORD));
    exposed.put("serialized KafkaClients", new String(javaSerialized(clients), ISO_8859_1));
    exposed.put("KafkaClients.toString() after", clients.toString());
    // ... each place was really looked at ...
    assertThat(graph.displayData.size() > 20, is(true));
    assertThat(graph.serializedTransforms > 20, is(true));
    for (String place :
        List.of(
            "options.toString()",
            "KafkaClients.toString()",
            "options JSON",
            "options proto",
            "serialized transforms",
            "serialized KafkaClients")) {
      assertThat(place, exposed.get(place), containsString(EXPOSED_SECRET));
    }
    // ... and the password is not there.
    for (Map.Entry<String, String> entry : exposed.entrySet()) {
      assertThat(entry.getKey(), entry.getValue(), not(containsString(PLAIN_PASSWORD)));
    }
  }

  // --- Helpers ---

  private static List<String> saslArgs(String mechanism, String user, String secret) {
    return new ArrayList<>(
        List.of(
            "--kafkaBootstrapServers=" + kafka.saslServers,
            "--kafkaSecurityProtocol=SASL_PLAINTEXT",
            "--kafkaSaslMechanism=" + mechanism,
            "--kafkaUsername=" + user,
            "--kafkaPasswordSecret=" + secret,
            "--secretManagerEndpoint=" + secretManager.endpoint()));
  }

  private static KafkaOptions saslOptions(String mechanism, String user, String secret) {
    return options(saslArgs(mechanism, user, secret).toArray(new String[0]));
  }

  private static TidemarkOptions pipelineOptions(String secret) {
    List<String> args = saslArgs("PLAIN", PLAIN_USER, secret);
    args.addAll(List.of("--runner=DirectRunner", "--source=kafka", "--sink=kafka"));
    return PipelineOptionsFactory.fromArgs(args.toArray(new String[0]))
        .withValidation()
        .as(TidemarkOptions.class);
  }

  /** The whole Kafka-to-Kafka pipeline, built and not run; its display data and serializations. */
  private static SecuredKafka.GraphCollector buildPipeline(
      TidemarkOptions options, KafkaClients clients) {
    Pipeline pipeline = Pipeline.create(options);
    PCollection<RawRecord> raw =
        pipeline.apply("ReadKafka", KafkaSource.of(clients, SOURCE_TOPIC, "secret-manager-test"));
    KafkaSinks.write(TidemarkPipeline.expand(raw, options), options, clients);
    SecuredKafka.GraphCollector graph = new SecuredKafka.GraphCollector();
    pipeline.traverseTopologically(graph);
    return graph;
  }

  private static KafkaClients deserialized(byte[] bytes)
      throws IOException, ClassNotFoundException {
    try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes))) {
      return (KafkaClients) in.readObject();
    }
  }

  /** Neither the exception nor any cause mentions a password. */
  private static void assertNoSecretIn(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      for (String secret : SECRETS) {
        assertThat(String.valueOf(t), not(containsString(secret)));
      }
    }
    assertThat(String.valueOf(e), allOf(containsString(ROLE), containsString("Secret Manager")));
  }

  /**
   * Secret Manager's {@code AccessSecretVersion} on a loopback port: the known secret versions
   * ({@code latest} is a name like any other here), {@code PERMISSION_DENIED} for {@value
   * #DENIED_PROJECT}, {@code NOT_FOUND} otherwise; counts calls per requested name.
   */
  private static final class FakeSecretManager {
    private final Map<String, byte[]> secrets;
    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    private final AtomicInteger total = new AtomicInteger();
    private final Server server;

    private FakeSecretManager(Map<String, byte[]> secrets) throws IOException {
      this.secrets = secrets;
      this.server =
          NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
              .addService(
                  ServerServiceDefinition.builder(ACCESS.getServiceName())
                      .addMethod(ACCESS, ServerCalls.asyncUnaryCall(this::access))
                      .build())
              .build()
              .start();
    }

    static FakeSecretManager start(Map<String, byte[]> secrets) throws IOException {
      return new FakeSecretManager(secrets);
    }

    String endpoint() {
      return InetAddress.getLoopbackAddress().getHostAddress() + ":" + server.getPort();
    }

    int calls(String name) {
      AtomicInteger count = calls.get(name);
      return count == null ? 0 : count.get();
    }

    int totalCalls() {
      return total.get();
    }

    void close() throws InterruptedException {
      server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }

    private void access(
        AccessSecretVersionRequest request, StreamObserver<AccessSecretVersionResponse> response) {
      String name = request.getName();
      total.incrementAndGet();
      calls.computeIfAbsent(name, n -> new AtomicInteger()).incrementAndGet();
      byte[] value = secrets.get(name);
      if (name.startsWith("projects/" + DENIED_PROJECT + "/")) {
        response.onError(
            Status.PERMISSION_DENIED
                .withDescription(
                    "Permission 'secretmanager.versions.access' denied for resource '"
                        + name
                        + "' (or it may not exist).")
                .asRuntimeException());
      } else if (value == null) {
        response.onError(
            Status.NOT_FOUND
                .withDescription("Secret [" + name + "] not found or has no versions.")
                .asRuntimeException());
      } else {
        byte[] data = value;
        CRC32C crc = new CRC32C();
        crc.update(data);
        response.onNext(
            AccessSecretVersionResponse.newBuilder()
                .setName(name.replace("/versions/latest", "/versions/7"))
                .setPayload(
                    SecretPayload.newBuilder()
                        .setData(ByteString.copyFrom(data))
                        .setDataCrc32C(crc.getValue()))
                .build());
        response.onCompleted();
      }
    }
  }
}
