package dev.tidemark.cluster;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code tidemark cluster up|down|status}: a local Flink session cluster and Kafka broker. */
@Command(
    name = "tidemark cluster",
    version = "tidemark cluster 0.2.0",
    mixinStandardHelpOptions = true,
    description = {
      "A Flink 1.19 session cluster (one JobManager, or two and ZooKeeper with --ha; two"
          + " TaskManagers) and a KRaft Kafka broker (or --brokers=3) on this machine, each its own JVM, listening on 127.0.0.1 only, with configuration,"
          + " pids, logs, checkpoints and data under one state directory.",
      "Point Tidemark at it with --flinkMaster=127.0.0.1:8081"
          + " --kafkaBootstrapServers=127.0.0.1:9092 (see docs/flink-cluster.md)."
    },
    subcommands = {ClusterCommand.Up.class, ClusterCommand.Down.class, ClusterCommand.Status.class},
    footer = {"", "Run 'tidemark cluster COMMAND --help' for a command's options."})
public final class ClusterCommand implements Callable<Integer> {
  /** Exit code: done. */
  public static final int DONE = 0;

  /** Exit code: the command line or an option is wrong. */
  public static final int USAGE_ERROR = 2;

  /** Exit code: the options were accepted, then the command failed (a process, a port, a file). */
  public static final int FAILED = 3;

  static final Map<String, String> EXIT_CODES =
      new TreeMap<>(
          Map.of(
              " " + DONE, "done (status: every process runs)",
              " " + USAGE_ERROR, "usage error: a wrong command, option or value",
              " " + FAILED, "failed: a process did not start or stop (status: one is down)"));

  @Spec CommandSpec spec;

  public static void main(String[] args) {
    if (System.getProperty("log4j.configurationFile") == null
        && System.getProperty("log4j2.configurationFile") == null) {
      System.setProperty("log4j2.configurationFile", "dev/tidemark/cluster/log4j2-cli.properties");
    }
    System.exit(execute(args));
  }

