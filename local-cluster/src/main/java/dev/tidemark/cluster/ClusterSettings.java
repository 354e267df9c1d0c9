package dev.tidemark.cluster;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;

/**
 * What {@code ./tidemark cluster up} was asked for: the state directory, the ports and the
 * TaskManagers' size. {@code up} writes it to {@code conf/cluster.properties} under the state
 * directory, so that {@code status}, {@code down} and a later {@code up} find the same cluster from
 * {@code --dir} alone.
 *
 * @param dir the state directory (absolute): configuration, pids, logs, data, checkpoints
 * @param restPort the JobManager's web UI and REST API
 * @param rpcPort the JobManager's RPC port (TaskManagers register there)
 * @param kafkaPort the broker's client listener
 * @param kafkaControllerPort the broker's KRaft controller listener
 * @param prometheusPort the JobManager's Prometheus endpoint; TaskManager {@code i} serves on
 *     {@code prometheusPort + 1 + i}
 * @param taskManagers how many TaskManagers run
 * @param slotsPerTaskManager task slots of each TaskManager
 * @param taskManagerMemory {@code taskmanager.memory.process.size} of each TaskManager
 * @param brokers how many Kafka brokers run (1, or 3 and more: a replicated cluster)
 * @param highAvailability whether two JobManagers run with ZooKeeper high availability
 * @param extraPortBase the first of the ports the optional processes use ({@link #extraPorts}):
 *     ZooKeeper, the standby JobManager, the brokers after the first
 * @param jvmOptions JVM options added to every process's own, after them (so they can override
 *     them)
 */
