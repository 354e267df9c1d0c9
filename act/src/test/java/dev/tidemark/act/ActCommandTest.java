package dev.tidemark.act;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;
import picocli.CommandLine;

/** The command line: defaults, and a usage error (exit 2) naming the option for each bad one. */
@RunWith(JUnit4.class)
public class ActCommandTest {
  private static String usageError(String... args) {
    CommandLine commandLine = ActCommand.commandLine();
    StringWriter err = new StringWriter();
    commandLine.setErr(new PrintWriter(err));
    commandLine.setOut(new PrintWriter(new StringWriter()));
    assertThat(String.join(" ", args), commandLine.execute(args), is(ActCommand.USAGE_ERROR));
    return err.toString();
  }

  @Test
  public void theDefaultsAreTheLocalClusterAndThePipelinesTopic() {
    ActCommand command = new ActCommand();
    new CommandLine(command).parseArgs("--stateDir=/tmp/act-state");
    ActSettings settings = command.settings();
    assertThat(settings.bootstrapServers(), is("127.0.0.1:9092"));
    assertThat(settings.topic(), is("tidemark.decisions"));
    assertThat(settings.consumerName(), is("tidemark-act"));
    assertThat(settings.stateDir(), is(Path.of("/tmp/act-state")));
    assertThat(settings.idleTimeout(), is(Duration.ofSeconds(10)));
    assertThat(settings.keyRetention(), is(Duration.ofHours(24)));
    assertThat(settings.follow(), is(false));
    assertThat(settings.replay(), is(false));
    assertThat(settings.jdbcUrl().isPresent(), is(false));

    new CommandLine(command).parseArgs("--replay", "--follow=true", "--idleTimeout=PT1M");
    assertThat(command.settings().replay(), is(true));
    assertThat(command.settings().follow(), is(true));
    assertThat(command.settings().idleTimeout(), is(Duration.ofMinutes(1)));
  }

  /** The pipeline's Kafka connection options, read by the pipeline's own code. */
  @Test
  public void theKafkaSecurityOptionsAndClientPropertiesAreThePipelines() throws Exception {
    Path password = Files.createTempFile("act-password", ".txt");
    Path properties = Files.createTempFile("act-client", ".properties");
    try {
      Files.writeString(password, "s3cret\n");
      Files.writeString(properties, "max.poll.records=7\nreceive.buffer.bytes=65536\n");
      ActCommand command = new ActCommand();
      new CommandLine(command)
          .parseArgs(
              "--kafkaBootstrapServers=broker:9093",
              "--kafkaSecurityProtocol=SASL_PLAINTEXT",
              "--kafkaSaslMechanism=SCRAM-SHA-512",
              "--kafkaUsername=act",
              "--kafkaPasswordFile=" + password,
              "--kafkaClientProperties=" + properties);
      Properties config = new ActConsumer(command.settings(), System.out).kafkaProperties();
      assertThat(config.get("bootstrap.servers"), is("broker:9093"));
      assertThat(config.get("security.protocol"), is("SASL_PLAINTEXT"));
      assertThat(config.get("sasl.mechanism"), is("SCRAM-SHA-512"));
      assertThat(String.valueOf(config.get("sasl.jaas.config")), containsString("\"act\""));
      assertThat(String.valueOf(config.get("sasl.jaas.config")), containsString("\"s3cret\""));
      assertThat(config.get("receive.buffer.bytes"), is("65536"));
      assertThat(config.get("max.poll.records"), is("7"));
      // What exactly once depends on stays the consumer's.
      assertThat(config.get("isolation.level"), is("read_committed"));
      assertThat(config.get("enable.auto.commit"), is(false));

      Files.writeString(properties, "isolation.level=read_uncommitted\n");
      assertThat(
          usageError("--kafkaClientProperties=" + properties),
          containsString("isolation.level, which Tidemark owns"));
    } finally {
      Files.delete(password);
      Files.delete(properties);
    }
    assertThat(
        usageError("--kafkaSecurityProtocol=SASL_SSL"), containsString("--kafkaSaslMechanism"));
    assertThat(
        usageError("--kafkaSecurityProtocol=SASL_PLAINTEXT", "--kafkaSaslMechanism=PLAIN"),
        containsString("--kafkaUsername"));
    // A pipeline option that is not about the connection means nothing here.
    assertThat(usageError("--kafkaInputTopic=events"), containsString("--kafkaInputTopic"));
  }

  @Test
  public void everyBadOptionIsAUsageErrorThatNamesIt() {
    assertThat(usageError("--idelTimeout=PT5S"), containsString("--idelTimeout"));
    assertThat(usageError("--idleTimeout=10s"), containsString("--idleTimeout"));
    assertThat(usageError("--idleTimeout=10s"), containsString("ISO-8601"));
    assertThat(usageError("--idleTimeout=PT0S"), containsString("--idleTimeout"));
    assertThat(usageError("--keyRetention=-PT1H"), containsString("--keyRetention"));
    assertThat(usageError("--keyRetention=1 day"), containsString("--keyRetention"));
    assertThat(usageError("--maxPollRecords=0"), containsString("--maxPollRecords"));
    assertThat(usageError("--maxPollRecords=many"), containsString("--maxPollRecords"));
    assertThat(usageError("--jdbcUrl=postgres://x"), containsString("--jdbcUrl"));
    assertThat(usageError("--decisionsTopic="), containsString("--decisionsTopic"));
    assertThat(usageError("--replay=perhaps"), containsString("--replay"));
    assertThat(
        usageError("--kafkaBootstrapServers=embedded"), containsString("--kafkaBootstrapServers"));
  }
}
