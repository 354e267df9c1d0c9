package dev.tidemark.pipelines;

import dev.tidemark.model.ModelEngine;
import dev.tidemark.model.ScoreFeatures;
import dev.tidemark.pipelines.flink.ClusterPaths;
import dev.tidemark.pipelines.flink.FlinkRestClient;
import dev.tidemark.pipelines.flink.FlinkRestException;
import dev.tidemark.pipelines.io.BackfillSource;
import dev.tidemark.pipelines.io.NdjsonFiles;
import dev.tidemark.pipelines.io.Outputs;
import dev.tidemark.pipelines.io.ReplayFile;
import dev.tidemark.pipelines.io.bigquery.BigQuerySinks;
import dev.tidemark.pipelines.io.kafka.KafkaChecks;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.io.kafka.KafkaSinks;
import dev.tidemark.pipelines.io.kafka.KafkaSource;
import dev.tidemark.pipelines.io.pubsub.PubsubSource;
import dev.tidemark.pipelines.report.ReportSettings;
import dev.tidemark.pipelines.report.RunReport;
import dev.tidemark.transforms.AnnotateCorrections;
import dev.tidemark.transforms.AssembleDecisions;
import dev.tidemark.transforms.BoundDeadLetters;
import dev.tidemark.transforms.ComputeFeatures;
import dev.tidemark.transforms.DeduplicateEvents;
import dev.tidemark.transforms.MeasureDecisions;
import dev.tidemark.transforms.ParseCloudEvents;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.DuplicateRecord;
import dev.tidemark.transforms.values.PaymentEvent;
import dev.tidemark.transforms.values.RawRecord;
import dev.tidemark.transforms.values.TooLateRecord;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.beam.runners.dataflow.DataflowPipelineJob;
import org.apache.beam.runners.dataflow.util.DataflowTemplateJob;
import org.apache.beam.runners.direct.DirectOptions;
import org.apache.beam.runners.flink.FlinkDetachedRunnerResult;
import org.apache.beam.runners.flink.FlinkPipelineOptions;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.options.StreamingOptions;
import org.apache.beam.sdk.transforms.Flatten;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.WithFailures;
import org.apache.beam.sdk.transforms.windowing.DefaultTrigger;
import org.apache.beam.sdk.transforms.windowing.GlobalWindows;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionList;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.apache.beam.sdk.values.WindowingStrategy.AccumulationMode;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;

/**
 * The Tidemark pipeline: raw records in; decisions, dead letters, duplicates and too-late records
 * out. {@link #expand} builds the graph from any source of {@link RawRecord}s (tests hand it a
 * {@code TestStream}); {@link #run} wires the configured source and sinks, runs, and returns the
 * checked {@link Summary}.
 */
public final class TidemarkPipeline {
  private TidemarkPipeline() {}

  /**
   * Builds parse, dedup, features and decisions on {@code raw}, configured from {@code options}.
   */
  public static Outputs expand(PCollection<RawRecord> raw, TidemarkOptions options) {
    WithFailures.Result<PCollection<PaymentEvent>, DeadLetter> parsed =
        raw.apply("ParseCloudEvents", parser(options));
    DeduplicateEvents.Result deduped =
        parsed.output().apply("DeduplicateEvents", deduplicator(options));
    ComputeFeatures.Result features =
        deduped.events().apply("ComputeFeatures", windowedFeatures(options));
    WithFailures.Result<PCollection<Decision>, DeadLetter> scored =
        features
            .features()
            .apply("AssembleDecisions", AssembleDecisions.create())
            .apply("ScoreFeatures", scorer(options));
    // With accumulating panes each edition says what it changes; a discarding pane is a delta,
    // whose verdict revises nothing (see AnnotateCorrections).
    PCollection<Decision> annotated =
        options.getAccumulationMode() == TidemarkOptions.AccumulationKind.DISCARDING
            ? scored.output()
            : scored.output().apply("AnnotateCorrections", AnnotateCorrections.create());
    PCollection<Decision> decisions =
        annotated.apply("MeasureDecisions", MeasureDecisions.create());
    // Every failure collection is flattened once into the one dead-letter output, and bounded
    // there, so that no dead letter from any step can outgrow what its sink can carry.
    PCollection<DeadLetter> deadLetters =
        PCollectionList.of(
                List.of(
                    parsed.failures(),
                    scored
                        .failures()
                        .apply(
                            "UnwindowScoringFailures",
                            Window.<DeadLetter>into(new GlobalWindows())
                                .triggering(DefaultTrigger.of())
                                .withAllowedLateness(Duration.ZERO)
                                .discardingFiredPanes())))
            .apply("CollectDeadLetters", Flatten.pCollections())
            .setCoder(DeadLetter.DeadLetterCoder.of())
            .apply("BoundDeadLetters", deadLetterBound(options));
    return new Outputs(decisions, deadLetters, deduped.duplicates(), features.tooLate());
  }

