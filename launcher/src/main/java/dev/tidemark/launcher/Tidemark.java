package dev.tidemark.launcher;

import static dev.tidemark.pipelines.launch.ExitCodes.DONE;
import static dev.tidemark.pipelines.launch.ExitCodes.RUN_FAILED;
import static dev.tidemark.pipelines.launch.ExitCodes.USAGE_ERROR;

import dev.tidemark.pipelines.Durations;
import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.pipelines.RunSpecs;
import dev.tidemark.pipelines.RunnerProfiles;
import dev.tidemark.pipelines.Runners;
import dev.tidemark.pipelines.SpecDefaults;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.dataflow.FlexTemplateLauncher;
import dev.tidemark.pipelines.flink.ClusterPaths;
import dev.tidemark.pipelines.flink.FlinkJob;
import dev.tidemark.pipelines.flink.FlinkRestClient;
import dev.tidemark.pipelines.io.Sources;
import dev.tidemark.pipelines.io.bigquery.BigQueryTables;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.launch.EmbeddedBroker;
import dev.tidemark.pipelines.launch.ExitCodes;
import dev.tidemark.pipelines.launch.FlinkClusterLaunch;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.SpecChecks;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecException;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.testkit.generate.CardTestingStyle;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.testkit.generate.LabelStream;
import dev.tidemark.testkit.generate.ReplayClock;
import dev.tidemark.testkit.generate.Workload;
import dev.tidemark.tools.capture.KafkaCapture;
import dev.tidemark.tools.report.ReportSettings;
import dev.tidemark.tools.report.RunReport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.checkerframework.checker.nullness.qual.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

/** The {@code tidemark} command line: {@code run} the pipeline, {@code generate} a stream. */
@Command(
    name = "tidemark",
    mixinStandardHelpOptions = true,
    version = "tidemark 0.2.0",
    description = TidemarkOptions.DESCRIPTION,
    subcommands = {
      Tidemark.Run.class,
      Tidemark.Generate.class,
      Tidemark.Train.class,
      Tidemark.Capture.class,
      Tidemark.Report.class,
      Tidemark.Schemas.class,
      Tidemark.Job.class
    },
    footer = {
      "",
      "The benchmark suite is its own program: ./tidemark bench --help (module bench/).",
      "Run 'tidemark COMMAND --help' for a command's options."
    })
public final class Tidemark implements Callable<Integer> {
  @Spec CommandSpec spec;

  public static void main(String[] args) {
    System.exit(execute(args));
  }

  /** Runs the command line and returns its exit code (tests call this). */
  public static int execute(String... args) {
    CommandLine commandLine = new CommandLine(new Tidemark());
    commandLine.setExecutionExceptionHandler(
        (e, cmd, parsed) -> {
          // A wrong option is reported as one; anything thrown once the options were accepted is
          // a failed run. Runner wrappers (Flink's "Recovery is suppressed", Beam's
          // PipelineExecutionException) hide the real failure, so print the chain under it.
          boolean usage = e instanceof IllegalArgumentException || e instanceof SpecException;
          Throwable cause = e;
          while (cause.getCause() != null
              && cause instanceof RuntimeException
              && !(cause instanceof IllegalArgumentException)
              && !(cause instanceof SpecException)) {
            cause = cause.getCause();
          }
          cmd.getErr().println("tidemark: " + cause.getMessage());
          for (Throwable c = cause.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
            cmd.getErr().println("  caused by: " + c);
          }
          return usage ? USAGE_ERROR : RUN_FAILED;
        });
    commandLine.setExitCodeExceptionMapper(e -> USAGE_ERROR);
    ExitCodes.document(commandLine);
    return commandLine.execute(args);
  }

  @Override
  public Integer call() {
    spec.commandLine().usage(System.out);
    return 0;
  }

  /** {@code tidemark run}: the pipeline with a runner profile and Beam-style options. */
  @Command(
      name = "run",
      description = {
        "Run the pipeline. With no arguments: the 'local' profile (DirectRunner, the bundled"
            + " sample replay, outputs under ./out).",
        "A replay of a bundled sample reads its labels too (samples/<name>-labels.ndjson) unless"
            + " the run names labels; --labelsInput=none runs without.",
        "Pipeline options are Beam-style --name=value flags and override the profile;"
            + " --help lists them.",
        "On a Flink cluster (--profile=flink-cluster, or a --flinkMaster=host:port) a streaming"
            + " run returns once the cluster accepted the job and prints its id and web UI page;"
            + " 'tidemark job' lists, stops and cancels it."
      })
  static final class Run implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(
        names = "--profile",
        description = "Runner profile from runner-profiles/ (default: ${DEFAULT-VALUE}).",
        defaultValue = RunnerProfiles.DEFAULT_PROFILE)
    String profile;

