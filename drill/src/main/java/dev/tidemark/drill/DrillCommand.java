package dev.tidemark.drill;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.cluster.ClusterSettings;
import dev.tidemark.cluster.LocalCluster;
import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.io.ReplayFile;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.testkit.generate.ReplayClock;
import dev.tidemark.transforms.util.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.checkerframework.checker.nullness.qual.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code ./tidemark drill}: the fault drill against the local cluster. */
@Command(
    name = "drill",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "Fault drill on the local Flink cluster ('./tidemark cluster up' first; '--brokers=3 --ha'"
          + " for every fault kind): feeds generated events (duplicates, conflicts, late, too-late"
          + " and malformed records, both CloudEvents Kafka modes) at a fixed rate into a Tidemark"
          + " job and, as each part of the input starts to be fed, SIGKILLs a TaskManager, the"
          + " broker leading a decisions partition mid-transaction or the leading JobManager, or"
          + " restarts the broker. Then it checks every output topic, read with read_committed,"
          + " against a recomputation over the events the run accepted (exactly once), and the"
          + " run's lateness decisions against the reference watermark, apart. Once per sink mode."
          + " Writes drill.json under --output.",
      "Exit 0 when every check passes, 1 when one does not (its counts and examples in"
          + " drill.json; the next sink mode still runs), 3 when the drill could not run"
          + " (drill.json then has an 'error' and what ran before it)."
    })
public final class DrillCommand implements Callable<Integer> {
  @Option(
      names = "--dir",
      defaultValue = "${sys:tidemark.home:-.}/out/cluster",
      description = "The local cluster's state directory (default: out/cluster).")
  Path clusterDir;

  @Option(
      names = "--output",
      defaultValue = "drill",
      description = "Where drill.json, the input and the logs go (default: ./drill).")
  Path output;

  @Option(
      names = "--events",
      defaultValue = "20000",
      description =
          "Distinct valid events generated (default: 20000, fed at 60 records/s, under what the"
              + " job sustains on RocksDB through the faults on 2 cores); duplicates and malformed"
              + " records come on top. --events=100000 is fed at 240/s, faster than a 2-core"
              + " machine's job reads, so its runs end after the job has drained the backlog.")
  int events;

  @Option(
      names = "--tooLateFraction",
      defaultValue = "0.01",
      description =
          "Share of events that arrive after their window's allowed lateness (default: 0.01).")
  double tooLateFraction;

  @Option(
      names = "--rate",
      description =
          "Records fed per second of wall time (default: 24 per event per second of the input's"
              + " event time: 60 for 20000 events, 240 for 100000, 30 for 10000; see defaultRate).")
  @Nullable Double rate;

  @Option(
      names = "--kills",
      defaultValue = "3",
      description = "TaskManager kills per sink mode (default: 3).")
  int kills;

  @Option(
      names = "--brokerRestarts",
      defaultValue = "1",
      description = "Broker restarts per sink mode (default: 1).")
  int brokerRestarts;

  @Option(
      names = "--brokerKills",
      description =
          "SIGKILLs of the broker leading a partition of the decisions topic, mid-transaction, per"
              + " sink mode (default: 1 on a cluster of 3 or more brokers, else 0).")
  @Nullable Integer brokerKills;

  @Option(
      names = "--jobManagerKills",
      description =
          "SIGKILLs of the leading JobManager per sink mode (default: 1 on a highly available"
              + " cluster, else 0).")
  @Nullable Integer jobManagerKills;

  @Option(
      names = "--testDropCommitted",
      hidden = true,
      description =
          "Test hook: forget the first committed record of this output (decisions, dead-letters,"
              + " duplicates, too-late) before the checks, as if the sink had lost it.")
  @Nullable String testDropCommitted;

  @Option(
      names = "--seed",
      defaultValue = "20261203",
      description = "Seed of the input and of the fault moments (default: 20261203).")
  long seed;

  @Option(
      names = "--sinks",
      split = ",",
      defaultValue = "transactional,idempotent",
      description = "Sink modes to drill, in order (default: transactional,idempotent).")
  List<KafkaOptions.KafkaSinkMode> sinks;

  @Option(
      names = "--rescale",
      description =
          "Also drill a rescale: savepoint at parallelism 2, resume at 1, savepoint, raise the"
              + " input topic from 2 to 4 partitions, resume at 2.")
  boolean rescale;

  @Option(
      names = "--upgrade",
      description =
          "Also drill an upgrade: savepoint, resume with the ONNX model, re-send an event from"
              + " before the savepoint.")
  boolean upgrade;

  @Option(
      names = "--savepointSink",
      defaultValue = "transactional",
      description = "Sink mode of the --rescale and --upgrade jobs (default: transactional).")
  KafkaOptions.KafkaSinkMode savepointSink;

  @Option(
      names = "--soak",
      description =
          "Instead of the fault runs: a soak of this length (ISO-8601, e.g. PT30M). One job (the"
              + " first of --sinks) is fed at 80 %% of the sustained rate it measures first (or"
              + " --rate), and its TaskManagers' heap after a full collection, RocksDB's live"
              + " state and the checkpoint duration are sampled; it passes when the job kept up"
              + " and the second half's largest one-minute figure of each is under 1.2 times its"
              + " smallest. Writes drill.json and soak.png.")
  @Nullable Duration soak;