  static ParseCloudEvents parser(TidemarkOptions options) {
    Set<String> types =
        Arrays.stream(options.getEventTypes().split(","))
            .map(String::trim)
            .filter(t -> !t.isEmpty())
            .collect(Collectors.toCollection(LinkedHashSet::new));
    return ParseCloudEvents.create()
        .withAllowedTypes(types)
        .withCurrency(options.getCurrency())
        .withMaxEventBytes(options.getMaxEventBytes())
        .withMaxFutureSkew(Durations.parse("maxFutureSkew", options.getMaxFutureSkew()));
  }

  static BoundDeadLetters deadLetterBound(TidemarkOptions options) {
    Integer maxBytes = options.getMaxDeadLetterPayloadBytes();
    if (maxBytes == null) {
      throw new IllegalArgumentException(
          "--maxDeadLetterPayloadBytes needs a number of bytes, such as 16384");
    }
    return BoundDeadLetters.create().withMaxPayloadBytes(maxBytes);
  }

  static ScoreFeatures scorer(TidemarkOptions options) {
    ScoreFeatures scorer =
        "default".equals(options.getModelUri())
            ? ScoreFeatures.defaultModel()
            : ScoreFeatures.of(options.getModelUri());
    if (options.getModelEngine() != null && !options.getModelEngine().isEmpty()) {
      scorer = scorer.withEngine(ModelEngine.fromName(options.getModelEngine()));
    }
    if (options.getSource() == TidemarkOptions.SourceKind.replay
        || options.getSource() == TidemarkOptions.SourceKind.backfill) {
      // A finite input: a watch would tick for ever and keep the run from ending.
      scorer = scorer.withoutModelWatch();
    }
    String shadow = options.getShadowModelUri();
    if (shadow != null && !shadow.isBlank()) {
      scorer = scorer.withShadowModel(shadow.trim());
    }
    Duration watchInterval = Durations.parse("modelWatchInterval", options.getModelWatchInterval());
    if (watchInterval.getMillis() <= 0) {
      throw new IllegalArgumentException(
          "--modelWatchInterval="
              + options.getModelWatchInterval()
              + " must be a positive duration, such as PT1M");
    }
    return scorer
        .withModelWatchInterval(watchInterval)
        .withThreshold(options.getDecisionThreshold())
        .withBatchSize(options.getScoringBatchSize());
  }

  static DeduplicateEvents deduplicator(TidemarkOptions options) {
    return DeduplicateEvents.create()
        .withHorizon(Durations.parse("dedupHorizon", options.getDedupHorizon()));
  }

  static ComputeFeatures windowedFeatures(TidemarkOptions options) {
    ComputeFeatures features =
        ComputeFeatures.of(
                Durations.parse("windowSize", options.getWindowSize()),
                Durations.parse("windowPeriod", options.getWindowPeriod()))
            .withLateFiringDelay(Durations.parse("lateFiringDelay", options.getLateFiringDelay()))
            .withAllowedLateness(Durations.parse("allowedLateness", options.getAllowedLateness()))
            .withGateShards(gateShardsOf(options))
            .withAccumulationMode(
                options.getAccumulationMode() == TidemarkOptions.AccumulationKind.DISCARDING
                    ? AccumulationMode.DISCARDING_FIRED_PANES
                    : AccumulationMode.ACCUMULATING_FIRED_PANES);
    String early = options.getEarlyFiringDelay();
    return "none".equalsIgnoreCase(early.trim())
        ? features.withoutEarlyFirings()
        : features.withEarlyFiringDelay(Durations.parse("earlyFiringDelay", early));
  }

