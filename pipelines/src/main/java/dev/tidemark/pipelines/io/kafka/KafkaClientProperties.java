package dev.tidemark.pipelines.io.kafka;

import java.io.IOException;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * The operator's Kafka client settings ({@code --kafkaClientProperties}): a Java properties file
 * (UTF-8) whose entries are merged into every consumer, producer and admin client Tidemark creates,
 * over Tidemark's own per-client settings (so {@code client.id}, {@code linger.ms}, {@code
 * max.poll.records}, {@code sasl.oauthbearer.token.endpoint.url} and the like take effect).
 *
 * <p>{@link #OWNED} lists the settings Tidemark owns: its security settings, and those its
 * exactly-once and idempotence guarantees depend on. A file that sets one of them fails with a
 * message naming the key and the option to use instead; only a setting Tidemark gives one value
 * that the launcher knows (such as {@code isolation.level=read_committed} or the {@code
 * security.protocol} of the options) may be repeated with that same value, and then has no effect.
 *
 * <p>Keys starting with {@value #JAAS_PREFIX} are not Kafka settings: with {@code
 * --kafkaSaslMechanism=OAUTHBEARER} they are the options of the JAAS login module that Tidemark
 * builds ({@code tidemark.jaas.scope=kafka} becomes {@code scope="kafka"}), e.g. a scope, SASL
 * extensions ({@code extension_NAME}) or the unsecured handler's claims.
 *
 * <p>The file may hold secrets (JAAS options); its content is never logged or put in a message
 * here, and it is parsed only where a client is created (and, for a local file, once at
 * construction to refuse a bad file early).
 */
final class KafkaClientProperties {
  static final String OPTION = "--kafkaClientProperties";

  /** Keys with this prefix are JAAS login module options for OAUTHBEARER. */
  static final String JAAS_PREFIX = "tidemark.jaas.";

  /** A JAAS option name as Kafka's JAAS parser reads it: a word. */
  private static final Pattern JAAS_OPTION = Pattern.compile("[A-Za-z_][A-Za-z0-9_.-]*");

  /** Who sets an owned setting: the option to use instead, or the one value Tidemark uses. */
  record Owner(@Nullable String option, @Nullable String value, String why) {}

  private static final String USERNAME_AND_PASSWORD =
      "--kafkaUsername with --kafkaPasswordFile, --kafkaPasswordEnv or --kafkaPasswordSecret";

  private static final String DESERIALIZED =
      "Tidemark reads and writes bytes and (de)serializes them itself";

  /**
   * The settings Tidemark owns, by key. A setting with an option comes from that option; one with a
   * value is the same everywhere Tidemark sets it; the rest (group ids, transactional ids,
   * (de)serializers) differ between Tidemark's clients and are never the file's.
   */
  static final Map<String, Owner> OWNED = owned();

  private static Map<String, Owner> owned() {
    Map<String, Owner> owned = new TreeMap<>();
    owned.put("bootstrap.servers", new Owner("--kafkaBootstrapServers", null, "the connection"));
    owned.put(
        "security.protocol", new Owner("--kafkaSecurityProtocol", null, "a security setting"));
    owned.put("sasl.mechanism", new Owner("--kafkaSaslMechanism", null, "a security setting"));
    owned.put(
        "sasl.jaas.config",
        new Owner(
            USERNAME_AND_PASSWORD + " (OAUTHBEARER login options: " + JAAS_PREFIX + "NAME keys)",
            null,
            "Tidemark builds it, with the password read on the worker"));
    owned.put(
        "sasl.login.callback.handler.class",
        new Owner("--kafkaOauthLoginCallbackHandler", null, "a security setting"));
    String truststore = "--kafkaTruststoreFile or --kafkaTruststoreSecret";
    owned.put("ssl.truststore.location", new Owner(truststore, null, "a security setting"));
    owned.put("ssl.truststore.certificates", new Owner(truststore, null, "a security setting"));
    owned.put(
        "ssl.truststore.type", new Owner("--kafkaTruststoreType", null, "a security setting"));
    owned.put(
        "ssl.truststore.password",
        new Owner(
            "--kafkaTruststorePasswordFile or --kafkaTruststorePasswordSecret",
            null,
            "a security setting"));
    String keystore = "--kafkaKeystoreFile or --kafkaKeystoreSecret";
    owned.put("ssl.keystore.location", new Owner(keystore, null, "a security setting"));
    owned.put("ssl.keystore.certificate.chain", new Owner(keystore, null, "a security setting"));
    owned.put("ssl.keystore.key", new Owner(keystore, null, "a security setting"));
    owned.put("ssl.keystore.type", new Owner("--kafkaKeystoreType", null, "a security setting"));
    owned.put(
        "ssl.keystore.password",
        new Owner(
            "--kafkaKeystorePasswordFile or --kafkaKeystorePasswordSecret",
            null,
            "a security setting"));
    owned.put(
        "ssl.key.password",
        new Owner(
            "--kafkaKeyPasswordFile or --kafkaKeyPasswordSecret", null, "a security setting"));
    owned.put(
        "group.id",
        new Owner(
            "--kafkaConsumerGroup (the source) or --kafkaSinkGroupId (the transactional sink)",
            null,
            "offsets and the sink's committed sequence live in these groups"));
    owned.put(
        "auto.offset.reset",
        new Owner("--kafkaStartOffset", null, "where the source starts; the capture seeks itself"));
    owned.put(
        "transactional.id",
        new Owner(
            "--kafkaSinkMode=transactional with --kafkaSinkGroupId",
            null,
            "the sink derives one per shard; a transactional id on any other producer breaks it"));
    owned.put(
        "enable.auto.commit",
        new Owner(null, "false", "offsets are committed only when a checkpoint finalizes"));
    owned.put(
        "isolation.level",
        new Owner(null, "read_committed", "aborted transactions must never be read"));
    owned.put(
        "enable.idempotence",
        new Owner(null, "true", "the producers must not write a retried record twice"));
    owned.put(
        "acks", new Owner(null, "all", "a record counts as written once all replicas have it"));
    owned.put(
        "max.request.size",
        new Owner(
            null,
            Integer.toString(KafkaSinks.MAX_REQUEST_BYTES),
            "the bound on dead-letter records depends on it"));
    for (String key :
        new String[] {
          "key.serializer", "value.serializer", "key.deserializer", "value.deserializer"
        }) {
      owned.put(key, new Owner(null, null, DESERIALIZED));
    }
    owned.put(JAAS_PREFIX + "clientId", new Owner("--kafkaUsername", null, "a security setting"));
    owned.put(
        JAAS_PREFIX + "clientSecret",
        new Owner(
            "--kafkaPasswordFile, --kafkaPasswordEnv or --kafkaPasswordSecret",
            null,
            "a security setting"));
    return Collections.unmodifiableMap(owned);
  }

  /** A checked file: the Kafka settings to merge and the OAUTHBEARER JAAS options. */
  record Checked(Map<String, String> kafka, Map<String, String> jaas) {}

  private KafkaClientProperties() {}

  /**
   * Parses and checks the file's content. {@code optionValues} are the values Tidemark's options
   * give the owned settings that have an option (only those that are not secrets); a file may
   * repeat such a value. {@code oauth}: whether JAAS options are allowed.
   */
  static Checked check(
      byte[] content, String location, Map<String, String> optionValues, boolean oauth) {
    Properties properties = parse(content, location);
    Map<String, String> kafka = new TreeMap<>();
    Map<String, String> jaas = new TreeMap<>();
    for (String key : new TreeMap<>(properties).keySet().stream().map(String::valueOf).toList()) {
      String value = properties.getProperty(key).strip();
      Owner owner = OWNED.get(key);
      if (owner != null) {
        String tidemarks = owner.option() != null ? optionValues.get(key) : owner.value();
        if (tidemarks != null && tidemarks.equals(value)) {
          continue;
        }
        throw new IllegalArgumentException(refusal(location, key, owner));
      }
      if (key.startsWith(JAAS_PREFIX)) {
        String name = key.substring(JAAS_PREFIX.length());
        if (!oauth) {
          throw new IllegalArgumentException(
              OPTION
                  + "="
                  + location
                  + " sets "
                  + key
                  + ": "
                  + JAAS_PREFIX
                  + "NAME keys are login options for --kafkaSaslMechanism=OAUTHBEARER only");
        }
        if (!JAAS_OPTION.matcher(name).matches()) {
          throw new IllegalArgumentException(
              OPTION + "=" + location + " sets " + key + ": not a JAAS option name");
        }
        jaas.put(name, value);
        continue;
      }
      kafka.put(key, value);
    }
    return new Checked(kafka, jaas);
  }

  /** The message for a file that sets an owned setting; never the file's value. */
  static String refusal(String location, String key, Owner owner) {
    String prefix = OPTION + "=" + location + " sets " + key + ", which Tidemark owns";
    if (owner.option() != null) {
      return prefix + " (" + owner.why() + "): use " + owner.option() + " instead";
    }
    if (owner.value() != null) {
      return prefix
          + " and sets to "
          + owner.value()
          + " ("
          + owner.why()
          + "): remove it from the file";
    }
    return prefix + " (" + owner.why() + "): remove it from the file";
  }

  private static Properties parse(byte[] content, String location) {
    String text;
    try {
      text =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(content))
              .toString();
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException(
          OPTION + "=" + location + " is not UTF-8 text: is it a properties file?");
    }
    Properties properties = new Properties();
    try {
      properties.load(new StringReader(text));
    } catch (IOException | IllegalArgumentException e) {
      // Properties reports a bad \\u escape with an IllegalArgumentException quoting the line.
      throw new IllegalArgumentException(
          OPTION + "=" + location + " is not a Java properties file (a malformed \\u escape)");
    }
    return properties;
  }

  /** The JAAS options as Kafka's JAAS syntax wants them: {@code name="value"}, escaped. */
  static String jaasOptions(Map<String, String> options) {
    StringBuilder out = new StringBuilder();
    for (Map.Entry<String, String> option : new LinkedHashMap<>(options).entrySet()) {
      out.append(' ')
          .append(option.getKey())
          .append("=\"")
          .append(KafkaClients.jaasEscape(option.getValue()))
          .append('"');
    }
    return out.toString();
  }
}
