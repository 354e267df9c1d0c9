package dev.tidemark.pipelines.io.kafka;

import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.grpc.InstantiatingGrpcChannelProvider;
import com.google.api.gax.rpc.ApiException;
import com.google.api.gax.rpc.StatusCode;
import com.google.cloud.secretmanager.v1.AccessSecretVersionResponse;
import com.google.cloud.secretmanager.v1.SecretManagerServiceClient;
import com.google.cloud.secretmanager.v1.SecretManagerServiceSettings;
import com.google.cloud.secretmanager.v1.SecretPayload;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kafka passwords from Google Cloud Secret Manager, read where a client is created (on the worker)
 * and cached for the life of the JVM: one worker fetches each secret version once, however many
 * consumers and producers it creates. A failed read is not cached, so the next client tries again
 * (after the missing grant or secret has been fixed, say). {@code latest} is resolved once per JVM:
 * a rotated password reaches a worker when its JVM restarts.
 *
 * <p>Nothing here logs or puts in an exception message the secret's value: errors name the secret
 * version and what to fix, the one INFO line names only the secret version.
 */
final class SecretManagerPasswords {
  /** The role a worker's service account needs on the secret. */
  static final String ACCESSOR_ROLE = "roles/secretmanager.secretAccessor";

  /** The accepted form of {@code --kafkaPasswordSecret}. */
  static final String FORM = "projects/PROJECT/secrets/NAME/versions/VERSION";

  static final String EXAMPLE = "projects/my-project/secrets/kafka-password/versions/latest";

  /**
   * A secret version's resource name: a project id or number, a secret id (letters, digits, hyphens
   * and underscores, at most 255) and a version number or {@code latest}. Shared with the Flex
   * Template's regex.
   */
  static final String REFERENCE_REGEX =
      "projects/([A-Za-z0-9][A-Za-z0-9.:-]*)/secrets/([A-Za-z0-9_-]{1,255})"
          + "/versions/([1-9][0-9]*|latest)";

  private static final Pattern REFERENCE = Pattern.compile(REFERENCE_REGEX);

  private static final Logger LOG = LoggerFactory.getLogger(SecretManagerPasswords.class);

  /** Keyed by endpoint (empty: Google's) and secret version; values are secrets. */
  private static final ConcurrentMap<String, String> CACHE = new ConcurrentHashMap<>();

  private SecretManagerPasswords() {}

  static boolean isReference(String value) {
    return REFERENCE.matcher(value).matches();
  }

  /**
   * The first line of the secret version's payload, stripped (as for {@code --kafkaPasswordFile}),
   * from the cache or else from Secret Manager at {@code endpoint} (null: Google's, with the
   * default credentials; otherwise plain text without credentials, for tests and emulators).
   */
  static String password(String secretVersion, @Nullable String endpoint) {
    return CACHE.computeIfAbsent(
        (endpoint == null ? "" : endpoint) + "|" + secretVersion,
        key -> fetch(secretVersion, endpoint));
  }

  private static String fetch(String secretVersion, @Nullable String endpoint) {
    Matcher reference = REFERENCE.matcher(secretVersion);
    if (!reference.matches()) {
      throw new IllegalArgumentException(
          "--kafkaPasswordSecret is not a secret version; use " + FORM + ", e.g. " + EXAMPLE);
    }
    String secret = "projects/" + reference.group(1) + "/secrets/" + reference.group(2);
    AccessSecretVersionResponse response;
    try (SecretManagerServiceClient client =
        SecretManagerServiceClient.create(settings(endpoint))) {
      response = client.accessSecretVersion(secretVersion);
    } catch (IOException e) {
      throw new IllegalStateException(
          "cannot create a Secret Manager client to read secret version "
              + secretVersion
              + " (--kafkaPasswordSecret): "
              + e.getMessage(),
          e);
    } catch (ApiException e) {
      throw new IllegalStateException(failure(secretVersion, secret, e.getStatusCode()), e);
    }
    SecretPayload payload = response.getPayload();
    byte[] data = payload.getData().toByteArray();
    if (payload.hasDataCrc32C()) {
      CRC32C crc = new CRC32C();
      crc.update(data);
      if (crc.getValue() != payload.getDataCrc32C()) {
        throw new IllegalStateException(
            "secret version "
                + secretVersion
                + " (--kafkaPasswordSecret) arrived corrupted: its CRC32C does not match");
      }
    }
    String password = KafkaClients.firstLine(new String(data, StandardCharsets.UTF_8));
    if (password.isEmpty()) {
      throw new IllegalStateException(
          "secret version "
              + secretVersion
              + " (--kafkaPasswordSecret) is empty: add a version that holds the Kafka password");
    }
    LOG.info(
        "Kafka SASL password read from Secret Manager secret version {} ({}); cached for this JVM",
        secretVersion,
        response.getName());
    return password;
  }

  private static String failure(String secretVersion, String secret, StatusCode status) {
    String grant =
        "the workers' service account needs "
            + ACCESSOR_ROLE
            + " on secret "
            + secret
            + " (gcloud secrets add-iam-policy-binding)";
    switch (status.getCode()) {
      case NOT_FOUND:
        return "Secret Manager has no secret version "
            + secretVersion
            + " (--kafkaPasswordSecret): check the project, the secret name and that the version"
            + " exists and is enabled; to read it, "
            + grant;
      case PERMISSION_DENIED:
        return "Secret Manager refused to read secret version "
            + secretVersion
            + " (--kafkaPasswordSecret): "
            + grant;
      case UNAUTHENTICATED:
        return "Secret Manager did not accept this worker's credentials for secret version "
            + secretVersion
            + " (--kafkaPasswordSecret): run with a service account; "
            + grant;
      default:
        return "cannot read secret version "
            + secretVersion
            + " (--kafkaPasswordSecret) from Secret Manager: "
            + status.getCode()
            + "; "
            + grant;
    }
  }

  private static SecretManagerServiceSettings settings(@Nullable String endpoint)
      throws IOException {
    if (endpoint == null) {
      return SecretManagerServiceSettings.newBuilder().build();
    }
    return SecretManagerServiceSettings.newBuilder()
        .setEndpoint(endpoint)
        .setCredentialsProvider(NoCredentialsProvider.create())
        .setTransportChannelProvider(
            InstantiatingGrpcChannelProvider.newBuilder()
                .setEndpoint(endpoint)
                .setChannelConfigurator(builder -> builder.usePlaintext())
                .build())
        .build();
  }
}