  /** {@code --gateShards}, or the job's parallelism on its runner (see {@link WindowOptions}). */
  static int gateShardsOf(TidemarkOptions options) {
    Integer shards = options.getGateShards();
    if (shards != null) {
      if (shards < 1) {
        throw new IllegalArgumentException(
            "--gateShards=" + shards + " must be at least 1 (default: the job's parallelism)");
      }
      return shards;
    }
    return Math.max(1, Runners.parallelism(options));
  }

  /** Reads the configured source into {@code pipeline}. */
  static PCollection<RawRecord> readSource(Pipeline pipeline, TidemarkOptions options) {
    return readSource(pipeline, options, "ReadKafka");
  }

  /** As {@link #readSource(Pipeline, TidemarkOptions)}, naming a Kafka read {@code kafkaName}. */
  static PCollection<RawRecord> readSource(
      Pipeline pipeline, TidemarkOptions options, String kafkaName) {
    switch (options.getSource()) {
      case replay:
        if (options.getInput() == null) {
          throw new IllegalArgumentException(
              "--source=replay needs --input=FILE, a replay file (see README: Replay files)");
        }
        if (!Runners.isDirect(options)) {
          throw new IllegalArgumentException(
              "--source=replay is deterministic only on the DirectRunner (it runs as a Beam"
                  + " TestStream); use --runner=DirectRunner, or --source=backfill on other"
                  + " runners");
        }
        Path file = Paths.get(options.getInput());
        if (!Files.isReadable(file)) {
          throw new IllegalArgumentException(
              "--input=" + options.getInput() + ": no readable replay file there");
        }
        try {
          return pipeline.apply("ReadReplay", readReplay(file, options).stream());
        } catch (IOException e) {
          throw new UncheckedIOException("cannot read replay file " + file, e);
        }
      case backfill:
        return pipeline.apply(
            "ReadBackfill",
            BackfillSource.from(options.getInput()).withMaxEventBytes(options.getMaxEventBytes()));
      case kafka:
        return pipeline.apply(kafkaName, kafkaSource(options));
      case pubsub:
        return pipeline.apply("ReadPubsub", pubsubSource(options));
      default:
        throw new IllegalArgumentException("unknown --source=" + options.getSource());
    }
  }

  /** The Kafka source the options describe. */
  public static KafkaSource kafkaSource(TidemarkOptions options) {
    KafkaSource source =
        KafkaSource.of(
                KafkaClients.from(options),
                options.getKafkaInputTopic(),
                options.getKafkaConsumerGroup())
            .withStartOffset(options.getKafkaStartOffset())
            .withWatermark(
                Durations.parse("maxOutOfOrderness", options.getMaxOutOfOrderness()),
                Durations.parse("kafkaIdleTimeout", options.getKafkaIdleTimeout()))
            .withMaxFutureSkew(maxFutureSkewOf(options));
    Long maxRecords = options.getKafkaMaxRecords();
    return maxRecords == null ? source : source.withMaxRecords(maxRecords);
  }

  /** The Pub/Sub source the options describe. */
  public static PubsubSource pubsubSource(TidemarkOptions options) {
    String subscription = options.getPubsubSubscription();
    String topic = options.getPubsubTopic();
    if ((subscription == null) == (topic == null)) {
      throw new IllegalArgumentException(
          "--source=pubsub needs exactly one of --pubsubSubscription=projects/P/subscriptions/S"
              + " and --pubsubTopic=projects/P/topics/T");
    }
    PubsubSource source =
        subscription != null
            ? PubsubSource.fromSubscription(subscription)
            : PubsubSource.fromTopic(topic);
    return source
        .withTimestampAttribute(options.getPubsubTimestampAttribute())
        .withIdAttribute(options.getPubsubIdAttribute())
        .withMaxFutureSkew(maxFutureSkewOf(options));
  }

  /**
   * Reads a replay file as {@code --source=replay} does: with the options' {@code
   * --maxOutOfOrderness} and {@code --maxFutureSkew}.
   */
  public static ReplayFile readReplay(Path file, TidemarkOptions options) throws IOException {
    return ReplayFile.read(
        file,
        Durations.parse("maxOutOfOrderness", options.getMaxOutOfOrderness()),
        maxFutureSkewOf(options));
  }

