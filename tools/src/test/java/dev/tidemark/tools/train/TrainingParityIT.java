package dev.tidemark.tools.train;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;

import dev.tidemark.transforms.AssembleDecisions;
import dev.tidemark.transforms.ComputeFeatures;
import dev.tidemark.transforms.DeduplicateEvents;
import dev.tidemark.transforms.ParseCloudEvents;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.RawRecord;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Duration;
import org.joda.time.Instant;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * Training-serving parity: on the same labelled file, the features TrainModel's feature step
 * (batch) uses for each (account, window) equal the features the serving transforms emit in a
 * streaming replay (TestStream, watermark trailing the latest event time, like the replay reader)
 * in that window's on-time pane; and the two have exactly the same (account, window) set.
 */
public class TrainingParityIT {
  @Rule public final transient TestPipeline p = TestPipeline.create();
  @Rule public final TemporaryFolder tmp = new TemporaryFolder();

  private static final Duration SIZE = Duration.standardMinutes(5);
  private static final Duration PERIOD = Duration.standardMinutes(1);
  private static final Duration MAX_OUT_OF_ORDERNESS = Duration.standardSeconds(30);

  @Test
  public void trainingFeaturesEqualServingFeaturesPerAccountAndWindow() throws Exception {
    Path file =
        LabelledReplayFixture.write(
            tmp.getRoot().toPath().resolve("parity.ndjson"), 5, 12, 250, 4, 40);
    List<RawRecord> records = TrainingFeatures.readRecords(file);

    // Training: TrainModel's batch feature step (its own DirectRunner pipeline).
    List<LabelledWindow> rows = TrainingFeatures.compute(file, SIZE, PERIOD).rows();
    List<KV<String, String>> training = new ArrayList<>();
    for (LabelledWindow row : rows) {
      training.add(KV.of(row.key(), describe(row.features())));
    }
    assertThat(rows.size(), greaterThan(300));
    assertThat(rows.stream().filter(LabelledWindow::fraud).count(), greaterThan(10L));

    // Serving: the same records as a stream, through the serving transforms.
    PCollection<KV<String, String>> serving =
        p.apply("ServingInput", replay(records))
            .apply("ParseCloudEvents", ParseCloudEvents.create())
            .output()
            .apply("DeduplicateEvents", DeduplicateEvents.create())
            .events()
            .apply("ComputeFeatures", ComputeFeatures.of(SIZE, PERIOD))
            .features()
            .apply("AssembleDecisions", AssembleDecisions.create())
            .apply("KeyOnTimePanes", ParDo.of(new KeyOnTimeDecisionFn()))
            .setCoder(KvCoder.of(StringUtf8Coder.of(), StringUtf8Coder.of()));

    PAssert.that(serving).containsInAnyOrder(training);
    p.run().waitUntilFinish();
  }

  /** The replay reader's policy: after each line, watermark = latest event time - 30 s. */
  private static TestStream<RawRecord> replay(List<RawRecord> records) {
    TestStream.Builder<RawRecord> stream = TestStream.create(RawRecord.RawRecordCoder.of());
    Instant watermark = BoundedWindow.TIMESTAMP_MIN_VALUE;
    Instant latest = BoundedWindow.TIMESTAMP_MIN_VALUE;
    for (RawRecord record : records) {
      stream = stream.addElements(TimestampedValue.of(record, BoundedWindow.TIMESTAMP_MIN_VALUE));
      Instant time = TrainingFeatures.eventTime(parse(record.payload()));
      if (time != null && time.isAfter(latest)) {
        latest = time;
      }
      Instant candidate = latest.minus(MAX_OUT_OF_ORDERNESS);
      if (candidate.isAfter(watermark)) {
        watermark = candidate;
        stream = stream.advanceWatermarkTo(watermark);
      }
    }
    return stream.advanceWatermarkToInfinity();
  }

  private static com.fasterxml.jackson.databind.JsonNode parse(byte[] payload) {
    try {
      return dev.tidemark.transforms.util.Json.MAPPER.readTree(payload);
    } catch (java.io.IOException e) {
      return null;
    }
  }

  static String describe(Features f) {
    return f.toString();
  }

  /** (account, window) -> features of each on-time pane. */
  static final class KeyOnTimeDecisionFn extends DoFn<Decision, KV<String, String>> {
    @ProcessElement
    public void processElement(@Element Decision d, OutputReceiver<KV<String, String>> out) {
      if ("ON_TIME".equals(d.paneTiming())) {
        out.output(
            KV.of(
                LabelledWindow.key(d.key(), d.windowStart(), d.windowEnd()),
                describe(d.features())));
      }
    }
  }
}
