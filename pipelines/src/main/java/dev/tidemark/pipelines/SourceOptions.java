package dev.tidemark.pipelines;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/** Where events come from and what counts as a valid one. */
public interface SourceOptions extends PipelineOptions {
  @Description(
      "Event source: replay (a replay file, deterministic, DirectRunner only), backfill"
          + " (NDJSON CloudEvents files, bounded, batch), kafka (--kafkaInputTopic) or pubsub"
          + " (--pubsubSubscription); kafka and pubsub take binary or structured CloudEvents.")
  @Default.Enum("replay")
  TidemarkOptions.SourceKind getSource();

  void setSource(TidemarkOptions.SourceKind source);

  @Description("Input: the replay file for --source=replay, a file glob for --source=backfill.")
  String getInput();

  void setInput(String input);

  @Description(
      "Labels: NDJSON files (a glob) of tidemark.label.v1 CloudEvents, the truth learnt after the"
          + " decisions. Each is judged against the decision in force for its event's windows,"
          + " and the run writes online evaluation per model version to every sink"
          + " (docs/labels.md).")
  String getLabelsInput();

  void setLabelsInput(String glob);

  @Description(
      "The replay (--source=replay) carries the labels among its events: its records of type"
          + " tidemark.label.v1 are the run's labels stream, arriving on the replay's own clock"
          + " (docs/labels.md).")
  @Default.Boolean(false)
  boolean getLabelsInReplay();

  void setLabelsInReplay(boolean labelsInReplay);

  @Description(
      "Bounded out-of-orderness of the watermark (replay without watermark directives, kafka):"
          + " it trails the latest event time seen by this duration (ISO-8601). Unless given, the spec's clocks.maxOutOfOrderness.")
  @Default.InstanceFactory(SpecDefaults.MaxOutOfOrderness.class)
  String getMaxOutOfOrderness();

  void setMaxOutOfOrderness(String duration);

  @Description(
      "The only currency accepted in data.currency (ISO 4217). Unless given, the spec's currency"
          + " field's one value.")
  @Default.InstanceFactory(SpecDefaults.Currency.class)
  String getCurrency();

  void setCurrency(String currency);

  @Description(
      "Comma-separated CloudEvent types to accept; other types are dead-lettered. Unless given, the spec's events.types.")
  @Default.InstanceFactory(SpecDefaults.EventTypes.class)
  String getEventTypes();

  void setEventTypes(String types);

  @Description(
      "Largest record accepted, in bytes; larger ones are dead-lettered. Unless given, the spec's events.maxEventBytes.")
  @Default.InstanceFactory(SpecDefaults.MaxEventBytes.class)
  Integer getMaxEventBytes();

  void setMaxEventBytes(Integer bytes);

  @Description(
      "How far (ISO-8601) an event's time may lie after its ingestion time; a later event is"
          + " dead-lettered as time_in_future before it can move a watermark or create state. Unless given, the spec's clocks.maxFutureSkew.")
  @Default.InstanceFactory(SpecDefaults.MaxFutureSkew.class)
  String getMaxFutureSkew();

  void setMaxFutureSkew(String duration);
}
