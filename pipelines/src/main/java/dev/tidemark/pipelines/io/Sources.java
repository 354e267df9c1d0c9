package dev.tidemark.pipelines.io;

import dev.tidemark.pipelines.Durations;
import dev.tidemark.pipelines.RunSpecs;
import dev.tidemark.pipelines.Runners;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.io.kafka.KafkaClients;
import dev.tidemark.pipelines.io.kafka.KafkaSource;
import dev.tidemark.pipelines.io.pubsub.PubsubSource;
import dev.tidemark.transforms.ParseLabels;
import dev.tidemark.transforms.values.RawRecord;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Duration;

/**
 * The source {@code --source} names, built from the options: a replay file, a backfill, Kafka or
 * Pub/Sub. Each yields {@link RawRecord}s for {@link dev.tidemark.pipelines.ScoreCloudEvents}.
 */
public final class Sources {
  private Sources() {}

  /** Reads the configured source into {@code pipeline}. */
  public static PCollection<RawRecord> read(Pipeline pipeline, TidemarkOptions options) {
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
        return pipeline.apply("ReadKafka", kafkaSource(options));
      case pubsub:
        return pipeline.apply("ReadPubsub", pubsubSource(options));
      default:
        throw new IllegalArgumentException("unknown --source=" + options.getSource());
    }
  }

  /**
   * Whether the run reads labels: {@code --labelsInput} files, a {@code --kafkaLabelsTopic} or a
   * {@code --pubsubLabelsSubscription}.
   */
  public static boolean readsLabels(TidemarkOptions options) {
    return !labelInputs(options).isEmpty();
  }

  /** The label options the run gives, as {@code --name}s. */
  private static List<String> labelInputs(TidemarkOptions options) {
    List<String> given = new ArrayList<>();
    if (options.getLabelsInput() != null) {
      given.add("--labelsInput");
    }
    if (options.getKafkaLabelsTopic() != null) {
      given.add("--kafkaLabelsTopic");
    }
    if (options.getPubsubLabelsSubscription() != null) {
      given.add("--pubsubLabelsSubscription");
    }
    if (options.getLabelsInReplay()) {
      given.add("--labelsInReplay");
    }
    return given;
  }

  /**
   * Whether the replay carries the run's labels ({@code --labelsInReplay}), to be split off its
   * records by {@link ReplayLabels}; only beside {@code --source=replay} and no other labels.
   *
   * @throws IllegalArgumentException with another source or another labels option
   */
  public static boolean labelsInReplay(TidemarkOptions options) {
    if (!options.getLabelsInReplay()) {
      return false;
    }
    if (options.getSource() != TidemarkOptions.SourceKind.replay) {
      throw new IllegalArgumentException(
          "--labelsInReplay splits labels off a replay (--source=replay); with --source="
              + options.getSource()
              + " give the labels as a stream of their own, e.g. --labelsInput=GLOB");
    }
    checkOneLabelsStream(options);
    return true;
  }

  /** Refuses a run that names more than one labels stream. */
  private static void checkOneLabelsStream(TidemarkOptions options) {
    List<String> given = labelInputs(options);
    if (given.size() > 1) {
      throw new IllegalArgumentException(
          String.join(" and ", given)
              + (given.size() == 2 ? " both" : " all")
              + " name labels: give one labels stream");
    }
  }

  /**
   * The labels the options name: the NDJSON files of {@code --labelsInput}, read as a bounded
   * input; the Kafka topic {@code --kafkaLabelsTopic}, read without end beside a Kafka source and
   * watermarked by the labels' own {@code time}; or the Pub/Sub subscription {@code
   * --pubsubLabelsSubscription}, read without end beside a Pub/Sub source, timestamped (and
   * watermarked) by the attribute the events' time is in ({@code --pubsubTimestampAttribute}).
   */
  public static PCollection<RawRecord> readLabels(Pipeline pipeline, TidemarkOptions options) {
    checkOneLabelsStream(options);
    if (options.getLabelsInReplay()) {
      throw new IllegalArgumentException(
          "--labelsInReplay: the labels are in the replay; split them off the replay's records"
              + " with ReplayLabels");
    }
    String topic = options.getKafkaLabelsTopic();
    String subscription = options.getPubsubLabelsSubscription();
    if (topic == null && subscription == null) {
      return pipeline.apply(
          "ReadLabels",
          BackfillSource.from(options.getLabelsInput())
              .withMaxEventBytes(ParseLabels.MAX_LABEL_BYTES));
    }
    if (subscription != null) {
      return pipeline.apply("ReadLabelsPubsub", pubsubLabelsSource(options));
    }
    if (options.getSource() != TidemarkOptions.SourceKind.kafka) {
      throw new IllegalArgumentException(
          "--kafkaLabelsTopic reads labels beside a Kafka source (--source=kafka); with --source="
              + options.getSource()
              + " give the labels as files, --labelsInput=GLOB");
    }
    if (options.getKafkaMaxRecords() != null) {
      throw new IllegalArgumentException(
          "--kafkaLabelsTopic is read without end, so a bounded read (--kafkaMaxRecords) would"
              + " never finish: give the labels as files, --labelsInput=GLOB");
    }
    return pipeline.apply(
        "ReadLabelsKafka",
        KafkaSource.of(KafkaClients.from(options), topic, options.getKafkaConsumerGroup())
            .withStartOffset(options.getKafkaStartOffset())
            .withWatermark(
                Durations.parse("maxOutOfOrderness", options.getMaxOutOfOrderness()),
                Durations.parse("kafkaIdleTimeout", options.getKafkaIdleTimeout()))
            .withMaxFutureSkew(maxFutureSkewOf(options))
            .withEventTime(CloudEventTime.ATTRIBUTE));
  }

  /**
   * The Pub/Sub source of {@code --pubsubLabelsSubscription}: beside a Pub/Sub source only, with
   * the events' timestamp attribute and future skew. Pub/Sub redeliveries are dropped on the
   * message id; the labels' own source+id deduplication follows either way.
   */
  public static PubsubSource pubsubLabelsSource(TidemarkOptions options) {
    if (options.getSource() != TidemarkOptions.SourceKind.pubsub) {
      throw new IllegalArgumentException(
          "--pubsubLabelsSubscription reads labels beside a Pub/Sub source (--source=pubsub);"
              + " with --source="
              + options.getSource()
              + " give the labels as files, --labelsInput=GLOB"
              + (options.getSource() == TidemarkOptions.SourceKind.kafka
                  ? ", or as a topic, --kafkaLabelsTopic=TOPIC"
                  : ""));
    }
    String subscription = options.getPubsubLabelsSubscription();
    if (subscription.isBlank()) {
      throw new IllegalArgumentException(
          "--pubsubLabelsSubscription is empty: name the labels' subscription,"
              + " projects/PROJECT/subscriptions/NAME, or leave the option out");
    }
    return PubsubSource.fromSubscription(subscription)
        .withTimestampAttribute(options.getPubsubTimestampAttribute())
        .withMaxFutureSkew(maxFutureSkewOf(options));
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
            .withMaxFutureSkew(maxFutureSkewOf(options))
            .withEventTime(CloudEventTime.of(RunSpecs.of(options)));
    Long maxRecords = options.getKafkaMaxRecords();
    return maxRecords == null ? source : source.withMaxRecords(maxRecords);
  }

  /**
   * The Pub/Sub source the options describe. Its timestamps are the attribute {@code
   * --pubsubTimestampAttribute}'s, so a spec whose event time is a field of {@code data} is
   * refused: the source cannot order the stream by it.
   */
  public static PubsubSource pubsubSource(TidemarkOptions options) {
    CloudEventTime eventTime = CloudEventTime.of(RunSpecs.of(options));
    if (!eventTime.isAttribute()) {
      throw new IllegalArgumentException(
          "--source=pubsub: the spec's clocks.eventTime is "
              + eventTime
              + ", but a Pub/Sub source takes its timestamps from the message attribute"
              + " --pubsubTimestampAttribute="
              + options.getPubsubTimestampAttribute()
              + ". Publish the event time in the CloudEvents attribute time and keep"
              + " clocks.eventTime: time, or read the events from Kafka or a replay file");
    }
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
   * --maxOutOfOrderness} and {@code --maxFutureSkew}, and the spec's event time.
   */
  public static ReplayFile readReplay(Path file, TidemarkOptions options) throws IOException {
    return ReplayFile.read(
        file,
        Durations.parse("maxOutOfOrderness", options.getMaxOutOfOrderness()),
        maxFutureSkewOf(options),
        CloudEventTime.of(RunSpecs.of(options)));
  }

  /** {@code --maxFutureSkew} as a duration the sources take by value; it must not be negative. */
  public static Duration maxFutureSkewOf(TidemarkOptions options) {
    Duration skew = Durations.parse("maxFutureSkew", options.getMaxFutureSkew());
    if (skew.isShorterThan(Duration.ZERO)) {
      throw new IllegalArgumentException(
          "--maxFutureSkew="
              + options.getMaxFutureSkew()
              + " must not be negative; use e.g. PT10M");
    }
    return skew;
  }
}
