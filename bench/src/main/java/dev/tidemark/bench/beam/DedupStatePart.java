package dev.tidemark.bench.beam;

import dev.tidemark.bench.suite.BenchPart;
import dev.tidemark.bench.suite.BenchProfile;
import dev.tidemark.bench.suite.BenchResults;
import dev.tidemark.bench.suite.ExtraPipelineArgs;
import dev.tidemark.bench.suite.Stats;
import dev.tidemark.testkit.generate.GeneratorConfig;
import dev.tidemark.transforms.DeduplicateEvents;
import dev.tidemark.transforms.values.Event;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.beam.runners.flink.EmbeddedFlinkJobsShim;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.io.GenerateSequence;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.SerializableFunction;
import org.apache.beam.sdk.values.PCollection;
import org.apache.flink.runtime.checkpoint.AbstractCheckpointStats;
import org.apache.flink.runtime.checkpoint.CheckpointStatsStatus;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * Memory: {@code DeduplicateEvents} state stays bounded by the identities inside the horizon. A
 * streaming run on the FlinkRunner (embedded MiniCluster), once with the heap state backend and
 * full checkpoints and once with RocksDB and incremental checkpoints, each over {@code
 * memoryHorizons} horizons of event time with a short horizon; every completed checkpoint gives the
 * serialized size of all the job's state, and the input gives the number of live keys at that
 * checkpoint (identities first seen before it whose first event time plus the horizon is still
 * ahead of the watermark). State bytes per live key = state size / live keys, the median over the
 * checkpoints after the first horizon.
 *
 * <p>The source emits the generated stream (already parsed events, arrival order) at a fixed wall
 * rate; an element's timestamp, and so the watermark, is the replay watermark: the largest event
 * time so far minus the generator's out-of-orderness.
 */
public final class DedupStatePart implements BenchPart {
  static final String NAME = "beam-dedup-state";
  static final long SEED = 20261208L;
  static final Duration HORIZON = Duration.standardMinutes(10);
  static final int ACCOUNTS = 1_000;

  private static final Map<String, AtomicLong> PROGRESS = new ConcurrentHashMap<>();

  @Override
  public String name() {
    return NAME;
  }

  /**
   * Wall seconds the source takes to emit the stream: below the full profile, about 1,000 events a
   * second (20 s for the small profile), at least 5 s (a few checkpoints).
   */
  static int wallSeconds(BenchProfile profile) {
    return profile.isFull() ? 240 : Math.max(5, profile.events / 1_000);
  }

  /**
   * Where the job keeps its state: Flink's heap backend, or RocksDB with incremental checkpoints.
   */
  enum Backend {
    HEAP(
        "Flink's heap state backend 'filesystem', full checkpoints",
        "stateBytesPerDedupKey",
        "--stateBackend=filesystem"),
    ROCKSDB(
        "RocksDB with incremental checkpoints",
        "stateBytesPerDedupKeyRocksDb",
        "--stateBackendFactory=" + IncrementalRocksDbFactory.class.getName());

    final String description;
    final String key;
    final String argument;

    Backend(String description, String key, String argument) {
      this.description = description;
      this.key = key;
      this.argument = argument;
    }
  }

  @Override
  public void run(BenchProfile profile, BenchResults results) throws Exception {
    for (Backend backend : Backend.values()) {
      run(profile, results, backend);
    }
  }

