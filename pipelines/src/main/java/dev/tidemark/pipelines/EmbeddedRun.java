package dev.tidemark.pipelines;

import dev.tidemark.pipelines.launch.Summary;
import java.util.Iterator;
import java.util.ServiceLoader;

/**
 * A run inside local services that the launcher starts itself: {@code
 * --kafkaBootstrapServers=embedded} starts a broker in this JVM, feeds it {@code --input}, runs the
 * pipeline against it and reads the outputs back. The implementation lives in the local harness and
 * is found with {@link ServiceLoader}; the production jars carry none, so there the option is
 * refused with a message that names the launcher.
 */
public interface EmbeddedRun {
  /** The value of {@code --kafkaBootstrapServers} that asks for the embedded broker. */
  String EMBEDDED_BROKER = "embedded";

  /** Runs the pipeline inside the embedded services; returns its checked summary. */
  Summary run(TidemarkOptions options);

  /** Whether the options ask for the embedded broker on a Kafka source or sink. */
  static boolean requested(TidemarkOptions options) {
    return EMBEDDED_BROKER.equals(options.getKafkaBootstrapServers())
        && (options.getSource() == TidemarkOptions.SourceKind.kafka
            || options.getSink() == TidemarkOptions.SinkKind.kafka);
  }

  /** The harness's implementation, or an error that says which jar has it. */
  static EmbeddedRun load() {
    Iterator<EmbeddedRun> found = ServiceLoader.load(EmbeddedRun.class).iterator();
    if (!found.hasNext()) {
      throw new IllegalArgumentException(
          "--kafkaBootstrapServers=embedded starts a broker inside this JVM, which only the local"
              + " launcher (./tidemark, harness/target/tidemark.jar) carries; with a production jar"
              + " pass --kafkaBootstrapServers=host:port");
    }
    return found.next();
  }
}
