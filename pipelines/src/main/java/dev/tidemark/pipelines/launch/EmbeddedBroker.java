package dev.tidemark.pipelines.launch;

import dev.tidemark.pipelines.TidemarkOptions;

/**
 * {@code --kafkaBootstrapServers=embedded}: the local launcher's live demo, which starts a broker
 * in its own JVM, feeds it {@code --input} and reads the outputs back. Only the local launcher
 * ({@code ./tidemark}) runs it; everywhere else the value is refused with a message that says so.
 */
public final class EmbeddedBroker {
  /** The value of {@code --kafkaBootstrapServers} that asks for the embedded broker. */
  public static final String BOOTSTRAP_SERVERS = "embedded";

  private EmbeddedBroker() {}

  /** Whether the options ask for the embedded broker on a Kafka source or sink. */
  public static boolean requested(TidemarkOptions options) {
    return BOOTSTRAP_SERVERS.equals(options.getKafkaBootstrapServers())
        && (options.getSource() == TidemarkOptions.SourceKind.kafka
            || options.getSink() == TidemarkOptions.SinkKind.kafka);
  }

  /** Refuses the embedded broker where no launcher starts it: a job run or submitted as it is. */
  static void refuse(TidemarkOptions options) {
    if (requested(options)) {
      throw new IllegalArgumentException(
          "--kafkaBootstrapServers=embedded starts a broker inside the local launcher"
              + " (./tidemark run, launcher/target/tidemark.jar), which runs the live demo; here"
              + " pass --kafkaBootstrapServers=host:port");
    }
  }
}
