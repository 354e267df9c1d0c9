package dev.tidemark.transforms;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.auto.value.AutoValue;
import dev.tidemark.spec.FieldParser;
import dev.tidemark.spec.FieldRejection;
import dev.tidemark.spec.FieldValues;
import dev.tidemark.spec.PipelineSpec;
import dev.tidemark.spec.SpecLoader;
import dev.tidemark.transforms.util.BundleStats;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.util.Rfc3339;
import dev.tidemark.transforms.util.Sha256;
import dev.tidemark.transforms.util.TidemarkMetrics;
import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.DeadLetterReason;
import dev.tidemark.transforms.values.Event;
import dev.tidemark.transforms.values.PaymentFields;
import dev.tidemark.transforms.values.RawRecord;
import io.cloudevents.CloudEvent;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.DateTimeException;
import java.util.Arrays;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.apache.beam.sdk.metrics.Counter;
import org.apache.beam.sdk.metrics.Distribution;
import org.apache.beam.sdk.metrics.Gauge;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithFailures;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.TupleTagList;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * Parses and validates structured-mode CloudEvents 1.0 carrying a payment transaction, with the
 * CloudEvents Java SDK, into {@link Event}s of a spec's {@code events} timestamped with their event
 * time.
 *
 * <p>Every record ends in exactly one of two places: {@link WithFailures.Result#output()} (valid
 * events) or {@link WithFailures.Result#failures()} (a {@link DeadLetter} with a stable {@link
 * DeadLetterReason}, a message, the step, the origin and the original bytes). Nothing is dropped
 * and nothing throws: the counters {@code read}, {@code valid} and {@code deadLetters.<reason>}
 * satisfy {@code read = valid + deadLetters}.
 *
 * <p>Rules: required context attributes {@code specversion} (must be {@code 1.0}), {@code id},
 * {@code source}, {@code type} (must be in the allow-list) and {@code time} (RFC 3339, the event
 * time, unless {@link #withEventTime} names a timestamp field of {@code data} instead, when {@code
 * time} is optional); {@code data} is a JSON object whose members are checked as the spec's {@code
 * events.fields} declare them ({@link FieldParser}: in order, the first failing field giving the
 * event its dead-letter reason; undeclared members are ignored). By default that is the bundled
 * payments spec's: {@code accountId} (non-empty plain string, at most 128 characters), {@code
 * amount} (a JSON number, at least 0, at most two decimal places), {@code currency} (the configured
 * currency), optional {@code merchantId} (non-empty plain string) and {@code country} (ISO 3166-1
 * alpha-2). {@link #withEvents} takes another spec's events; the event's key is the value of their
 * {@code key} field. Records over {@link #withMaxEventBytes} bytes or not valid UTF-8 are rejected
 * before parsing.
 *
 * <p>Limits of a valid record: {@code time} from {@link #EARLIEST_EVENT_TIME} to {@link
 * #LATEST_EVENT_TIME}, and no more than {@link #withMaxFutureSkew the future skew} (default {@link
 * #DEFAULT_MAX_FUTURE_SKEW}) after the record's {@link RawRecord#ingestionTime()}, so that a
 * producer's wrong clock cannot carry the event time far ahead of the stream ({@code
 * time_in_future}); {@code amount} at most {@value #MAX_AMOUNT_INTEGER_DIGITS} integer digits, so
 * the largest accepted amount is {@code 999999999999999.99} (the bundled spec's {@code
 * integerDigits}). A JSON object anywhere in the record (the event, its {@code data}, any nested
 * object) with a member name twice is {@code invalid_json}: which copy counts would otherwise be
 * the parser's choice, and another consumer of the same record may choose the other.
 *
 * <p>Sources must give each record a timestamp no later than its event time (a replay or file
 * source uses the minimum timestamp; a Kafka source assigns the event time itself), because the
 * parsed event is output at its event time.
 *
 * <pre>{@code
 * WithFailures.Result<PCollection<Event>, DeadLetter> parsed =
 *     raw.apply("ParseCloudEvents", ParseCloudEvents.create().withCurrency("GBP"));
 * }</pre>
 */
@AutoValue
public abstract class ParseCloudEvents
    extends PTransform<
        PCollection<RawRecord>, WithFailures.Result<PCollection<Event>, DeadLetter>> {

  /** The default event type: the bundled payments spec's. */
  public static final String DEFAULT_TYPE = "payments.transaction.v1";

  public static final String DEFAULT_CURRENCY = "GBP";
  public static final int DEFAULT_MAX_EVENT_BYTES = 64 * 1024;
  public static final int MAX_ACCOUNT_ID_LENGTH = 128;

  /**
   * Amounts below 10^15 major units, at most {@code 999999999999999.99}; their minor units fit a
   * {@code long}, and so does the sum of 92 of them (feature sums saturate beyond, see {@link
   * dev.tidemark.transforms.values.Features#isSaturated}).
   */
  public static final int MAX_AMOUNT_INTEGER_DIGITS = 15;

  /** How far after its ingestion time an event's time may lie by default. */
  public static final Duration DEFAULT_MAX_FUTURE_SKEW = Duration.standardMinutes(10);

  /**
   * The earliest event time accepted: a day after BigQuery's smallest TIMESTAMP (0001-01-01), so
   * that the event's windows, which may start before it, still fit. RFC 3339 allows year 0000.
   */
  public static final Instant EARLIEST_EVENT_TIME = Instant.parse("0001-01-02T00:00:00Z");

  /** The latest event time accepted: a day before BigQuery's largest TIMESTAMP, for window ends. */
  public static final Instant LATEST_EVENT_TIME = Instant.parse("9999-12-30T23:59:59.999Z");

  /** The step name written in dead letters from this transform. */
  public static final String STEP = "ParseCloudEvents";

  /** The bundled payments spec's events, read once. */
  private static final class Bundled {
    static final PipelineSpec.Events EVENTS =
        SpecLoader.loadBundled(SpecLoader.DEFAULT_BUNDLED).events();
  }

  abstract Set<String> allowedTypes();

  abstract PipelineSpec.Events events();

  abstract int maxEventBytes();

  abstract Duration maxFutureSkew();

  abstract String eventTimeField();

  abstract Builder toBuilder();

  @AutoValue.Builder
  abstract static class Builder {
    abstract Builder setAllowedTypes(Set<String> types);

    abstract Builder setEvents(PipelineSpec.Events events);

    abstract Builder setMaxEventBytes(int maxEventBytes);

    abstract Builder setMaxFutureSkew(Duration maxFutureSkew);

    abstract Builder setEventTimeField(String field);

    abstract ParseCloudEvents build();
  }

  /**
   * Accepts the bundled payments spec's events: {@value #DEFAULT_TYPE} in {@value
   * #DEFAULT_CURRENCY}, up to 64 KiB per record, up to {@link #DEFAULT_MAX_FUTURE_SKEW} after
   * ingestion.
   */
  public static ParseCloudEvents create() {
    return new AutoValue_ParseCloudEvents.Builder()
        .setAllowedTypes(Set.of(DEFAULT_TYPE))
        .setEvents(Bundled.EVENTS)
        .setMaxEventBytes(DEFAULT_MAX_EVENT_BYTES)
        .setMaxFutureSkew(DEFAULT_MAX_FUTURE_SKEW)
        .setEventTimeField(PipelineSpec.Clocks.TIME_ATTRIBUTE)
        .build();
  }

  /**
   * Checks events as {@code events} (a spec's {@code events} section) declares them: their types,
   * size limit, {@code data} fields (each failing with its own reason) and key. {@link
   * #withAllowedTypes}, {@link #withMaxEventBytes} and {@link #withCurrency} applied after this
   * override the spec's values.
   */
  public ParseCloudEvents withEvents(PipelineSpec.Events events) {
    return toBuilder()
        .setEvents(events)
        .setAllowedTypes(new TreeSet<>(events.types()))
        .setMaxEventBytes(events.maxEventBytes())
        .build();
  }

  /** The CloudEvent {@code type} values to accept; others are dead-lettered. */
  public ParseCloudEvents withAllowedTypes(Set<String> types) {
    if (types == null
        || types.isEmpty()
        || types.stream().anyMatch(t -> t == null || t.isEmpty())) {
      throw new IllegalArgumentException(
          "allowed types must be a non-empty set of non-empty strings, e.g. "
              + DEFAULT_TYPE
              + "; set them with withAllowedTypes(...)");
    }
    return toBuilder().setAllowedTypes(new TreeSet<>(types)).build();
  }

  /**
   * The only currency accepted in {@code data.currency}, an ISO 4217 code such as GBP.
   *
   * @throws IllegalArgumentException when the events are not payments ({@link PaymentFields})
   */
  public ParseCloudEvents withCurrency(String currency) {
    if (currency == null || !currency.matches("[A-Z]{3}")) {
      throw new IllegalArgumentException(
          "currency must be a three-letter ISO 4217 code such as GBP, got '"
              + currency
              + "'; set it with withCurrency(...)");
    }
    return toBuilder().setEvents(PaymentFields.withCurrency(events(), currency)).build();
  }

  /** The largest record accepted, in bytes; larger records are dead-lettered. */
  public ParseCloudEvents withMaxEventBytes(int maxEventBytes) {
    if (maxEventBytes < 64) {
      throw new IllegalArgumentException(
          "maxEventBytes must be at least 64 bytes, got "
              + maxEventBytes
              + "; set it with withMaxEventBytes(...)");
    }
    return toBuilder().setMaxEventBytes(maxEventBytes).build();
  }

  /**
   * How far an event's {@code time} may lie after its record's ingestion time; a later event is
   * dead-lettered as {@code time_in_future}. Zero accepts no event time after ingestion.
   */
  public ParseCloudEvents withMaxFutureSkew(Duration maxFutureSkew) {
    if (maxFutureSkew == null || maxFutureSkew.getMillis() < 0) {
      throw new IllegalArgumentException(
          "the maximum future skew must be zero or a positive duration such as PT10M, got "
              + maxFutureSkew
              + "; set it with withMaxFutureSkew(...) or --maxFutureSkew");
    }
    return toBuilder().setMaxFutureSkew(maxFutureSkew).build();
  }

  /**
   * Where an event's time is read, as a spec's {@code clocks.eventTime} says: {@code time} (the
   * CloudEvents attribute, the default) or the name of a required timestamp field of the events'
   * {@code data}. With a field, the attribute {@code time} becomes optional (checked when present,
   * as CloudEvents requires, and not used), and the field's value is the event time: its limits,
   * {@link #withMaxFutureSkew} and the record timestamp apply to it as to the attribute. The field
   * is checked against {@link #withEvents}' fields when the transform is applied.
   */
  public ParseCloudEvents withEventTime(String field) {
    if (field == null || field.isEmpty()) {
      throw new IllegalArgumentException(
          "the event time is the attribute 'time' or a timestamp field of data, got '"
              + field
              + "'; set it with withEventTime(...) or the spec's clocks.eventTime");
    }
    return toBuilder().setEventTimeField(field).build();
  }

  @Override
  public WithFailures.Result<PCollection<Event>, DeadLetter> expand(PCollection<RawRecord> input) {
    TupleTag<Event> eventsTag = new TupleTag<Event>() {};
    TupleTag<DeadLetter> failuresTag = new TupleTag<DeadLetter>() {};
    PCollectionTuple outputs =
        input.apply(
            "ParseAndValidate",
            ParDo.of(
                    new ParseCloudEventsFn(
                        allowedTypes(),
                        events(),
                        maxEventBytes(),
                        maxFutureSkew(),
                        eventTimeField(),
                        eventsTag,
                        failuresTag))
                .withOutputTags(eventsTag, TupleTagList.of(failuresTag)));
    outputs.get(eventsTag).setCoder(Event.EventCoder.of());
    outputs.get(failuresTag).setCoder(DeadLetter.DeadLetterCoder.of());
    return WithFailures.Result.of(outputs, eventsTag, failuresTag);
  }

  /**
   * This transform's parsing and validation as plain Java, for code that is not a Beam pipeline
   * (the native Flink baseline of the benchmark suite, which must do the same work per record). Not
   * serialisable and not thread-safe: make one per worker thread.
   */
  public Parser newParser() {
    return new Parser(
        new ParseCloudEventsFn(
            allowedTypes(),
            events(),
            maxEventBytes(),
            maxFutureSkew(),
            eventTimeField(),
            null,
            null));
  }

  /**
   * Parses records as {@link ParseCloudEvents} does, with the same rules and the same dead letters;
   * only the Beam-specific checks are left out (the record timestamp, which a caller outside Beam
   * assigns itself, and the metrics).
   */
  public static final class Parser {
    private final ParseCloudEventsFn fn;

    private Parser(ParseCloudEventsFn fn) {
      this.fn = fn;
      try {
        fn.setup();
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException("this JVM has no SHA-256", e);
      }
    }

    /** The event, or null after handing the record's dead letter to {@code deadLetters}. */
    public @Nullable Event parse(
        RawRecord record, java.util.function.Consumer<DeadLetter> deadLetters) {
      try {
        return fn.parse(record);
      } catch (Rejection rejection) {
        deadLetters.accept(deadLetterOf(record, rejection));
      } catch (RuntimeException e) {
        deadLetters.accept(
            deadLetterOf(
                record,
                new Rejection(
                    DeadLetterReason.INVALID_CLOUDEVENT, "unexpected parser error: " + e, e)));
      }
      return null;
    }
  }

  /** The dead letter of a rejected record. */
  static DeadLetter deadLetterOf(RawRecord record, Rejection rejection) {
    Throwable cause = rejection.getCause();
    return new DeadLetter(
        rejection.reason,
        rejection.getMessage(),
        record.sourceError() != null ? "Source" : STEP,
        record.origin(),
        record.payload(),
        cause == null ? null : cause.toString());
  }

  /** A validation failure with its reason's code; internal control flow of the parser. */
  static final class Rejection extends Exception {
    final String reason;

    Rejection(DeadLetterReason reason, String message) {
      this(reason, message, null);
    }

    Rejection(DeadLetterReason reason, String message, @Nullable Throwable cause) {
      this(reason.code(), message, cause);
    }

    /** A spec field's rejection, with the field's own reason. */
    Rejection(FieldRejection rejection) {
      this(rejection.reason(), rejection.getMessage(), null);
    }

    private Rejection(String reason, String message, @Nullable Throwable cause) {
      super(message, cause, false, false);
      this.reason = reason;
    }
  }

  /** Parses one record; see {@link ParseCloudEvents} for the rules. */
  static final class ParseCloudEventsFn extends DoFn<RawRecord, Event> {
    private final Set<String> allowedTypes;
    private final FieldParser fields;
    private final int keyIndex;
    private final int maxEventBytes;
    private final Duration maxFutureSkew;

    /** The {@code data} field that holds the event time, or -1 for the attribute {@code time}. */
    private final int eventTimeField;

    private final @Nullable TupleTag<Event> eventsTag;
    private final @Nullable TupleTag<DeadLetter> failuresTag;

    private final Counter read = TidemarkMetrics.counter(TidemarkMetrics.READ);
    private final Counter valid = TidemarkMetrics.counter(TidemarkMetrics.VALID);
    private final Counter deadLetters = TidemarkMetrics.counter(TidemarkMetrics.DEAD_LETTERS);
    private final Distribution ingestionLag =
        TidemarkMetrics.distribution(TidemarkMetrics.INGESTION_LAG);
    private final Gauge ingestionLagMax =
        TidemarkMetrics.gauge(TidemarkMetrics.INGESTION_LAG + TidemarkMetrics.BUNDLE_MAX);
    private transient @Nullable BundleStats lags;

    private transient @Nullable MessageDigest digest;
    private transient @Nullable CharsetDecoder utf8;

    ParseCloudEventsFn(
        Set<String> allowedTypes,
        PipelineSpec.Events events,
        int maxEventBytes,
        Duration maxFutureSkew,
        String eventTime,
        @Nullable TupleTag<Event> eventsTag,
        @Nullable TupleTag<DeadLetter> failuresTag) {
      this.allowedTypes = allowedTypes;
      this.fields = FieldParser.of(events);
      this.keyIndex = fields.keyIndex();
      this.maxEventBytes = maxEventBytes;
      this.maxFutureSkew = maxFutureSkew;
      this.eventTimeField = fields.eventTimeIndex(eventTime);
      this.eventsTag = eventsTag;
      this.failuresTag = failuresTag;
    }

    @Setup
    public void setup() throws NoSuchAlgorithmException {
      digest = MessageDigest.getInstance("SHA-256");
      utf8 =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT);
    }

    @StartBundle
    public void startBundle() {
      lags = new BundleStats();
    }

    @FinishBundle
    public void finishBundle() {
      if (lags != null) {
        lags.report(ingestionLag, ingestionLagMax);
      }
    }

    @ProcessElement
    public void processElement(
        @Element RawRecord record, @Timestamp Instant timestamp, MultiOutputReceiver out) {
      read.inc();
      try {
        Event event = parse(record);
        if (event.eventTime().isBefore(timestamp)) {
          throw new Rejection(
              DeadLetterReason.INVALID_TIME,
              "event time "
                  + event.eventTime()
                  + " is before the timestamp "
                  + timestamp
                  + " its source assigned; the source must assign the event time or an earlier one");
        }
        valid.inc();
        if (lags != null) {
          lags.add(record.ingestionTime().getMillis() - event.eventTime().getMillis());
        }
        out.get(eventsTag).outputWithTimestamp(event, event.eventTime());
      } catch (Rejection rejection) {
        deadLetter(record, rejection, out);
      } catch (RuntimeException e) {
        // A bug or a library surprise on one record must not stop the pipeline: keep the record.
        deadLetter(
            record,
            new Rejection(DeadLetterReason.INVALID_CLOUDEVENT, "unexpected parser error: " + e, e),
            out);
      }
    }

    private void deadLetter(RawRecord record, Rejection rejection, MultiOutputReceiver out) {
      deadLetters.inc();
      TidemarkMetrics.counter(TidemarkMetrics.DEAD_LETTERS_PREFIX + rejection.reason).inc();
      out.get(failuresTag).output(deadLetterOf(record, rejection));
    }

    Event parse(RawRecord record) throws Rejection {
      if (record.sourceError() != null) {
        throw new Rejection(
            record.sourceError(), Objects.requireNonNullElse(record.sourceErrorMessage(), ""));
      }
      byte[] bytes = record.payload();
      if (bytes.length > maxEventBytes) {
        throw new Rejection(
            DeadLetterReason.OVERSIZED_RECORD,
            "record is "
                + bytes.length
                + " bytes, over the limit of "
                + maxEventBytes
                + " (--maxEventBytes)");
      }
      try {
        utf8.reset().decode(ByteBuffer.wrap(bytes));
      } catch (CharacterCodingException e) {
        throw new Rejection(DeadLetterReason.INVALID_UTF8, "record is not valid UTF-8: " + e);
      }
      JsonNode root;
      try {
        root = Json.STRICT_READER.readTree(bytes);
      } catch (IOException e) {
        String problem = firstLine(e);
        throw new Rejection(
            DeadLetterReason.INVALID_JSON,
            "record is not valid JSON: "
                + problem
                + (problem.startsWith("Duplicate field")
                    ? " (a member name may appear only once in an object)"
                    : ""),
            e);
      }
      if (root == null || root.isMissingNode()) {
        throw new Rejection(DeadLetterReason.INVALID_JSON, "record is empty");
      }
      if (!root.isObject() || !root.has("specversion")) {
        throw new Rejection(
            DeadLetterReason.NOT_A_CLOUDEVENT,
            "record is JSON but not a structured-mode CloudEvent (needs an object with"
                + " specversion)");
      }
      String specVersion = root.get("specversion").asText();
      if (!"1.0".equals(specVersion)) {
        throw new Rejection(
            DeadLetterReason.UNSUPPORTED_SPECVERSION,
            "specversion is '" + specVersion + "'; only CloudEvents 1.0 is accepted");
      }
      for (String attribute : new String[] {"id", "source", "type", "time"}) {
        JsonNode value = root.get(attribute);
        if (attribute.equals("time") && eventTimeField >= 0 && value == null) {
          // The event time is a data field: the attribute is optional, as CloudEvents has it.
          continue;
        }
        if (value == null || !value.isTextual() || value.asText().isEmpty()) {
          throw new Rejection(
              DeadLetterReason.MISSING_ATTRIBUTE,
              "required attribute '" + attribute + "' is missing, empty or not a string");
        }
        String unsafe = FieldParser.unsafeCharacter(value.asText());
        if (unsafe != null && !attribute.equals("time")) {
          throw new Rejection(
              DeadLetterReason.INVALID_ATTRIBUTE,
              "attribute '" + attribute + "' holds " + unsafe + "; identifiers must be plain text");
        }
      }
      @Nullable Instant attributeTime = null;
      if (root.has("time")) {
        String timeText = root.get("time").asText();
        try {
          attributeTime = Instant.ofEpochMilli(Rfc3339.epochMillis(timeText));
        } catch (DateTimeException e) {
          throw new Rejection(
              DeadLetterReason.INVALID_TIME,
              "time '" + timeText + "' is not an RFC 3339 timestamp such as 2026-01-01T00:00:00Z");
        }
      }
      if (eventTimeField < 0) {
        checkEventTime(attributeTime, "time '" + root.get("time").asText() + "'", record);
      }
      String type = root.get("type").asText();
      if (!allowedTypes.contains(type)) {
        throw new Rejection(
            DeadLetterReason.UNSUPPORTED_TYPE,
            "type '" + type + "' is not one of " + allowedTypes + " (--eventTypes)");
      }
      // The SDK checks the context attributes; data and time are checked here, so it does not see
      // them (it would write data back to bytes and parse time a second time, per event).
      ObjectNode attributes = (ObjectNode) root;
      JsonNode dataNode = attributes.remove("data");
      attributes.remove("time");
      if (dataNode != null && attributes.has("data_base64")) {
        throw new Rejection(
            DeadLetterReason.INVALID_CLOUDEVENT,
            "the event has both data and data_base64; the CloudEvents JSON format allows one");
      }
      CloudEvent event;
      try {
        event = Json.MAPPER.treeToValue(attributes, CloudEvent.class);
      } catch (JsonProcessingException | IllegalArgumentException e) {
        throw new Rejection(
            DeadLetterReason.INVALID_CLOUDEVENT,
            "the CloudEvents SDK rejected the event: " + firstLine(e),
            e);
      }
      ObjectNode data = dataOf(dataNode, attributes);
      FieldValues values;
      Instant eventTime;
      try {
        if (eventTimeField < 0) {
          eventTime = attributeTime;
          values = fields.parse(data, eventTime.getMillis(), record.ingestionTime().getMillis());
        } else {
          values = fields.parseTimedBy(eventTimeField, data, record.ingestionTime().getMillis());
          eventTime = Instant.ofEpochMilli(values.eventTimeMillis());
          String name = fields.nameOf(eventTimeField);
          checkEventTime(eventTime, "data." + name + " '" + data.get(name).asText() + "'", record);
        }
      } catch (FieldRejection rejection) {
        throw new Rejection(rejection);
      }
      return new Event(
          event.getSource().toString(),
          event.getId(),
          type,
          values,
          keyIndex,
          fingerprint(event, eventTime, data));
    }

    /**
     * Refuses an event time ({@code what} says where it was read) outside the times every sink
     * holds, or more than the future skew after the record's ingestion time.
     */
    private void checkEventTime(Instant eventTime, String what, RawRecord record) throws Rejection {
      if (eventTime.isBefore(EARLIEST_EVENT_TIME) || eventTime.isAfter(LATEST_EVENT_TIME)) {
        throw new Rejection(
            DeadLetterReason.INVALID_TIME,
            what
                + " is out of range: event times must lie within "
                + EARLIEST_EVENT_TIME
                + " .. "
                + LATEST_EVENT_TIME
                + ", so that the event's windows and clocks fit every sink (BigQuery TIMESTAMP"
                + " holds years 0001-9999)");
      }
      if (isLaterThan(eventTime, record.ingestionTime(), maxFutureSkew)) {
        throw new Rejection(
            DeadLetterReason.TIME_IN_FUTURE,
            "event time "
                + eventTime
                + " is more than the allowed skew of "
                + maxFutureSkew.toPeriod()
                + " after its ingestion time "
                + record.ingestionTime()
                + " (a producer clock ahead?); fix the producer's clock or raise"
                + " --maxFutureSkew");
      }
    }

    /**
     * The event's data as written in the record: it must be a JSON object ({@code data_base64} and
     * string data are rejected, whatever their content type says).
     */
    private static ObjectNode dataOf(@Nullable JsonNode node, JsonNode root) throws Rejection {
      if (node == null || node.isNull()) {
        throw new Rejection(
            DeadLetterReason.INVALID_DATA,
            root.has("data_base64")
                ? "data is not a JSON object: data_base64 is not accepted"
                : "the event has no data");
      }
      if (!node.isObject()) {
        throw new Rejection(
            DeadLetterReason.INVALID_DATA, "data is not a JSON object: got " + node.getNodeType());
      }
      return (ObjectNode) node;
    }

    private byte[] fingerprint(CloudEvent event, Instant eventTime, ObjectNode data) {
      StringBuilder content = new StringBuilder();
      content
          .append(event.getType())
          .append('\n')
          .append(eventTime.getMillis())
          .append('\n')
          .append(Objects.toString(event.getSubject(), ""))
          .append('\n')
          .append(Json.canonical(data));
      byte[] hash = digest.digest(content.toString().getBytes(StandardCharsets.UTF_8));
      return Arrays.copyOf(hash, Sha256.PREFIX_BYTES);
    }

    /**
     * Whether {@code eventTime} lies more than {@code skew} after {@code ingestionTime}, without
     * overflow whatever the ingestion time a source assigned.
     */
    static boolean isLaterThan(Instant eventTime, Instant ingestionTime, Duration skew) {
      long event = eventTime.getMillis();
      long ingestion = ingestionTime.getMillis();
      long lead = event - ingestion;
      boolean overflow = ((event ^ ingestion) & (event ^ lead)) < 0;
      return overflow ? event > ingestion : lead > skew.getMillis();
    }

    private static String firstLine(Exception e) {
      String message = String.valueOf(e.getMessage());
      int newline = message.indexOf('\n');
      return newline < 0 ? message : message.substring(0, newline);
    }
  }
}