  /** {@code --fileRollInterval} as a duration; it must be positive. */
  static Duration fileRollIntervalOf(TidemarkOptions options) {
    Duration interval = Durations.parse("fileRollInterval", options.getFileRollInterval());
    if (!interval.isLongerThan(Duration.ZERO)) {
      throw new IllegalArgumentException(
          "--fileRollInterval="
              + options.getFileRollInterval()
              + " must be positive: it is how often a streaming run with --sink=files starts a"
              + " new set of files, e.g. PT1M");
    }
    return interval;
  }

  /** {@code --maxFutureSkew} as a duration the sources take by value; it must not be negative. */
  static Duration maxFutureSkewOf(TidemarkOptions options) {
    Duration skew = Durations.parse("maxFutureSkew", options.getMaxFutureSkew());
    if (skew.isShorterThan(Duration.ZERO)) {
      throw new IllegalArgumentException(
          "--maxFutureSkew="
              + options.getMaxFutureSkew()
              + " must not be negative; use e.g. PT10M");
    }
    return skew;
  }

  /** Writes the outputs where {@code --sink} says. */
  static void writeOutputs(Outputs outputs, TidemarkOptions options) {
    switch (options.getSink()) {
      case files:
        writeFiles(
            outputs,
            options.getOutput(),
            rollsFiles(options, outputs) ? fileRollIntervalOf(options) : null);
        return;
      case kafka:
        KafkaClients clients = KafkaClients.from(options);
        KafkaChecks.checkSinkGroups(options, clients);
        KafkaSinks.write(outputs, options, clients);
        return;
      case bigquery:
        BigQuerySinks.write(outputs, options, null);
        return;
      default:
        throw new IllegalArgumentException("unknown --sink=" + options.getSink());
    }
  }

  /**
   * Whether the file sink rolls its files: a live Kafka or Pub/Sub read never ends, and files
   * written when the input ends would never appear. A Kafka read with {@code --kafkaMaxRecords} is
   * bounded and, like a replay or a backfill, writes one set of files at its end.
   */
  static boolean rollsFiles(TidemarkOptions options, Outputs outputs) {
    TidemarkOptions.SourceKind source = options.getSource();
    return (source == TidemarkOptions.SourceKind.kafka
            || source == TidemarkOptions.SourceKind.pubsub)
        && outputs.decisions.isBounded() == PCollection.IsBounded.UNBOUNDED;
  }

  /** Writes the four outputs as NDJSON under {@code --output}, once, when the input ends. */
  static void writeFiles(Outputs outputs, String outputDirectory) {
    writeFiles(outputs, outputDirectory, null);
  }

  /**
   * Writes the four outputs as NDJSON under {@code --output}: once when the input ends, or, with a
   * {@code rollInterval}, a new set of files per output every interval ({@link NdjsonFiles}).
   */
  static void writeFiles(Outputs outputs, String outputDirectory, @Nullable Duration rollInterval) {
    Map<String, PCollection<String>> lines = new LinkedHashMap<>();
    lines.put(
        Outputs.NAMES.get(0),
        outputs.decisions.apply(
            "DecisionsToJson", MapElements.into(TypeDescriptors.strings()).via(Decision::toJson)));
    lines.put(
        Outputs.NAMES.get(1),
        outputs.deadLetters.apply(
            "DeadLettersToJson",
            MapElements.into(TypeDescriptors.strings()).via(DeadLetter::toJson)));
    lines.put(
        Outputs.NAMES.get(2),
        outputs.duplicates.apply(
            "DuplicatesToJson",
            MapElements.into(TypeDescriptors.strings()).via(DuplicateRecord::toJson)));
    lines.put(
        Outputs.NAMES.get(3),
        outputs.tooLate.apply(
            "TooLateToJson",
            MapElements.into(TypeDescriptors.strings()).via(TooLateRecord::toJson)));
    outputs
        .decisions
        .getPipeline()
        .apply(
            "WriteFiles",
            rollInterval == null
                ? NdjsonFiles.write(lines, outputDirectory)
                : NdjsonFiles.write(lines, outputDirectory).withRollInterval(rollInterval));
  }

  /**
   * Whether a run only submits the job: on Dataflow the launcher (a Flex Template launch, the CLI)
   * must return once the job is created, and a template run ({@code --templateLocation}) only
   * writes the job specification; on a Flink cluster in other processes ({@link
   * #submitsToFlinkCluster}) a streaming job runs until it is stopped. Such runs have no summary.
   */
  public static boolean submitsOnly(TidemarkOptions options) {
    return Runners.isDataflow(options) || submitsToFlinkCluster(options);
  }

