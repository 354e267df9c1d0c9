package dev.tidemark.cluster;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.Test;

/** What the cluster writes and parses, without starting a process. */
public class LocalClusterTest {
  private final ClusterSettings settings = ClusterSettings.defaults(Path.of("/tmp/tm-cluster"));
  private final LocalCluster cluster = new LocalCluster(settings, "", System.out);

  @Test
  public void flinkProcessesRunWithoutTheBrokersLibraries() {
    String repo = "/home/u/.m2/repository";
    String classPath =
        String.join(
            java.io.File.pathSeparator,
            "/src/local-cluster/target/tidemark-local-cluster.jar",
            repo + "/org/apache/flink/flink-runtime/1.19.0/flink-runtime-1.19.0.jar",
            repo + "/org/apache/kafka/kafka_2.13/3.9.1/kafka_2.13-3.9.1.jar",
            repo + "/org/apache/kafka/kafka-clients/3.9.1/kafka-clients-3.9.1.jar",
            repo + "/org/scala-lang/scala-library/2.13.15/scala-library-2.13.15.jar",
            repo
                + "/com/fasterxml/jackson/module/jackson-module-scala_2.13/2.18.2/"
                + "jackson-module-scala_2.13-2.18.2.jar",
            repo + "/com/ververica/frocksdbjni/6.20.3-ververica-2.0/frocksdbjni.jar");
    assertEquals(
        String.join(
            java.io.File.pathSeparator,
            "/src/local-cluster/target/tidemark-local-cluster.jar",
            repo + "/org/apache/flink/flink-runtime/1.19.0/flink-runtime-1.19.0.jar",
            repo + "/com/ververica/frocksdbjni/6.20.3-ververica-2.0/frocksdbjni.jar"),
        ClusterProcesses.flinkClassPath(classPath));
  }

  @Test
  public void parsesBashJavaUtilsResultLinesAmongLogLines() {
    String output =
        String.join(
            "\n",
            "INFO  [] - Loading configuration property: taskmanager.numberOfTaskSlots, 2",
            "BASH_JAVA_UTILS_EXEC_RESULT:-Xmx536870902 -Xms536870902 -XX:MaxMetaspaceSize=268435456",
            "INFO  [] - The derived from fraction jvm overhead memory (204.800mb) is ...",
            "BASH_JAVA_UTILS_EXEC_RESULT:-D taskmanager.memory.network.min=134217730b -D"
                + " taskmanager.cpu.cores=2.0 ");
    LocalCluster.ResourceParameters parameters =
        LocalCluster.ResourceParameters.parse("GET_TM_RESOURCE_PARAMS", output);
    assertEquals(
        List.of("-Xmx536870902", "-Xms536870902", "-XX:MaxMetaspaceSize=268435456"),
        parameters.jvmOptions());
    assertEquals(
        List.of(
            "-D", "taskmanager.memory.network.min=134217730b", "-D", "taskmanager.cpu.cores=2.0"),
        parameters.dynamicProperties());
  }

  @Test
  public void refusesOutputWithoutResultLines() {
    IllegalStateException e =
        assertThrows(
            IllegalStateException.class,
            () -> LocalCluster.ResourceParameters.parse("GET_TM_RESOURCE_PARAMS", "ERROR boom"));
    assertTrue(e.getMessage(), e.getMessage().contains("ERROR boom"));
  }

  @Test
  public void everyServerBindsToLoopback() {
    String flink = cluster.flinkConfiguration();
    for (String key :
        List.of(
            "jobmanager.rpc.address",
            "jobmanager.bind-host",
            "taskmanager.host",
            "taskmanager.bind-host",
            "rest.address",
            "rest.bind-address",
            "metrics.reporter.prom.host")) {
      assertTrue(key, flink.contains("\n" + key + ": 127.0.0.1\n"));
    }
    assertTrue(flink, flink.contains("state.backend.type: rocksdb\n"));
    assertTrue(
        flink, flink.contains("state.checkpoints.dir: 'file:///tmp/tm-cluster/checkpoints'"));
    String kafka = cluster.kafkaConfiguration(0);
    assertTrue(
        kafka,
        kafka.contains("listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093\n"));
    assertTrue(kafka, kafka.contains("advertised.listeners=PLAINTEXT://127.0.0.1:9092\n"));
  }

