package dev.tidemark.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;

/**
 * A Flink 1.19 session cluster and a Kafka broker on this machine, each its own JVM: one JobManager
 * ({@code StandaloneSessionClusterEntrypoint}), {@link ClusterSettings#taskManagers()} TaskManagers
 * ({@code TaskManagerRunner}) and one KRaft broker ({@code kafka.Kafka}, broker and controller in
 * one process). Every server listens on 127.0.0.1 only. Configuration, pids, logs, data,
 * checkpoints and savepoints live under one state directory:
 *
 * <pre>
 * conf/config.yaml         Flink's configuration (all Flink processes)
 * conf/kafka.properties    the broker's
 * conf/log4j2.properties   logging of every process
 * conf/cluster.properties  the ports and sizes 'up' was given
 * run/NAME.pid             pid of jobmanager, taskmanager-0, taskmanager-1, kafka
 * log/NAME.log, NAME.out   each process's log, and its standard output and error
 * checkpoints/, savepoints/  Flink's (file:// URIs every local process reaches)
 * flink/taskmanager-N/     a TaskManager's temporary files and RocksDB working directory
 * kafka/data/              the broker's log directory (formatted once)
 * </pre>
 *
 * <p>Processes are started as Flink's scripts start them: the TaskManager's memory options and
 * {@code -D} properties come from {@code BashJavaUtils GET_TM_RESOURCE_PARAMS} (the JobManager's
 * from {@code GET_JM_RESOURCE_PARAMS}), run as a process and parsed as {@code config.sh} parses
 * them; each Flink JVM gets the {@code --add-opens} list Flink's distribution configures for Java
 * 17 (without {@code java.util} open, the first checkpoint of a Beam job fails). They are stopped
 * by pid: SIGTERM, a grace period, then SIGKILL.
 *
 * <p>The fault drill uses {@link #killTaskManager}, {@link #startTaskManager} and {@link
 * #restartBroker}.
 */
public final class LocalCluster {
  public static final String JOB_MANAGER = "jobmanager";
  public static final String KAFKA = "kafka";
  public static final String ZOOKEEPER = "zookeeper";
  public static final String TASK_MANAGER_PREFIX = "taskmanager-";

  static final String JOB_MANAGER_MAIN =
      "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint";
  static final String TASK_MANAGER_MAIN = "org.apache.flink.runtime.taskexecutor.TaskManagerRunner";
  static final String BASH_JAVA_UTILS = "org.apache.flink.runtime.util.bash.BashJavaUtils";
  static final String KAFKA_MAIN = "kafka.Kafka";
  static final String KAFKA_STORAGE_TOOL = "kafka.tools.StorageTool";
  static final String ZOOKEEPER_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain";

  /**
   * The Prometheus gauge only the leading JobManager has: its ResourceManager, started when it is
   * granted leadership, registers it.
   */
  static final String LEADER_METRIC = "flink_jobmanager_numRegisteredTaskManagers";

  /** The prefix of BashJavaUtils' result lines ({@code EXECUTION_PREFIX} in Flink's config.sh). */
  static final String EXECUTION_PREFIX = "BASH_JAVA_UTILS_EXEC_RESULT:";

  /**
   * The JVM options Flink 1.19's distribution sets for every Flink process on Java 17 ({@code
   * env.java.default-opts.all} in its {@code conf/config.yaml}); they include the opens Tidemark's
   * launcher needs ({@code java.util}, {@code java.lang}, {@code java.time}, {@code java.nio}).
   */
  static final List<String> FLINK_JAVA_17_OPTIONS =
      List.of(
          "--add-exports=java.base/sun.net.util=ALL-UNNAMED",
          "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
          "--add-exports=jdk.compiler/com.sun.tools.javac.api=ALL-UNNAMED",
          "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
          "--add-exports=jdk.compiler/com.sun.tools.javac.parser=ALL-UNNAMED",
          "--add-exports=jdk.compiler/com.sun.tools.javac.tree=ALL-UNNAMED",
          "--add-exports=jdk.compiler/com.sun.tools.javac.util=ALL-UNNAMED",
          "--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
          "--add-opens=java.base/java.lang=ALL-UNNAMED",
          "--add-opens=java.base/java.net=ALL-UNNAMED",
          "--add-opens=java.base/java.io=ALL-UNNAMED",
          "--add-opens=java.base/java.nio=ALL-UNNAMED",
          "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
          "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
          "--add-opens=java.base/java.text=ALL-UNNAMED",
          "--add-opens=java.base/java.time=ALL-UNNAMED",
          "--add-opens=java.base/java.util=ALL-UNNAMED",
          "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
          "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
          "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED");

  /** The broker's JVM options: kafka-server-start.sh's heap, made smaller, and its GC settings. */
  static final List<String> KAFKA_JVM_OPTIONS =
      List.of(
          "-Xms512m",
          "-Xmx512m",
          "-XX:+UseG1GC",
          "-XX:MaxGCPauseMillis=20",
          "-XX:InitiatingHeapOccupancyPercent=35",
          "-XX:+ExplicitGCInvokesConcurrent",
          "-Djava.awt.headless=true");

  private static final Duration STOP_GRACE = Duration.ofSeconds(30);

  /** How long brokers without a controller quorum get to exit before SIGKILL. */
  private static final Duration QUORUM_LOST_GRACE = Duration.ofSeconds(3);

  private static final ObjectMapper JSON = new ObjectMapper();

