package dev.tidemark.act;

import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;
import picocli.CommandLine.Unmatched;

/** {@code tidemark act}: the reference consumer of the decisions topic ({@link ActConsumer}). */
@Command(
    name = "tidemark act",
    version = "tidemark act 0.2.0",
    mixinStandardHelpOptions = true,
    description = {
      "Reads the decisions topic (read_committed) and acts on it exactly once: a fraud case per"
          + " decisionId judged review, closed when a reversed edition allows it, in PostgreSQL."
          + " The decisionId is the idempotency key; the offsets are stored in the same database"
          + " transaction as the case changes (see docs/acting-on-decisions.md).",
      "Without --jdbcUrl it starts PostgreSQL from the system's packages with its data under"
          + " --stateDir, and stops it at exit.",
      "Kafka security: the pipeline's options, with its rules (docs/kafka.md#security):"
          + " --kafkaSecurityProtocol, --kafkaSaslMechanism, --kafkaUsername,"
          + " --kafkaPasswordFile|Env|Secret, --kafkaOauthLoginCallbackHandler,"
          + " --kafkaClientProperties, --kafkaTruststore*, --kafkaKeystore*, --kafkaKeyPassword*,"
          + " --secretManagerEndpoint.",
      "A record that is not a decision, or that PostgreSQL cannot store, is written to the"
          + " rejected table with its reason, and consumption goes on."
    },
    sortOptions = false)
public final class ActCommand implements Callable<Integer> {
  /** Exit code: done. */
  public static final int DONE = 0;

  /** Exit code: the command line or an option is wrong. */
  public static final int USAGE_ERROR = 2;

  /** Exit code: the options were accepted, then the run failed (Kafka, PostgreSQL). */
  public static final int FAILED = 3;

  private static final Map<String, String> EXIT_CODES =
      new TreeMap<>(
          Map.of(
              " " + DONE, "done: the summary is printed",
              " " + USAGE_ERROR, "usage error: an unknown option or a bad value",
              " " + FAILED,
                  "failed: Kafka or PostgreSQL could not be used (the cause is printed)"));

  @Spec CommandSpec spec;

  /**
   * The pipeline's Kafka connection options that {@code act} takes too (each a prefix of option
   * names): security, secrets and the client properties file, read by {@link KafkaClients}.
   */
  static final List<String> KAFKA_CONNECTION_OPTIONS =
      List.of(
          "--kafkaSecurityProtocol",
          "--kafkaSaslMechanism",
          "--kafkaUsername",
          "--kafkaPassword",
          "--kafkaOauthLoginCallbackHandler",
          "--kafkaClientProperties",
          "--kafkaTruststore",
          "--kafkaKeystore",
          "--kafkaKeyPassword",
          "--secretManagerEndpoint");

  @Option(
      names = "--kafkaBootstrapServers",
      defaultValue = ActSettings.DEFAULT_BOOTSTRAP_SERVERS,
      description = "Kafka brokers (default: ${DEFAULT-VALUE}, the broker of 'tidemark cluster').")
  String bootstrapServers;

  @Option(
      names = "--decisionsTopic",
      defaultValue = ActSettings.DEFAULT_TOPIC,
      description = "The decisions topic (default: ${DEFAULT-VALUE}, the pipeline's default).")
  String topic;

  @Option(
      names = "--consumerName",
      defaultValue = ActSettings.DEFAULT_CONSUMER_NAME,
      description = "The key of this consumer's stored offsets (default: ${DEFAULT-VALUE}).")
  String consumerName;

  @Option(
      names = "--stateDir",
      defaultValue = "${sys:tidemark.home:-.}/out/act",
      description = "State directory: PostgreSQL's data, socket and log (default: out/act).")
  Path stateDir;

  @Option(
      names = "--jdbcUrl",
      description =
          "Use this PostgreSQL database (jdbc:postgresql://host:port/db?user=...) instead of"
              + " starting one.")
  String jdbcUrl;

  @Option(
      names = "--idleTimeout",
      defaultValue = "PT10S",
      converter = DurationConverter.class,
      description =
          "Stop after this long without records, once every partition is read to its end"
              + " (ISO-8601; default: ${DEFAULT-VALUE}).")
  Duration idleTimeout;

  @Option(
      names = "--follow",
      arity = "0..1",
      description = "Run until stopped (SIGTERM, Ctrl-C) instead of stopping when idle.")
  boolean follow;

  @Option(
      names = "--keyRetention",
      defaultValue = "PT24H",
      converter = DurationConverter.class,
      description =
          "How long an idempotency key is kept after its receipt (ISO-8601; default:"
              + " ${DEFAULT-VALUE}, as Stripe keeps them).")
  Duration keyRetention;

