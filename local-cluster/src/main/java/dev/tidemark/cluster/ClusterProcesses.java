package dev.tidemark.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Starts the cluster's JVMs and stops them by pid, as Flink's {@code flink-daemon.sh} does: one pid
 * file per process under {@code run/}, standard output and error appended to {@code
 * log/<name>.out}, the log in {@code log/<name>.log}.
 *
 * <p>A pid file is trusted only while its process is alive and its command line names this state
 * directory and the process ({@code -Dtidemark.cluster.process=<name>}): a pid file left by a
 * crash, or whose pid the system gave to another program since, is stale and removed.
 */
final class ClusterProcesses {
  static final String PROCESS_PROPERTY = "tidemark.cluster.process";
  static final String DIR_PROPERTY = "tidemark.cluster.dir";

  private static final Path SETSID = Path.of("/usr/bin/setsid");

  private final Path dir;
  private final String classPath;
  private final List<String> extraJvmOptions;

  ClusterProcesses(Path dir, String classPath, List<String> extraJvmOptions) {
    this.dir = dir;
    this.classPath = classPath;
    this.extraJvmOptions = List.copyOf(extraJvmOptions);
  }

  Path pidFile(String name) {
    return dir.resolve("run").resolve(name + ".pid");
  }

  Path logFile(String name) {
    return dir.resolve("log").resolve(name + ".log");
  }

  Path outFile(String name) {
    return dir.resolve("log").resolve(name + ".out");
  }

  /** The running process {@code name} of this state directory; removes a stale pid file. */
  Optional<ProcessHandle> running(String name) {
    Path file = pidFile(name);
    if (!Files.isRegularFile(file)) {
      return Optional.empty();
    }
    long pid;
    try {
      pid = Long.parseLong(Files.readString(file, StandardCharsets.UTF_8).trim());
    } catch (IOException | NumberFormatException e) {
      deleteQuietly(file);
      return Optional.empty();
    }
    Optional<ProcessHandle> handle = ProcessHandle.of(pid).filter(ProcessHandle::isAlive);
    if (handle.isEmpty() || !isOurs(handle.get(), name)) {
      deleteQuietly(file);
      return Optional.empty();
    }
    return handle;
  }

  /** The pid in {@code name}'s pid file, alive or not; -1 without one. */
  long recordedPid(String name) {
    try {
      return Long.parseLong(Files.readString(pidFile(name), StandardCharsets.UTF_8).trim());
    } catch (IOException | NumberFormatException e) {
      return -1;
    }
  }

  private boolean isOurs(ProcessHandle handle, String name) {
    Optional<String> commandLine = handle.info().commandLine();
    if (commandLine.isEmpty()) {
      // The system does not say (another user's process, or no /proc): alive is all we know.
      return true;
    }
    return commandLine.get().contains("-D" + PROCESS_PROPERTY + "=" + name + " ")
        && commandLine.get().contains("-D" + DIR_PROPERTY + "=" + dir + " ");
  }

  /**
   * Starts {@code java <jvmOptions> -cp <class path> <mainClass> <args>} in the background, in a
   * session of its own (it outlives this JVM and the terminal), and records its pid.
   */
  ProcessHandle launch(String name, List<String> jvmOptions, String mainClass, List<String> args)
      throws IOException {
    Files.createDirectories(pidFile(name).getParent());
    Files.createDirectories(logFile(name).getParent());
    List<String> command = new ArrayList<>();
    if (Files.isExecutable(SETSID)) {
      // setsid execs java in place (this JVM's child leads no process group), so the pid stays.
      command.add(SETSID.toString());
    }
    command.add(javaCommand());
    // First, so that they are within the part of a long command line the system reports.
    command.add("-D" + PROCESS_PROPERTY + "=" + name);
    command.add("-D" + DIR_PROPERTY + "=" + dir);
    command.addAll(javaArguments(name, jvmOptions, mainClass, args));
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
            .redirectOutput(ProcessBuilder.Redirect.appendTo(outFile(name).toFile()))
            .redirectErrorStream(true);
    builder.environment().putIfAbsent("OPT_OUT_TRACKING", "true");
    builder.environment().putIfAbsent("OMP_NUM_THREADS", "1");
    Process process = builder.start();
    Files.writeString(pidFile(name), process.pid() + "\n", StandardCharsets.UTF_8);
    return process.toHandle();
  }

  /**
   * What follows {@code java} for process {@code name}: its JVM options, then the cluster's extra
   * ones ({@link ClusterSettings#jvmOptions}, last so that they win), its log file and logging
   * configuration, the cluster's class path, the main class and its arguments.
   */
  private List<String> javaArguments(
      String name, List<String> jvmOptions, String mainClass, List<String> args) {
    List<String> arguments = new ArrayList<>(jvmOptions);
    arguments.addAll(extraJvmOptions);
    arguments.add("-Dlog.file=" + logFile(name));
    arguments.add("-Dlog4j.configurationFile=" + dir.resolve("conf/log4j2.properties").toUri());
    arguments.add("-cp");
    // The brokers, their storage tool and ZooKeeper run on the whole class path, Flink on its part.
    arguments.add(
        name.startsWith(LocalCluster.KAFKA) || name.equals(LocalCluster.ZOOKEEPER)
            ? classPath
            : flinkClassPath(classPath));
    arguments.add(mainClass);
    arguments.addAll(args);
    return arguments;
  }