  /** Runs the command line and returns its exit code (tests call this). */
  public static int execute(String... args) {
    CommandLine commandLine = new CommandLine(new ClusterCommand());
    commandLine.setExecutionExceptionHandler(
        (e, cmd, parsed) -> {
          cmd.getErr().println("tidemark cluster: " + e.getMessage());
          for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
            cmd.getErr().println("  caused by: " + c);
          }
          return e instanceof IllegalArgumentException ? USAGE_ERROR : FAILED;
        });
    commandLine.setExitCodeExceptionMapper(e -> USAGE_ERROR);
    documentExitCodes(commandLine);
    return commandLine.execute(args);
  }

  private static void documentExitCodes(CommandLine command) {
    command.getCommandSpec().usageMessage().exitCodeListHeading("%nExit codes:%n");
    command.getCommandSpec().usageMessage().exitCodeList(EXIT_CODES);
    command.getSubcommands().values().forEach(ClusterCommand::documentExitCodes);
  }

  @Override
  public Integer call() {
    spec.commandLine().usage(System.out);
    return DONE;
  }

  /** The options every subcommand takes: where the cluster's state lives. */
  static final class DirOption {
    @Option(
        names = "--dir",
        defaultValue = "${sys:tidemark.home:-.}/out/cluster",
        description =
            "State directory: configuration, pids, logs, checkpoints, savepoints and the broker's"
                + " data (default: out/cluster under the project).")
    Path dir;

    /** The class path of the cluster's processes: this JVM's (the launcher passes the file's). */
    static String classPath() {
      String classPath = System.getProperty("tidemark.cluster.classpath");
      return classPath != null ? classPath : System.getProperty("java.class.path");
    }
  }

  /** {@code tidemark cluster up}. */
  @Command(
      name = "up",
      mixinStandardHelpOptions = true,
      description = {
        "Start the cluster: the broker, the JobManager, then the TaskManagers; wait until the"
            + " broker accepts clients and the JobManager reports every TaskManager; print the"
            + " addresses.",
        "If it runs already, say so (exit 0); if some of its processes died, start those again"
            + " with the settings it was started with. Stale pid files are ignored."
      })
  static final class Up implements Callable<Integer> {
    @Mixin DirOption dir;

    @Option(
        names = "--restPort",
        defaultValue = "" + ClusterSettings.DEFAULT_REST_PORT,
        description = "Flink web UI and REST port (default: ${DEFAULT-VALUE}).")
    int restPort;

    @Option(
        names = "--rpcPort",
        defaultValue = "" + ClusterSettings.DEFAULT_RPC_PORT,
        description = "JobManager RPC port (default: ${DEFAULT-VALUE}).")
    int rpcPort;

    @Option(
        names = "--kafkaPort",
        defaultValue = "" + ClusterSettings.DEFAULT_KAFKA_PORT,
        description = "Kafka client port (default: ${DEFAULT-VALUE}).")
    int kafkaPort;

    @Option(
        names = "--kafkaControllerPort",
        defaultValue = "" + ClusterSettings.DEFAULT_KAFKA_CONTROLLER_PORT,
        description = "Kafka KRaft controller port (default: ${DEFAULT-VALUE}).")
    int kafkaControllerPort;

    @Option(
        names = "--prometheusPort",
        defaultValue = "" + ClusterSettings.DEFAULT_PROMETHEUS_PORT,
        description =
            "Prometheus port of the JobManager; TaskManager N uses this + 1 + N"
                + " (default: ${DEFAULT-VALUE}).")
    int prometheusPort;

    @Option(
        names = "--taskManagers",
        defaultValue = "" + ClusterSettings.DEFAULT_TASK_MANAGERS,
        description = "Number of TaskManagers (default: ${DEFAULT-VALUE}).")
    int taskManagers;

    @Option(
        names = "--slots",
        defaultValue = "" + ClusterSettings.DEFAULT_SLOTS_PER_TASK_MANAGER,
        description = "Task slots per TaskManager (default: ${DEFAULT-VALUE}).")
    int slots;

    @Option(
        names = "--taskManagerMemory",
        defaultValue = ClusterSettings.DEFAULT_TASK_MANAGER_MEMORY,
        description =
            "taskmanager.memory.process.size of each TaskManager (default: ${DEFAULT-VALUE}).")
    String taskManagerMemory;

    @Option(
        names = "--brokers",
        defaultValue = "1",
        description =
            "Kafka brokers: 1 (default), or 3 or more, a replicated KRaft cluster (replication"
                + " factor 3, min.insync.replicas=2, the transaction state log replicated); the"
                + " brokers after the first take ports from --extraPortBase.")
    int brokers;

    @Option(
        names = "--ha",
        description =
            "High availability: a ZooKeeper server and a standby JobManager, Flink's ZooKeeper HA"
                + " services (ports from --extraPortBase).")
    boolean highAvailability;

    @Option(
        names = "--extraPortBase",
        defaultValue = "" + ClusterSettings.DEFAULT_EXTRA_PORT_BASE,
        description =
            "First port of the optional processes: ZooKeeper (+0), the standby JobManager's REST,"
                + " RPC and Prometheus (+1..+3), then a client and a controller port per broker"
                + " after the first (default: ${DEFAULT-VALUE}).")
    int extraPortBase;

    @Option(
        names = "--jvmOptions",
        defaultValue = "",
        description =
            "JVM options for every process of the cluster, separated by spaces, after its own"
                + " (for example -XX:TieredStopAtLevel=1, C1 only: about a third less CPU to start"
                + " and to run short jobs on a small machine, slower under sustained load; the"
                + " tests' clusters use it).")
    String jvmOptions;

    @Option(
        names = "--timeout",
        defaultValue = "180",
        description = "Seconds to wait for the cluster to come up (default: ${DEFAULT-VALUE}).")
    int timeoutSeconds;

    @Override
    public Integer call() throws IOException, InterruptedException {
      ClusterSettings requested =
          ClusterSettings.defaults(dir.dir)
              .withPorts(restPort, rpcPort, kafkaPort, kafkaControllerPort, prometheusPort)
              .withTaskManagers(taskManagers, slots)
              .withTaskManagerMemory(taskManagerMemory)
              .withBrokers(brokers)
              .withHighAvailability(highAvailability)
              .withExtraPortBase(extraPortBase)
              .withJvmOptions(ClusterSettings.jvmOptionsOf(jvmOptions));
      Optional<ClusterSettings> saved = ClusterSettings.load(dir.dir);
      ClusterSettings settings = requested;
      if (saved.isPresent()) {
        LocalCluster previous = new LocalCluster(saved.get(), DirOption.classPath(), System.out);
        if (!previous.anyRunning() && requested.equals(ClusterSettings.defaults(dir.dir))) {
          // A plain 'up' on a stopped cluster starts it as it was: its brokers' data and the
          // controller quorum they were formatted with need the same broker count.
          settings = saved.get();
        }
        if (previous.anyRunning()) {
          settings = saved.get();
          if (!settings.equals(requested) && !requested.equals(ClusterSettings.defaults(dir.dir))) {
            System.out.println(
                "The cluster in "
                    + settings.dir()
                    + " runs with the settings it was started with; 'down' first to change them.");
          }
        }
      }
      LocalCluster cluster = new LocalCluster(settings, DirOption.classPath(), System.out);
      boolean started = cluster.up(Duration.ofSeconds(timeoutSeconds));
      System.out.println(
          started
              ? "\nThe cluster is up.\n"
              : "The cluster in " + settings.dir() + " is up already.\n");
      System.out.print(cluster.describe());
      return DONE;
    }
  }

  /** {@code tidemark cluster down}. */
  @Command(
      name = "down",
      mixinStandardHelpOptions = true,
      description =
          "Stop every process of the cluster by pid: SIGTERM, up to 30 s, then SIGKILL. Keeps"
              + " the state directory (checkpoints, savepoints, the broker's data); delete it"
              + " for a fresh start.")
  static final class Down implements Callable<Integer> {
    @Mixin DirOption dir;

    @Override
    public Integer call() throws IOException {
      Optional<ClusterSettings> saved = ClusterSettings.load(dir.dir);
      if (saved.isEmpty()) {
        System.out.println("No cluster in " + dir.dir.toAbsolutePath().normalize() + ".");
        return DONE;
      }
      LocalCluster cluster = new LocalCluster(saved.get(), DirOption.classPath(), System.out);
      List<String> stopped = cluster.down();
      System.out.println(
          stopped.isEmpty()
              ? "No process of the cluster in " + saved.get().dir() + " was running."
              : "Stopped " + String.join(", ", stopped) + ".");
      return DONE;
    }
  }

  /** {@code tidemark cluster status}. */
  @Command(
      name = "status",
      mixinStandardHelpOptions = true,
      description =
          "Print each process (pid, alive, ports), the JobManager's /overview (TaskManagers,"
              + " slots, running jobs) and whether the broker answers. Exits 0 only if every"
              + " process runs.")
  static final class Status implements Callable<Integer> {
    @Mixin DirOption dir;

    @Override
    public Integer call() throws IOException, InterruptedException {
      Optional<ClusterSettings> saved = ClusterSettings.load(dir.dir);
      if (saved.isEmpty()) {
        System.out.println(
            "No cluster in "
                + dir.dir.toAbsolutePath().normalize()
                + " (start one with ./tidemark cluster up).");
        return FAILED;
      }
      LocalCluster cluster = new LocalCluster(saved.get(), DirOption.classPath(), System.out);
      LocalCluster.Status status = cluster.status();
      System.out.print(status.format());
      return status.allRunning() ? DONE : FAILED;
    }
  }
}
