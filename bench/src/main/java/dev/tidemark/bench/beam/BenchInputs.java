package dev.tidemark.bench.beam;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.testkit.generate.EventGenerator;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.transforms.util.Json;
import dev.tidemark.transforms.values.Event;
import dev.tidemark.transforms.values.PaymentFields;
import dev.tidemark.transforms.values.RawRecord;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.VarIntCoder;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.SerializableFunction;
import org.apache.beam.sdk.values.PBegin;
import org.apache.beam.sdk.values.PCollection;
import org.joda.time.Instant;

/**
 * Benchmark inputs: a generated stream held in memory, both as the raw records a source would read
 * and as already-parsed {@link Event}s, and a source that emits a held list inside a job running in
 * this JVM (Flink's MiniCluster runs in-process), so that the measured step does not pay for
 * reading files or parsing JSON.
 *
 * <p>The parsed events are built here, not by {@code ParseCloudEvents}: the same fields, event time
 * from the CloudEvent {@code time}, ingestion time from the replay file's arrival clock (its {@code
 * advanceProcessingTime} lines), and a 128-bit content digest (MD5 of type, time and data) in place
 * of the parser's fingerprint: identical duplicates share it, conflicting ones do not. Malformed
 * lines (ids {@code bad-*}, unparseable JSON, missing fields) are kept as raw records and left out
 * of the events.
 */
public final class BenchInputs {
  private static final Map<String, List<?>> HELD = new ConcurrentHashMap<>();

  private BenchInputs() {}

  /** A generated stream in memory. */
  public static final class Stream {
    /** Every line a source would read, in arrival order; no directives. */
    public final List<RawRecord> records;

    /** Every valid event, duplicates included, in arrival order. */
    public final List<Event> events;

    Stream(List<RawRecord> records, List<Event> events) {
      this.records = records;
      this.events = events;
    }

    /** The first copy of every identity, in arrival order (what dedup passes on). */
    public List<Event> firstCopies() {
      Set<List<String>> seen = new HashSet<>();
      List<Event> first = new ArrayList<>();
      for (Event e : events) {
        if (seen.add(List.of(e.source(), e.id()))) {
          first.add(e);
        }
      }
      return first;
    }
  }

  /** The generator settings the suite uses: {@code events} spread over two hours of event time. */
  public static GeneratorConfig config(int events, int accounts, long seed) {
    return GeneratorConfig.builder()
        .seed(seed)
        .numEvents(events)
        .numAccounts(accounts)
        .eventsPerSecond(events / 7200.0)
        .build();
  }

  /** Generates {@code config}'s stream into memory. */
  public static Stream generate(GeneratorConfig config) throws IOException {
    ByteArrayOutputStream file =
        new ByteArrayOutputStream(Math.max(1 << 16, config.numEvents() * 400));
    new EventGenerator(config).writeTo(file);
    byte[] bytes = file.toByteArray();
    MessageDigest md5;
    try {
      md5 = MessageDigest.getInstance("MD5");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JVM has no MD5", e);
    }
    List<RawRecord> records = new ArrayList<>();
    List<Event> events = new ArrayList<>();
    long clock = Long.MIN_VALUE;
    int start = 0;
    long lineNumber = 0;
    for (int i = 0; i <= bytes.length; i++) {
      if (i < bytes.length && bytes[i] != '\n') {
        continue;
      }
      byte[] line = Arrays.copyOfRange(bytes, start, i);
      start = i + 1;
      if (line.length == 0) {
        continue;
      }
      lineNumber++;
      JsonNode root = readTree(line);
      if (root != null && root.has("advanceProcessingTime")) {
        clock += java.time.Duration.parse(root.get("advanceProcessingTime").asText()).toMillis();
        continue;
      }
      Event event = root == null ? null : toEvent(root, clock, md5);
      if (clock == Long.MIN_VALUE) {
        if (event == null) {
          throw new IllegalStateException("the generator's first line is not an event");
        }
        // The first line is the first event, arriving at its event time.
        clock = event.eventTime().getMillis();
      }
      records.add(RawRecord.of(line, new Instant(clock), "bench:" + lineNumber));
      if (event != null) {
        events.add(event);
      }
    }
    return new Stream(records, events);
  }

  private static JsonNode readTree(byte[] line) {
    try {
      JsonNode node = Json.MAPPER.readTree(line);
      return node != null && node.isObject() ? node : null;
    } catch (IOException | RuntimeException e) {
      return null; // malformed: a raw record only
    }
  }