  private final ClusterSettings settings;
  private final ClusterProcesses processes;
  private final PrintStream progress;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  /**
   * A handle on the cluster of {@code settings.dir()}; starts nothing.
   *
   * @param classPath the class path of the cluster's processes: this module's jar and {@code
   *     local-cluster/target/classpath.txt}
   * @param progress where {@code up} and {@code down} say what they do
   */
  public LocalCluster(ClusterSettings settings, String classPath, PrintStream progress) {
    this.settings = settings;
    this.processes = new ClusterProcesses(settings.dir(), classPath, settings.jvmOptions());
    this.progress = progress;
  }

  public ClusterSettings settings() {
    return settings;
  }

  /**
   * The process names, in start order: ZooKeeper (with high availability), the brokers, the
   * JobManagers, the TaskManagers.
   */
  public List<String> processNames() {
    List<String> names = new ArrayList<>();
    if (settings.highAvailability()) {
      names.add(ZOOKEEPER);
    }
    for (int i = 0; i < settings.brokers(); i++) {
      names.add(broker(i));
    }
    for (int i = 0; i < settings.jobManagers(); i++) {
      names.add(jobManager(i));
    }
    for (int i = 0; i < settings.taskManagers(); i++) {
      names.add(taskManager(i));
    }
    return names;
  }

  /** {@code kafka} for the first broker, {@code kafka-N} for the others. */
  public static String broker(int index) {
    return index == 0 ? KAFKA : KAFKA + "-" + index;
  }

  /** {@code jobmanager} for the first JobManager, {@code jobmanager-1} for the standby. */
  public static String jobManager(int index) {
    return index == 0 ? JOB_MANAGER : JOB_MANAGER + "-" + index;
  }

  public static String taskManager(int index) {
    return TASK_MANAGER_PREFIX + index;
  }

  /** The pid of the running process {@code name}, or empty. */
  public Optional<Long> pid(String name) {
    return processes.running(name).map(ProcessHandle::pid);
  }

  /** Whether any process of this cluster runs. */
  public boolean anyRunning() {
    return processNames().stream().anyMatch(name -> processes.running(name).isPresent());
  }

  /**
   * Starts every process that does not run yet and waits until the broker accepts clients and the
   * JobManager reports every TaskManager. Returns false if all of them were running already. If the
   * cluster does not come up within {@code timeout}, stops what this call started and fails with
   * the end of the failing process's log.
   */
  public boolean up(Duration timeout) throws IOException, InterruptedException {
    List<String> missing = new ArrayList<>();
    for (String name : processNames()) {
      if (processes.running(name).isEmpty()) {
        missing.add(name);
      }
    }
    if (missing.isEmpty()) {
      return false;
    }
    checkPortsFree(missing);
    if (missing.size() == processNames().size()) {
      writeConfiguration();
    }
    List<String> started = new ArrayList<>();
    long deadline = System.nanoTime() + timeout.toNanos();
    try {
      if (missing.contains(ZOOKEEPER)) {
        startZooKeeper();
        started.add(ZOOKEEPER);
        awaitZooKeeper(remaining(deadline));
      }
      for (int i = 0; i < settings.brokers(); i++) {
        if (missing.contains(broker(i))) {
          startBroker(i);
          started.add(broker(i));
        }
      }
      for (int i = 0; i < settings.jobManagers(); i++) {
        if (missing.contains(jobManager(i))) {
          startJobManager(i);
          started.add(jobManager(i));
        }
      }
      for (int i = 0; i < settings.taskManagers(); i++) {
        if (missing.contains(taskManager(i))) {
          startTaskManager(i);
          started.add(taskManager(i));
        }
      }
      awaitBroker(remaining(deadline));
      awaitTaskManagers(settings.taskManagers(), remaining(deadline));
      return true;
    } catch (RuntimeException | IOException | InterruptedException e) {
      for (int i = started.size() - 1; i >= 0; i--) {
        processes.stop(started.get(i), Duration.ofSeconds(10));
      }
      throw e;
    }
  }

  /**
   * Refuses to start a process whose fixed port already answers: another cluster there would answer
   * for this one while its own process fails to bind.
   */
  private void checkPortsFree(List<String> names) {
    for (String name : names) {
      for (String port : ports(name)) {
        int number = Integer.parseInt(port.substring(port.indexOf('=') + 1));
        if (portAnswers(number)) {
          throw new IllegalStateException(
              "port "
                  + number
                  + " ("
                  + name
                  + " "
                  + port.substring(0, port.indexOf('='))
                  + ") is in use on "
                  + ClusterSettings.HOST
                  + ": stop what listens there (another cluster: ./tidemark cluster down"
                  + " --dir=...), or choose other ports (./tidemark cluster up --help)");
        }
      }
    }
  }