    @Option(
        names = "--fromSavepoint",
        paramLabel = "PATH",
        description =
            "FlinkRunner: start the job from this savepoint (or retained checkpoint), the path"
                + " 'job stop --savepoint' printed; Beam's --savepointPath. A plain path is made"
                + " absolute (file:); the cluster's processes must reach it.")
    String fromSavepoint;

    @Option(
        names = "--spec",
        paramLabel = "PATH",
        description =
            "The pipeline spec (docs/spec.md): a YAML file, a file: or gs:// URI, or a bundled"
                + " spec's name (payments, the default, or logins); Beam's --specUri. Its values"
                + " are the defaults of the pipeline options; options given here override them."
                + " A profile that replays the bundled sample replays the spec's own,"
                + " samples/<name>-replay.ndjson, when there is one.")
    String specPath;

    @Option(names = "--help", description = "Show the pipeline options and exit.")
    boolean help;

    @Unmatched List<String> pipelineArgs = new ArrayList<>();

    /**
     * The bundled sample replay of a spec other than payments, {@code samples/<name>-replay.ndjson}
     * under the Tidemark home, when it exists: the input of a profile that replays the bundled
     * payments sample. Null for payments and for a spec without a sample.
     */
    private @Nullable String sampleOf(String specUri) {
      String name = RunSpecs.load(specUri).name();
      if (name.equals(SpecLoader.DEFAULT_BUNDLED)) {
        return null;
      }
      Path sample =
          Paths.get(System.getProperty("tidemark.home", "."), "samples", name + "-replay.ndjson");
      if (!Files.isRegularFile(sample)) {
        return null;
      }
      String profileInput = RunnerProfiles.fromEnvironment().load(profile).get("input");
      return profileInput != null && profileInput.endsWith("samples/sample-replay.ndjson")
          ? sample.toAbsolutePath().toString()
          : null;
    }

    /**
     * The run's arguments with the labels of a bundled sample: a replay of {@code
     * samples/<name>-replay.ndjson} reads {@code samples/<name>-labels.ndjson} beside it unless the
     * arguments name labels; {@code --labelsInput=none} runs without labels.
     */
    static List<String> withSampleLabels(List<String> arguments) {
      List<String> result = new ArrayList<>(arguments);
      if (result.remove("--labelsInput=none")) {
        return result;
      }
      TidemarkOptions options =
          PipelineOptionsFactory.fromArgs(result.toArray(new String[0])).as(TidemarkOptions.class);
      String input = options.getInput();
      if (Sources.readsLabels(options)
          || options.getSource() != TidemarkOptions.SourceKind.replay
          || input == null
          || !input.endsWith("-replay.ndjson")) {
        return result;
      }
      Path replay = Paths.get(input).toAbsolutePath().normalize();
      Path samples =
          Paths.get(System.getProperty("tidemark.home", "."), "samples")
              .toAbsolutePath()
              .normalize();
      String name = replay.getFileName().toString();
      Path labels =
          replay.resolveSibling(
              name.substring(0, name.length() - "-replay.ndjson".length()) + "-labels.ndjson");
      if (samples.equals(replay.getParent()) && Files.isRegularFile(labels)) {
        result.add("--labelsInput=" + labels);
      }
      return result;
    }

