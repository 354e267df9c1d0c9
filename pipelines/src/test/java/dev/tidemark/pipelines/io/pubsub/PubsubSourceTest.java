package dev.tidemark.pipelines.io.pubsub;

import static dev.tidemark.pipelines.io.pubsub.PubsubFixtures.ALICE;
import static dev.tidemark.pipelines.io.pubsub.PubsubFixtures.binaryAttributes;
import static dev.tidemark.pipelines.io.pubsub.PubsubFixtures.data;
import static dev.tidemark.pipelines.io.pubsub.PubsubFixtures.incoming;
import static dev.tidemark.pipelines.io.pubsub.PubsubFixtures.seconds;
import static dev.tidemark.pipelines.io.pubsub.PubsubFixtures.structured;
import static dev.tidemark.pipelines.io.pubsub.PubsubFixtures.structuredAttributes;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.everyItem;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import com.google.api.client.util.Clock;
import dev.tidemark.pipelines.Outputs;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.TidemarkPipeline;
import dev.tidemark.pipelines.io.Sources;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.DuplicateRecord;
import dev.tidemark.transforms.values.PaymentFeatures;
import dev.tidemark.transforms.values.RawRecord;
import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.io.gcp.pubsub.PubsubClient;
import org.apache.beam.sdk.io.gcp.pubsub.PubsubClient.IncomingMessage;
import org.apache.beam.sdk.io.gcp.pubsub.PubsubClient.SubscriptionPath;
import org.apache.beam.sdk.io.gcp.pubsub.PubsubTestClient;
import org.apache.beam.sdk.io.gcp.pubsub.PubsubTestClient.PubsubTestClientFactory;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.joda.time.Instant;
import org.junit.After;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The Pub/Sub source with Beam's in-process {@link PubsubTestClient}: both CloudEvents modes, event
 * time and publish time, rejects, and the whole Tidemark pipeline over it (the test client reports
 * end of input once every message is pulled, so the unbounded read terminates).
 */
@RunWith(JUnit4.class)
public class PubsubSourceTest {
  private static final SubscriptionPath SUBSCRIPTION =
      PubsubClient.subscriptionPathFromName("tidemark-test", "payments");
  private static final String ORIGIN = "pubsub:" + SUBSCRIPTION.getPath() + "/";
  private static final Clock CLOCK = (Clock & Serializable) () -> 673L;

  private PubsubTestClientFactory factory;

  @After
  public void closeFactory() throws IOException {
    if (factory != null) {
      factory.close();
      factory = null;
    }
  }

  /**
   * m1 binary, m2 structured, m3 the same event as m2 published again (a new message id), m4 not
   * JSON, m5 without the timestamp attribute, m6 with an unparsable one, m7 neither mode.
   */
  private static List<IncomingMessage> messages() {
    List<IncomingMessage> messages = new ArrayList<>();
    messages.add(
        incoming(
            "m1",
            binaryAttributes("e1", seconds(10).toString()),
            data(ALICE, "10.00"),
            seconds(11)));
    messages.add(
        incoming(
            "m2",
            structuredAttributes(seconds(20)),
            structured("e2", seconds(20), data(ALICE, "20.00")),
            seconds(21)));
    messages.add(
        incoming(
            "m3",
            structuredAttributes(seconds(20)),
            structured("e2", seconds(20), data(ALICE, "20.00")),
            seconds(40)));
    messages.add(incoming("m4", structuredAttributes(seconds(30)), "{not json", seconds(31)));
    messages.add(
        incoming(
            "m5",
            Map.of("content-type", "application/cloudevents+json"),
            structured("e5", seconds(50), data(ALICE, "50.00")),
            seconds(51)));
    messages.add(
        incoming("m6", binaryAttributes("e6", "yesterday"), data(ALICE, "60.00"), seconds(61)));
    messages.add(
        incoming(
            "m7",
            Map.of("content-type", "text/plain", "ce-time", seconds(70).toString()),
            "hello",
            seconds(71)));
    return messages;
  }

  private PubsubSource source() {
    factory = PubsubTestClient.createFactoryForPull(CLOCK, SUBSCRIPTION, 60, messages());
    return PubsubSource.fromSubscription(SUBSCRIPTION.getPath())
        .withClientFactory(factory)
        .withClock(CLOCK);
  }

  private static String canonicalData(String account, String amount) throws IOException {
    return Json.canonical(Json.MAPPER.readTree(data(account, amount)));
  }

