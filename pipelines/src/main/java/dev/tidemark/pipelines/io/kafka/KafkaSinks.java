package dev.tidemark.pipelines.io.kafka;

import dev.tidemark.pipelines.EvaluateDecisions;
import dev.tidemark.pipelines.KafkaOptions;
import dev.tidemark.pipelines.Outputs;
import dev.tidemark.pipelines.Runners;
import dev.tidemark.pipelines.SpecDefaults;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.io.Sources;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.transforms.values.DriftAlarm;
import dev.tidemark.transforms.values.DuplicateRecord;
import dev.tidemark.transforms.values.EvaluationSummary;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.io.kafka.KafkaIO;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ProcessFunction;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PDone;
import org.apache.beam.sdk.values.TypeDescriptor;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Writes the four outputs to their Kafka topics.
 *
 * <p>Decisions: key = {@code decisionId}, value = the decision JSON (the same schema as the files)
 * or, with {@code --outputFormat=cloudevents-*}, a CloudEvent carrying it ({@link
 * DecisionRecords}), headers {@code version} and {@code paneTiming}. Each window's panes share the
 * key and carry increasing versions, so a consumer that keeps the highest version per key (or a
 * compacted topic) holds exactly the final state of every window, however many times a pane was
 * delivered. Dead letters are keyed by their origin and never exceed the producer's request size
 * ({@link DeadLetterRecords}), duplicates and too-late records by {@code id@source}; these three
 * are JSON in every {@code --outputFormat}.
 *
 * <p>The model loop's outputs ({@link #labelTopics}, named by the spec) are JSON too, as in their
 * files: evaluations keyed by {@code role/name:version/windowStart/windowEnd} with headers {@code
 * version} (the pane index) and {@code paneTiming}, so a compacted topic keeps each window's last
 * pane; unmatched labels and the labels' duplicates by the label's {@code id@source}; the labels'
 * dead letters as the events' are; drift alarms by their test, {@code role/name:version/kind}, so
 * one test's alarms keep their order in one partition (each alarm is a record of its own: the topic
 * is not for compaction).
 *
 * <p>{@link KafkaOptions.KafkaSinkMode#transactional}: {@link TransactionalKafkaWrite} per topic,
 * with its own sink group id ({@code <kafkaSinkGroupId>.<output>}). {@link
 * KafkaOptions.KafkaSinkMode#idempotent}: KafkaIO's writer with an idempotent producer ({@code
 * enable.idempotence=true, acks=all}, {@code linger.ms=}{@value #IDEMPOTENT_LINGER_MS}), no
 * transactions.
 */
public final class KafkaSinks {
  /**
   * The idempotent producer's {@code linger.ms}. KafkaIO's writer flushes its producer when a
   * bundle ends, so a record waits at most this long and never past the end of its bundle; the
   * records a bundle sends in a burst (the scoring step emits a batch at once) then travel in one
   * produce request per partition instead of a request each. With {@code linger.ms=0} the
   * benchmark's latency job used more CPU and had a longer tail (see docs/benchmarks.md).
   */
  public static final int IDEMPOTENT_LINGER_MS = 20;

  /**
   * The producers' {@code max.request.size}, set explicitly: Kafka's default, 1 MiB, which is also
   * about the default {@code max.message.bytes} of a topic. A record over it fails its bundle on
   * every retry.
   */
  public static final int MAX_REQUEST_BYTES = 1024 * 1024;

  /**
   * The most key and value bytes of one dead-letter record ({@link DeadLetterRecords}): the request
   * size less room for the batch and record headers.
   */
  public static final int MAX_DEAD_LETTER_RECORD_BYTES = MAX_REQUEST_BYTES - 16 * 1024;

  private KafkaSinks() {}

  /** The sink group id of the transactional decisions sink; the other outputs append a suffix. */
  public static String sinkGroupId(KafkaOptions options) {
    String group = options.getKafkaSinkGroupId();
    return group == null || group.isBlank()
        ? "tidemark-" + options.getKafkaDecisionsTopic()
        : group;
  }

  /** The topic of each output, by output name ({@link Outputs#NAMES}). */
  public static Map<String, String> topics(KafkaOptions options) {
    Map<String, String> topics = new LinkedHashMap<>();
    topics.put(Outputs.NAMES.get(0), options.getKafkaDecisionsTopic());
    topics.put(Outputs.NAMES.get(1), options.getKafkaDeadLettersTopic());
    topics.put(Outputs.NAMES.get(2), options.getKafkaDuplicatesTopic());
    topics.put(Outputs.NAMES.get(3), options.getKafkaTooLateTopic());
    return topics;
  }

  /**
   * The topic of each of the model loop's outputs, by its sink group suffix ({@link
   * EvaluateDecisions#NAMES}, then {@link EvaluateDecisions#DRIFT}): the spec's Kafka names of
   * {@link PipelineSpec#LABEL_OUTPUTS} for the run's profile.
   */
  public static Map<String, String> labelTopics(KafkaOptions options) {
    Map<String, String> names = SpecDefaults.outputNames(options, PipelineSpec.Sink.KAFKA);
    List<String> suffixes = new ArrayList<>(EvaluateDecisions.NAMES);
    suffixes.add(EvaluateDecisions.DRIFT);
    Map<String, String> topics = new LinkedHashMap<>();
    for (int i = 0; i < suffixes.size(); i++) {
      topics.put(suffixes.get(i), names.get(PipelineSpec.LABEL_OUTPUTS.get(i)));
    }
    return topics;
  }

  /**
   * Every topic the run writes, by its sink group suffix: the four outputs ({@link #topics}), the
   * drift alarms, and with labels ({@link Sources#readsLabels}) the four label outputs. Whatever
   * provisions a Kafka run's topics creates these.
   */
  public static Map<String, String> outputTopics(TidemarkOptions options) {
    Map<String, String> topics = new LinkedHashMap<>(topics(options));
    Map<String, String> loop = labelTopics(options);
    if (Sources.readsLabels(options)) {
      topics.putAll(loop);
    } else {
      topics.put(EvaluateDecisions.DRIFT, loop.get(EvaluateDecisions.DRIFT));
    }
    return topics;
  }

  /** Adds the Kafka writes of the four label outputs ({@link #labelTopics}). */
  public static void writeLabels(
      EvaluateDecisions.Result labels, KafkaOptions options, KafkaClients clients) {
    Map<String, String> topics = labelTopics(options);
    List<String> names = EvaluateDecisions.NAMES;
    write(
        "Evaluations",
        labels.summaries,
        KafkaSinks::evaluationRecord,
        topics,
        names.get(0),
        options,
        clients);
    write(
        "UnmatchedLabels",
        labels.unmatched,
        label -> KV.of(label.id() + "@" + label.source(), HeaderedValue.of(label.toJsonLine())),
        topics,
        names.get(1),
        options,
        clients);
    write(
        "LabelDuplicates",
        labels.duplicates,
        KafkaSinks::duplicateRecord,
        topics,
        names.get(2),
        options,
        clients);
    write(
        "LabelDeadLetters",
        labels.deadLetters,
        new DeadLetterRecords(MAX_DEAD_LETTER_RECORD_BYTES),
        topics,
        names.get(3),
        options,
        clients);
  }

  /** Adds the Kafka write of the drift alarms ({@link #labelTopics}' last). */
  public static void writeDrift(
      PCollection<DriftAlarm> drift, KafkaOptions options, KafkaClients clients) {
    write(
        "Drift",
        drift,
        alarm ->
            KV.of(
                alarm.role() + "/" + alarm.model() + "/" + alarm.kind(),
                HeaderedValue.of(alarm.toJsonLine())),
        labelTopics(options),
        EvaluateDecisions.DRIFT,
        options,
        clients);
  }

  /** A duplicate's record, events' or labels': keyed by the copy's {@code id@source}. */
  static KV<String, HeaderedValue> duplicateRecord(DuplicateRecord duplicate) {
    return KV.of(duplicate.id() + "@" + duplicate.source(), HeaderedValue.of(duplicate.toJson()));
  }

  /** An evaluation summary's record: one key per window, the pane index as its version. */
  static KV<String, HeaderedValue> evaluationRecord(EvaluationSummary summary) {
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("version", Long.toString(summary.paneIndex()));
    headers.put("paneTiming", summary.paneTiming());
    return KV.of(
        summary.role()
            + "/"
            + summary.modelName()
            + ":"
            + summary.modelVersion()
            + "/"
            + summary.windowStart()
            + "/"
            + summary.windowEnd(),
        new HeaderedValue(summary.toJsonLine().getBytes(StandardCharsets.UTF_8), headers));
  }

  /** Adds the four Kafka writes for {@code outputs}. */
  public static void write(Outputs outputs, KafkaOptions options, KafkaClients clients) {
    Map<String, String> topics = topics(options);
    write(
        "Decisions",
        outputs.decisions,
        DecisionRecords.of(options),
        topics,
        "decisions",
        options,
        clients);
    write(
        "DeadLetters",
        outputs.deadLetters,
        new DeadLetterRecords(MAX_DEAD_LETTER_RECORD_BYTES),
        topics,
        "dead-letters",
        options,
        clients);
    write(
        "Duplicates",
        outputs.duplicates,
        KafkaSinks::duplicateRecord,
        topics,
        "duplicates",
        options,
        clients);
    write(
        "TooLate",
        outputs.tooLate,
        record -> KV.of(record.id() + "@" + record.source(), HeaderedValue.of(record.toJson())),
        topics,
        "too-late",
        options,
        clients);
  }

  /** Turns one output into Kafka records ({@code <name>ToKafkaRecords}) and writes its topic. */
  private static <T> void write(
      String name,
      PCollection<T> output,
      ProcessFunction<T, KV<String, HeaderedValue>> toRecord,
      Map<String, String> topics,
      String outputName,
      KafkaOptions options,
      KafkaClients clients) {
    PCollection<KV<String, HeaderedValue>> records =
        output
            .apply(
                name + "ToKafkaRecords",
                MapElements.into(
                        TypeDescriptors.kvs(
                            TypeDescriptors.strings(), TypeDescriptor.of(HeaderedValue.class)))
                    .via(toRecord))
            .setCoder(KvCoder.of(StringUtf8Coder.of(), HeaderedValue.Coder.of()));
    records.apply(
        "WriteKafka" + name, kafkaWrite(topics.get(outputName), outputName, options, clients));
  }

  /**
   * The write of one output's records to {@code topic}, in the configured sink mode; {@code
   * outputName} names the transactional sink's group ({@code <kafkaSinkGroupId>.<outputName>}).
   */
  static PTransform<PCollection<KV<String, HeaderedValue>>, PDone> kafkaWrite(
      String topic, String outputName, KafkaOptions options, KafkaClients clients) {
    return options.getKafkaSinkMode() == KafkaOptions.KafkaSinkMode.transactional
        ? transactionalWrite(topic, outputName, options, clients)
        : idempotentWrite(topic, clients);
  }

  /** The producer settings both sink modes share. */
  private static Map<String, Object> producerConfig() {
    Map<String, Object> producer = new LinkedHashMap<>();
    producer.put(ProducerConfig.ACKS_CONFIG, "all");
    producer.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    producer.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, MAX_REQUEST_BYTES);
    return producer;
  }

  /** {@link KafkaOptions.KafkaSinkMode#idempotent}: KafkaIO's writer, no transactions. */
  static KafkaIO.Write<String, HeaderedValue> idempotentWrite(String topic, KafkaClients clients) {
    Map<String, Object> producer = producerConfig();
    producer.put(ProducerConfig.LINGER_MS_CONFIG, IDEMPOTENT_LINGER_MS);
    return KafkaIO.<String, HeaderedValue>write()
        .withBootstrapServers(clients.bootstrapServers())
        .withTopic(topic)
        .withKeySerializer(StringSerializer.class)
        .withValueSerializer(HeaderedValue.ValueSerializer.class)
        .withProducerFactoryFn(clients.producerFactory())
        .withConsumerFactoryFn(clients.consumerFactory())
        .withProducerConfigUpdates(producer);
  }

  /** {@link KafkaOptions.KafkaSinkMode#transactional}: {@link TransactionalKafkaWrite}. */
  static TransactionalKafkaWrite transactionalWrite(
      String topic, String outputName, KafkaOptions options, KafkaClients clients) {
    Map<String, Object> producer = producerConfig();
    // Each transaction's first send is refused (CONCURRENT_TRANSACTIONS) until the coordinator
    // has completed the previous one, and retried after the backoff: the default 100 ms would
    // be paid on every transaction. 1 ms, growing to at most 20 ms, measured fastest per
    // transaction on a local broker while keeping retries against an absent broker sparse.
    producer.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 1);
    producer.put(ProducerConfig.RETRY_BACKOFF_MAX_MS_CONFIG, 20);
    return new TransactionalKafkaWrite(
        topic,
        sinkGroupId(options) + "." + outputName,
        options.getKafkaSinkShards(),
        clients,
        producer,
        Runners.isFlink(options));
  }
}
