package dev.tidemark.act;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A PostgreSQL server from the system's packages, with its data under a state directory: the one
 * place that finds, initialises, starts and stops it.
 *
 * <ul>
 *   <li>The binaries ({@code initdb}, {@code pg_ctl}, {@code postgres}) are looked up on the {@code
 *       PATH}, then under {@code /usr/lib/postgresql/<version>/bin} (Debian's layout), newest
 *       first.
 *   <li>{@code initdb} runs once, into {@code <stateDir>/pgdata}: trust authentication, TCP on
 *       127.0.0.1 only, the unix socket in {@code <stateDir>/pgrun} (with the server log).
 *   <li>The port is chosen free on first start and remembered in {@code <stateDir>/postgres.port}.
 *   <li>{@link #start} runs {@code pg_ctl start -w}; {@link #close} runs {@code pg_ctl stop -m
 *       fast} and then makes sure the postmaster of {@code postmaster.pid} has exited. A server
 *       left running by a consumer that was killed is reused by the next start, which stops it at
 *       exit.
 * </ul>
 *
 * <p>PostgreSQL refuses to run as root. When this JVM's effective user is root (as in CI
 * containers), {@code initdb} and {@code pg_ctl} run as the {@code postgres} system user through
 * {@code runuser -u postgres --}, and the data and socket directories are given to that user; every
 * directory above the state directory must then be searchable by it.
 */
public final class LocalPostgres implements AutoCloseable {
  /** The database the consumer's tables live in. */
  public static final String DATABASE = "tidemark";

  /** The superuser initdb creates, and the system user the server runs as under root. */
  public static final String USER = "postgres";

  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
  private static final Path DEBIAN_LAYOUT = Path.of("/usr/lib/postgresql");

  /**
   * Where the server's directories go when the postgres user cannot reach the state directory (a
   * run as root under a home directory or a {@code mktemp -d}): {@code /tmp} is searchable by every
   * user. One subdirectory per state directory, named by the first 64 bits of the SHA-256 of its
   * absolute path in hex (short: the socket's path must fit in 107 bytes).
   */
  private static final Path SHARED_HOME = Path.of("/tmp", "tidemark-act");

  private final Path stateDir;
  private final Path bin;
  private final boolean asPostgresUser;
  private final PrintStream log;
  private int port;

  private LocalPostgres(Path stateDir, Path bin, boolean asPostgresUser, PrintStream log) {
    this.stateDir = stateDir.toAbsolutePath().normalize();
    this.bin = bin;
    this.asPostgresUser = asPostgresUser;
    this.log = log;
  }

  /** The data directory under {@code stateDir}. */
  public static Path dataDir(Path stateDir) {
    return stateDir.toAbsolutePath().normalize().resolve("pgdata");
  }

  private Path dataDir() {
    return dataDir(stateDir);
  }

  /** The unix socket directory and server log. */
  private Path runDir() {
    return stateDir.resolve("pgrun");
  }

  private Path portFile() {
    return stateDir.resolve("postgres.port");
  }

  /** The JDBC URL of the consumer's database. */
  public String jdbcUrl() {
    return jdbcUrl(DATABASE);
  }

  private String jdbcUrl(String database) {
    return "jdbc:postgresql://127.0.0.1:" + port + "/" + database + "?user=" + USER;
  }

  /** The server's port. */
  public int port() {
    return port;
  }

  /**
   * Starts the server of {@code stateDir} (initialising it first if needed), or reuses it if it
   * runs already, and creates the consumer's database.
   */
  public static LocalPostgres start(Path stateDir, PrintStream log)
      throws IOException, InterruptedException {
    LocalPostgres postgres = new LocalPostgres(stateDir, binaries(), isRoot(), log);
    try {
      postgres.startServer();
    } catch (IOException | InterruptedException | RuntimeException e) {
      // Started but unusable (no database): leave no server behind.
      postgres.close();
      throw e;
    }
    return postgres;
  }

  /** The directory holding initdb, pg_ctl and postgres. */
  static Path binaries() {
    List<Path> candidates = new ArrayList<>();
    String path = System.getenv("PATH");
    if (path != null) {
      for (String entry : path.split(java.io.File.pathSeparator)) {
        if (!entry.isEmpty()) {
          candidates.add(Path.of(entry));
        }
      }
    }
    if (Files.isDirectory(DEBIAN_LAYOUT)) {
      List<Path> versions = new ArrayList<>();
      try (DirectoryStream<Path> dirs = Files.newDirectoryStream(DEBIAN_LAYOUT)) {
        for (Path dir : dirs) {
          versions.add(dir.resolve("bin"));
        }
      } catch (IOException e) {
        // An unreadable layout is the same as none.
      }
      versions.sort(Comparator.comparing(LocalPostgres::majorVersion).reversed());
      candidates.addAll(versions);
    }
    for (Path dir : candidates) {
      if (Stream.of("initdb", "pg_ctl", "postgres")
          .allMatch(name -> Files.isExecutable(dir.resolve(name)))) {
        return dir;
      }
    }
    throw new IllegalStateException(
        "PostgreSQL is not installed: no initdb, pg_ctl and postgres on the PATH or under "
            + DEBIAN_LAYOUT
            + "/*/bin. Install it (apt-get install postgresql) or pass --jdbcUrl.");
  }

