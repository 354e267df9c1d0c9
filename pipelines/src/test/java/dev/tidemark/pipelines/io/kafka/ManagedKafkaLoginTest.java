package dev.tidemark.pipelines.io.kafka;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.hasEntry;
import static org.hamcrest.Matchers.is;

import com.google.auth.oauth2.AccessToken;
import com.google.auth.oauth2.GoogleCredentials;
import com.google.auth.oauth2.ServiceAccountCredentials;
import com.google.cloud.hosted.kafka.auth.GcpLoginCallbackHandler;
import dev.tidemark.pipelines.KafkaOptions;
import java.lang.reflect.Constructor;
import java.security.KeyPairGenerator;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Map;
import javax.security.auth.callback.Callback;
import javax.security.auth.login.AppConfigurationEntry;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerToken;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerTokenCallback;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The Managed Service for Apache Kafka login, as terraform/ configures it (kafka_auth =
 * "managed_kafka"), without Google: the options give Kafka Google's {@code GcpLoginCallbackHandler}
 * with the OAUTHBEARER login module and no client secret, and that handler, on this build's class
 * path (Kafka, Google's auth library and API client), turns a service account's access token into
 * the token Kafka sends, with the account as its principal. Only the credentials are stood in: they
 * carry an access token that does not expire, so nothing asks Google for one.
 */
@RunWith(JUnit4.class)
public class ManagedKafkaLoginTest {
  private static final String HANDLER =
      "com.google.cloud.hosted.kafka.auth.GcpLoginCallbackHandler";
  private static final String ACCOUNT = "tidemark-worker@my-project.iam.gserviceaccount.com";

  @Test
  public void theOptionsNameGooglesHandlerWithTheOauthBearerLoginModule() {
    KafkaOptions options =
        PipelineOptionsFactory.fromArgs(
                "--kafkaBootstrapServers=bootstrap.c.europe-west1.managedkafka.p.cloud.goog:9092",
                "--kafkaSecurityProtocol=SASL_SSL",
                "--kafkaSaslMechanism=OAUTHBEARER",
                "--kafkaOauthLoginCallbackHandler=" + HANDLER)
            .as(KafkaOptions.class);
    Map<String, Object> config = KafkaClients.from(options).connectionConfig();

    assertThat(config, hasEntry("sasl.mechanism", "OAUTHBEARER"));
    assertThat(config, hasEntry("sasl.login.callback.handler.class", HANDLER));
    assertThat(
        config,
        hasEntry(
            "sasl.jaas.config",
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"));
    assertThat(config, hasEntry("security.protocol", "SASL_SSL"));
  }

  @Test
  public void theHandlerMakesATokenForTheServiceAccount() throws Exception {
    KeyPairGenerator keys = KeyPairGenerator.getInstance("RSA");
    keys.initialize(2048);
    Date expiry = new Date(System.currentTimeMillis() + 3_600_000L);
    GoogleCredentials credentials =
        ServiceAccountCredentials.newBuilder()
            .setClientEmail(ACCOUNT)
            .setClientId("1234")
            .setPrivateKey(keys.generateKeyPair().getPrivate())
            .setAccessToken(new AccessToken("ya29.offline-token", expiry))
            .build();
    Constructor<GcpLoginCallbackHandler> withCredentials =
        GcpLoginCallbackHandler.class.getDeclaredConstructor(GoogleCredentials.class);
    withCredentials.setAccessible(true);
    GcpLoginCallbackHandler handler = withCredentials.newInstance(credentials);
    handler.configure(
        Map.of(),
        "OAUTHBEARER",
        List.of(
            new AppConfigurationEntry(
                OAuthBearerLoginModule.class.getName(),
                AppConfigurationEntry.LoginModuleControlFlag.REQUIRED,
                Map.of())));

    OAuthBearerTokenCallback callback = new OAuthBearerTokenCallback();
    handler.handle(new Callback[] {callback});
    OAuthBearerToken token = callback.token();

    assertThat(token.principalName(), is(ACCOUNT));
    assertThat(token.lifetimeMs(), is(expiry.getTime()));
    String[] parts = token.value().split("\\.");
    assertThat(parts.length, is(3));
    String claims = new String(Base64.getUrlDecoder().decode(parts[1]), UTF_8);
    assertThat(claims.contains("\"sub\":\"" + ACCOUNT + "\""), is(true));
    assertThat(
        new String(Base64.getUrlDecoder().decode(parts[2]), UTF_8), is("ya29.offline-token"));
    handler.close();
  }
}