  @Option(
      names = "--soakSample",
      defaultValue = "PT10S",
      hidden = true,
      description = "How often the soak samples (default: PT10S).")
  Duration soakSample;

  @Option(
      names = "--soakProbeStep",
      defaultValue = "PT1M",
      description =
          "Length of each step of the soak's probe, which feeds steadily at 30 records/s, then"
              + " 1.5 times faster each step, until the job falls behind (default: PT1M).")
  Duration soakProbeStep;

  @Option(
      names = "--timeout",
      defaultValue = "PT20M",
      description =
          "Longest wait, per run, for the outputs to settle after the feed (default:" + " PT20M).")
  Duration timeout;

  @Override
  public Integer call() throws Exception {
    Optional<ClusterSettings> settings = ClusterSettings.load(clusterDir);
    if (settings.isEmpty()) {
      System.err.println(
          "drill: no local cluster in "
              + clusterDir
              + "; start one with './tidemark cluster up' (or pass --dir)");
      return 3;
    }
    LocalCluster cluster = new LocalCluster(settings.get(), classPath(), System.out);
    if (!cluster.status().allRunning()) {
      System.err.println(
          "drill: the local cluster in "
              + clusterDir
              + " is not fully up:\n"
              + cluster.status().format()
              + "start it with './tidemark cluster up'");
      return 3;
    }
    Files.createDirectories(output);
    if (soak != null) {
      return soak(cluster);
    }
    Path input = output.resolve("events.ndjson");
    GeneratorConfig config =
        inputConfig(seed, events).toBuilder().tooLateFraction(tooLateFraction).build();
    Path generated = output.resolve("generated.ndjson");
    new EventGenerator(config).writeTo(generated);
    // A batch replay (the recomputation, and the reference a test runs) costs a DirectRunner round
    // per clock step: steps of about a minute of event time. The too-late margin (30 minutes)
    // dwarfs the coarser watermark; the feed and the recomputation follow the same clock.
    ReplayClock.coarsen(generated, input, Math.max(1, (int) (60 * config.eventsPerSecond())));
    Files.delete(generated);
    int records = countRecords(input);
    double rate = this.rate != null ? this.rate : defaultRate(config);
    System.out.printf(
        "drill: %d records (%d distinct events) in %s, fed at %.0f/s%n",
        records, events, input, rate);

    DrillJobs jobs = new DrillJobs(settings.get());
    long stamp = System.currentTimeMillis() / 1000;
    long started = System.nanoTime();
    TidemarkOptions shaping =
        jobs.options(new DrillJobs.Topics("drill-reference"), output, List.of());
    Recomputation recomputation = Recomputation.of(input, shaping);
    System.out.printf(
        "drill: read the input for the recomputation in %.1f s%n",
        (System.nanoTime() - started) / 1e9);
    DrillReport report =
        new DrillReport(
            records,
            recomputation,
            org.joda.time.Duration.millis(
                java.time.Duration.parse(shaping.getWindowSize()).toMillis()),
            org.joda.time.Duration.millis(
                java.time.Duration.parse(shaping.getWindowPeriod()).toMillis()));
    int brokerKills =
        this.brokerKills != null ? this.brokerKills : settings.get().brokers() >= 3 ? 1 : 0;
    int jobManagerKills =
        this.jobManagerKills != null
            ? this.jobManagerKills
            : settings.get().highAvailability() ? 1 : 0;
    try {
      for (KafkaOptions.KafkaSinkMode sink : sinks) {
        FaultPlan plan =
            FaultPlan.draw(
                seed + sink.ordinal(),
                Duration.ofMillis((long) (records * 1000 / rate)),
                kills,
                brokerRestarts,
                brokerKills,
                jobManagerKills);
        try {
          FaultRun.Outcome outcome =
              new FaultRun(cluster, jobs, recomputation, testDropCommitted, System.out)
                  .run(
                      "drill-" + sink + "-" + stamp,
                      sink,
                      input,
                      rate,
                      plan,
                      output.resolve(sink.toString()),
                      timeout);
          report.add(sink, outcome);
        } catch (Exception e) {
          // This run could not go on (its job ended, a step timed out): the next one still runs.
          e.printStackTrace();
          report.failed(sink, e);
        }
      }
      SavepointSteps steps = new SavepointSteps(jobs, savepointSink, rate, home(), System.out);
      if (rescale) {
        report.addRescale(
            steps.rescale("drill-rescale-" + stamp, input, output.resolve("rescale"), timeout));
      }
      if (upgrade) {
        report.addUpgrade(
            steps.upgrade("drill-upgrade-" + stamp, input, output.resolve("upgrade"), timeout));
      }
    } catch (Exception e) {
      // drill.json still says what ran, and where the drill stopped.
      e.printStackTrace();
      report.stopped(e);
    }
    int exit = report.exitCode();
    ObjectNode json = report.toJson();
    Files.writeString(
        output.resolve("drill.json"),
        Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(json) + "\n",
        StandardCharsets.UTF_8);
    System.out.println(Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(json));
    System.out.println("drill: wrote " + output.resolve("drill.json"));
    return exit;
  }

