package dev.tidemark.transforms;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.DeadLetterReason;
import dev.tidemark.transforms.values.Label;
import dev.tidemark.transforms.values.RawRecord;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.testing.PAssert;
import org.apache.beam.sdk.testing.TestPipeline;
import org.apache.beam.sdk.transforms.Create;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.MapElements;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.WithFailures;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.TypeDescriptors;
import org.joda.time.Instant;
import org.junit.Rule;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** Every label record is a label stamped with its own time, or a dead letter with its reason. */
@RunWith(JUnit4.class)
public class ParseLabelsTest {
  @Rule public final transient TestPipeline p = TestPipeline.create();

  private static final Instant INGESTED = Instant.parse("2026-01-02T00:00:00Z");

  private static String line(String id, String time, String data) {
    return "{\"specversion\":\"1.0\",\"id\":\""
        + id
        + "\",\"source\":\"/labels\",\"type\":\"tidemark.label.v1\",\"time\":\""
        + time
        + "\",\"data\":"
        + data
        + "}";
  }

  private static final String DATA =
      "{\"subject\":{\"source\":\"/pos\",\"id\":\"txn-1\"},\"key\":\"acct-1\","
          + "\"eventTime\":\"2026-01-01T00:00:00Z\",\"value\":\"fraud\"}";

  private static RawRecord record(String text) {
    return RawRecord.of(text.getBytes(StandardCharsets.UTF_8), INGESTED, "labels.ndjson:1");
  }

  static final class StampFn extends DoFn<Label, String> {
    @ProcessElement
    public void processElement(
        @Element Label label, @Timestamp Instant timestamp, OutputReceiver<String> out) {
      out.output(label.id() + "@" + timestamp);
    }
  }

  @Test
  public void eachRecordIsALabelOrADeadLetterWithItsReason() {
    List<RawRecord> records = new ArrayList<>();
    records.add(record(line("ok", "2026-01-01T06:00:00Z", DATA)));
    records.add(record("{not json"));
    records.add(record("[1,2]"));
    records.add(record(line("t", "2026-01-01T06:00:00Z", DATA).replace("tidemark.label.v1", "x")));
    records.add(
        record(line("v", "2026-01-01T06:00:00Z", DATA.replace(",\"value\":\"fraud\"", ""))));
    records.add(record(line("s", "2026-01-01T06:00:00Z", "{\"value\":\"fraud\"}")));
    records.add(record(line("time", "yesterday", DATA)));
    records.add(record(line("et", "2026-01-01T06:00:00Z", DATA.replace("2026-01-01T00", "soon"))));
    records.add(record(line("", "2026-01-01T06:00:00Z", DATA)));
    records.add(RawRecord.of(new byte[] {'{', (byte) 0xC3, '}'}, INGESTED, "labels.ndjson:10"));
    records.add(
        record(line("big", "2026-01-01T06:00:00Z", DATA).replace("acct-1", "a".repeat(70_000))));
    records.add(
        RawRecord.rejected(
            new byte[] {1},
            INGESTED,
            "kafka:labels-0@7",
            DeadLetterReason.INVALID_UTF8,
            "bad key"));
    // Eleven minutes after its ingestion: beyond the default skew of ten.
    records.add(record(line("ahead", "2026-01-02T00:11:00Z", DATA)));
    WithFailures.Result<PCollection<Label>, DeadLetter> parsed =
        p.apply(Create.of(records).withCoder(RawRecord.RawRecordCoder.of()))
            .apply(ParseLabels.create());
    PAssert.that(parsed.output().apply(ParDo.of(new StampFn())))
        .containsInAnyOrder("ok@2026-01-01T06:00:00.000Z");
    PAssert.that(
            parsed
                .failures()
                .apply(
                    MapElements.into(TypeDescriptors.strings())
                        .via((DeadLetter d) -> d.reasonCode() + " " + d.step())))
        .containsInAnyOrder(
            "invalid_json ParseLabels",
            "not_a_cloudevent ParseLabels",
            "unsupported_type ParseLabels",
            "invalid_data ParseLabels",
            "invalid_data ParseLabels",
            "invalid_time ParseLabels",
            "invalid_data ParseLabels",
            "missing_attribute ParseLabels",
            "invalid_utf8 ParseLabels",
            "oversized_record ParseLabels",
            "time_in_future ParseLabels",
            "invalid_utf8 Source");
    PipelineResult run = p.run();
    run.waitUntilFinish();
    assertThat(TestEvents.counter(run, ParseLabels.READ), is(13L));
    assertThat(TestEvents.counter(run, ParseLabels.VALID), is(1L));
    assertThat(TestEvents.counter(run, ParseLabels.DEAD_LETTERS), is(12L));
  }
}
