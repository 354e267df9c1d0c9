package dev.tidemark.drill;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import dev.tidemark.cluster.ClusterSettings;
import dev.tidemark.cluster.LocalCluster;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.Stream;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.junit.rules.ExternalResource;

/**
 * The local cluster of the drill module's cluster tests (ZooKeeper, a leading and a standby
 * JobManager, two TaskManagers and three replicated brokers as separate processes, on free ports,
 * in a temporary state directory: every fault the drill injects has its target), started once for
 * all of them: each test class holds it from its {@code @BeforeClass} to its {@code @AfterClass},
 * and {@link ClusterSuiteIT} holds it across its classes, so the cluster starts with the first
 * holder and stops when the last one lets go. A class run alone ({@code -Dit.test=DrillIT}) thus
 * starts and stops a cluster of its own. The stop is by pid; the cluster's logs are kept in {@code
 * target/cluster-it-log}, where a failed test is read from.
 */
final class SharedCluster {
  private static int holders;
  private static @Nullable Path dir;
  private static @Nullable LocalCluster cluster;

  private SharedCluster() {}

  /** Holds the cluster, starting it if no one holds it yet. */
  static synchronized LocalCluster hold() throws Exception {
    if (holders == 0) {
      start();
    }
    holders++;
    return cluster;
  }

  /** Lets go of the cluster; the last holder stops it. */
  static synchronized void release() throws IOException {
    if (holders == 0) {
      // The hold failed (the cluster did not come up): start() stopped what it began.
      return;
    }
    if (--holders == 0) {
      stop();
    }
  }

  /** A class rule that holds the cluster around a suite of classes. */
  static ExternalResource rule() {
    return new ExternalResource() {
      @Override
      protected void before() throws Throwable {
        hold();
      }

      @Override
      protected void after() {
        try {
          release();
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }
    };
  }

  private static void start() throws Exception {
    dir = Files.createTempDirectory("tidemark-cluster-it");
    String classPath = classPath();
    // The drill command starts its cluster handle on this class path.
    System.setProperty("tidemark.cluster.classpath", classPath);
    cluster =
        new LocalCluster(
            ClusterSettings.defaults(dir.resolve("cluster"))
                .withBrokers(ClusterSettings.REPLICATED_BROKERS)
                .withHighAvailability(true)
                .withFreePorts()
                // Short jobs on small inputs: C1 alone starts and runs them on less CPU.
                .withJvmOptions(ClusterSettings.SHORT_JOBS_JVM_OPTIONS),
            classPath,
            System.out);
    try {
      assertThat("the cluster comes up", cluster.up(Duration.ofMinutes(3)), is(true));
    } catch (Exception | AssertionError e) {
      stop();
      throw e;
    }
  }

  private static void stop() throws IOException {
    Set<Long> pids = new HashSet<>();
    try {
      if (cluster != null) {
        // The pids of now: a drill replaces TaskManagers and the broker as it goes.
        for (String name : cluster.processNames()) {
          cluster.pid(name).ifPresent(pids::add);
        }
        cluster.down();
      }
    } finally {
      // Whatever happened, no process of these tests outlives them.
      LocalCluster.killAll(pids);
      keepLogs();
      if (dir != null) {
        try (Stream<Path> files = Files.walk(dir)) {
          files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
      }
      cluster = null;
      dir = null;
    }
  }

  private static void keepLogs() throws IOException {
    if (dir == null) {
      return;
    }
    Path logs = dir.resolve("cluster").resolve("log");
    Path kept = Path.of("target", "cluster-it-log");
    if (Files.isDirectory(logs)) {
      Files.createDirectories(kept);
      try (Stream<Path> files = Files.list(logs)) {
        for (Path log : (Iterable<Path>) files::iterator) {
          Files.copy(log, kept.resolve(log.getFileName()), StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
  }

  /** The local-cluster module's jar and class path, as the launcher script passes them. */
  private static String classPath() throws IOException {
    String jar = System.getProperty("tidemark.cluster.jar");
    String file = System.getProperty("tidemark.cluster.classpath.file");
    if (jar == null || file == null) {
      throw new IllegalStateException(
          "run under Maven (failsafe sets tidemark.cluster.jar and tidemark.cluster.classpath.file)");
    }
    return jar
        + java.io.File.pathSeparator
        + Files.readString(Path.of(file), StandardCharsets.UTF_8).trim();
  }
}