  private static Event toEvent(JsonNode root, long clock, MessageDigest md5) {
    try {
      String id = root.path("id").asText("");
      JsonNode data = root.get("data");
      if (id.isEmpty() || id.startsWith("bad-") || data == null || !data.isObject()) {
        return null;
      }
      String time = root.get("time").asText();
      BigDecimal amount = data.get("amount").decimalValue();
      md5.reset();
      md5.update(
          (root.get("type").asText() + "\n" + time + "\n" + data).getBytes(StandardCharsets.UTF_8));
      Instant eventTime = Instant.parse(time);
      return PaymentFields.bundled()
          .event(
              root.get("source").asText(),
              id,
              root.get("type").asText(),
              eventTime,
              new Instant(clock == Long.MIN_VALUE ? eventTime.getMillis() : clock),
              data.get("accountId").asText(),
              amount.movePointRight(2).longValueExact(),
              data.get("currency").asText(),
              data.hasNonNull("merchantId") ? data.get("merchantId").asText() : null,
              data.hasNonNull("country") ? data.get("country").asText() : null,
              md5.digest());
    } catch (RuntimeException e) {
      return null; // malformed in a way this reader does not care to name
    }
  }

  /**
   * Holds {@code elements} for jobs in this JVM until {@link Held#close()}; read them with {@link
   * Held#read}.
   */
  public static <T> Held<T> hold(List<T> elements, Coder<T> coder) {
    String handle = UUID.randomUUID().toString();
    HELD.put(handle, List.copyOf(elements));
    return new Held<>(handle, elements.size(), coder);
  }

  /** A list held in memory for the jobs of this JVM. */
  public static final class Held<T> implements AutoCloseable {
    private final String handle;
    private final int size;
    private final Coder<T> coder;

    Held(String handle, int size, Coder<T> coder) {
      this.handle = handle;
      this.size = size;
      this.coder = coder;
    }

    public int size() {
      return size;
    }

    /** The key that finds the list with {@link BenchInputs#held}. */
    String handle() {
      return handle;
    }

    /**
     * A bounded source of the held elements, {@code shards} readers each emitting every {@code
     * shards}-th element, timestamped by {@code timestamp}.
     */
    public PTransform<PBegin, PCollection<T>> read(
        int shards, SerializableFunction<T, Instant> timestamp) {
      return new ReadHeld<>(handle, shards, coder, timestamp);
    }

    @Override
    public void close() {
      HELD.remove(handle);
    }
  }

  @SuppressWarnings("unchecked")
  static <T> List<T> held(String handle) {
    List<?> list = HELD.get(handle);
    if (list == null) {
      throw new IllegalStateException(
          "no held input " + handle + ": jobs reading held input must run in this JVM");
    }
    return (List<T>) list;
  }

  /** Reads a held list: one element per shard, then a DoFn per shard emits its elements. */
  static final class ReadHeld<T> extends PTransform<PBegin, PCollection<T>> {
    private final String handle;
    private final int shards;
    private final Coder<T> coder;
    private final SerializableFunction<T, Instant> timestamp;

    ReadHeld(
        String handle, int shards, Coder<T> coder, SerializableFunction<T, Instant> timestamp) {
      this.handle = handle;
      this.shards = shards;
      this.coder = coder;
      this.timestamp = timestamp;
    }

    @Override
    public PCollection<T> expand(PBegin begin) {
      return begin
          .apply(
              "Shards",
              Create.of(IntStream.range(0, shards).boxed().collect(Collectors.toList()))
                  .withCoder(VarIntCoder.of()))
          .apply("EmitHeld", ParDo.of(new EmitHeldFn<T>(handle, shards, timestamp)))
          .setCoder(coder);
    }
  }

  /** Emits every {@code shards}-th held element, starting at its shard's index. */
  static final class EmitHeldFn<T> extends DoFn<Integer, T> {
    private final String handle;
    private final int shards;
    private final SerializableFunction<T, Instant> timestamp;

    EmitHeldFn(String handle, int shards, SerializableFunction<T, Instant> timestamp) {
      this.handle = handle;
      this.shards = shards;
      this.timestamp = timestamp;
    }

    @ProcessElement
    public void processElement(@Element Integer shard, OutputReceiver<T> out) {
      List<T> list = held(handle);
      for (int i = shard; i < list.size(); i += shards) {
        T element = list.get(i);
        out.outputWithTimestamp(element, timestamp.apply(element));
      }
    }
  }
}