  /**
   * Stops every process of this cluster: SIGTERM to all, up to 30 s for each to exit, then SIGKILL.
   * Brokers that outlive their controller quorum are the exception (see {@link #awaitBrokers}).
   * Returns the names and pids stopped.
   */
  public List<String> down() {
    List<String> names = new ArrayList<>(processNames());
    // TaskManagers first, the broker last: the jobs fail over to nothing, then their sink closes.
    Collections.reverse(names);
    List<ProcessHandle> handles = new ArrayList<>();
    Map<String, ProcessHandle> brokers = new LinkedHashMap<>();
    List<String> stopped = new ArrayList<>();
    for (String name : names) {
      Optional<ProcessHandle> handle = processes.running(name);
      if (handle.isPresent()) {
        progress.println("Stopping " + name + " (pid " + handle.get().pid() + ")");
        handle.get().destroy();
        if (name.startsWith(KAFKA)) {
          brokers.put(name, handle.get());
        } else {
          handles.add(handle.get());
        }
        stopped.add(name + " (pid " + handle.get().pid() + ")");
      }
    }
    for (ProcessHandle handle : handles) {
      ClusterProcesses.terminate(handle, STOP_GRACE);
    }
    awaitBrokers(brokers);
    for (String name : names) {
      try {
        Files.deleteIfExists(processes.pidFile(name));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return stopped;
  }

  /**
   * Waits for the brokers {@link #down} sent SIGTERM to. Each is a voter of the controller quorum,
   * and a broker's controlled shutdown waits for the active controller to approve it: once fewer
   * than a majority of the voters run, the brokers left can no longer be approved and would wait
   * out their own five-minute timeout. They get {@link #QUORUM_LOST_GRACE} to finish, then SIGKILL
   * (their logs are recovered on the next start, as after any crash); otherwise each gets the usual
   * grace.
   */
  private void awaitBrokers(Map<String, ProcessHandle> brokers) {
    int majority = settings.brokers() / 2 + 1;
    long deadline = System.nanoTime() + STOP_GRACE.toNanos();
    long quorumLost = Long.MAX_VALUE;
    while (true) {
      List<String> alive = new ArrayList<>();
      brokers.forEach(
          (name, handle) -> {
            if (handle.isAlive()) {
              alive.add(name);
            }
          });
      long now = System.nanoTime();
      if (alive.isEmpty()) {
        return;
      }
      if (alive.size() < majority && quorumLost == Long.MAX_VALUE) {
        quorumLost = now;
      }
      boolean noQuorum = now - quorumLost > QUORUM_LOST_GRACE.toNanos();
      if (noQuorum || now > deadline) {
        for (String name : alive) {
          progress.println(
              noQuorum
                  ? "Stopping " + name + ": its controller quorum is gone; SIGKILL"
                  : "Stopping " + name + ": still running after " + STOP_GRACE + "; SIGKILL");
          ClusterProcesses.terminate(brokers.get(name), Duration.ZERO);
        }
        return;
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while stopping the brokers", e);
      }
    }
  }

  /**
   * SIGKILL to every process of {@code pids} still alive, then up to 30 s for each to exit: a
   * test's last word on the processes it started (their pids taken while the cluster ran), whatever
   * happened to {@link #down}. Never throws.
   */
  public static void killAll(Collection<Long> pids) {
    for (long pid : pids) {
      ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
    }
    for (long pid : pids) {
      ProcessHandle.of(pid)
          .ifPresent(
              handle -> {
                try {
                  handle.onExit().get(30, TimeUnit.SECONDS);
                } catch (Exception e) {
                  // Still alive after SIGKILL: nothing more a caller could do.
                }
              });
    }
  }

  // ------------------------------------------------------------------ the fault drill's controls

  /** SIGKILL to TaskManager {@code index}, as a crashed machine would; returns its pid. */
  public long killTaskManager(int index) {
    checkTaskManager(index);
    long pid = processes.kill(taskManager(index));
    if (pid < 0) {
      throw new IllegalStateException(taskManager(index) + " is not running");
    }
    return pid;
  }

  /**
   * Starts TaskManager {@code index} unless it runs; returns once its JVM started (registration
   * with the JobManager follows within seconds: {@link #awaitTaskManagers}). It registers under the
   * same resource id ({@code taskmanager-N}) as before.
   */
  public long startTaskManager(int index) throws IOException, InterruptedException {
    checkTaskManager(index);
    String name = taskManager(index);
    Optional<ProcessHandle> running = processes.running(name);
    if (running.isPresent()) {
      return running.get().pid();
    }
    Path work = settings.dir().resolve("flink").resolve(name);
    Path tmp = work.resolve("tmp");
    Files.createDirectories(tmp);
    List<String> dynamic =
        List.of(
            "-D",
            "taskmanager.resource-id=" + name,
            "-D",
            "metrics.reporter.prom.port=" + settings.taskManagerPrometheusPort(index),
            "-D",
            "io.tmp.dirs=" + tmp,
            "-D",
            "state.backend.rocksdb.localdir=" + work.resolve("rocksdb"));
    ResourceParameters parameters = resourceParameters("GET_TM_RESOURCE_PARAMS", dynamic);
    List<String> jvm = new ArrayList<>(FLINK_JAVA_17_OPTIONS);
    jvm.addAll(parameters.jvmOptions());
    List<String> args = new ArrayList<>(List.of("--configDir", confDir().toString()));
    args.addAll(dynamic);
    args.addAll(parameters.dynamicProperties());
    progress.println("Starting " + name);
    return processes.launch(name, jvm, TASK_MANAGER_MAIN, args).pid();
  }

  /**
   * Stops the broker (SIGTERM: a controlled shutdown), starts it again on the same data and waits
   * until it accepts clients.
   */
  public void restartBroker() throws IOException, InterruptedException {
    restartBroker(0);
  }

  /** As {@link #restartBroker()}, for broker {@code index}. */
  public void restartBroker(int index) throws IOException, InterruptedException {
    checkBroker(index);
    processes.stop(broker(index), STOP_GRACE);
    startBroker(index);
    awaitBroker(index, Duration.ofMinutes(2));
  }

  /**
   * SIGKILL to broker {@code index}, as a crashed machine would: no controlled shutdown, its open
   * transactions and partition leaderships left to the others; returns its pid. Start it again with
   * {@link #startBroker(int)}.
   */
  public long killBroker(int index) {
    checkBroker(index);
    long pid = processes.kill(broker(index));
    if (pid < 0) {
      throw new IllegalStateException(broker(index) + " is not running");
    }
    return pid;
  }

  /** Starts broker {@code index} on its data unless it runs, and waits until it answers. */
  public void startBrokerAndWait(int index) throws IOException, InterruptedException {
    checkBroker(index);
    if (processes.running(broker(index)).isEmpty()) {
      startBroker(index);
    }
    awaitBroker(index, Duration.ofMinutes(2));
  }

  /**
   * SIGKILL to JobManager {@code index}; returns its pid. With high availability the other one
   * takes over: {@link #leadingJobManager}.
   */
  public long killJobManager(int index) {
    checkJobManager(index);
    long pid = processes.kill(jobManager(index));
    if (pid < 0) {
      throw new IllegalStateException(jobManager(index) + " is not running");
    }
    return pid;
  }

  /** Starts JobManager {@code index} unless it runs (with high availability, as the standby). */
  public void startJobManagerAgain(int index) throws IOException, InterruptedException {
    checkJobManager(index);
    if (processes.running(jobManager(index)).isEmpty()) {
      startJobManager(index);
    }
  }

  /**
   * The index of the JobManager that leads (its ResourceManager runs: {@value #LEADER_METRIC} on
   * its Prometheus endpoint), or empty while none does (an election under way).
   */
  public Optional<Integer> leadingJobManager() throws InterruptedException {
    for (int i = 0; i < settings.jobManagers(); i++) {
      if (processes.running(jobManager(i)).isEmpty()) {
        continue;
      }
      HttpRequest request =
          HttpRequest.newBuilder(
                  URI.create(
                      "http://"
                          + ClusterSettings.HOST
                          + ":"
                          + settings.jobManagerPrometheusPort(i)
                          + "/metrics"))
              .timeout(Duration.ofSeconds(5))
              .GET()
              .build();
      try {
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() == 200 && response.body().contains(LEADER_METRIC)) {
          return Optional.of(i);
        }
      } catch (IOException e) {
        // Not answering: not the leader.
      }
    }
    return Optional.empty();
  }

  /** Waits until a JobManager leads; returns its index. */
  public int awaitLeadingJobManager(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      Optional<Integer> leader = leadingJobManager();
      if (leader.isPresent()) {
        return leader.get();
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("no JobManager leads after " + timeout.toSeconds() + " s");
      }
      Thread.sleep(250);
    }
  }