  /**
   * Whether the options submit a streaming job to a Flink cluster in other processes: the
   * FlinkRunner, a {@code --flinkMaster} other than {@code [local]}, {@code [auto]} and {@code
   * [collection]}, and {@code --streaming=true}. A batch job on a cluster (a backfill) ends by
   * itself, so {@code run} still waits for it and checks its summary.
   */
  public static boolean submitsToFlinkCluster(TidemarkOptions options) {
    return Runners.isFlink(options)
        && options.as(StreamingOptions.class).isStreaming()
        && FlinkRestClient.isRemote(options.as(FlinkPipelineOptions.class).getFlinkMaster());
  }

  /** A streaming job submitted to a Flink cluster: its id, name and web UI page. */
  public record FlinkSubmission(String jobId, String jobName, String master, String webUi) {}

  /**
   * Builds the pipeline and submits it to the Flink cluster at {@code --flinkMaster} through the
   * FlinkRunner's public remote path, detached ({@code --attachedMode=false}): Beam uploads {@code
   * --filesToStage} (the Flink job jar) with the job graph and returns once the cluster accepted
   * it. Beam's detached result does not expose the job id, so it is read from the cluster's REST
   * API: the new job named {@code --jobName}. {@code --savepointPath} (the command line's {@code
   * --fromSavepoint}) resumes from a savepoint; Beam passes it with the submission.
   */
  public static FlinkSubmission submitToFlinkCluster(TidemarkOptions options)
      throws FlinkRestException {
    checkOptions(options);
    FlinkPipelineOptions flink = options.as(FlinkPipelineOptions.class);
    if (EmbeddedRun.requested(options)) {
      throw new IllegalArgumentException(
          "--kafkaBootstrapServers=embedded starts a broker inside this launcher, which the"
              + " cluster at --flinkMaster="
              + flink.getFlinkMaster()
              + " cannot reach: pass --kafkaBootstrapServers=host:port (the local cluster's"
              + " broker is 127.0.0.1:9092)");
    }
    checkFilesToStage(options);
    flink.setAttachedMode(false);
    FlinkRestClient cluster = FlinkRestClient.of(flink.getFlinkMaster());
    // Also proves the master answers before the job is translated and its jar uploaded.
    Set<String> before = cluster.jobIds();
    Pipeline pipeline = Pipeline.create(options);
    writeOutputs(expand(readSource(pipeline, options, kafkaReadName(options)), options), options);
    PipelineResult result = pipeline.run();
    if (!(result instanceof FlinkDetachedRunnerResult)) {
      throw new IllegalStateException(
          "the FlinkRunner ran the job attached ("
              + result.getClass().getSimpleName()
              + ") although --attachedMode=false was set");
    }
    String jobId =
        cluster.awaitSubmittedJob(options.getJobName(), before, java.time.Duration.ofMinutes(1));
    return new FlinkSubmission(jobId, options.getJobName(), cluster.master(), cluster.webUi(jobId));
  }

  /**
   * The name of a cluster job's Kafka read, which is its Flink operator's uid: {@code ReadKafka (N
   * partitions)}. Beam's Kafka source keeps the partitions it found when its job first started, and
   * a job restored from a savepoint keeps them too. So the read is named by the partition count:
   * after the topic gained partitions, a resumed job has a new read, which starts from the consumer
   * group's committed offsets (the savepoint's positions, as the stop committed them) and from the
   * start of the new partitions; the old read's state is the one part of the savepoint not restored
   * ({@code --allowNonRestoredState}, set only then). Every other operator restores as before.
   */
  static String kafkaReadName(TidemarkOptions options) {
    if (options.getSource() != TidemarkOptions.SourceKind.kafka) {
      return "ReadKafka";
    }
    KafkaChecks.SourcePartitions partitions =
        KafkaChecks.sourcePartitions(options, KafkaClients.from(options));
    FlinkPipelineOptions flink = options.as(FlinkPipelineOptions.class);
    if (flink.getSavepointPath() != null && partitions.added()) {
      flink.setAllowNonRestoredState(true);
      System.err.printf(
          "tidemark: --kafkaInputTopic=%s has %d partitions; the job of this savepoint read %d."
              + " The resumed job reads all %d: from the offsets consumer group %s committed at"
              + " the savepoint, and the new partitions from their start (--kafkaStartOffset=%s)."
              + " Its old Kafka read's state is not restored (allowNonRestoredState).%n",
          options.getKafkaInputTopic(),
          partitions.partitions(),
          partitions.committed(),
          partitions.partitions(),
          options.getKafkaConsumerGroup(),
          options.getKafkaStartOffset());
    }
    return "ReadKafka (" + partitions.partitions() + " partitions)";
  }