  @Option(
      names = "--replay",
      arity = "0..1",
      description =
          "Forget this consumer's stored offsets and read the topic from its beginning: every"
              + " record is then a redelivery and changes nothing.")
  boolean replay;

  @Option(
      names = "--maxPollRecords",
      defaultValue = "" + ActSettings.DEFAULT_MAX_POLL_RECORDS,
      description =
          "Records per poll, each poll one database transaction (default: ${DEFAULT-VALUE}).")
  int maxPollRecords;

  /** The Kafka connection options ({@link #KAFKA_CONNECTION_OPTIONS}), as given. */
  @Unmatched List<String> kafkaArgs = new ArrayList<>();

  public static void main(String[] args) {
    System.exit(execute(args));
  }

  /** Runs the command line and returns its exit code (tests call this). */
  public static int execute(String... args) {
    CommandLine commandLine = commandLine();
    return commandLine.execute(args);
  }

  static CommandLine commandLine() {
    CommandLine commandLine = new CommandLine(new ActCommand());
    commandLine.setExecutionExceptionHandler(
        (e, cmd, parsed) -> {
          cmd.getErr().println("tidemark act: " + e.getMessage());
          for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
            cmd.getErr().println("  caused by: " + c);
          }
          return FAILED;
        });
    commandLine.setExitCodeExceptionMapper(e -> USAGE_ERROR);
    commandLine.getCommandSpec().usageMessage().exitCodeListHeading("%nExit codes:%n");
    commandLine.getCommandSpec().usageMessage().exitCodeList(EXIT_CODES);
    return commandLine;
  }

  /** The settings the options give; a bad combination is an {@link IllegalArgumentException}. */
  ActSettings settings() {
    return new ActSettings(
        kafkaClients(),
        topic,
        consumerName,
        stateDir,
        Optional.ofNullable(jdbcUrl),
        idleTimeout,
        follow,
        keyRetention,
        replay,
        maxPollRecords);
  }

  /**
   * The connection: {@code --kafkaBootstrapServers} and the Kafka connection options, checked by
   * the pipeline's own rules ({@link KafkaClients#from}); any other unknown option is refused.
   */
  KafkaClients kafkaClients() {
    if (kafkaArgs.isEmpty()) {
      // No security options: a plain-text connection, without starting Beam's options machinery
      // (it scans every runner's options at its first use, seconds of start-up).
      return KafkaClients.plaintext(bootstrapServers.trim());
    }
    List<String> args = new ArrayList<>();
    args.add("--kafkaBootstrapServers=" + bootstrapServers);
    for (String arg : kafkaArgs) {
      String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
      if (KAFKA_CONNECTION_OPTIONS.stream().noneMatch(name::startsWith)) {
        throw new IllegalArgumentException(
            "unknown option "
                + name
                + " (act takes the options below and the pipeline's Kafka connection options: "
                + String.join("*, ", KAFKA_CONNECTION_OPTIONS)
                + "*)");
      }
      args.add(arg);
    }
    KafkaOptions options;
    try {
      options = PipelineOptionsFactory.fromArgs(args.toArray(new String[0])).as(KafkaOptions.class);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
    return KafkaClients.from(options);
  }

  @Override
  public Integer call() throws Exception {
    ActSettings settings;
    try {
      settings = settings();
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage(), e);
    }
    ActConsumer consumer = new ActConsumer(settings, System.out);
    CountDownLatch reported = new CountDownLatch(1);
    // SIGTERM and Ctrl-C: finish the batch in hand, stop PostgreSQL and print the summary before
    // the JVM exits.
    Thread hook =
        new Thread(
            () -> {
              try {
                consumer.stop(Duration.ofSeconds(90));
                reported.await(10, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            "act-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      ActSummary summary = consumer.run();
      System.out.println(
          "act: "
              + settings.topic()
              + " on "
              + settings.bootstrapServers()
              + " as "
              + settings.consumerName()
              + "\n"
              + summary.render());
    } finally {
      reported.countDown();
    }
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // The JVM is shutting down already: the hook has run or runs now, and finds us done.
    }
    return DONE;
  }

  /** ISO-8601 durations, with a message that names the option and shows the format. */
  public static final class DurationConverter implements ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      try {
        return Duration.parse(value);
      } catch (DateTimeParseException e) {
        throw new TypeConversionException(
            "'" + value + "' is not an ISO-8601 duration (e.g. PT10S, PT24H)");
      }
    }
  }
}