  private static int majorVersion(Path bin) {
    try {
      return Integer.parseInt(bin.getParent().getFileName().toString().replaceAll("\\..*", ""));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** Whether this JVM runs as root, whom PostgreSQL refuses. */
  static boolean isRoot() {
    try {
      return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).intValue() == 0;
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      return "root".equals(System.getProperty("user.name"));
    }
  }

  private void startServer() throws IOException, InterruptedException {
    Files.createDirectories(stateDir);
    Path data = place(dataDir());
    Path run = place(runDir());
    if (!Files.isRegularFile(data.resolve("PG_VERSION"))) {
      initialise(data, run);
    }
    giveToPostgres(run);
    OptionalLong running = runningPid();
    port = rememberedPort().orElse(0);
    if (running.isPresent() && port > 0) {
      log.println(
          "act: reusing the PostgreSQL left running in "
              + dataDir()
              + " (pid "
              + running.getAsLong()
              + ")");
    } else {
      if (port == 0 || !isFree(port)) {
        port = freePort();
        Files.writeString(portFile(), port + "\n", StandardCharsets.UTF_8);
      }
      run(
          List.of(
              pgCtl(),
              "-D",
              data.toString(),
              "-l",
              run.resolve("postgres.log").toString(),
              "-w",
              "-t",
              Long.toString(START_TIMEOUT.toSeconds()),
              "-o",
              "-p " + port,
              "start"),
          true,
          START_TIMEOUT.plusSeconds(10));
    }
    createDatabase();
  }

  /**
   * {@code link} (a directory under the state directory), created if missing; returns where it
   * really is. Running as root, PostgreSQL runs as the postgres user, who must be able to reach its
   * directories: when some directory above the state directory is not searchable by every user, the
   * directory is made under {@link #SHARED_HOME} instead and {@code link} is a symbolic link to it,
   * so the data still sits under the state directory for whoever looks there.
   */
  private Path place(Path link) throws IOException {
    if (Files.isSymbolicLink(link)) {
      Path target = Files.readSymbolicLink(link);
      Files.createDirectories(target);
      return target;
    }
    if (Files.isDirectory(link) || !asPostgresUser || searchableByEveryone(stateDir)) {
      Files.createDirectories(link);
      return link;
    }
    Path home = SHARED_HOME.resolve(sha256(stateDir.toString()).substring(0, 16));
    for (Path dir : List.of(SHARED_HOME, home)) {
      Files.createDirectories(dir);
      Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
    }
    Path target = home.resolve(link.getFileName());
    Files.createDirectories(target);
    Files.createSymbolicLink(link, target);
    return target;
  }

  /** Whether every directory from the root down to {@code dir} lets every user through. */
  private static boolean searchableByEveryone(Path dir) throws IOException {
    for (Path at = dir; at != null; at = at.getParent()) {
      if (Files.exists(at)
          && !Files.getPosixFilePermissions(at).contains(PosixFilePermission.OTHERS_EXECUTE)) {
        return false;
      }
    }
    return true;
  }

  private static String sha256(String text) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-256", e);
    }
  }

  /** {@code initdb} into an empty data directory, then the network and socket settings. */
  private void initialise(Path data, Path run) throws IOException, InterruptedException {
    if (Files.exists(data)) {
      // An initdb that did not finish: start again from nothing.
      deleteTree(data);
    }
    Files.createDirectories(data);
    giveToPostgres(data);
    run(
        List.of(
            bin.resolve("initdb").toString(),
            "-D",
            data.toString(),
            "-U",
            USER,
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C"),
        true,
        Duration.ofMinutes(2));
    // Trust, but only over the private socket directory and the loopback interface.
    Files.writeString(
        data.resolve("pg_hba.conf"),
        "# Written by tidemark act: this server listens on 127.0.0.1 only.\n"
            + "local all all trust\n"
            + "host all all 127.0.0.1/32 trust\n",
        StandardCharsets.UTF_8);
    Files.writeString(
        data.resolve("postgresql.conf"),
        "\n# tidemark act\n"
            + "listen_addresses = '127.0.0.1'\n"
            + "unix_socket_directories = '"
            + run
            + "'\n",
        StandardCharsets.UTF_8,
        java.nio.file.StandardOpenOption.APPEND);
    giveToPostgres(data.resolve("pg_hba.conf"));
    giveToPostgres(data.resolve("postgresql.conf"));
  }

  private void createDatabase() throws InterruptedException {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (true) {
      try (Connection connection = DriverManager.getConnection(jdbcUrl("postgres"))) {
        try (PreparedStatement select =
            connection.prepareStatement("SELECT 1 FROM pg_database WHERE datname = ?")) {
          select.setString(1, DATABASE);
          try (ResultSet rows = select.executeQuery()) {
            if (rows.next()) {
              return;
            }
          }
        }
        try (Statement create = connection.createStatement()) {
          create.execute("CREATE DATABASE " + DATABASE);
        }
        return;
      } catch (SQLException e) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "PostgreSQL on port " + port + " does not accept connections: " + e.getMessage(), e);
        }
        Thread.sleep(200);
      }
    }
  }

  /** The postmaster's pid from {@code postmaster.pid}, if that process is alive. */
  public static OptionalLong runningPid(Path stateDir) {
    Path pidFile = dataDir(stateDir).resolve("postmaster.pid");
    try {
      List<String> lines = Files.readAllLines(pidFile, StandardCharsets.UTF_8);
      long pid = Long.parseLong(lines.get(0).trim());
      Optional<ProcessHandle> process = ProcessHandle.of(pid);
      return process.isPresent() && process.get().isAlive()
          ? OptionalLong.of(pid)
          : OptionalLong.empty();
    } catch (IOException | RuntimeException e) {
      return OptionalLong.empty();
    }
  }

  private OptionalLong runningPid() {
    return runningPid(stateDir);
  }

  private Optional<Integer> rememberedPort() {
    try {
      return Optional.of(
          Integer.parseInt(Files.readString(portFile(), StandardCharsets.UTF_8).trim()));
    } catch (IOException | NumberFormatException e) {
      return Optional.empty();
    }
  }

  /** Stops the server: {@code pg_ctl stop -m fast}, then by pid if it is still there. */
  @Override
  public void close() {
    stop(stateDir, log);
  }

  /**
   * Stops the server of {@code stateDir} if it runs (tests call this to clean up after a consumer
   * they killed). Returns once its postmaster has exited.
   */
  public static void stop(Path stateDir, PrintStream log) {
    OptionalLong pid = runningPid(stateDir);
    if (pid.isEmpty()) {
      return;
    }
    LocalPostgres postgres = new LocalPostgres(stateDir, binaries(), isRoot(), log);
    try {
      postgres.run(
          List.of(
              postgres.pgCtl(),
              "-D",
              postgres.dataDir().toRealPath().toString(),
              "-m",
              "fast",
              "-w",
              "stop"),
          false,
          Duration.ofSeconds(70));
    } catch (IOException | RuntimeException e) {
      log.println("act: pg_ctl stop failed (" + e.getMessage() + "); stopping pid " + pid);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    Optional<ProcessHandle> process = ProcessHandle.of(pid.getAsLong());
    if (process.isPresent() && process.get().isAlive()) {
      // SIGTERM is PostgreSQL's smart shutdown; it is all that is left when pg_ctl failed.
      process.get().destroy();
      try {
        process.get().onExit().get(30, TimeUnit.SECONDS);
      } catch (Exception e) {
        process.get().destroyForcibly();
      }
    }
  }

  private String pgCtl() {
    return bin.resolve("pg_ctl").toString();
  }

  /** Gives {@code path} to the postgres user when running as root. */
  private void giveToPostgres(Path path) throws IOException {
    if (!asPostgresUser) {
      return;
    }
    UserPrincipalLookupService users = path.getFileSystem().getUserPrincipalLookupService();
    Files.setOwner(path, users.lookupPrincipalByName(USER));
    Files.getFileAttributeView(path, java.nio.file.attribute.PosixFileAttributeView.class)
        .setGroup(users.lookupPrincipalByGroupName(USER));
  }

  /**
   * Runs a PostgreSQL program (as the postgres user under root) with its output appended to {@code
   * <stateDir>/postgres-commands.log}; fails with the output's end if it exits with non-zero.
   */
  private void run(List<String> program, boolean required, Duration timeout)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    if (asPostgresUser) {
      command.addAll(List.of("runuser", "-u", USER, "--"));
    }
    command.addAll(program);
    Path output = stateDir.resolve("postgres-commands.log");
    Files.writeString(
        output,
        "$ " + String.join(" ", command) + "\n",
        StandardCharsets.UTF_8,
        java.nio.file.StandardOpenOption.CREATE,
        java.nio.file.StandardOpenOption.APPEND);
    Process process =
        new ProcessBuilder(command)
            // A directory every user can enter: the programs may run as the postgres user.
            .directory(new java.io.File("/"))
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(output.toFile()))
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
            .start();
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly().waitFor();
      throw new IllegalStateException(
          program.get(0) + " did not finish in " + timeout + ": see " + output);
    }
    if (process.exitValue() != 0 && required) {
      List<String> lines = Files.readAllLines(output, StandardCharsets.UTF_8);
      String tail = String.join("\n  ", lines.subList(Math.max(0, lines.size() - 8), lines.size()));
      String hint =
          asPostgresUser
              ? " (it runs as the postgres user, who must be able to reach " + dataDir() + ")"
              : "";
      throw new IllegalStateException(
          Path.of(program.get(0)).getFileName()
              + " exited with "
              + process.exitValue()
              + hint
              + ":\n  "
              + tail);
    }
  }

  private static boolean isFree(int port) {
    try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
      return socket.isBound();
    } catch (IOException e) {
      return false;
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  private static void deleteTree(Path root) throws IOException {
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path path : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
        Files.delete(path);
      }
    }
  }
}
