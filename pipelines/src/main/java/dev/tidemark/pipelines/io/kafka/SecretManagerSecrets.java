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
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kafka secrets from Google Cloud Secret Manager (the SASL password, store passwords, key and trust
 * stores), read where a client is created (on the worker) and cached for the life of the JVM: one
 * worker fetches each secret version once, however many consumers and producers it creates. A
 * failed read is not cached, so the next client tries again (after the missing grant or secret has
 * been fixed, say). {@code latest} is resolved once per JVM: a rotated password reaches a worker
 * when its JVM restarts.
 *
 * <p>Nothing here logs or puts in an exception message the secret's value: errors name the secret
 * version and what to fix, the one INFO line names only the secret version.
 */
final class SecretManagerSecrets {
  /** The role a worker's service account needs on the secret. */
  static final String ACCESSOR_ROLE = "roles/secretmanager.secretAccessor";

  /** The accepted form of a secret version option ({@code --kafkaPasswordSecret} and the rest). */
  static final String FORM = "projects/PROJECT/secrets/NAME/versions/VERSION";

  /**
   * A secret version's resource name: a project id or number, a secret id (letters, digits, hyphens
   * and underscores, at most 255) and a version number or {@code latest}. Shared with the Flex
   * Template's regex.
   */
  static final String REFERENCE_REGEX =
      "projects/([A-Za-z0-9][A-Za-z0-9.:-]*)/secrets/([A-Za-z0-9_-]{1,255})"
          + "/versions/([1-9][0-9]*|latest)";

  private static final Pattern REFERENCE = Pattern.compile(REFERENCE_REGEX);

  private static final Logger LOG = LoggerFactory.getLogger(SecretManagerSecrets.class);

  /** Keyed by endpoint (empty: Google's) and secret version; values are secrets. */
  private static final ConcurrentMap<String, byte[]> CACHE = new ConcurrentHashMap<>();

  private SecretManagerSecrets() {}

  /**
   * An example secret version for {@code option}, named after it: {@code --kafkaKeystoreSecret}
   * gives {@code projects/my-project/secrets/kafka-keystore/versions/latest}.
   */
  static String example(String option) {
    String name = option.replaceFirst("^--", "").replaceFirst("Secret$", "");
    return "projects/my-project/secrets/"
        + name.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT)
        + "/versions/latest";
  }

  static boolean isReference(String value) {
    return REFERENCE.matcher(value).matches();
  }

  /**
   * The first line of the secret version's payload, stripped (as for {@code --kafkaPasswordFile}):
   * a password. {@code option} names the option that refers to the secret, {@code what} the secret
   * (for the log line and messages).
   */
  static String password(
      String secretVersion, @Nullable String endpoint, String option, String what) {
    String password =
        KafkaClients.firstLine(
            new String(bytes(secretVersion, endpoint, option, what), StandardCharsets.UTF_8));
    if (password.isEmpty()) {
      throw new IllegalStateException(
          "secret version "
              + secretVersion
              + " ("
              + option
              + ") holds no "
              + what
              + " on its first line");
    }
    return password;
  }

  /**
   * The secret version's payload, from the cache or else from Secret Manager at {@code endpoint}
   * (null: Google's, with the default credentials; otherwise plain text without credentials, for
   * tests and emulators). The returned array is the cached one: callers must not change it.
   */
  static byte[] bytes(String secretVersion, @Nullable String endpoint, String option, String what) {
    return CACHE.computeIfAbsent(
        (endpoint == null ? "" : endpoint) + "|" + secretVersion,
        key -> fetch(secretVersion, endpoint, option, what));
  }

  private static byte[] fetch(
      String secretVersion, @Nullable String endpoint, String option, String what) {
    Matcher reference = REFERENCE.matcher(secretVersion);
    if (!reference.matches()) {
      throw new IllegalArgumentException(
          option + " is not a secret version; use " + FORM + ", e.g. " + example(option));
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
              + " ("
              + option
              + "): "
              + e.getMessage(),
          e);
    } catch (ApiException e) {
      throw new IllegalStateException(failure(secretVersion, secret, option, e.getStatusCode()), e);
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
                + " ("
                + option
                + ") arrived corrupted: its CRC32C does not match");
      }
    }
    if (data.length == 0) {
      throw new IllegalStateException(
          "secret version "
              + secretVersion
              + " ("
              + option
              + ") is empty: add a version that holds the Kafka "
              + what);
    }
    LOG.info(
        "Kafka {} read from Secret Manager secret version {} ({}); cached for this JVM",
        what,
        secretVersion,
        response.getName());
    return data;
  }

  private static String failure(
      String secretVersion, String secret, String option, StatusCode status) {
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
            + " ("
            + option
            + "): check the project, the secret name and that the version"
            + " exists and is enabled; to read it, "
            + grant;
      case PERMISSION_DENIED:
        return "Secret Manager refused to read secret version "
            + secretVersion
            + " ("
            + option
            + "): "
            + grant;
      case UNAUTHENTICATED:
        return "Secret Manager did not accept this worker's credentials for secret version "
            + secretVersion
            + " ("
            + option
            + "): run with a service account; "
            + grant;
      default:
        return "cannot read secret version "
            + secretVersion
            + " ("
            + option
            + ") from Secret Manager: "
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