  @Test
  public void convertsBothModesWithEventTimeAndPublishTimeAndRejectsBadMessages()
      throws IOException {
    Pipeline pipeline = Pipeline.create(PipelineOptionsFactory.create());
    PCollection<String> records =
        pipeline
            .apply("ReadPubsub", source())
            .apply("Describe", ParDo.of(new PubsubFixtures.DescribeFn()));

    PAssert.that(records)
        .containsInAnyOrder(
            ORIGIN
                + "m1 ts=2026-01-01T00:00:10.000Z ingested=2026-01-01T00:00:11.000Z id=e1"
                + " time=2026-01-01T00:00:10.000Z data="
                + canonicalData(ALICE, "10.00"),
            ORIGIN
                + "m2 ts=2026-01-01T00:00:20.000Z ingested=2026-01-01T00:00:21.000Z id=e2"
                + " time=2026-01-01T00:00:20.000Z data="
                + canonicalData(ALICE, "20.00"),
            ORIGIN
                + "m3 ts=2026-01-01T00:00:20.000Z ingested=2026-01-01T00:00:40.000Z id=e2"
                + " time=2026-01-01T00:00:20.000Z data="
                + canonicalData(ALICE, "20.00"),
            ORIGIN + "m4 ts=2026-01-01T00:00:30.000Z ingested=2026-01-01T00:00:31.000Z unparsed",
            ORIGIN
                + "m5 ts=2026-01-01T00:00:51.000Z ingested=2026-01-01T00:00:51.000Z"
                + " rejected=missing_attribute",
            ORIGIN
                + "m6 ts=2026-01-01T00:01:01.000Z ingested=2026-01-01T00:01:01.000Z"
                + " rejected=invalid_time",
            ORIGIN
                + "m7 ts=2026-01-01T00:01:10.000Z ingested=2026-01-01T00:01:11.000Z"
                + " rejected=not_a_cloudevent");
    pipeline.run().waitUntilFinish();
  }

  @Test
  public void pipelineDeduplicatesRepublishedEventsAndDeadLettersTheRest() {
    TidemarkOptions options =
        PipelineOptionsFactory.fromArgs(
                "--runner=DirectRunner",
                "--source=pubsub",
                "--pubsubSubscription=" + SUBSCRIPTION.getPath(),
                "--earlyFiringDelay=none")
            .withValidation()
            .as(TidemarkOptions.class);
    Pipeline pipeline = Pipeline.create(options);
    factory = PubsubTestClient.createFactoryForPull(CLOCK, SUBSCRIPTION, 60, messages());
    PCollection<RawRecord> raw =
        pipeline.apply(
            "ReadPubsub",
            Sources.pubsubSource(options).withClientFactory(factory).withClock(CLOCK));
    Outputs outputs = TidemarkPipeline.expand(raw, options);

    PAssert.that(
            outputs.deadLetters.apply(
                "DeadLetterReasons",
                MapElements.into(TypeDescriptors.strings())
                    .via((DeadLetter d) -> d.reason().code() + "@" + d.origin())))
        .containsInAnyOrder(
            "invalid_json@" + ORIGIN + "m4",
            "missing_attribute@" + ORIGIN + "m5",
            "invalid_time@" + ORIGIN + "m6",
            "not_a_cloudevent@" + ORIGIN + "m7");
    PAssert.that(
            outputs.duplicates.apply(
                "DuplicateIds",
                MapElements.into(TypeDescriptors.strings())
                    .via((DuplicateRecord d) -> d.id() + "@" + d.eventTime())))
        .containsInAnyOrder("e2@" + seconds(20));
    PAssert.that(outputs.tooLate).empty();
    PAssert.that(outputs.decisions).satisfies(PubsubSourceTest::aliceSawTwoUniquePayments);
    pipeline.run().waitUntilFinish();
  }

  /** A publisher clock in 2099 between two honest messages: f1 is structured, f2 binary. */
  private static List<IncomingMessage> futureMessages() {
    Instant from2099 = Instant.parse("2099-01-01T00:00:00Z");
    List<IncomingMessage> messages = new ArrayList<>();
    messages.add(
        incoming(
            "h1",
            binaryAttributes("h1", seconds(10).toString()),
            data(ALICE, "10.00"),
            seconds(11)));
    messages.add(
        incoming(
            "f1",
            structuredAttributes(from2099),
            structured("f1", from2099, data(ALICE, "99.00")),
            seconds(12)));
    messages.add(
        incoming(
            "f2", binaryAttributes("f2", from2099.toString()), data(ALICE, "98.00"), seconds(13)));
    messages.add(
        incoming(
            "h2",
            binaryAttributes("h2", seconds(20).toString()),
            data(ALICE, "20.00"),
            seconds(21)));
    return messages;
  }