public record ClusterSettings(
    Path dir,
    int restPort,
    int rpcPort,
    int kafkaPort,
    int kafkaControllerPort,
    int prometheusPort,
    int taskManagers,
    int slotsPerTaskManager,
    String taskManagerMemory,
    int brokers,
    boolean highAvailability,
    int extraPortBase,
    List<String> jvmOptions) {

  /** The only address the cluster's servers listen on. */
  public static final String HOST = "127.0.0.1";

  public static final int DEFAULT_REST_PORT = 8081;
  public static final int DEFAULT_RPC_PORT = 6123;
  public static final int DEFAULT_KAFKA_PORT = 9092;
  public static final int DEFAULT_KAFKA_CONTROLLER_PORT = 9093;
  public static final int DEFAULT_PROMETHEUS_PORT = 9250;
  public static final int DEFAULT_TASK_MANAGERS = 2;
  public static final int DEFAULT_SLOTS_PER_TASK_MANAGER = 2;
  public static final String DEFAULT_TASK_MANAGER_MEMORY = "3072m";
  public static final int DEFAULT_EXTRA_PORT_BASE = 9300;

  /**
   * JVM options for a cluster that runs short jobs on small inputs (the tests' clusters, a demo on
   * a laptop): the C1 compiler only, which takes about a third less CPU to start the processes and
   * to run such jobs than C1 and C2; slower under sustained load, so not for benchmarks.
   */
  public static final List<String> SHORT_JOBS_JVM_OPTIONS = List.of("-XX:TieredStopAtLevel=1");

  /** A replicated Kafka cluster has at least this many brokers: replication factor 3. */
  public static final int REPLICATED_BROKERS = 3;

  static final String FILE = "conf/cluster.properties";

  public ClusterSettings {
    dir = dir.toAbsolutePath().normalize();
    jvmOptions = List.copyOf(jvmOptions);
    for (int port : new int[] {restPort, rpcPort, kafkaPort, kafkaControllerPort, prometheusPort}) {
      if (port < 1 || port > 65535) {
        throw new IllegalArgumentException("port " + port + " is not between 1 and 65535");
      }
    }
    if (taskManagers < 1) {
      throw new IllegalArgumentException("at least one TaskManager, not " + taskManagers);
    }
    if (slotsPerTaskManager < 1) {
      throw new IllegalArgumentException("at least one slot per TaskManager");
    }
    if (brokers != 1 && brokers < REPLICATED_BROKERS) {
      throw new IllegalArgumentException(
          "1 broker, or "
              + REPLICATED_BROKERS
              + " or more (replication factor 3, min.insync.replicas 2), not "
              + brokers);
    }
    if (extraPortBase < 1 || extraPortBase + extraPorts(brokers) > 65535) {
      throw new IllegalArgumentException("extra port base " + extraPortBase + " out of range");
    }
  }

  /**
   * How many ports from {@link #extraPortBase} the optional processes take: ZooKeeper's client
   * port, the standby JobManager's REST, RPC and Prometheus ports, then a client and a controller
   * port per broker after the first.
   */
  static int extraPorts(int brokers) {
    return 4 + 2 * (brokers - 1);
  }

  /** ZooKeeper's client port (a highly available cluster). */
  public int zooKeeperPort() {
    return extraPortBase;
  }

  /** The REST port of JobManager {@code index} (0 the first, 1 the standby). */
  public int jobManagerRestPort(int index) {
    return index == 0 ? restPort : extraPortBase + 1;
  }

  /** The RPC port of JobManager {@code index}. */
  public int jobManagerRpcPort(int index) {
    return index == 0 ? rpcPort : extraPortBase + 2;
  }

  /** The Prometheus port of JobManager {@code index}. */
  public int jobManagerPrometheusPort(int index) {
    return index == 0 ? prometheusPort : extraPortBase + 3;
  }

  /** How many JobManagers run: two with high availability. */
  public int jobManagers() {
    return highAvailability ? 2 : 1;
  }

  /** The client port of broker {@code index}. */
  public int brokerPort(int index) {
    return index == 0 ? kafkaPort : extraPortBase + 4 + 2 * (index - 1);
  }

  /** The KRaft controller port of broker {@code index}. */
  public int brokerControllerPort(int index) {
    return index == 0 ? kafkaControllerPort : extraPortBase + 5 + 2 * (index - 1);
  }

  /** The replication factor of the cluster's topics: 3 on a replicated cluster, else 1. */
  public int replicationFactor() {
    return brokers >= REPLICATED_BROKERS ? REPLICATED_BROKERS : 1;
  }

  /** The defaults, in {@code dir}. */
  public static ClusterSettings defaults(Path dir) {
    return new ClusterSettings(
        dir,
        DEFAULT_REST_PORT,
        DEFAULT_RPC_PORT,
        DEFAULT_KAFKA_PORT,
        DEFAULT_KAFKA_CONTROLLER_PORT,
        DEFAULT_PROMETHEUS_PORT,
        DEFAULT_TASK_MANAGERS,
        DEFAULT_SLOTS_PER_TASK_MANAGER,
        DEFAULT_TASK_MANAGER_MEMORY,
        1,
        false,
        DEFAULT_EXTRA_PORT_BASE,
        List.of());
  }

  /**
   * These settings on free loopback ports (a cluster beside the default one, as the integration
   * tests start): four free ports and a free run of ports for the Prometheus endpoints.
   */
  public ClusterSettings withFreePorts() throws IOException {
    List<ServerSocket> sockets = new ArrayList<>();
    int[] ports = new int[4];
    try {
      for (int i = 0; i < ports.length; i++) {
        ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST));
        sockets.add(socket);
        ports[i] = socket.getLocalPort();
      }
    } finally {
      for (ServerSocket socket : sockets) {
        socket.close();
      }
    }
    return withPorts(ports[0], ports[1], ports[2], ports[3], freePortRange(taskManagers + 1))
        .withExtraPortBase(freePortRange(extraPorts(brokers)));
  }

  /** The first of {@code count} consecutive free ports. */
  private static int freePortRange(int count) throws IOException {
    for (int attempt = 0; attempt < 100; attempt++) {
      int base = ThreadLocalRandom.current().nextInt(20_000, 32_000);
      boolean free = true;
      for (int port = base; port < base + count && free; port++) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getByName(HOST))) {
          free = socket.getLocalPort() == port;
        } catch (IOException e) {
          free = false;
        }
      }
      if (free) {
        return base;
      }
    }
    throw new IOException("no " + count + " consecutive free ports");
  }

  public ClusterSettings withPorts(
      int restPort, int rpcPort, int kafkaPort, int kafkaControllerPort, int prometheusPort) {
    return new ClusterSettings(
        dir,
        restPort,
        rpcPort,
        kafkaPort,
        kafkaControllerPort,
        prometheusPort,
        taskManagers,
        slotsPerTaskManager,
        taskManagerMemory,
        brokers,
        highAvailability,
        extraPortBase,
        jvmOptions);
  }

  public ClusterSettings withTaskManagers(int taskManagers, int slotsPerTaskManager) {
    return new ClusterSettings(
        dir,
        restPort,
        rpcPort,
        kafkaPort,
        kafkaControllerPort,
        prometheusPort,
        taskManagers,
        slotsPerTaskManager,
        taskManagerMemory,
        brokers,
        highAvailability,
        extraPortBase,
        jvmOptions);
  }

  public ClusterSettings withTaskManagerMemory(String taskManagerMemory) {
    return new ClusterSettings(
        dir,
        restPort,
        rpcPort,
        kafkaPort,
        kafkaControllerPort,
        prometheusPort,
        taskManagers,
        slotsPerTaskManager,
        taskManagerMemory,
        brokers,
        highAvailability,
        extraPortBase,
        jvmOptions);
  }

  /** These settings with {@code brokers} brokers. */
  public ClusterSettings withBrokers(int brokers) {
    return new ClusterSettings(
        dir,
        restPort,
        rpcPort,
        kafkaPort,
        kafkaControllerPort,
        prometheusPort,
        taskManagers,
        slotsPerTaskManager,
        taskManagerMemory,
        brokers,
        highAvailability,
        extraPortBase,
        jvmOptions);
  }

  /** These settings with or without ZooKeeper high availability (a standby JobManager). */
  public ClusterSettings withHighAvailability(boolean highAvailability) {
    return new ClusterSettings(
        dir,
        restPort,
        rpcPort,
        kafkaPort,
        kafkaControllerPort,
        prometheusPort,
        taskManagers,
        slotsPerTaskManager,
        taskManagerMemory,
        brokers,
        highAvailability,
        extraPortBase,
        jvmOptions);
  }

  /** These settings with the optional processes' ports from {@code extraPortBase}. */
  public ClusterSettings withExtraPortBase(int extraPortBase) {
    return new ClusterSettings(
        dir,
        restPort,
        rpcPort,
        kafkaPort,
        kafkaControllerPort,
        prometheusPort,
        taskManagers,
        slotsPerTaskManager,
        taskManagerMemory,
        brokers,
        highAvailability,
        extraPortBase,
        jvmOptions);
  }

  /** These settings with {@code jvmOptions} added to every process's JVM options. */
  public ClusterSettings withJvmOptions(List<String> jvmOptions) {
    return new ClusterSettings(
        dir,
        restPort,
        rpcPort,
        kafkaPort,
        kafkaControllerPort,
        prometheusPort,
        taskManagers,
        slotsPerTaskManager,
        taskManagerMemory,
        brokers,
        highAvailability,
        extraPortBase,
        jvmOptions);
  }

  /** The Prometheus port of TaskManager {@code index}. */
  public int taskManagerPrometheusPort(int index) {
    return prometheusPort + 1 + index;
  }

  /** {@code 127.0.0.1:<rest port>}, the value of Tidemark's {@code --flinkMaster}. */
  public String flinkMaster() {
    return HOST + ":" + restPort;
  }

  /**
   * {@code 127.0.0.1:<kafka port>} (every broker's, comma-separated), the value of Tidemark's
   * {@code --kafkaBootstrapServers}.
   */
  public String kafkaBootstrapServers() {
    List<String> servers = new ArrayList<>();
    for (int i = 0; i < brokers; i++) {
      servers.add(HOST + ":" + brokerPort(i));
    }
    return String.join(",", servers);
  }

  /** {@code 127.0.0.1:<rest port>} of JobManager {@code index}. */
  public String flinkMaster(int index) {
    return HOST + ":" + jobManagerRestPort(index);
  }

  /** The web UI and REST base address. */
  public String restAddress() {
    return "http://" + flinkMaster();
  }

  void save() throws IOException {
    Properties properties = new Properties();
    properties.setProperty("restPort", Integer.toString(restPort));
    properties.setProperty("rpcPort", Integer.toString(rpcPort));
    properties.setProperty("kafkaPort", Integer.toString(kafkaPort));
    properties.setProperty("kafkaControllerPort", Integer.toString(kafkaControllerPort));
    properties.setProperty("prometheusPort", Integer.toString(prometheusPort));
    properties.setProperty("taskManagers", Integer.toString(taskManagers));
    properties.setProperty("slotsPerTaskManager", Integer.toString(slotsPerTaskManager));
    properties.setProperty("taskManagerMemory", taskManagerMemory);
    properties.setProperty("brokers", Integer.toString(brokers));
    properties.setProperty("highAvailability", Boolean.toString(highAvailability));
    properties.setProperty("extraPortBase", Integer.toString(extraPortBase));
    properties.setProperty("jvmOptions", String.join(" ", jvmOptions));
    Path file = dir.resolve(FILE);
    Files.createDirectories(file.getParent());
    try (Writer writer = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      properties.store(
          writer, "./tidemark cluster up: the settings of the cluster in this directory");
    }
  }

  /** The settings saved in {@code dir} by an earlier {@code up}, if any. */
  public static Optional<ClusterSettings> load(Path dir) throws IOException {
    Path file = dir.toAbsolutePath().normalize().resolve(FILE);
    if (!Files.isRegularFile(file)) {
      return Optional.empty();
    }
    Properties properties = new Properties();
    try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      properties.load(reader);
    }
    ClusterSettings defaults = defaults(dir);
    return Optional.of(
        new ClusterSettings(
            dir,
            intOf(properties, "restPort", defaults.restPort),
            intOf(properties, "rpcPort", defaults.rpcPort),
            intOf(properties, "kafkaPort", defaults.kafkaPort),
            intOf(properties, "kafkaControllerPort", defaults.kafkaControllerPort),
            intOf(properties, "prometheusPort", defaults.prometheusPort),
            intOf(properties, "taskManagers", defaults.taskManagers),
            intOf(properties, "slotsPerTaskManager", defaults.slotsPerTaskManager),
            properties.getProperty("taskManagerMemory", defaults.taskManagerMemory),
            intOf(properties, "brokers", defaults.brokers),
            Boolean.parseBoolean(
                properties.getProperty("highAvailability", Boolean.toString(false))),
            intOf(properties, "extraPortBase", defaults.extraPortBase),
            jvmOptionsOf(properties.getProperty("jvmOptions", ""))));
  }

  /** JVM options written as one string, separated by white space. */
  public static List<String> jvmOptionsOf(String options) {
    String trimmed = options.trim();
    return trimmed.isEmpty() ? List.of() : List.of(trimmed.split("\\s+"));
  }

  private static int intOf(Properties properties, String key, int fallback) {
    String value = properties.getProperty(key);
    return value == null ? fallback : Integer.parseInt(value.trim());
  }
}