  /** {@code --soak}: runs the soak, writes drill.json and soak.png; 0 when it holds, else 1. */
  private int soak(LocalCluster cluster) throws Exception {
    DrillJobs jobs = new DrillJobs(cluster.settings());
    KafkaOptions.KafkaSinkMode sink = sinks.get(0);
    ObjectNode json = Json.MAPPER.createObjectNode();
    int exit;
    try {
      Soak.Outcome outcome =
          new Soak(jobs, cluster, System.out)
              .run(
                  "drill-soak-" + System.currentTimeMillis() / 1000,
                  sink,
                  soak,
                  soakSample,
                  soakProbeStep,
                  rate,
                  seed,
                  output);
      json.put("sink", sink.toString());
      json.set("soak", outcome.toJson());
      json.put("passed", outcome.holds());
      SoakChart.write(
          outcome.samples(),
          String.format("Soak: %s at %.0f records/s (%s sink)", soak, outcome.rate(), sink),
          output.resolve("soak.png"));
      exit = outcome.holds() ? 0 : 1;
    } catch (Exception e) {
      e.printStackTrace();
      json.put("error", String.valueOf(e));
      json.put("passed", false);
      exit = 3;
    }
    Files.writeString(
        output.resolve("drill.json"),
        Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(json) + "\n",
        StandardCharsets.UTF_8);
    ObjectNode shown = json.deepCopy();
    if (shown.path("soak").isObject()) {
      ((ObjectNode) shown.get("soak")).remove("samples");
    }
    System.out.println(Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(shown));
    System.out.println("drill: wrote " + output.resolve("drill.json") + " and soak.png");
    return exit;
  }

  /**
   * The drill's input: the generator's adversarial defaults, with too-late events aimed at a 30
   * minute window although the job's windows are 5 minutes long. A streaming job judges an event
   * too late against its watermark, which trails the records it has read (by the records read since
   * the source last emitted one, and by the slower partition); the gate errs only towards accepting
   * an event as late. Too-late events then arrive 95 to 110 minutes after their event time, 30
   * minutes of event time past the job's limit (window end plus an hour of allowed lateness), so a
   * backlog read after a restart cannot blur the line; late events stay within the limit by 5
   * minutes, the side on which the gate never errs. The stream lasts at least 8,000 s of event
   * time, so that too-late events fit in it.
   */
  static GeneratorConfig inputConfig(long seed, int events) {
    return GeneratorConfig.builder()
        .seed(seed)
        .numEvents(events)
        .numAccounts(Math.max(50, events / 100))
        .eventsPerSecond(Math.min(10.0, events / 8000.0))
        .windowSize(java.time.Duration.ofMinutes(30))
        .build();
  }

  /**
   * The feed rate the too-late margin allows: a failover (heartbeat timeout, restart delay and
   * restore, about {@value #FAILOVER_SECONDS} s) leaves a backlog of that many seconds of the feed,
   * and the restored job reads it against a watermark that may trail it by all of it. Too-late
   * events lie 30 minutes of event time past the job's limit ({@link #inputConfig}), 1,800 times
   * the input's events per second in records; at this rate a failover's backlog is a third of that
   * (docs/benchmarks.md has the drills that measured it).
   */
  static double defaultRate(GeneratorConfig config) {
    double marginRecords = TOO_LATE_MARGIN_SECONDS * config.eventsPerSecond();
    return Math.max(1, Math.floor(marginRecords / (3 * FAILOVER_SECONDS)));
  }

  static final double TOO_LATE_MARGIN_SECONDS = 30 * 60;
  static final double FAILOVER_SECONDS = 25;

  private static final String CLOCK = "advanceProcessingTime";
  private static final String CLOCK_DIRECTIVE = "{\"" + CLOCK + "\"";

  /** The input's records: its lines without the replay clock's directives. */
  private static int countRecords(Path input) throws java.io.IOException {
    int records = 0;
    for (byte[] line : ReplayFile.splitLines(Files.readAllBytes(input))) {
      String text = new String(line, StandardCharsets.ISO_8859_1);
      if (!text.isBlank() && !text.startsWith(CLOCK_DIRECTIVE)) {
        records++;
      }
    }
    return records;
  }

  /** The class path of the cluster's processes, as './tidemark cluster' passes it. */
  static String classPath() {
    String classPath = System.getProperty("tidemark.cluster.classpath");
    if (classPath == null) {
      throw new IllegalStateException(
          "-Dtidemark.cluster.classpath is not set: run the drill through './tidemark drill'");
    }
    return classPath;
  }

  /** The project directory: the models the upgrade resumes with are read from it. */
  static Path home() {
    return Path.of(System.getProperty("tidemark.home", ".")).toAbsolutePath().normalize();
  }

  public static void main(String[] args) {
    System.exit(new CommandLine(new DrillCommand()).execute(args));
  }

  static ArrayNode array() {
    return Json.MAPPER.createArrayNode();
  }
}
