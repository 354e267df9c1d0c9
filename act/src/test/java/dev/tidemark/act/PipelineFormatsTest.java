package dev.tidemark.act;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import dev.tidemark.act.Edition.Correction;
import dev.tidemark.act.Edition.Verdict;
import dev.tidemark.act.EditionReader.Read;
import dev.tidemark.pipelines.OutputOptions.OutputFormat;
import dev.tidemark.pipelines.io.kafka.DecisionRecords;
import dev.tidemark.pipelines.io.kafka.HeaderedValue;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.Decision.ModelRef;
import dev.tidemark.transforms.values.Features;
import dev.tidemark.transforms.values.PaymentFeatures;
import java.nio.charset.StandardCharsets;
import org.apache.beam.sdk.values.KV;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.joda.time.Instant;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The records the pipeline's own writer makes ({@link DecisionRecords}), in every {@code
 * --outputFormat}, read back as the same edition with the same fingerprint.
 */
@RunWith(JUnit4.class)
public class PipelineFormatsTest {
  private static final String TOPIC = "tidemark.decisions";

  private static Decision reversal() {
    Instant start = Instant.parse("2026-03-01T10:00:00Z");
    Instant end = Instant.parse("2026-03-01T10:05:00Z");
    Features features =
        PaymentFeatures.of(3, 12_345, 9_000, 2, 1, end.minus(1_000), end.minus(500));
    ModelRef model = new ModelRef("default", "1", "onnx");
    Decision first =
        Decision.unscored("acct-1", start, end, "ON_TIME", 0, true, false, features, end)
            .withScore(0.2, "allow", model, end)
            .withCorrection(null);
    return Decision.unscored("acct-1", start, end, "LATE", 1, false, false, features, end)
        .withScore(0.8, "review", model, end.plus(60_000))
        .withCorrection(first.asSuperseded());
  }

  private static Edition read(OutputFormat format, Decision decision) {
    KV<String, HeaderedValue> record =
        new DecisionRecords(format, TOPIC, "/tidemark/" + TOPIC).apply(decision);
    RecordHeaders headers = new RecordHeaders();
    record
        .getValue()
        .headers()
        .forEach((name, value) -> headers.add(name, value.getBytes(StandardCharsets.UTF_8)));
    Read read =
        EditionReader.read(
            TOPIC,
            record.getKey().getBytes(StandardCharsets.UTF_8),
            record.getValue().value(),
            headers);
    assertThat(format + ": " + read, read.edition().isPresent(), is(true));
    return read.edition().get();
  }

  @Test
  public void everyOutputFormatGivesTheSameEdition() {
    Decision decision = reversal();
    Edition json = read(OutputFormat.JSON, decision);
    assertThat(json.decisionId(), is(decision.decisionId()));
    assertThat(json.version(), is(1L));
    assertThat(json.verdict(), is(Verdict.REVIEW));
    assertThat(json.correction(), is(Correction.REVERSED));
    assertThat(json.supersedes().orElseThrow().verdict(), is(Verdict.ALLOW));
    for (OutputFormat format :
        new OutputFormat[] {OutputFormat.CLOUDEVENTS_STRUCTURED, OutputFormat.CLOUDEVENTS_BINARY}) {
      assertThat(format.toString(), read(format, decision), is(json));
      assertThat(read(format, decision).fingerprint(), is(json.fingerprint()));
    }
  }
}