  /**
   * Refuses a submission whose {@code --filesToStage} names a missing file: the default profile
   * stages the Flink job jar, which {@code mvn package} builds.
   */
  static void checkFilesToStage(TidemarkOptions options) {
    List<String> files = options.as(FlinkPipelineOptions.class).getFilesToStage();
    if (files == null) {
      return;
    }
    for (String file : files) {
      if (!Files.exists(Paths.get(file))) {
        throw new IllegalArgumentException(
            "--filesToStage="
                + file
                + ": no such file. The Flink job jar is built by 'mvn -B package -DskipTests -pl"
                + " pipelines -am' (or './tidemark' on its first run) as"
                + " pipelines/target/tidemark-flink-job.jar");
      }
    }
  }

  /**
   * Builds the pipeline and submits it without waiting; returns the Dataflow job id, or null when
   * {@code --templateLocation} made it write the job specification instead.
   */
  public static @Nullable String submit(TidemarkOptions options) {
    checkOptions(options);
    Pipeline pipeline = Pipeline.create(options);
    writeOutputs(expand(readSource(pipeline, options), options), options);
    PipelineResult result = pipeline.run();
    if (result instanceof DataflowTemplateJob || !(result instanceof DataflowPipelineJob)) {
      return null;
    }
    return ((DataflowPipelineJob) result).getJobId();
  }

  /**
   * Refuses unsafe option combinations that need no broker to detect: {@link
   * KafkaChecks#checkOptions}, and on Flink {@code --fasterCopy=true} in a checkpointed streaming
   * job. With it Beam's state serializer hands Flink the live state object as its "copy", so
   * Flink's heap backend snapshots asynchronously what the task keeps mutating: the features
   * combine updates its accumulator in place, and the benchmark saw checkpoints fail with a {@code
   * ConcurrentModificationException} and the job restart and replay (a snapshot that does not fail
   * may hold an accumulator with elements from after its barrier, counted twice on restore). In
   * batch and without checkpoints it is safe.
   *
   * <p>Also refuses a negative {@code --maxFutureSkew}, and with {@code --sink=files} a {@code
   * --fileRollInterval} that is not positive.
   *
   * <p>Also refuses {@code --sink=bigquery} with {@code --accumulationMode=DISCARDING}: the CDC
   * upsert keeps one row per window, the one with the highest pane index, and a discarding pane
   * holds only what arrived since the pane before it, so the table would keep the last pane's delta
   * as the window's features.
   *
   * <p>With a Flink master in other processes, also refuses state the cluster could not use: see
   * {@link #checkFlinkClusterState}.
   */
  public static void checkOptions(TidemarkOptions options) {
    KafkaChecks.checkOptions(options);
    maxFutureSkewOf(options);
    if (options.getSink() == TidemarkOptions.SinkKind.files) {
      fileRollIntervalOf(options);
    }
    if (options.getSink() == TidemarkOptions.SinkKind.bigquery
        && options.getAccumulationMode() == TidemarkOptions.AccumulationKind.DISCARDING) {
      throw new IllegalArgumentException(
          "--sink=bigquery needs --accumulationMode=ACCUMULATING: the BigQuery tables keep one row"
              + " per window, its highest pane (a CDC upsert on decision_id ordered by the pane"
              + " index), and with DISCARDING that pane holds only the events since the pane"
              + " before it, not the window's. Use ACCUMULATING, or --sink=files or --sink=kafka"
              + " to receive every discarding pane");
    }
    if (!Runners.isFlink(options)) {
      return;
    }
    checkFlinkClusterState(options);
    FlinkPipelineOptions flink = options.as(FlinkPipelineOptions.class);
    if (flink.isStreaming()
        && KafkaChecks.checkpointing(flink)
        && Boolean.TRUE.equals(flink.getFasterCopy())) {
      throw new IllegalArgumentException(
          "--fasterCopy=true with checkpointing (--checkpointingInterval="
              + flink.getCheckpointingInterval()
              + ") is unsafe: Flink's heap state backend then snapshots, asynchronously, the same"
              + " accumulator objects the job keeps updating (checkpoints fail with a"
              + " ConcurrentModificationException, or capture elements from after the barrier)."
              + " Use --fasterCopy=false, or --fasterCopy=true only in batch (--streaming=false)");
    }
  }