  private void run(BenchProfile profile, BenchResults results, Backend backend) throws Exception {
    int horizons = profile.memoryHorizons;
    long spanSeconds = horizons * HORIZON.getStandardSeconds();
    GeneratorConfig config =
        GeneratorConfig.builder()
            .seed(SEED)
            .numEvents(profile.events)
            .numAccounts(ACCOUNTS)
            .eventsPerSecond(profile.events / (double) spanSeconds)
            .build();
    List<Event> events = BenchInputs.generate(config).events;
    int n = events.size();
    long outOfOrder = config.maxOutOfOrderness().toMillis();
    List<Long> watermark = new ArrayList<>(n);
    long max = Long.MIN_VALUE;
    for (Event e : events) {
      max = Math.max(max, e.eventTime().getMillis());
      watermark.add(max - outOfOrder);
    }
    long start = events.get(0).eventTime().getMillis();
    // First copies: index and event time, for the live keys at any point of the input.
    Map<List<String>, Integer> firstIndex = new HashMap<>();
    for (int i = 0; i < n; i++) {
      firstIndex.putIfAbsent(List.of(events.get(i).source(), events.get(i).id()), i);
    }
    int[] firsts = firstIndex.values().stream().mapToInt(Integer::intValue).sorted().toArray();
    long rate = Math.max(1, Math.round(n / (double) wallSeconds(profile)));
    long checkpointMillis = profile.isFull() ? 2000 : 1000;
    Path storage = Files.createTempDirectory("tidemark-bench-checkpoints");
    List<Sample> samples = new ArrayList<>();
    try (BenchInputs.Held<Event> heldEvents = BenchInputs.hold(events, Event.EventCoder.of());
        BenchInputs.Held<Long> heldWatermark =
            BenchInputs.hold(watermark, org.apache.beam.sdk.coders.VarLongCoder.of())) {
      String progressKey = heldEvents.handle();
      AtomicLong progress = new AtomicLong(-1);
      PROGRESS.put(progressKey, progress);
      Pipeline pipeline =
          pipeline(
              heldEvents.handle(),
              heldWatermark.handle(),
              progressKey,
              n,
              rate,
              checkpointMillis,
              storage,
              backend);
      TreeMap<Long, Long> progressAt = new TreeMap<>();
      Map<Long, AbstractCheckpointStats> completed = new TreeMap<>();
      long deadline =
          System.nanoTime() + 4L * wallSeconds(profile) * 1_000_000_000L + 60_000_000_000L;
      EmbeddedFlinkJobsShim.Job job = EmbeddedFlinkJobsShim.start(pipeline);
      try {
        long doneAt = Long.MAX_VALUE;
        Map<Long, Long> heapAt = new HashMap<>();
        while (System.nanoTime() < deadline) {
          long now = System.currentTimeMillis();
          long emitted = progress.get();
          progressAt.put(now, emitted);
          for (AbstractCheckpointStats c : job.checkpointStats().getHistory().getCheckpoints()) {
            if (c.getStatus() == CheckpointStatsStatus.COMPLETED
                && !completed.containsKey(c.getCheckpointId())) {
              completed.put(c.getCheckpointId(), c);
              heapAt.put(c.getCheckpointId(), HeapSampler.usedHeap());
            }
          }
          if (emitted >= n - 1 && doneAt == Long.MAX_VALUE) {
            doneAt = now;
          }
          long end = doneAt;
          if (completed.values().stream().anyMatch(c -> c.getTriggerTimestamp() > end)) {
            break; // a checkpoint of the whole input
          }
          Thread.sleep(50);
        }
        for (AbstractCheckpointStats c : completed.values()) {
          Map.Entry<Long, Long> at = progressAt.floorEntry(c.getTriggerTimestamp());
          long index = at == null ? -1 : at.getValue();
          if (index < 0) {
            continue;
          }
          long w = watermark.get((int) index);
          samples.add(
              new Sample(
                  (w - start) / 3_600_000.0,
                  c.getStateSize(),
                  liveKeys(firsts, events, index, w),
                  heapAt.get(c.getCheckpointId())));
        }
      } finally {
        job.stop(Duration.standardMinutes(1));
        PROGRESS.remove(progressKey);
        deleteTree(storage);
      }
    }
    report(profile, results, n, rate, checkpointMillis, samples, backend);
  }

  /** One completed checkpoint. */
  static final class Sample {
    final double eventTimeHours;
    final long stateBytes;
    final long liveKeys;
    final long heapBytes;

    Sample(double eventTimeHours, long stateBytes, long liveKeys, long heapBytes) {
      this.eventTimeHours = eventTimeHours;
      this.stateBytes = stateBytes;
      this.liveKeys = liveKeys;
      this.heapBytes = heapBytes;
    }
  }

