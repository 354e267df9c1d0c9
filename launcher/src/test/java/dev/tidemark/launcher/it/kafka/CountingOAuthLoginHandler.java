package dev.tidemark.launcher.it.kafka;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.UnsupportedCallbackException;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerTokenCallback;
import org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredLoginCallbackHandler;

/**
 * Kafka's unsecured JWS login handler, counting the tokens it makes: a test names it in {@code
 * --kafkaOauthLoginCallbackHandler} and sees the count rise, proving the option reached the client
 * (Kafka would otherwise fall back to the unsecured handler itself, silently). Public with a public
 * constructor: Kafka instantiates it by name.
 */
public class CountingOAuthLoginHandler extends OAuthBearerUnsecuredLoginCallbackHandler {
  static final AtomicInteger TOKENS = new AtomicInteger();

  public CountingOAuthLoginHandler() {}

  @Override
  public void handle(Callback[] callbacks) throws IOException, UnsupportedCallbackException {
    super.handle(callbacks);
    for (Callback callback : callbacks) {
      if (callback instanceof OAuthBearerTokenCallback token && token.token() != null) {
        TOKENS.incrementAndGet();
      }
    }
  }
}