  /**
   * The Flink processes' class path: the cluster's without the broker's own libraries. A Flink
   * distribution's {@code lib/} holds no Kafka broker, and the job jar, loaded child-first, brings
   * its own Kafka client and Jackson; Jackson modules of the broker (its Scala module) on the
   * parent class path are found by the job's {@code ServiceLoader} and fail it ("DefaultScalaModule
   * not a subtype"). The entries are jars of a Maven repository, named by their group's path.
   */
  static String flinkClassPath(String classPath) {
    List<String> kept = new ArrayList<>();
    for (String entry : classPath.split(java.io.File.pathSeparator)) {
      String path = entry.replace('\\', '/');
      if (BROKER_ONLY.stream().noneMatch(path::contains)) {
        kept.add(entry);
      }
    }
    return String.join(java.io.File.pathSeparator, kept);
  }

  /** Repository paths of the libraries only the broker uses. */
  static final List<String> BROKER_ONLY =
      List.of(
          "/org/apache/kafka/",
          "/org/scala-lang/",
          "/com/typesafe/scala-logging/",
          "/com/fasterxml/jackson/module/",
          "/com/fasterxml/jackson/dataformat/",
          "/com/fasterxml/jackson/datatype/",
          "/org/apache/zookeeper/",
          "/com/yammer/metrics/",
          "/net/sf/jopt-simple/",
          "/net/sourceforge/argparse4j/",
          "/org/pcollections/");

  /**
   * Runs a short-lived tool ({@code BashJavaUtils}, Kafka's {@code StorageTool}) to its end and
   * returns its standard output and error; fails with that output if it exits non-zero.
   */
  String runTool(String name, List<String> jvmOptions, String mainClass, List<String> args)
      throws IOException, InterruptedException {
    Files.createDirectories(logFile(name).getParent());
    List<String> command = new ArrayList<>();
    command.add(javaCommand());
    command.addAll(javaArguments(name, jvmOptions, mainClass, args));
    Process process =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
            .redirectErrorStream(true)
            .start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(2, TimeUnit.MINUTES)) {
      process.destroyForcibly();
      throw new IllegalStateException(mainClass + " did not finish in 2 minutes:\n" + output);
    }
    if (process.exitValue() != 0) {
      throw new IllegalStateException(
          mainClass + " " + args + " exited with " + process.exitValue() + ":\n" + output);
    }
    return output;
  }

  /**
   * Stops the running process {@code name}: SIGTERM, up to {@code grace} for it to exit, then
   * SIGKILL. Returns its pid, or -1 if it was not running.
   */
  long stop(String name, Duration grace) {
    Optional<ProcessHandle> handle = running(name);
    if (handle.isEmpty()) {
      return -1;
    }
    terminate(handle.get(), grace);
    deleteQuietly(pidFile(name));
    return handle.get().pid();
  }

  /** SIGKILL to the running process {@code name}, without warning; returns its pid or -1. */
  long kill(String name) {
    Optional<ProcessHandle> handle = running(name);
    if (handle.isEmpty()) {
      return -1;
    }
    handle.get().destroyForcibly();
    awaitExit(handle.get(), Duration.ofSeconds(30));
    deleteQuietly(pidFile(name));
    return handle.get().pid();
  }

  /** SIGTERM, wait up to {@code grace}, then SIGKILL and wait for the exit. */
  static void terminate(ProcessHandle handle, Duration grace) {
    if (!handle.isAlive()) {
      return;
    }
    handle.destroy();
    if (!awaitExit(handle, grace)) {
      handle.destroyForcibly();
      if (!awaitExit(handle, Duration.ofSeconds(30))) {
        throw new IllegalStateException("process " + handle.pid() + " survived SIGKILL");
      }
    }
  }

  private static boolean awaitExit(ProcessHandle handle, Duration timeout) {
    try {
      handle.onExit().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (TimeoutException e) {
      return !handle.isAlive();
    } catch (ExecutionException e) {
      return !handle.isAlive();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for pid " + handle.pid(), e);
    }
  }

  /** The last {@code lines} lines of {@code name}'s log and standard output, for error messages. */
  String tail(String name, int lines) {
    StringBuilder text = new StringBuilder();
    for (Path file : List.of(logFile(name), outFile(name))) {
      if (!Files.isRegularFile(file)) {
        continue;
      }
      try {
        List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
        text.append("--- ").append(file).append(" (last lines)\n");
        for (String line : all.subList(Math.max(0, all.size() - lines), all.size())) {
          text.append(line).append('\n');
        }
      } catch (IOException e) {
        text.append("--- ").append(file).append(": ").append(e.getMessage()).append('\n');
      }
    }
    return text.toString();
  }

  private static String javaCommand() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  private static void deleteQuietly(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      // A pid file that cannot be removed is found stale again next time.
    }
  }
}