  /**
   * Identities first seen at or before {@code index} whose first copy's event time plus the horizon
   * is not behind the watermark {@code w}: their expiry timers have not fired.
   */
  static long liveKeys(int[] firsts, List<Event> events, long index, long w) {
    long live = 0;
    for (int i : firsts) {
      if (i > index) {
        break;
      }
      if (events.get(i).eventTime().getMillis() + HORIZON.getMillis() > w) {
        live++;
      }
    }
    return live;
  }

  private void report(
      BenchProfile profile,
      BenchResults results,
      int n,
      long rate,
      long checkpointMillis,
      List<Sample> samples,
      Backend backend) {
    String on = backend == Backend.HEAP ? "" : " (" + backend.name().toLowerCase(Locale.ROOT) + ")";
    samples.sort(Comparator.comparingDouble(s -> s.eventTimeHours));
    double horizonHours = HORIZON.getMillis() / 3_600_000.0;
    List<Double> perKey = new ArrayList<>();
    Map<Integer, List<Sample>> byHorizon = new TreeMap<>();
    for (Sample s : samples) {
      results.point(
          "dedup-state-over-time",
          "checkpointed state MiB" + on,
          s.eventTimeHours,
          s.stateBytes / 1048576.0);
      if (backend == Backend.HEAP) {
        results.point(
            "dedup-state-over-time", "live keys / 10k", s.eventTimeHours, s.liveKeys / 10_000.0);
        results.point("heap-over-time", "used heap MiB", s.eventTimeHours, s.heapBytes / 1048576.0);
      }
      int horizon = Math.max(0, (int) Math.floor(s.eventTimeHours / horizonHours));
      byHorizon.computeIfAbsent(horizon, h -> new ArrayList<>()).add(s);
      if (horizon >= 1 && s.liveKeys > 0) {
        perKey.add(s.stateBytes / (double) s.liveKeys);
      }
    }
    StringBuilder flat = new StringBuilder();
    for (Map.Entry<Integer, List<Sample>> e : byHorizon.entrySet()) {
      List<Sample> in = e.getValue();
      flat.append(
          String.format(
              Locale.ROOT,
              "%shorizon %d: %d checkpoints, state median %.2f MiB, live keys median %d, heap"
                  + " median %.0f MiB",
              flat.length() == 0 ? "" : "; ",
              e.getKey() + 1,
              in.size(),
              median(in.stream().mapToDouble(s -> s.stateBytes / 1048576.0)),
              (long) median(in.stream().mapToDouble(s -> s.liveKeys)),
              median(in.stream().mapToDouble(s -> s.heapBytes / 1048576.0))));
    }
    results.note(
        NAME,
        String.format(
            Locale.ROOT,
            "%s: DeduplicateEvents alone, streaming on the FlinkRunner's embedded MiniCluster"
                + " (parallelism 1, %s, checkpoints every %d ms); %d events (%d accounts) over %d horizons of %s event time,"
                + " emitted at %d events/s wall; state = Flink's checkpointed size of all the"
                + " job's state (dedup value cells, Beam's timer bookkeeping and Flink's timers,"
                + " plus the source's few bytes), serialized, not the in-heap object size; live"
                + " keys from the input at each checkpoint's trigger; bytes per live key ="
                + " median over checkpoints after the first horizon; heap = whole JVM's used heap"
                + " at each checkpoint's completion (includes garbage)",
            backend.key,
            backend.description,
            checkpointMillis,
            n,
            ACCOUNTS,
            profile.memoryHorizons,
            HORIZON,
            rate));
    results.note(NAME, backend.key + " per horizon of event time: " + flat);
    double[] after =
        byHorizon.entrySet().stream()
            .filter(e -> e.getKey() >= 1)
            .mapToDouble(e -> median(e.getValue().stream().mapToDouble(s -> s.stateBytes)))
            .toArray();
    if (after.length > 0) {
      Stats flatness = Stats.of(after);
      results.note(
          NAME,
          String.format(
              Locale.ROOT,
              "%s flatness after the first horizon: median state per horizon from %.2f to %.2f"
                  + " MiB over %d horizon(s), max/min %.3f",
              backend.key,
              flatness.min() / 1048576.0,
              flatness.max() / 1048576.0,
              after.length,
              flatness.max() / flatness.min()));
    }
    if (profile.memoryHorizons < 10 && backend == Backend.HEAP) {
      results.note(
          NAME,
          "this profile spans "
              + profile.memoryHorizons
              + " horizons; the target needs at least 10 (the full profile)");
    }
    if (perKey.isEmpty()) {
      results.figure(backend.key, null);
      results.note(NAME, backend.key + " is null: no checkpoint completed after the first horizon");
      return;
    }
    Stats stats = Stats.of(perKey.stream().mapToDouble(Double::doubleValue).toArray());
    results.measure(NAME, "state bytes per live dedup key" + on, stats, "bytes");
    results.figure(backend.key, stats.median());
  }