  @Test
  public void settingsSurviveASaveAndALoad() throws IOException {
    Path dir = Files.createTempDirectory("tidemark-cluster-settings");
    try {
      ClusterSettings saved =
          ClusterSettings.defaults(dir)
              .withPorts(18081, 16123, 19092, 19093, 19250)
              .withTaskManagers(3, 1)
              .withTaskManagerMemory("1536m")
              .withBrokers(3)
              .withHighAvailability(true)
              .withExtraPortBase(19300)
              .withJvmOptions(List.of("-XX:TieredStopAtLevel=1", "-Dtidemark.test=yes"));
      saved.save();
      assertEquals(saved, ClusterSettings.load(dir).orElseThrow());
      assertEquals(19253, saved.taskManagerPrometheusPort(2));
    } finally {
      Files.deleteIfExists(dir.resolve(ClusterSettings.FILE));
      Files.deleteIfExists(dir.resolve("conf"));
      Files.deleteIfExists(dir);
    }
  }

  @Test
  public void threeBrokersReplicateEveryTopicAndTheTransactionLog() {
    ClusterSettings three = settings.withBrokers(3);
    LocalCluster replicated = new LocalCluster(three, "", System.out);
    assertEquals(
        List.of("kafka", "kafka-1", "kafka-2", "jobmanager", "taskmanager-0", "taskmanager-1"),
        replicated.processNames());
    assertEquals("127.0.0.1:9092,127.0.0.1:9304,127.0.0.1:9306", three.kafkaBootstrapServers());
    for (int i = 0; i < 3; i++) {
      String kafka = replicated.kafkaConfiguration(i);
      assertTrue(kafka, kafka.contains("node.id=" + (i + 1) + "\n"));
      assertTrue(
          kafka,
          kafka.contains(
              "controller.quorum.voters=1@127.0.0.1:9093,2@127.0.0.1:9305,3@127.0.0.1:9307\n"));
      for (String line :
          List.of(
              "default.replication.factor=3",
              "min.insync.replicas=2",
              "offsets.topic.replication.factor=3",
              "transaction.state.log.replication.factor=3",
              "transaction.state.log.min.isr=2",
              "unclean.leader.election.enable=false")) {
        assertTrue(kafka, kafka.contains(line + "\n"));
      }
    }
    assertTrue(
        replicated.kafkaConfiguration(2),
        replicated
            .kafkaConfiguration(2)
            .contains("listeners=PLAINTEXT://127.0.0.1:9306,CONTROLLER://127.0.0.1:9307\n"));
    assertThrows(IllegalArgumentException.class, () -> settings.withBrokers(2));
    String one = cluster.kafkaConfiguration(0);
    assertTrue(one, one.contains("transaction.state.log.replication.factor=1\n"));
  }

  @Test
  public void highAvailabilityRunsZooKeeperAndAStandbyJobManager() {
    ClusterSettings ha = settings.withHighAvailability(true);
    LocalCluster cluster = new LocalCluster(ha, "", System.out);
    assertEquals(
        List.of(
            "zookeeper", "kafka", "jobmanager", "jobmanager-1", "taskmanager-0", "taskmanager-1"),
        cluster.processNames());
    String flink = cluster.flinkConfiguration();
    assertTrue(flink, flink.contains("high-availability.type: zookeeper\n"));
    assertTrue(flink, flink.contains("high-availability.zookeeper.quorum: 127.0.0.1:9300\n"));
    assertTrue(
        flink, flink.contains("high-availability.storageDir: 'file:///tmp/tm-cluster/ha'\n"));
    String zoo = cluster.zooKeeperConfiguration();
    assertTrue(zoo, zoo.contains("clientPortAddress=127.0.0.1\n"));
    assertTrue(zoo, zoo.contains("clientPort=9300\n"));
    assertEquals(9301, ha.jobManagerRestPort(1));
    assertEquals(List.of("rest=9301", "prometheus=9303"), cluster.ports("jobmanager-1"));
    assertTrue(
        "without HA no ZooKeeper setting",
        !this.cluster.flinkConfiguration().contains("high-availability"));
  }

  @Test
  public void refusesAPortOutOfRange() {
    assertThrows(
        IllegalArgumentException.class,
        () -> ClusterSettings.defaults(Path.of("/tmp/x")).withPorts(0, 1, 2, 3, 4));
  }
}
