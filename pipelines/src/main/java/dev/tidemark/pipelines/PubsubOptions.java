package dev.tidemark.pipelines;

import org.apache.beam.sdk.options.Default;
import org.apache.beam.sdk.options.Description;
import org.apache.beam.sdk.options.PipelineOptions;

/**
 * Pub/Sub in ({@code --source=pubsub}): where the CloudEvents (and, optionally, the labels) are
 * read from, which attribute holds their event time and, optionally, which attribute Dataflow
 * deduplicates publish retries on. The emulator and the endpoint are Beam's own options ({@code
 * --pubsubRootUrl}, {@code --project}).
 */
public interface PubsubOptions extends PipelineOptions {
  @Description(
      "Subscription the CloudEvents are read from, as projects/PROJECT/subscriptions/NAME (binary"
          + " or structured mode). It must exist; messages are acknowledged once the runner has"
          + " checkpointed them. Exactly one of --pubsubSubscription and --pubsubTopic.")
  String getPubsubSubscription();

  void setPubsubSubscription(String subscription);

  @Description(
      "Topic to read instead of a subscription, as projects/PROJECT/topics/NAME: a temporary"
          + " subscription is created when the pipeline starts, so messages published before that"
          + " are never read (demos and tests; use --pubsubSubscription in production).")
  String getPubsubTopic();

  void setPubsubTopic(String topic);

  @Description(
      "Message attribute holding the event time, RFC 3339 (2026-01-01T00:00:00Z) or milliseconds"
          + " since the epoch; the element timestamp and the Pub/Sub watermark follow it. ce-time"
          + " is set by every binary-mode publisher; structured-mode publishers must set it to the"
          + " event's time too. A message without a readable value is dead-lettered.")
  @Default.String("ce-time")
  String getPubsubTimestampAttribute();

  void setPubsubTimestampAttribute(String attribute);

  @Description(
      "Message attribute Dataflow deduplicates on (PubsubIO idAttribute): copies with the same"
          + " value published within about 10 minutes of each other are delivered once. For"
          + " publish retries only; Tidemark's own source+id deduplication applies in every case."
          + " Not a ce-* attribute (Dataflow may remove it from the message, and a binary event"
          + " without ce-id is dead-lettered): publishers copy the CloudEvents id into one of its"
          + " own, e.g. tidemark-id. Unset: Dataflow deduplicates on the message id.")
  String getPubsubIdAttribute();

  void setPubsubIdAttribute(String attribute);

  @Description(
      "Subscription the labels are read from beside a Pub/Sub source, as"
          + " projects/PROJECT/subscriptions/NAME: structured-mode label CloudEvents (or binary"
          + " mode), each with its label time in --pubsubTimestampAttribute as the events carry"
          + " theirs. Read without end; one labels stream: not with --labelsInput or"
          + " --kafkaLabelsTopic.")
  String getPubsubLabelsSubscription();

  void setPubsubLabelsSubscription(String subscription);
}
