package dev.tidemark.pipelines.io.kafka;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.RunnableFuture;
import org.apache.beam.runners.core.DoFnRunner;
import org.apache.beam.runners.core.construction.SerializablePipelineOptions;
import org.apache.beam.runners.flink.translation.wrappers.streaming.stableinput.BufferingDoFnRunner;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.values.WindowedValue;
import org.apache.beam.sdk.values.WindowedValues;
import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.DefaultOperatorStateBackend;
import org.apache.flink.runtime.state.DefaultOperatorStateBackendBuilder;
import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.memory.MemCheckpointStreamFactory;
import org.joda.time.Instant;
import org.junit.Test;

/**
 * How Beam's FlinkRunner (2.70) releases the input of a {@code @RequiresStableInput} step, which
 * the transactional Kafka sink's writer is: the buffering runner the runner wraps such a step in,
 * driven as Flink drives it (a checkpoint's barrier, its completion, a snapshot and a restore of
 * the operator state).
 *
 * <p>Without a restore, an element that arrives after a checkpoint's barrier waits for the next
 * checkpoint. After a restore it does not: the runner keeps {@code --numConcurrentCheckpoints} + 1
 * buffers in a ring, the restored checkpoint's buffer is still pending, and the first checkpoint
 * after the restore rotates onto it; what arrives after that checkpoint's barrier is appended to
 * the restored buffer and released when that checkpoint completes, one checkpoint early. Had the
 * transactional sink's writer written those records at once, a second failure before the next
 * checkpoint completed would restore state in which the sink's sequencer never numbered them: their
 * replay numbered anew, the writer would refuse to skip records committed under other numbers, and
 * the job would fail on every restore. So on Flink the writer keeps each record one checkpoint
 * ({@code TransactionalKafkaWrite.Writer}). The second test asserts the early release: when a Beam
 * upgrade fixes it, it fails, and that hold can go.
 */
public class StableInputAfterRestoreTest {
  private static final SerializablePipelineOptions OPTIONS =
      new SerializablePipelineOptions(PipelineOptionsFactory.create());

  @Test
  public void withoutARestoreAnElementWaitsForTheCheckpointAfterItsArrival() throws Exception {
    Released released = new Released();
    BufferingDoFnRunner<String, Void> runner = runner(released, backend(List.of()));
    runner.processElement(element("before checkpoint 1"));
    runner.checkpoint(1);
    runner.processElement(element("after checkpoint 1"));
    runner.checkpointCompleted(1);

    assertThat(released.elements, contains("before checkpoint 1"));

    runner.checkpoint(2);
    runner.checkpointCompleted(2);
    assertThat(released.elements, contains("before checkpoint 1", "after checkpoint 1"));
  }

  @Test
  public void afterARestoreTheFirstCheckpointReleasesWhatArrivedAfterItsBarrier() throws Exception {
    DefaultOperatorStateBackend before = backend(List.of());
    BufferingDoFnRunner<String, Void> failed = runner(new Released(), before);
    failed.processElement(element("before checkpoint 1"));
    failed.checkpoint(1);
    // Checkpoint 1 completes on the JobManager; the task fails before it hears so.
    OperatorStateHandle checkpoint1 = snapshot(before, 1);

    Released released = new Released();
    BufferingDoFnRunner<String, Void> restored = runner(released, backend(List.of(checkpoint1)));
    restored.processElement(element("after the restore"));
    restored.checkpoint(2);
    restored.processElement(element("after checkpoint 2"));
    restored.checkpointCompleted(2);

    // What stable input promises is [before checkpoint 1, after the restore]; Beam 2.70 also
    // releases the element that arrived after checkpoint 2's barrier, which no completed checkpoint
    // holds.
    assertThat(
        released.elements,
        contains("before checkpoint 1", "after checkpoint 2", "after the restore"));
  }

  private static WindowedValue<String> element(String value) {
    return WindowedValues.valueInGlobalWindow(value);
  }

  private static BufferingDoFnRunner<String, Void> runner(
      Released released, DefaultOperatorStateBackend backend) throws Exception {
    return BufferingDoFnRunner.create(
        released,
        "stable-input-buffer",
        WindowedValues.getFullCoder(StringUtf8Coder.of(), GlobalWindow.Coder.INSTANCE),
        GlobalWindow.Coder.INSTANCE,
        backend,
        null,
        1,
        OPTIONS);
  }

  private static DefaultOperatorStateBackend backend(Collection<OperatorStateHandle> restored)
      throws Exception {
    return new DefaultOperatorStateBackendBuilder(
            StableInputAfterRestoreTest.class.getClassLoader(),
            new ExecutionConfig(),
            false,
            restored,
            new CloseableRegistry())
        .build();
  }

  private static OperatorStateHandle snapshot(DefaultOperatorStateBackend backend, long id)
      throws Exception {
    RunnableFuture<SnapshotResult<OperatorStateHandle>> snapshot =
        backend.snapshot(
            id,
            id,
            new MemCheckpointStreamFactory(1 << 20),
            CheckpointOptions.forCheckpointWithDefaultLocation());
    snapshot.run();
    return snapshot.get().getJobManagerOwnedSnapshot();
  }

  /** The step behind the buffer: records the elements it is given, in order. */
  private static final class Released implements DoFnRunner<String, Void> {
    final List<String> elements = new ArrayList<>();

    @Override
    public void startBundle() {}

    @Override
    public void processElement(WindowedValue<String> element) {
      elements.add(element.getValue());
    }

    @Override
    public <KeyT> void onTimer(
        String timerId,
        String timerFamilyId,
        KeyT key,
        BoundedWindow window,
        Instant timestamp,
        Instant outputTimestamp,
        TimeDomain timeDomain) {
      throw new UnsupportedOperationException("no timers here");
    }

    @Override
    public void finishBundle() {}

    @Override
    public <KeyT> void onWindowExpiration(BoundedWindow window, Instant timestamp, KeyT key) {}

    @Override
    public DoFn<String, Void> getFn() {
      throw new UnsupportedOperationException("not a DoFn");
    }
  }
}