    @Override
    public Integer call() throws Exception {
      if (help) {
        spec.commandLine().usage(System.out);
        System.out.println();
        PipelineOptionsFactory.register(TidemarkOptions.class);
        PipelineOptionsFactory.printHelp(System.out, TidemarkOptions.class);
        return 0;
      }
      List<String> commandLine = new ArrayList<>(pipelineArgs);
      if (specPath != null) {
        if (commandLine.stream().anyMatch(a -> a.startsWith("--specUri"))) {
          throw new IllegalArgumentException("give one of --spec and --specUri, not both");
        }
        commandLine.add("--specUri=" + specPath);
        String sample = sampleOf(specPath);
        if (sample != null && commandLine.stream().noneMatch(a -> a.startsWith("--input="))) {
          commandLine.add("--input=" + sample);
        }
      }
      if (fromSavepoint != null) {
        if (commandLine.stream().anyMatch(a -> a.startsWith("--savepointPath"))) {
          throw new IllegalArgumentException(
              "give one of --fromSavepoint and --savepointPath, not both");
        }
        commandLine.add("--savepointPath=" + ClusterPaths.forCluster(fromSavepoint));
      }
      List<String> arguments =
          withSampleLabels(RunnerProfiles.fromEnvironment().arguments(profile, commandLine));
      TidemarkOptions options =
          PipelineOptionsFactory.fromArgs(arguments.toArray(new String[0]))
              .withValidation()
              .as(TidemarkOptions.class);
      // A spec that cannot be used, or a model that does not fit it, stops the run here (exit 2).
      SpecChecks.check(options);
      if (fromSavepoint != null && !Runners.isFlink(options)) {
        throw new IllegalArgumentException(
            "--fromSavepoint resumes a Flink job; this run's runner is "
                + options.getRunner().getSimpleName()
                + " (use --profile=flink-cluster, or --runner=FlinkRunner)");
      }
      if (FlinkClusterLaunch.submitsToFlinkCluster(options)) {
        FlinkClusterLaunch.FlinkSubmission job = FlinkClusterLaunch.submitToFlinkCluster(options);
        System.out.println(
            "Submitted Flink job "
                + job.jobId()
                + " ("
                + job.jobName()
                + ") to "
                + job.master()
                + "; it runs until stopped ('./tidemark job stop "
                + job.jobId()
                + " --savepoint DIR') or cancelled.");
        System.out.println("Web UI: " + job.webUi());
        return 0;
      }
      if (Launch.submitsOnly(options)) {
        System.out.println(Launch.submitAndDescribe(options));
        return 0;
      }
      Path output = Paths.get(options.getOutput());
      // A report of an earlier run with another sink would otherwise stay beside the new summary.
      RunReport.delete(output);
      Summary summary =
          EmbeddedBroker.requested(options) ? LiveDemo.run(options) : Launch.run(options);
      if (options.getSink() == TidemarkOptions.SinkKind.files) {
        writeReport(output, options);
      }
      summary.print(System.out, output);
      if (java.nio.file.Files.isRegularFile(output.resolve(RunReport.FILE_NAME))) {
        System.out.printf("  %s%n", RunReport.FILE_NAME);
      }
      return ExitCodes.of(summary);
    }
  }

  /**
   * Records the options the report needs beside summary.json and writes report.html. The run's
   * outcome is its outputs and summary: a report that cannot be drawn is a warning, not a failed
   * run.
   */
  public static void writeReport(Path output, TidemarkOptions options) {
    try {
      ReportSettings settings =
          new ReportSettings(
              java.time.Duration.ofMillis(
                  Durations.parse("allowedLateness", options.getAllowedLateness()).getMillis()),
              options.getDecisionThreshold(),
              options.getAccumulationMode().name());
      settings.writeTo(output);
      RunReport.write(output, settings);
    } catch (RuntimeException e) {
      System.err.println(
          "tidemark: warning: could not write "
              + output.resolve(RunReport.FILE_NAME)
              + ": "
              + e.getMessage());
    }
  }

  /** {@code tidemark schemas}: the BigQuery table schemas of a spec, for Terraform. */
  @Command(
      name = "schemas",
      description = {
        "Write the BigQuery schema of each table a run of the spec writes, as"
            + " OUT/<decisions|dead_letters|duplicates|too_late>.json and the model loop's"
            + " OUT/<evaluations|unmatched_labels|label_duplicates|label_dead_letters|drift_alarms>"
            + ".json (BigQuery's JSON schema format, which Terraform's google_bigquery_table"
            + " takes), and OUT/tables.json, the"
            + " table names the spec gives the dataflow profile: the decisions' key and feature"
            + " columns come from the spec. For the Terraform in terraform/,"
            + " --output=terraform/schemas before 'terraform apply'."
      },
      mixinStandardHelpOptions = true)
  static final class Schemas implements Callable<Integer> {
    @Option(
        names = "--spec",
        paramLabel = "PATH",
        description = "The pipeline spec: a YAML file or a bundled spec's name (payments).")
    String specPath = SpecLoader.DEFAULT_BUNDLED;

    @Option(
        names = "--output",
        paramLabel = "DIR",
        required = true,
        description = "The directory to write the schema files to.")
    Path output;

    @Override
    public Integer call() throws IOException {
      PipelineSpec pipelineSpec = RunSpecs.load(specPath);
      Files.createDirectories(output);
      Map<String, String> names =
          SpecDefaults.outputNames(
              pipelineSpec, FlexTemplateLauncher.PROFILE, PipelineSpec.Sink.BIGQUERY);
      for (BigQueryTables.Table<?> table : BigQueryTables.all(pipelineSpec)) {
        Path file = output.resolve(table.role() + ".json");
        Files.writeString(file, table.schemaJson(), StandardCharsets.UTF_8);
        System.out.println(
            file + ": " + table.columns().size() + " columns, primary key " + table.primaryKey());
      }
      Path tables = output.resolve(BigQueryTables.TABLE_NAMES_FILE);
      Files.writeString(tables, BigQueryTables.tableNamesJson(names), StandardCharsets.UTF_8);
      System.out.println(tables + ": tables " + names.values());
      return 0;
    }
  }

  /** {@code tidemark report}: report.html again, from a run's existing file outputs. */
  @Command(
      name = "report",
      description = {
        "Write OUT/report.html from the file outputs of a finished run (summary.json,"
            + " decisions/, too-late/, dead-letters/, duplicates/). 'run' with --sink=files"
            + " writes it already; this draws it again, for example after an upgrade."
      },
      mixinStandardHelpOptions = true)
  static final class Report implements Callable<Integer> {
    @Option(
        names = "--input",
        paramLabel = "OUT",
        defaultValue = "out",
        description = "The run's --output directory (default: ${DEFAULT-VALUE}).")
    Path input;

    @Option(
        names = "--allowedLateness",
        paramLabel = "DURATION",
        description =
            "The allowed lateness to mark (ISO-8601). Default: the run's, as it recorded it in "
                + ReportSettings.FILE_NAME
                + ", else PT1H.")
    String allowedLateness;

    @Override
    public Integer call() {
      ReportSettings settings = ReportSettings.readFrom(input).orElse(ReportSettings.DEFAULTS);
      if (allowedLateness != null) {
        settings = settings.withAllowedLateness(allowedLateness);
      }
      System.out.println("wrote " + RunReport.write(input, settings));
      return DONE;
    }
  }

  /** The {@code --flinkMaster} option of the {@code job} commands. */
  static final class FlinkMasterOption {
    @Option(
        names = "--flinkMaster",
        paramLabel = "HOST:PORT",
        defaultValue = FlinkRestClient.DEFAULT_MASTER,
        description =
            "The Flink cluster's REST address, the JobManager's web port (default:"
                + " ${DEFAULT-VALUE}, the local cluster of './tidemark cluster up').")
    String flinkMaster;

    FlinkRestClient client() {
      return FlinkRestClient.of(flinkMaster);
    }
  }

  /** {@code tidemark job}: the jobs of a Flink cluster, through its REST API. */
  @Command(
      name = "job",
      description = {
        "List, stop (with a savepoint) or cancel the jobs of a Flink cluster, through its REST"
            + " API. 'run --profile=flink-cluster' submits them; 'run --fromSavepoint=PATH'"
            + " resumes a stopped one."
      },
      mixinStandardHelpOptions = true,
      subcommands = {Tidemark.JobList.class, Tidemark.JobStop.class, Tidemark.JobCancel.class})
  static final class Job implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Override
    public Integer call() {
      spec.commandLine().usage(System.err);
      return USAGE_ERROR;
    }
  }

  /** {@code tidemark job list}. */
  @Command(
      name = "list",
      description = "List the cluster's jobs, newest first: id, state, start time, duration, name.",
      mixinStandardHelpOptions = true)
  static final class JobList implements Callable<Integer> {
    @Mixin FlinkMasterOption master;

    @Override
    public Integer call() throws Exception {
      FlinkRestClient cluster = master.client();
      List<FlinkJob> jobs = cluster.jobs();
      if (jobs.isEmpty()) {
        System.out.println("no jobs on the Flink cluster at " + cluster.master());
        return DONE;
      }
      String format = "%-32s  %-12s  %-20s  %10s  %s%n";
      System.out.printf(format, "JOB ID", "STATE", "STARTED (UTC)", "DURATION", "NAME");
      for (FlinkJob job : jobs) {
        System.out.printf(
            format,
            job.id(),
            job.state(),
            job.startTime() == null ? "-" : job.startTime().truncatedTo(ChronoUnit.SECONDS),
            duration(job.duration()),
            job.name());
      }
      return DONE;
    }
  }

  /** A duration as the job list shows it: {@code 2h05m07s}, {@code 4m00s}, {@code 12s}. */
  static String duration(Duration duration) {
    long seconds = duration.toSeconds();
    long hours = seconds / 3600;
    long minutes = seconds / 60 % 60;
    long rest = seconds % 60;
    if (hours > 0) {
      return String.format("%dh%02dm%02ds", hours, minutes, rest);
    }
    return minutes > 0 ? String.format("%dm%02ds", minutes, rest) : rest + "s";
  }

  /** {@code tidemark job stop}. */
  @Command(
      name = "stop",
      description = {
        "Stop a running job with a savepoint (Flink's 'stop', without draining: open windows"
            + " and dedup state go into the savepoint) and print the savepoint's path.",
        "Resume it with 'run --profile=flink-cluster --fromSavepoint=PATH'."
      },
      mixinStandardHelpOptions = true)
  static final class JobStop implements Callable<Integer> {
    @Mixin FlinkMasterOption master;

    @Parameters(index = "0", paramLabel = "JOB_ID", description = "The job ('job list').")
    String jobId;

    @Option(
        names = "--savepoint",
        paramLabel = "DIR",
        description =
            "Directory for the savepoint, one every Flink process reaches (a plain path is made"
                + " absolute; s3://, gs://, hdfs:// URIs as given). Default: the cluster's"
                + " state.savepoints.dir.")
    String savepoint;

    @Option(
        names = "--timeout",
        defaultValue = "PT10M",
        description = "How long to wait for the savepoint (default: ${DEFAULT-VALUE}).")
    Duration timeout;

    @Override
    public Integer call() throws Exception {
      FlinkRestClient.checkJobId(jobId);
      String location =
          master
              .client()
              .stopWithSavepoint(
                  jobId, savepoint == null ? null : ClusterPaths.forCluster(savepoint), timeout);
      System.out.println("Stopped Flink job " + jobId + " with a savepoint:");
      System.out.println(location);
      return DONE;
    }
  }

  /** {@code tidemark job cancel}. */
  @Command(
      name = "cancel",
      description = {
        "Cancel a job without a savepoint and wait until it has ended. A cancelled job cannot"
            + " resume from where it stopped, except from a retained checkpoint; use 'job stop'"
            + " to resume later."
      },
      mixinStandardHelpOptions = true)
  static final class JobCancel implements Callable<Integer> {
    @Mixin FlinkMasterOption master;

    @Parameters(index = "0", paramLabel = "JOB_ID", description = "The job ('job list').")
    String jobId;

    @Option(
        names = "--timeout",
        defaultValue = "PT2M",
        description = "How long to wait for the job to end (default: ${DEFAULT-VALUE}).")
    Duration timeout;

    @Override
    public Integer call() throws Exception {
      FlinkRestClient.checkJobId(jobId);
      String state = master.client().cancel(jobId, timeout);
      System.out.println("Cancelled Flink job " + jobId + ": " + state);
      return DONE;
    }
  }

  /** {@code tidemark capture}: a Kafka topic range as a replay file, for a deterministic replay. */
  @Command(
      name = "capture",
      description = {
        "Read a range of a Kafka topic (read_committed, no consumer group) and write it as a replay"
            + " file, to replay an incident deterministically with"
            + " 'run --source=replay --input=FILE'.",
        "Default range: the whole topic, up to its end when the capture starts. Kafka connection"
            + " and topic: the Beam-style --kafka* options of 'run'; --help lists them."
      })
  static final class Capture implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(names = "--output", description = "The replay file to write (required).")
    Path output;

    @Option(
        names = "--from",
        description = "Start at the first record with a timestamp at or after this (RFC 3339).")
    String from;

    @Option(names = "--to", description = "End before the first record at or after this.")
    String to;

    @Option(
        names = "--fromOffsets",
        description = "Start offsets per partition, e.g. 0:100,1:250 (only these partitions).")
    String fromOffsets;

    @Option(
        names = "--toOffsets",
        description = "End offsets per partition, exclusive, e.g. 0:200,1:300.")
    String toOffsets;

    @Option(names = "--help", description = "Show the Kafka options and exit.")
    boolean help;

    @Unmatched List<String> kafkaArgs = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
      PipelineOptionsFactory.register(KafkaOptions.class);
      if (help) {
        spec.commandLine().usage(System.out);
        System.out.println();
        PipelineOptionsFactory.printHelp(System.out, KafkaOptions.class);
        return 0;
      }
      if (output == null) {
        throw new IllegalArgumentException("capture needs --output=FILE, the replay file to write");
      }
      KafkaOptions options =
          PipelineOptionsFactory.fromArgs(kafkaArgs.toArray(new String[0])).as(KafkaOptions.class);
      if (EmbeddedBroker.BOOTSTRAP_SERVERS.equals(options.getKafkaBootstrapServers())) {
        throw new IllegalArgumentException(
            "capture reads an existing broker: --kafkaBootstrapServers=embedded would start an"
                + " empty one");
      }
      KafkaCapture capture =
          KafkaCapture.of(KafkaClients.from(options), options.getKafkaInputTopic());
      if (from != null) {
        capture = capture.withFromTime(KafkaCapture.parseTime("--from", from));
      }
      if (to != null) {
        capture = capture.withToTime(KafkaCapture.parseTime("--to", to));
      }
      if (fromOffsets != null) {
        capture = capture.withFromOffsets(KafkaCapture.parseOffsets("--fromOffsets", fromOffsets));
      }
      if (toOffsets != null) {
        capture = capture.withToOffsets(KafkaCapture.parseOffsets("--toOffsets", toOffsets));
      }
      System.out.println(capture.writeTo(output));
      return 0;
    }
  }

  /** {@code tidemark train}: the default models, from a generated (or given) labelled stream. */
  @Command(
      name = "train",
      description = {
        "Train the default models with the serving feature transforms and write them, their"
            + " sidecars and the evaluation report.",
        "With --spec, train models for that spec: its features over its windows, sidecars whose"
            + " feature names are the spec's, and a model card.",
        "Without --input it generates the training stream the shipped models were trained on"
            + " (for --spec: the bundled specs' streams).",
        "With --decisions and --labels, train the next model version from what a run decided"
            + " (each window's edition in force, its features as scored) and the labels that came"
            + " later, split by decision time; a run watching --output picks it up."
      },
      mixinStandardHelpOptions = true)
  static final class Train implements Callable<Integer> {
    /** The generator settings of the shipped models' training stream. */
    static final String TRAINING_STREAM =
        "--seed=42 --events=20000 --accounts=500 --eventsPerSecond=2";

    @Option(
        names = "--spec",
        description =
            "A pipeline spec, named as run's --spec names it (a bundled name such as logins, a"
                + " path such as specs/logins.yaml, or a URI): train for its events, features and"
                + " windows.")
    String specFile;

    @Option(names = "--input", description = "A labelled replay file (default: generate one).")
    Path input;

    @Option(
        names = "--output",
        defaultValue = "out/model",
        description = "Directory for the models, sidecars and report (default: ${DEFAULT-VALUE}).")
    Path output;

    @Option(names = "--seed", defaultValue = "42", description = "Training seed.")
    long seed;

    @Option(
        names = "--decisions",
        description = "A run's decisions: a file or a directory of files (.gz read too).")
    Path decisions;

    @Option(names = "--labels", description = "A labels stream (NDJSON, tidemark.label.v1).")
    Path labels;

    @Option(
        names = "--positiveLabels",
        split = ",",
        description = "Label values of the positive class (default: the spec's labels.positive).")
    List<String> positiveLabels;

    @Override
    public Integer call() throws Exception {
      if (decisions != null || labels != null) {
        return trainFromDecisions();
      }
      if (specFile != null) {
        return trainSpec();
      }
      Path replay = input;
      String description;
      if (replay == null) {
        java.nio.file.Files.createDirectories(output);
        replay = output.resolve("tidemark-train-seed42.ndjson");
        new EventGenerator(
                GeneratorConfig.builder()
                    .seed(42)
                    .numEvents(20000)
                    .numAccounts(500)
                    .eventsPerSecond(2)
                    .build())
            .writeTo(replay);
        description =
            "./tidemark generate --output=" + replay.getFileName() + " " + TRAINING_STREAM;
      } else {
        description = replay.toString();
      }
      dev.tidemark.tools.train.TrainingReport report =
          dev.tidemark.tools.train.TrainModel.train(
              replay,
              output,
              dev.tidemark.tools.train.TrainConfig.defaults()
                  .withSeed(seed)
                  .withDataDescription(description));
      System.out.println(report.markdown());
      System.out.println("wrote models, sidecars and report to " + output);
      return 0;
    }

    private int trainFromDecisions() throws Exception {
      if (decisions == null || labels == null || input != null) {
        throw new IllegalArgumentException(
            "training from decisions takes both --decisions and --labels, and no --input");
      }
      PipelineSpec pipelineSpec = loadSpec(specFile == null ? "" : specFile);
      dev.tidemark.tools.train.DecisionTrainModel.Report report =
          dev.tidemark.tools.train.DecisionTrainModel.train(
              pipelineSpec,
              decisions,
              labels,
              new java.util.LinkedHashSet<>(
                  positiveLabels != null ? positiveLabels : pipelineSpec.labels().positive()),
              output,
              dev.tidemark.tools.train.SpecTrainModel.configFor(pipelineSpec)
                  .withSeed(seed)
                  .withDataDescription("decisions " + decisions + ", labels " + labels));
      System.out.println(report.summary());
      return 0;
    }

    private int trainSpec() throws Exception {
      PipelineSpec pipelineSpec = loadSpec(specFile);
      Path replay = input;
      String description;
      if (replay == null) {
        Workload workload = Workload.forSpec(pipelineSpec.name());
        java.nio.file.Files.createDirectories(output);
        replay = output.resolve("tidemark-" + pipelineSpec.name() + "-train-seed42.ndjson");
        GeneratorConfig.Builder stream = GeneratorConfig.trainingStream(workload);
        new EventGenerator(Generate.forSpec(stream, pipelineSpec).build()).writeTo(replay);
        description =
            "./tidemark generate --spec="
                + specFile
                + " --output="
                + replay.getFileName()
                + " "
                + GeneratorConfig.trainingStreamFlags(workload);
      } else {
        description = replay.toString();
      }
      dev.tidemark.tools.train.SpecTrainingReport report =
          dev.tidemark.tools.train.SpecTrainModel.train(
              pipelineSpec,
              specFile,
              replay,
              output,
              dev.tidemark.tools.train.SpecTrainModel.configFor(pipelineSpec)
                  .withSeed(seed)
                  .withDataDescription(description));
      System.out.println(report.markdown());
      System.out.println("wrote models, sidecars and model card to " + output);
      return 0;
    }
  }

  /**
   * The spec {@code --spec} names, read as {@code run} reads it ({@link RunSpecs#load}); a spec
   * that cannot be used is a usage error (exit 2).
   */
  static PipelineSpec loadSpec(String spec) {
    try {
      return RunSpecs.load(spec);
    } catch (SpecException e) {
      throw new IllegalArgumentException(e.getMessage());
    }
  }

  /** {@code tidemark generate}: a synthetic replay file from a seed. */
  @Command(
      name = "generate",
      description = {
        "Write a synthetic replay file: same seed, same file.",
        "Payments by default; --spec=specs/logins.yaml writes login attempts with account-takeover"
            + " episodes, timed for that spec's windows."
      },
      mixinStandardHelpOptions = true)
  static final class Generate implements Callable<Integer> {
    @Option(names = "--output", required = true, description = "The replay file to write.")
    Path output;

    @Option(
        names = "--spec",
        description =
            "A bundled spec (payments or logins, by name or as specs/NAME.yaml): write its events,"
                + " with late and too-late events aimed at its windows and lateness.")
    String specFile;

    @Option(
        names = "--seed",
        defaultValue = "" + GeneratorConfig.DEFAULT_SEED,
        description = "Random seed.")
    long seed;

    @Option(
        names = "--accounts",
        defaultValue = "" + GeneratorConfig.DEFAULT_NUM_ACCOUNTS,
        description = "Number of accounts.")
    int accounts;

    @Option(
        names = "--events",
        defaultValue = "" + GeneratorConfig.DEFAULT_NUM_EVENTS,
        description = "Distinct valid events.")
    int events;

    @Option(
        names = "--eventsPerSecond",
        defaultValue = "" + GeneratorConfig.DEFAULT_EVENTS_PER_SECOND,
        description = "Event-time rate.")
    double eventsPerSecond;

    @Option(
        names = "--start",
        description = "Event time of the first event (2026-01-01T00:00:00Z).")
    Instant start = GeneratorConfig.DEFAULT_START;

    @Option(names = "--meanDelay", description = "Mean arrival delay, out-of-orderness (PT2S).")
    Duration meanDelay = GeneratorConfig.DEFAULT_MEAN_DELAY;

    @Option(
        names = "--maxOutOfOrderness",
        description =
            "Cap of the normal arrival delay (PT30S, or the spec's clocks.maxOutOfOrderness).")
    Duration maxOutOfOrderness;

    @Option(
        names = "--lateFraction",
        defaultValue = "" + GeneratorConfig.DEFAULT_LATE_FRACTION,
        description = "Late, still allowed.")
    double lateFraction;

    @Option(
        names = "--tooLateFraction",
        defaultValue = "" + GeneratorConfig.DEFAULT_TOO_LATE_FRACTION,
        description = "Later than window end + allowed lateness.")
    double tooLateFraction;

    @Option(
        names = "--duplicateRate",
        defaultValue = "" + GeneratorConfig.DEFAULT_DUPLICATE_RATE,
        description = "Re-sent events.")
    double duplicateRate;

    @Option(
        names = "--conflictFraction",
        defaultValue = "" + GeneratorConfig.DEFAULT_CONFLICT_FRACTION,
        description = "Share of duplicates with a changed payload.")
    double conflictFraction;

    @Option(
        names = "--malformedFraction",
        defaultValue = "" + GeneratorConfig.DEFAULT_MALFORMED_FRACTION,
        description = "Bad records.")
    double malformedFraction;

    @Option(
        names = "--cardTestingBurstsPerThousand",
        defaultValue = "" + GeneratorConfig.DEFAULT_CARD_TESTING_BURSTS_PER_THOUSAND,
        description = "Card-testing bursts per 1000 events.")
    double cardTesting;

    @Option(
        names = "--takeoverBurstsPerThousand",
        defaultValue = "" + GeneratorConfig.DEFAULT_TAKEOVER_BURSTS_PER_THOUSAND,
        description = "Account-takeover bursts (logins: episodes) per 1000 events.")
    double takeover;

    @Option(
        names = "--cardTestingStyle",
        defaultValue = "SPREAD",
        description =
            "Payments' card-testing bursts: SPREAD (0.50 to 3.00 at many merchants, what the"
                + " shipped models learnt; default) or ONE_MERCHANT (2.00 to 12.00 at one"
                + " merchant, a pattern they never saw).")
    CardTestingStyle cardTestingStyle;

    @Option(
        names = "--labels",
        description =
            "Also write the events' labels, as their own stream, to this file: one label per"
                + " event, arriving after it (median 2 h, a fifth around 36 h), 2 %% sent twice.")
    Path labels;

    @Option(
        names = "--inlineLabels",
        negatable = true,
        defaultValue = "true",
        fallbackValue = "true",
        description =
            "Also put each event's label in its data (data.label), as './tidemark train --input'"
                + " reads it (default). --no-inlineLabels leaves it out, as a real source does:"
                + " the bundled samples carry their labels only in their --labels stream.")
    boolean inlineLabels;

    @Option(
        names = "--labelsInReplay",
        description =
            "Also put the --labels stream into the replay, each label arriving on the replay's"
                + " clock within an hour after its own time: run it with --labelsInReplay=true.")
    boolean labelsInReplay;

    @Override
    public Integer call() throws Exception {
      if (labelsInReplay && labels == null) {
        throw new IllegalArgumentException(
            "--labelsInReplay puts the --labels stream into the replay: give --labels=FILE too");
      }
      GeneratorConfig.Builder builder =
          GeneratorConfig.builder()
              .seed(seed)
              .numAccounts(accounts)
              .numEvents(events)
              .eventsPerSecond(eventsPerSecond)
              .start(start)
              .meanDelay(meanDelay)
              .lateFraction(lateFraction)
              .tooLateFraction(tooLateFraction)
              .duplicateRate(duplicateRate)
              .conflictFraction(conflictFraction)
              .malformedFraction(malformedFraction)
              .cardTestingBurstsPerThousand(cardTesting)
              .takeoverBurstsPerThousand(takeover)
              .cardTestingStyle(cardTestingStyle)
              .inlineLabels(inlineLabels);
      if (specFile != null) {
        PipelineSpec pipelineSpec = loadSpec(specFile);
        forSpec(builder, pipelineSpec);
      }
      if (maxOutOfOrderness != null) {
        builder.maxOutOfOrderness(maxOutOfOrderness);
      }
      GeneratorConfig config = builder.build();
      EventGenerator generator = new EventGenerator(config);
      generator.writeTo(output);
      System.out.println("wrote " + output + ": " + generator.stats());
      if (labels != null) {
        LabelStream.Stats written =
            LabelStream.write(generator.subjects(), LabelStream.Config.defaults(seed), labels);
        System.out.println("wrote " + labels + ": " + written);
        if (labelsInReplay) {
          ReplayClock.withLabels(output, labels, output, Duration.ofHours(1));
          System.out.println("put the labels into " + output);
        }
      }
      return 0;
    }

    /**
     * {@code builder} with the spec's workload, aimed at the spec: late and too-late events for its
     * window size and allowed lateness, normal delays capped at its out-of-orderness.
     *
     * @throws IllegalArgumentException if the generator has no workload for the spec, or the spec
     *     does not accept the workload's event type
     */
    static GeneratorConfig.Builder forSpec(GeneratorConfig.Builder builder, PipelineSpec spec) {
      Workload workload = Workload.forSpec(spec.name());
      if (!spec.events().types().contains(workload.eventType())) {
        throw new IllegalArgumentException(
            "the spec '"
                + spec.name()
                + "' accepts the types "
                + spec.events().types()
                + " but its generated events are "
                + workload.eventType()
                + "; add it to events.types");
      }
      return builder
          .workload(workload)
          .windowSize(spec.windows().size())
          .allowedLateness(spec.windows().allowedLateness())
          .maxOutOfOrderness(spec.clocks().maxOutOfOrderness());
    }
  }
}