  private static double median(java.util.stream.DoubleStream values) {
    double[] v = values.toArray();
    return v.length == 0 ? Double.NaN : Stats.of(v).median();
  }

  private static Pipeline pipeline(
      String eventsHandle,
      String watermarkHandle,
      String progressKey,
      int n,
      long rate,
      long checkpointMillis,
      Path storage,
      Backend backend) {
    Pipeline pipeline =
        Pipeline.create(
            PipelineOptionsFactory.fromArgs(
                    ExtraPipelineArgs.append(
                        List.of(
                            "--runner=FlinkRunner",
                            "--flinkMaster=[local]",
                            "--streaming=true",
                            "--parallelism=1",
                            "--checkpointingInterval=" + checkpointMillis,
                            backend.argument,
                            "--stateBackendStoragePath=" + storage.toUri())))
                .create());
    PCollection<Event> events =
        pipeline
            .apply(
                "GenerateIndexes",
                GenerateSequence.from(0)
                    .withRate(rate, Duration.standardSeconds(1))
                    .withTimestampFn(new WatermarkTimeFn(watermarkHandle, n)))
            .apply("HeldEvents", ParDo.of(new HeldEventFn(eventsHandle, progressKey, n)))
            .setCoder(Event.EventCoder.of());
    DeduplicateEvents.Result deduped =
        events.apply("DeduplicateEvents", DeduplicateEvents.create().withHorizon(HORIZON));
    FlinkBatchRuns.count(deduped.events(), "Unique");
    FlinkBatchRuns.count(deduped.duplicates(), "Duplicates");
    return pipeline;
  }

  /** Index to its replay watermark; past the end, the last one (the watermark stops there). */
  static final class WatermarkTimeFn implements SerializableFunction<Long, Instant> {
    private final String handle;
    private final int n;

    WatermarkTimeFn(String handle, int n) {
      this.handle = handle;
      this.n = n;
    }

    @Override
    public Instant apply(Long index) {
      List<Long> watermark = BenchInputs.held(handle);
      return new Instant(watermark.get((int) Math.min(index, n - 1)));
    }
  }

  /** Index to its held event (nothing past the end); records how far the source got. */
  static final class HeldEventFn extends DoFn<Long, Event> {
    private final String handle;
    private final String progressKey;
    private final int n;

    HeldEventFn(String handle, String progressKey, int n) {
      this.handle = handle;
      this.progressKey = progressKey;
      this.n = n;
    }

    @ProcessElement
    public void processElement(@Element Long index, OutputReceiver<Event> out) {
      if (index < n) {
        List<Event> events = BenchInputs.held(handle);
        out.output(events.get(index.intValue()));
      }
      AtomicLong progress = PROGRESS.get(progressKey);
      if (progress != null) {
        progress.accumulateAndGet(Math.min(index, n - 1), Math::max);
      }
    }
  }

  private static void deleteTree(Path root) {
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (java.io.IOException e) {
      // a temporary directory; leave it
    }
  }
}