  /** The class Beam's {@code --stateBackend=rocksdb} creates in the launcher. */
  static final String BEAM_ROCKSDB_BACKEND =
      "org.apache.flink.contrib.streaming.state.RocksDBStateBackend";

  /**
   * With a Flink master in other processes ({@link FlinkRestClient#isRemote}): refuses a
   * launcher-local {@code --stateBackendStoragePath} ({@link ClusterPaths#isLauncherLocal}: {@code
   * file:} or no scheme), where each process would write its part of a checkpoint to its own disk
   * and a restore elsewhere would not find it; and {@code --stateBackend=rocksdb} when the launcher
   * lacks Flink's RocksDB classes (Beam creates the backend here, and the Tidemark jars do not
   * carry it). On a cluster, state belongs in the cluster's configuration: {@code
   * state.backend.type: rocksdb}, {@code state.backend.incremental: true}, {@code
   * state.checkpoints.dir}.
   *
   * <p>No method of this class has a Flink type in its signature: deserializing a lambda of this
   * class reflects on all its methods, and the Dataflow jar has no Flink classes.
   */
  static void checkFlinkClusterState(TidemarkOptions options) {
    FlinkPipelineOptions flink = options.as(FlinkPipelineOptions.class);
    String master = flink.getFlinkMaster();
    if (!FlinkRestClient.isRemote(master)) {
      return;
    }
    String storage = flink.getStateBackendStoragePath();
    if (storage != null && !storage.isBlank() && ClusterPaths.isLauncherLocal(storage)) {
      throw new IllegalArgumentException(
          "--stateBackendStoragePath="
              + storage
              + " is a path on this machine (file: or no scheme), but --flinkMaster="
              + master
              + " runs the job in other processes: each TaskManager would write its part of a"
              + " checkpoint to its own disk and a restore would not find it. Use a path every"
              + " Flink process reaches: leave --stateBackend and --stateBackendStoragePath unset"
              + " and set state.checkpoints.dir in the cluster's configuration (the local cluster"
              + " of './tidemark cluster up' does; --profile=flink-cluster leaves them unset), or"
              + " pass an s3://, gs:// or hdfs:// URI");
    }
    String backend = flink.getStateBackend();
    if (backend != null && backend.trim().equalsIgnoreCase("rocksdb") && !onClassPath()) {
      throw new IllegalArgumentException(
          "--stateBackend=rocksdb makes Beam create Flink's RocksDB backend in this launcher, and"
              + " its classes are not in the Tidemark jars (NoClassDefFoundError:"
              + " RocksDBStateBackend). Leave --stateBackend unset and configure the cluster:"
              + " state.backend.type: rocksdb, state.backend.incremental: true,"
              + " state.checkpoints.dir: a directory every Flink process reaches");
    }
  }