  // ------------------------------------------------------------------ readiness and status

  /**
   * Waits until the JobManager's REST API reports exactly {@code count} TaskManagers and their
   * slots (a TaskManager registers before it reports its slots).
   */
  public Overview awaitTaskManagers(int count, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    Overview last = null;
    while (true) {
      boolean anyJobManager = false;
      for (int i = 0; i < settings.jobManagers(); i++) {
        anyJobManager |= processes.running(jobManager(i)).isPresent();
      }
      if (!anyJobManager) {
        throw new IllegalStateException(
            "the JobManager is not running\n" + processes.tail(JOB_MANAGER, 30));
      }
      Optional<Overview> overview = overview();
      if (overview.isPresent()) {
        last = overview.get();
        if (last.taskManagers() == count
            && last.slotsTotal() == count * settings.slotsPerTaskManager()) {
          return last;
        }
      }
      if (System.nanoTime() > deadline) {
        StringBuilder logs = new StringBuilder(processes.tail(JOB_MANAGER, 20));
        for (int i = 0; i < settings.taskManagers(); i++) {
          logs.append(processes.tail(taskManager(i), 20));
        }
        throw new IllegalStateException(
            "the JobManager at "
                + settings.restAddress()
                + " did not report "
                + count
                + " TaskManagers in "
                + timeout.toSeconds()
                + " s (last: "
                + (last == null
                    ? "no answer"
                    : last.taskManagers() + " TaskManagers, " + last.slotsTotal() + " slots")
                + ")\n"
                + logs);
      }
      Thread.sleep(250);
    }
  }

  /**
   * Waits until every broker answers a cluster description through Kafka's admin client, and (with
   * several) the cluster lists them all.
   */
  public void awaitBroker(Duration timeout) throws InterruptedException {
    for (int i = 0; i < settings.brokers(); i++) {
      awaitBroker(i, timeout);
    }
  }