  /**
   * A timestamp attribute more than the skew after the publish time is not the message's timestamp
   * (which feeds the reader's watermark): the publish time is, and the body keeps its time for the
   * parser to judge. Within the skew the attribute is the timestamp.
   */
  @Test
  public void aFutureTimestampAttributeIsReplacedByThePublishTime() throws IOException {
    Pipeline pipeline = Pipeline.create(PipelineOptionsFactory.create());
    factory = PubsubTestClient.createFactoryForPull(CLOCK, SUBSCRIPTION, 60, futureMessages());
    PCollection<String> records =
        pipeline
            .apply(
                "ReadPubsub",
                PubsubSource.fromSubscription(SUBSCRIPTION.getPath())
                    .withClientFactory(factory)
                    .withClock(CLOCK)
                    .withMaxFutureSkew(org.joda.time.Duration.standardMinutes(10)))
            .apply("Describe", ParDo.of(new PubsubFixtures.DescribeFn()));
    PAssert.that(records)
        .containsInAnyOrder(
            ORIGIN
                + "h1 ts=2026-01-01T00:00:10.000Z ingested=2026-01-01T00:00:11.000Z id=h1"
                + " time=2026-01-01T00:00:10.000Z data="
                + canonicalData(ALICE, "10.00"),
            ORIGIN
                + "f1 ts=2026-01-01T00:00:12.000Z ingested=2026-01-01T00:00:12.000Z id=f1"
                + " time=2099-01-01T00:00:00.000Z data="
                + canonicalData(ALICE, "99.00"),
            ORIGIN
                + "f2 ts=2026-01-01T00:00:13.000Z ingested=2026-01-01T00:00:13.000Z id=f2"
                + " time=2099-01-01T00:00:00.000Z data="
                + canonicalData(ALICE, "98.00"),
            ORIGIN
                + "h2 ts=2026-01-01T00:00:20.000Z ingested=2026-01-01T00:00:21.000Z id=h2"
                + " time=2026-01-01T00:00:20.000Z data="
                + canonicalData(ALICE, "20.00"));
    pipeline.run().waitUntilFinish();
  }

  /**
   * The whole pipeline over the same messages: nothing is too late, and the two 2099 events are
   * {@code time_in_future} dead letters (the parser's half of the bound).
   */
  @Test
  public void futureEventsAreDeadLetteredAndMoveNothing() {
    TidemarkOptions options =
        PipelineOptionsFactory.fromArgs(
                "--runner=DirectRunner",
                "--source=pubsub",
                "--pubsubSubscription=" + SUBSCRIPTION.getPath(),
                "--earlyFiringDelay=none")
            .withValidation()
            .as(TidemarkOptions.class);
    Pipeline pipeline = Pipeline.create(options);
    factory = PubsubTestClient.createFactoryForPull(CLOCK, SUBSCRIPTION, 60, futureMessages());
    PCollection<RawRecord> raw =
        pipeline.apply(
            "ReadPubsub",
            Sources.pubsubSource(options).withClientFactory(factory).withClock(CLOCK));
    Outputs outputs = TidemarkPipeline.expand(raw, options);
    PAssert.that(
            outputs.deadLetters.apply(
                "DeadLetterReasons",
                MapElements.into(TypeDescriptors.strings())
                    .via((DeadLetter d) -> d.reason().code() + "@" + d.origin())))
        .containsInAnyOrder("time_in_future@" + ORIGIN + "f1", "time_in_future@" + ORIGIN + "f2");
    PAssert.that(outputs.tooLate).empty();
    PAssert.that(outputs.decisions).satisfies(PubsubSourceTest::aliceSawTwoUniquePayments);
    pipeline.run().waitUntilFinish();
  }

  /**
   * An id attribute of the CloudEvents binding is refused (Dataflow may remove it from the message,
   * and a binary event without ce-id would be dead-lettered); one of its own is taken.
   */
  @Test
  public void idAttributeMustNotBeABindingAttribute() {
    PubsubSource source = PubsubSource.fromSubscription(SUBSCRIPTION.getPath());
    for (String binding : List.of("ce-id", "CE-ID", "ce-source", "ce-")) {
      IllegalArgumentException refused =
          assertThrows(IllegalArgumentException.class, () -> source.withIdAttribute(binding));
      assertThat(refused.getMessage(), containsString("--pubsubIdAttribute=" + binding));
      assertThat(refused.getMessage(), containsString(PubsubSource.SUGGESTED_ID_ATTRIBUTE));
    }
    source.withIdAttribute(PubsubSource.SUGGESTED_ID_ATTRIBUTE);
    source.withIdAttribute(null);

    TidemarkOptions options =
        PipelineOptionsFactory.fromArgs(
                "--source=pubsub",
                "--pubsubSubscription=" + SUBSCRIPTION.getPath(),
                "--pubsubIdAttribute=ce-id")
            .as(TidemarkOptions.class);
    assertThrows(IllegalArgumentException.class, () -> Sources.pubsubSource(options));
  }

  /**
   * Every decision is Alice's, and the windows (which all hold both e1 at 0:10 and e2 at 0:20)
   * count two payments, not three: m3 was deduplicated.
   */
  private static Void aliceSawTwoUniquePayments(Iterable<Decision> decisions) {
    List<Long> counts = new ArrayList<>();
    List<String> accounts = new ArrayList<>();
    for (Decision decision : decisions) {
      counts.add(decision.features().getLong(PaymentFeatures.TXN_COUNT));
      accounts.add(decision.key());
    }
    assertThat(accounts, everyItem(is(ALICE)));
    assertThat(counts.stream().mapToLong(Long::longValue).max().orElse(0), is(2L));
    return null;
  }
}