  private static boolean onClassPath() {
    try {
      Class.forName(BEAM_ROCKSDB_BACKEND, false, TidemarkPipeline.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /**
   * Checks the options, builds the graph (source, transforms, sinks), runs it to its end, and
   * writes the checked {@link Summary} as {@code summary.json} under {@code --output}.
   */
  public static Summary run(TidemarkOptions options) {
    return run(options, null);
  }

  /**
   * As {@link #run(TidemarkOptions)}, reading {@code source} instead of the configured source when
   * it is not null: the parts of a replay that {@code dev.tidemark.harness.check.Reference} runs
   * one by one are TestStreams cut from one file.
   */
  public static Summary run(
      TidemarkOptions options, @Nullable PTransform<PBegin, PCollection<RawRecord>> source) {
    checkOptions(options);
    Path output = Paths.get(options.getOutput());
    if (Runners.isDirect(options)) {
      // The DirectRunner otherwise blocks in run(), and no progress could be shown.
      options.as(DirectOptions.class).setBlockOnRun(false);
    }
    Pipeline pipeline = build(options, source);
    long started = System.nanoTime();
    PipelineResult result = pipeline.run();
    Progress.await(result, System.err);
    Duration wallTime = Duration.millis((System.nanoTime() - started) / 1_000_000);
    Summary summary = Summary.from(result, wallTime);
    if (options.getSink() == TidemarkOptions.SinkKind.files) {
      touchEmptyOutputs(output);
    }
    summary.writeTo(output.resolve("summary.json"));
    if (options.getSink() == TidemarkOptions.SinkKind.files) {
      writeReport(output, options);
    }
    return summary;
  }

  /**
   * Records the options the report needs beside summary.json and writes report.html. The run's
   * outcome is its outputs and summary: a report that cannot be drawn is a warning, not a failed
   * run.
   */
  static void writeReport(Path output, TidemarkOptions options) {
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

  /**
   * Builds the whole pipeline (source, transforms, sinks) after clearing the previous run's file
   * outputs; the caller runs it.
   */
  public static Pipeline build(TidemarkOptions options) {
    return build(options, null);
  }

  private static Pipeline build(
      TidemarkOptions options, @Nullable PTransform<PBegin, PCollection<RawRecord>> source) {
    for (String warning : startupWarnings(options)) {
      System.err.println("tidemark: warning: " + warning);
    }
    clearOutputs(Paths.get(options.getOutput()));
    Pipeline pipeline = Pipeline.create(options);
    PCollection<RawRecord> raw =
        source == null ? readSource(pipeline, options) : pipeline.apply("ReadReplay", source);
    writeOutputs(expand(raw, options), options);
    return pipeline;
  }

  /**
   * What the configuration cannot guarantee, said once when the job is built. The DirectRunner
   * reading Kafka commits the consumer group's offsets as it finalizes checkpoints, while its dedup
   * and window state live only in this process: the committed offsets run ahead of anything a
   * restart could recover.
   */
  public static List<String> startupWarnings(TidemarkOptions options) {
    if (Runners.isDirect(options) && options.getSource() == TidemarkOptions.SourceKind.kafka) {
      return List.of(directKafkaWarning(options.getKafkaConsumerGroup()));
    }
    return List.of();
  }

  /** The warning of the DirectRunner reading Kafka; see {@link #startupWarnings}. */
  static String directKafkaWarning(String consumerGroup) {
    return "the DirectRunner keeps dedup and window state in this process's memory only, while"
        + " the Kafka source commits consumer group '"
        + consumerGroup
        + "' offsets as it reads. If the process stops before its input ends (a crash, a kill,"
        + " Ctrl-C), a restart resumes after the committed offsets with empty state: the events"
        + " of windows that had not fired, and results not yet written to the sink, are lost"
        + " (never re-read, in no output), and copies of events read before the restart are not"
        + " recognised as duplicates. For restarts without loss use the flink profile, which"
        + " restores offsets and state together from a checkpoint.";
  }

  /** An output with no records still gets its (empty) file, so readers find every output. */
  static void touchEmptyOutputs(Path output) {
    for (String name : Outputs.NAMES) {
      Path dir = output.resolve(name);
      try {
        Files.createDirectories(dir);
        try (var files = Files.list(dir)) {
          if (files.noneMatch(f -> f.getFileName().toString().endsWith(".ndjson"))) {
            Files.createFile(dir.resolve(name + "-00000-of-00001.ndjson"));
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("cannot create output " + dir, e);
      }
    }
  }

  /**
   * Removes the previous run's output directories so no stale shard survives, and its report, which
   * a run with another sink would otherwise leave beside the new summary.
   */
  static void clearOutputs(Path output) {
    for (String name : List.of(RunReport.FILE_NAME, ReportSettings.FILE_NAME)) {
      try {
        Files.deleteIfExists(output.resolve(name));
      } catch (IOException e) {
        throw new UncheckedIOException("cannot delete old " + output.resolve(name), e);
      }
    }
    for (String name : Outputs.NAMES) {
      Path dir = output.resolve(name);
      if (Files.isDirectory(dir)) {
        try (var paths = Files.walk(dir)) {
          paths.sorted(java.util.Comparator.reverseOrder()).forEach(TidemarkPipeline::delete);
        } catch (IOException e) {
          throw new UncheckedIOException("cannot clear old output " + dir, e);
        }
      }
    }
  }

  private static void delete(Path path) {
    try {
      Files.delete(path);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete old output " + path, e);
    }
  }
}