  /** Waits until broker {@code index} answers and the cluster lists every broker. */
  public void awaitBroker(int index, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    String name = broker(index);
    while (true) {
      if (processes.running(name).isEmpty()) {
        throw new IllegalStateException(name + " is not running\n" + processes.tail(name, 30));
      }
      if (brokerAnswers(
          ClusterSettings.HOST + ":" + settings.brokerPort(index), Duration.ofSeconds(5))) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "the broker at "
                + settings.brokerPort(index)
                + " did not accept clients in "
                + timeout.toSeconds()
                + " s\n"
                + processes.tail(name, 30));
      }
      Thread.sleep(250);
    }
  }

  /** Whether the first broker's port takes a connection and it describes its cluster. */
  public boolean brokerAnswers(Duration timeout) throws InterruptedException {
    for (int i = 0; i < settings.brokers(); i++) {
      if (brokerAnswers(ClusterSettings.HOST + ":" + settings.brokerPort(i), timeout)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether the broker at {@code address} takes a connection and describes a cluster of every
   * broker.
   */
  private boolean brokerAnswers(String address, Duration timeout) throws InterruptedException {
    if (!portAnswers(Integer.parseInt(address.substring(address.lastIndexOf(':') + 1)))) {
      return false;
    }
    Properties properties = new Properties();
    properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, address);
    properties.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
    properties.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
    try (Admin admin = Admin.create(properties)) {
      return admin.describeCluster().nodes().get(timeout.toMillis(), TimeUnit.MILLISECONDS).size()
          >= settings.brokers();
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      return false;
    }
  }

  /** What the JobManager's {@code GET /overview} reports, or empty if it does not answer. */
  public Optional<Overview> overview() throws InterruptedException {
    return restGet("/overview")
        .map(
            node ->
                new Overview(
                    node.path("taskmanagers").asInt(),
                    node.path("slots-total").asInt(),
                    node.path("slots-available").asInt(),
                    node.path("jobs-running").asInt(),
                    node.path("flink-version").asText("")));
  }

  /** The TaskManagers the JobManager knows ({@code GET /taskmanagers}), or empty. */
  public List<RegisteredTaskManager> registeredTaskManagers() throws InterruptedException {
    List<RegisteredTaskManager> result = new ArrayList<>();
    restGet("/taskmanagers")
        .ifPresent(
            node -> {
              for (JsonNode tm : node.path("taskmanagers")) {
                result.add(
                    new RegisteredTaskManager(
                        tm.path("id").asText(),
                        tm.path("slotsNumber").asInt(),
                        tm.path("freeSlots").asInt()));
              }
            });
    return result;
  }

  private Optional<JsonNode> restGet(String path) throws InterruptedException {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(settings.restAddress() + path))
            .timeout(Duration.ofSeconds(5))
            .GET()
            .build();
    try {
      HttpResponse<InputStream> response =
          http.send(request, HttpResponse.BodyHandlers.ofInputStream());
      try (InputStream body = response.body()) {
        if (response.statusCode() != 200) {
          return Optional.empty();
        }
        return Optional.of(JSON.readTree(body));
      }
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  /** The state of every process, the JobManager's overview and whether the broker answers. */
  public Status status() throws InterruptedException {
    List<ProcessStatus> list = new ArrayList<>();
    for (String name : processNames()) {
      Optional<ProcessHandle> handle = processes.running(name);
      long pid = handle.map(ProcessHandle::pid).orElse(processes.recordedPid(name));
      list.add(new ProcessStatus(name, pid, handle.isPresent(), ports(name)));
    }
    return new Status(
        list, overview(), registeredTaskManagers(), brokerAnswers(Duration.ofSeconds(3)), settings);
  }

  /** The ports process {@code name} listens on, as {@code what=port} pairs. */
  List<String> ports(String name) {
    if (name.equals(ZOOKEEPER)) {
      return List.of("client=" + settings.zooKeeperPort());
    }
    for (int i = 0; i < settings.brokers(); i++) {
      if (name.equals(broker(i))) {
        return List.of(
            "kafka=" + settings.brokerPort(i), "controller=" + settings.brokerControllerPort(i));
      }
    }
    for (int i = 0; i < settings.jobManagers(); i++) {
      if (name.equals(jobManager(i))) {
        // With high availability the RPC port is Flink's choice
        // (high-availability.jobmanager.port).
        return settings.highAvailability()
            ? List.of(
                "rest=" + settings.jobManagerRestPort(i),
                "prometheus=" + settings.jobManagerPrometheusPort(i))
            : List.of(
                "rest=" + settings.restPort(),
                "rpc=" + settings.rpcPort(),
                "prometheus=" + settings.prometheusPort());
      }
    }
    int index = Integer.parseInt(name.substring(TASK_MANAGER_PREFIX.length()));
    return List.of("prometheus=" + settings.taskManagerPrometheusPort(index));
  }

  /** Whether something accepts a TCP connection on 127.0.0.1:{@code port}. */
  public static boolean portAnswers(int port) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(ClusterSettings.HOST, port), 1000);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** The addresses of a running cluster and how to point Tidemark at it. */
  public String describe() {
    StringBuilder text = new StringBuilder();
    text.append("Flink web UI and REST  ").append(settings.restAddress()).append('\n');
    text.append("Kafka bootstrap        ").append(settings.kafkaBootstrapServers()).append('\n');
    text.append("Prometheus             ")
        .append(JOB_MANAGER)
        .append(" http://")
        .append(ClusterSettings.HOST)
        .append(':')
        .append(settings.prometheusPort())
        .append("/metrics");
    for (int i = 0; i < settings.taskManagers(); i++) {
      text.append(", ")
          .append(taskManager(i))
          .append(" :")
          .append(settings.taskManagerPrometheusPort(i));
    }
    text.append('\n');
    text.append("State directory        ")
        .append(settings.dir())
        .append(" (logs in log/, checkpoints in checkpoints/, savepoints in savepoints/)\n");
    text.append('\n');
    text.append("Run Tidemark on it, and drill it:\n");
    text.append("  ./tidemark run --profile=flink-cluster --flinkMaster=")
        .append(settings.flinkMaster())
        .append(" --kafkaBootstrapServers=")
        .append(settings.kafkaBootstrapServers())
        .append(" ...\n");
    text.append("  ./tidemark drill --dir=").append(settings.dir()).append('\n');
    text.append("Stop it: ./tidemark cluster down --dir=").append(settings.dir()).append('\n');
    return text.toString();
  }

  // ------------------------------------------------------------------ starting the processes

  private Path confDir() {
    return settings.dir().resolve("conf");
  }

  private void writeConfiguration() throws IOException {
    Path dir = settings.dir();
    for (String sub : List.of("conf", "run", "log", "checkpoints", "savepoints", "flink/tmp")) {
      Files.createDirectories(dir.resolve(sub));
    }
    settings.save();
    Files.writeString(
        confDir().resolve("config.yaml"), flinkConfiguration(), StandardCharsets.UTF_8);
    for (int i = 0; i < settings.brokers(); i++) {
      Files.writeString(
          confDir().resolve(broker(i) + ".properties"),
          kafkaConfiguration(i),
          StandardCharsets.UTF_8);
    }
    if (settings.highAvailability()) {
      Files.writeString(
          confDir().resolve("zoo.cfg"), zooKeeperConfiguration(), StandardCharsets.UTF_8);
      Files.createDirectories(dir.resolve("ha"));
    }
    try (InputStream logging =
        LocalCluster.class.getResourceAsStream("log4j2-cluster.properties")) {
      if (logging == null) {
        throw new IllegalStateException("log4j2-cluster.properties is missing from the jar");
      }
      Files.write(confDir().resolve("log4j2.properties"), logging.readAllBytes());
    }
  }

  /**
   * Flink's configuration: Flink 1.19 reads {@code conf/config.yaml} (standard YAML; the legacy
   * {@code flink-conf.yaml} only if present, and then first).
   */
  String flinkConfiguration() {
    Path dir = settings.dir();
    String host = ClusterSettings.HOST;
    return String.join(
        "\n",
        "# Written by ./tidemark cluster up. Every server binds to " + host + ".",
        "jobmanager.rpc.address: " + host,
        "jobmanager.rpc.port: " + settings.rpcPort(),
        "jobmanager.bind-host: " + host,
        "jobmanager.memory.process.size: 2048m",
        "taskmanager.host: " + host,
        "taskmanager.bind-host: " + host,
        "taskmanager.memory.process.size: " + settings.taskManagerMemory(),
        "# Each job loads its own copy of the job jar's classes (Beam, Kafka, the scoring engines),",
        "# and a job's class loader lingers after it ends: Flink's 256 MB default fills after a few",
        "# jobs (OutOfMemoryError: Metaspace, the TaskManager exits). The JobManager loads them",
        "# too, for every job it runs or restores.",
        "taskmanager.memory.jvm-metaspace.size: 768m",
        "jobmanager.memory.jvm-metaspace.size: 768m",
        "taskmanager.numberOfTaskSlots: " + settings.slotsPerTaskManager(),
        "# Spread a job's tasks over the TaskManagers instead of filling the first one.",
        "cluster.evenly-spread-out-slots: true",
        "parallelism.default: " + settings.taskManagers(),
        "rest.address: " + host,
        "rest.bind-address: " + host,
        "rest.port: " + settings.restPort(),
        "io.tmp.dirs: '" + dir.resolve("flink/tmp") + "'",
        "",
        "# State: RocksDB with incremental checkpoints, in directories every local process reaches.",
        "state.backend.type: rocksdb",
        "state.backend.incremental: true",
        "# RocksDB's own LOG files go to Flink's log directory, one per operator instance: keep them",
        "# to their headers.",
        "state.backend.rocksdb.log.level: HEADER_LEVEL",
        "# Live keys and live data per state (RocksDB's estimates) as operator metrics: the state",
        "# size a job restored from a checkpoint holds, which Beam's counters, restarting with each",
        "# attempt, cannot give, and which a checkpoint's files overstate until compactions drop",
        "# overwritten and deleted entries.",
        "state.backend.rocksdb.metrics.estimate-num-keys: true",
        "state.backend.rocksdb.metrics.estimate-live-data-size: true",
        "state.checkpoints.dir: 'file://" + dir.resolve("checkpoints") + "'",
        "state.savepoints.dir: 'file://" + dir.resolve("savepoints") + "'",
        "state.checkpoints.num-retained: 3",
        "execution.checkpointing.externalized-checkpoint-retention: RETAIN_ON_CANCELLATION",
        "",
        "# Failures: a job without a restart strategy of its own restarts 10 times, 5 s apart; a",
        "# killed TaskManager is declared lost after 10 s without heartbeats.",
        "restart-strategy.type: fixed-delay",
        "restart-strategy.fixed-delay.attempts: 10",
        "restart-strategy.fixed-delay.delay: 5 s",
        "heartbeat.interval: 2000",
        "heartbeat.timeout: 10000",
        "",
        highAvailabilityConfiguration(),
        "# Metrics: a Prometheus endpoint on " + host + " in every process (-D port per process).",
        "metrics.reporter.prom.factory.class: " + LoopbackPrometheusReporterFactory.class.getName(),
        "metrics.reporter.prom.host: " + host,
        "metrics.reporter.prom.port: " + settings.prometheusPort(),
        "");
  }

  /**
   * Flink's high availability: ZooKeeper HA services (leader election and retrieval, the job graph
   * and checkpoint pointers in ZooKeeper, their data in {@code ha/}), as Flink's own {@code
   * conf/masters} setup runs them; empty without it.
   */
  private String highAvailabilityConfiguration() {
    if (!settings.highAvailability()) {
      return "";
    }
    return String.join(
        "\n",
        "# High availability: two JobManagers elect a leader through ZooKeeper; the standby takes",
        "# over a killed leader's jobs from their last completed checkpoint.",
        "high-availability.type: zookeeper",
        "high-availability.zookeeper.quorum: "
            + ClusterSettings.HOST
            + ":"
            + settings.zooKeeperPort(),
        "high-availability.zookeeper.path.root: /flink",
        "high-availability.cluster-id: /tidemark-local",
        "high-availability.storageDir: 'file://" + settings.dir().resolve("ha") + "'",
        "# A killed leader's ZooKeeper session, and with it its leadership, ends after this (Flink's",
        "# default is 60 s); ZooKeeper grants 4 to 40 s at its tick of 2 s.",
        "high-availability.zookeeper.client.session-timeout: 10000",
        "high-availability.zookeeper.client.connection-timeout: 5000",
        "",
        "");
  }

  /**
   * The configuration of broker {@code index}: a KRaft node, broker and controller in one process,
   * on 127.0.0.1. One broker: every internal topic with one replica. Three or more: replication
   * factor 3 and {@code min.insync.replicas=2} for every topic, the consumer offsets and the
   * transaction state log, and every node a voter of the controller quorum.
   */
  String kafkaConfiguration(int index) {
    String host = ClusterSettings.HOST;
    List<String> voters = new ArrayList<>();
    for (int i = 0; i < settings.brokers(); i++) {
      voters.add((i + 1) + "@" + host + ":" + settings.brokerControllerPort(i));
    }
    int replicas = settings.replicationFactor();
    int minInSync = replicas == 1 ? 1 : 2;
    return String.join(
        "\n",
        "# Written by ./tidemark cluster up: KRaft node "
            + (index + 1)
            + " of "
            + settings.brokers()
            + ", broker and controller, on "
            + host
            + ".",
        "process.roles=broker,controller",
        "node.id=" + (index + 1),
        "controller.quorum.voters=" + String.join(",", voters),
        "listeners=PLAINTEXT://"
            + host
            + ":"
            + settings.brokerPort(index)
            + ",CONTROLLER://"
            + host
            + ":"
            + settings.brokerControllerPort(index),
        "advertised.listeners=PLAINTEXT://" + host + ":" + settings.brokerPort(index),
        "controller.listener.names=CONTROLLER",
        "inter.broker.listener.name=PLAINTEXT",
        "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs=" + brokerData(index),
        "num.partitions=2",
        replicas == 1
            ? "# One node: the internal topics cannot have more than one replica."
            : "# Replicated: a write is acknowledged by 2 of 3 replicas, so one broker may crash.",
        "default.replication.factor=" + replicas,
        "min.insync.replicas=" + minInSync,
        "offsets.topic.replication.factor=" + replicas,
        "offsets.topic.num.partitions=4",
        "transaction.state.log.replication.factor=" + replicas,
        "transaction.state.log.min.isr=" + minInSync,
        "transaction.state.log.num.partitions=4",
        "transaction.max.timeout.ms=3600000",
        "group.initial.rebalance.delay.ms=0",
        "unclean.leader.election.enable=false",
        "");
  }

  private void checkBroker(int index) {
    if (index < 0 || index >= settings.brokers()) {
      throw new IllegalArgumentException(
          "no broker " + index + ": this cluster has " + settings.brokers());
    }
  }

  private void checkJobManager(int index) {
    if (index < 0 || index >= settings.jobManagers()) {
      throw new IllegalArgumentException(
          "no JobManager " + index + ": this cluster has " + settings.jobManagers());
    }
  }

  private void startBroker(int index) throws IOException, InterruptedException {
    String name = broker(index);
    Path data = brokerData(index);
    Path config = confDir().resolve(name + ".properties");
    if (!Files.isRegularFile(data.resolve("meta.properties"))) {
      Files.createDirectories(data);
      progress.println("Formatting the storage of " + name + " in " + data);
      processes.runTool(
          "kafka-storage",
          List.of("-Xmx256m"),
          KAFKA_STORAGE_TOOL,
          List.of("format", "-t", kafkaClusterId(), "-c", config.toString()));
    }
    List<String> jvm = new ArrayList<>(KAFKA_JVM_OPTIONS);
    jvm.add("-Dkafka.logs.dir=" + settings.dir().resolve("log"));
    progress.println("Starting " + name);
    processes.launch(name, jvm, KAFKA_MAIN, List.of(config.toString()));
  }

  private Path brokerData(int index) {
    return settings.dir().resolve(broker(index)).resolve("data");
  }

  /**
   * The KRaft cluster id every broker's storage is formatted with: one for the whole cluster, made
   * once and kept in {@code conf/kafka-cluster-id}.
   */
  private String kafkaClusterId() throws IOException {
    Path file = confDir().resolve("kafka-cluster-id");
    if (!Files.isRegularFile(file)) {
      Files.writeString(file, Uuid.randomUuid().toString() + "\n", StandardCharsets.UTF_8);
    }
    return Files.readString(file, StandardCharsets.UTF_8).trim();
  }

  private void startJobManager(int index) throws IOException, InterruptedException {
    List<String> dynamic =
        new ArrayList<>(
            List.of(
                "-D",
                "metrics.reporter.prom.port=" + settings.jobManagerPrometheusPort(index),
                "-D",
                "rest.port=" + settings.jobManagerRestPort(index)));
    if (!settings.highAvailability()) {
      dynamic.addAll(List.of("-D", "jobmanager.rpc.port=" + settings.jobManagerRpcPort(index)));
    }
    ResourceParameters parameters = resourceParameters("GET_JM_RESOURCE_PARAMS", dynamic);
    List<String> jvm = new ArrayList<>(FLINK_JAVA_17_OPTIONS);
    jvm.addAll(parameters.jvmOptions());
    List<String> args =
        new ArrayList<>(List.of("--configDir", confDir().toString(), "--executionMode", "cluster"));
    args.addAll(dynamic);
    args.addAll(parameters.dynamicProperties());
    progress.println("Starting " + jobManager(index));
    processes.launch(jobManager(index), jvm, JOB_MANAGER_MAIN, args);
  }

  /** ZooKeeper's configuration: one standalone server on 127.0.0.1, its admin server off. */
  String zooKeeperConfiguration() {
    return String.join(
        "\n",
        "# Written by ./tidemark cluster up: one standalone ZooKeeper server for Flink's HA.",
        "tickTime=2000",
        "initLimit=10",
        "syncLimit=5",
        "dataDir=" + settings.dir().resolve("zookeeper/data"),
        "clientPort=" + settings.zooKeeperPort(),
        "clientPortAddress=" + ClusterSettings.HOST,
        "maxClientCnxns=0",
        "admin.enableServer=false",
        "4lw.commands.whitelist=ruok,srvr",
        "");
  }

  private void startZooKeeper() throws IOException {
    Files.createDirectories(settings.dir().resolve("zookeeper/data"));
    List<String> jvm =
        List.of(
            "-Xms128m",
            "-Xmx256m",
            "-Dzookeeper.jmx.log4j.disable=true",
            "-Djava.awt.headless=true");
    progress.println("Starting " + ZOOKEEPER);
    processes.launch(
        ZOOKEEPER, jvm, ZOOKEEPER_MAIN, List.of(confDir().resolve("zoo.cfg").toString()));
  }

  /** Waits until ZooKeeper answers {@code ruok} with {@code imok}. */
  private void awaitZooKeeper(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!zooKeeperAnswers()) {
      if (processes.running(ZOOKEEPER).isEmpty() || System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "ZooKeeper on port "
                + settings.zooKeeperPort()
                + " did not answer\n"
                + processes.tail(ZOOKEEPER, 30));
      }
      Thread.sleep(250);
    }
  }

  /** Whether ZooKeeper answers its {@code ruok} four-letter word. */
  public boolean zooKeeperAnswers() {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(ClusterSettings.HOST, settings.zooKeeperPort()), 1000);
      socket.setSoTimeout(2000);
      socket.getOutputStream().write("ruok".getBytes(StandardCharsets.US_ASCII));
      socket.getOutputStream().flush();
      return new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII)
          .startsWith("imok");
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * Runs {@code BashJavaUtils <command> --configDir DIR <dynamic>} and parses its result lines as
   * Flink's {@code config.sh} does: the lines after {@value #EXECUTION_PREFIX}, the first the JVM
   * options, the second the {@code -D key=value} properties to pass to the process.
   */
  ResourceParameters resourceParameters(String command, List<String> dynamic)
      throws IOException, InterruptedException {
    List<String> args = new ArrayList<>(List.of(command, "--configDir", confDir().toString()));
    args.addAll(dynamic);
    String output =
        processes.runTool("bash-java-utils", List.of("-Xmx256m"), BASH_JAVA_UTILS, args);
    return ResourceParameters.parse(command, output);
  }

  private void checkTaskManager(int index) {
    if (index < 0 || index >= settings.taskManagers()) {
      throw new IllegalArgumentException(
          "no TaskManager " + index + ": this cluster has " + settings.taskManagers());
    }
  }

  private static Duration remaining(long deadline) {
    return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
  }

  // ------------------------------------------------------------------ values

  /** BashJavaUtils' answer: JVM options, then dynamic properties ({@code -D key=value} tokens). */
  record ResourceParameters(List<String> jvmOptions, List<String> dynamicProperties) {
    static ResourceParameters parse(String command, String output) {
      List<String> results = new ArrayList<>();
      for (String line : output.split("\\R")) {
        int at = line.indexOf(EXECUTION_PREFIX);
        if (at >= 0) {
          results.add(line.substring(at + EXECUTION_PREFIX.length()).trim());
        }
      }
      if (results.isEmpty() || results.size() > 2) {
        throw new IllegalStateException(
            "BashJavaUtils "
                + command
                + " printed "
                + results.size()
                + " result lines (expected 2) after "
                + EXECUTION_PREFIX
                + ":\n"
                + output);
      }
      return new ResourceParameters(
          tokens(results.get(0)), results.size() > 1 ? tokens(results.get(1)) : List.of());
    }

    private static List<String> tokens(String line) {
      return line.isBlank() ? List.of() : Arrays.asList(line.trim().split("\\s+"));
    }
  }

  /** The JobManager's {@code /overview}. */
  public record Overview(
      int taskManagers, int slotsTotal, int slotsAvailable, int jobsRunning, String flinkVersion) {}

  /** One entry of the JobManager's {@code /taskmanagers}. */
  public record RegisteredTaskManager(String id, int slots, int freeSlots) {}

  /** One process: its pid (-1 if none is recorded), whether it runs, its ports. */
  public record ProcessStatus(String name, long pid, boolean alive, List<String> ports) {}

  /** What {@code status} prints. */
  public record Status(
      List<ProcessStatus> processes,
      Optional<Overview> overview,
      List<RegisteredTaskManager> registered,
      boolean brokerAnswers,
      ClusterSettings settings) {

    public boolean allRunning() {
      return processes.stream().allMatch(ProcessStatus::alive);
    }

    public boolean noneRunning() {
      return processes.stream().noneMatch(ProcessStatus::alive);
    }

    /** The status as lines of text. */
    public String format() {
      StringBuilder text = new StringBuilder();
      text.append("State directory ").append(settings.dir()).append('\n');
      text.append(String.format("%-14s %-8s %-8s %s%n", "PROCESS", "PID", "ALIVE", "PORTS"));
      for (ProcessStatus process : processes) {
        text.append(
            String.format(
                "%-14s %-8s %-8s %s%n",
                process.name(),
                process.pid() < 0 ? "-" : Long.toString(process.pid()),
                process.alive() ? "yes" : "no",
                String.join(" ", process.ports())));
      }
      text.append('\n');
      if (overview.isPresent()) {
        Overview o = overview.get();
        text.append(
            String.format(
                "Flink %s at %s: %d TaskManagers, %d slots (%d free), %d jobs running%n",
                o.flinkVersion(),
                settings.restAddress(),
                o.taskManagers(),
                o.slotsTotal(),
                o.slotsAvailable(),
                o.jobsRunning()));
        for (RegisteredTaskManager tm : registered) {
          text.append(
              String.format("  %-12s %d slots (%d free)%n", tm.id(), tm.slots(), tm.freeSlots()));
        }
      } else {
        text.append("Flink REST ").append(settings.restAddress()).append("/overview: no answer\n");
      }
      text.append("Kafka ")
          .append(settings.kafkaBootstrapServers())
          .append(brokerAnswers ? ": answers" : ": no answer")
          .append('\n');
      return text.toString();
    }
  }
}
