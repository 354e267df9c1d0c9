package dev.tidemark.transforms.values;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.is;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.ListCoder;
import org.apache.beam.sdk.testing.CoderProperties;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.beam.sdk.values.KV;
import org.joda.time.Instant;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** The shared encoding buffer of {@link Codec.DataCoder}: sizes around its growth points. */
@RunWith(JUnit4.class)
public class CodecTest {
  private static final Coder<RawRecord> CODER = RawRecord.RawRecordCoder.of();

  private static RawRecord record(int payloadBytes) {
    byte[] payload = new byte[payloadBytes];
    for (int i = 0; i < payload.length; i++) {
      payload[i] = (byte) ('a' + i % 26);
    }
    return RawRecord.of(payload, Instant.ofEpochMilli(1_767_225_600_000L + payloadBytes), "t:1");
  }

  @Test
  public void valuesOfEverySizeRoundTripOneAfterAnother() throws Exception {
    // Past the initial 512 bytes, past the 64 KiB a thread keeps, then small again.
    for (int size : new int[] {0, 1, 480, 511, 512, 513, 4_000, 70_000, 1_000_000, 3, 600}) {
      RawRecord value = record(size);
      CoderProperties.coderDecodeEncodeEqual(CODER, value);
      byte[] encoded = CoderUtils.encodeToByteArray(CODER, value);
      assertThat(
          "encoding of " + size + " payload bytes",
          CoderUtils.decodeFromByteArray(CODER, encoded).payload(),
          equalTo(value.payload()));
      assertThat(
          "the same bytes again for " + size,
          CoderUtils.encodeToByteArray(CODER, value),
          equalTo(encoded));
    }
  }

  @Test
  public void valuesInsideBeamsCompositeCodersRoundTrip() throws Exception {
    List<RawRecord> values = List.of(record(700), record(10), record(90_000));
    Coder<KV<RawRecord, List<RawRecord>>> nested = KvCoder.of(CODER, ListCoder.of(CODER));
    KV<RawRecord, List<RawRecord>> kv = KV.of(record(300), values);
    KV<RawRecord, List<RawRecord>> back =
        CoderUtils.decodeFromByteArray(nested, CoderUtils.encodeToByteArray(nested, kv));
    assertThat(back.getKey().payload(), equalTo(kv.getKey().payload()));
    assertThat(back.getValue().size(), is(3));
    for (int i = 0; i < values.size(); i++) {
      assertThat(
          new String(back.getValue().get(i).payload(), StandardCharsets.UTF_8),
          equalTo(new String(values.get(i).payload(), StandardCharsets.UTF_8)));
      assertThat(back.getValue().get(i).ingestionTime(), equalTo(values.get(i).ingestionTime()));
    }
  }

  @Test
  public void stringsEncodeAsUtf8WhateverTheirCharacters() throws Exception {
    // The per-thread buffer copies ASCII strings itself and hands others to String.getBytes: both
    // must give the bytes a plain DataOutputStream gives, and decode back to the same string.
    String[] origins = {
      "",
      "t:1",
      "kafka:payments/3@42",
      "café",
      "Łódź",
      "\u0101",
      "\uD83D\uDE00",
      "a\u00e9\uD83D\uDE00z",
      "x".repeat(700) + "\u00ff"
    };
    RawRecord.RawRecordCoder coder = RawRecord.RawRecordCoder.of();
    for (String origin : origins) {
      RawRecord value = RawRecord.of(new byte[] {1, 2, 3}, Instant.ofEpochMilli(7), origin);
      java.io.ByteArrayOutputStream reference = new java.io.ByteArrayOutputStream();
      coder.writeVersioned(value, new java.io.DataOutputStream(reference));
      byte[] encoded = CoderUtils.encodeToByteArray(coder, value);
      assertThat("bytes of '" + origin + "'", encoded, equalTo(reference.toByteArray()));
      assertThat(CoderUtils.decodeFromByteArray(coder, encoded).origin(), equalTo(origin));
    }
  }

  @Test
  public void decisionsRoundTripWithKnownAndUnknownTimingsLabelsAndModels() throws Exception {
    // Timings and labels are written as one byte when known, in full otherwise; a model's three
    // strings come from its cached encoding, which must match what the coder would write itself.
    Decision.DecisionCoder coder = Decision.DecisionCoder.of();
    Instant start = Instant.ofEpochMilli(1_767_225_600_000L);
    Features features = PaymentFeatures.of(3, 1234, 900, 2, 1, start.plus(5), start.plus(9));
    List<String> timings = List.of("EARLY", "ON_TIME", "LATE", "UNKNOWN", "SOON", "");
    List<String> labels = List.of("allow", "review", "hold", "revïew");
    List<Decision.ModelRef> models =
        List.of(
            new Decision.ModelRef("tidemark-fraud-xgb", "1", "XGBoost"),
            new Decision.ModelRef("modèle", "2\u00e9\uD83D\uDE00", ""));
    int checked = 0;
    for (String timing : timings) {
      for (String label : labels) {
        for (Decision.ModelRef model : models) {
          Decision unscored =
              Decision.unscored(
                  "acct-0042", start, start.plus(300_000), timing, 4, false, true, features, start);
          for (Decision value :
              List.of(unscored, unscored.withScore(0.25, label, model, start.plus(1)))) {
            byte[] encoded = CoderUtils.encodeToByteArray(coder, value);
            Decision decoded = CoderUtils.decodeFromByteArray(coder, encoded);
            assertThat(decoded.toJson(), equalTo(value.toJson()));
            assertThat(decoded.paneTiming(), equalTo(timing));
            assertThat(CoderUtils.encodeToByteArray(coder, decoded), equalTo(encoded));
            checked++;
          }
        }
      }
    }
    assertThat(checked, is(timings.size() * labels.size() * models.size() * 2));

    // A known timing takes one byte; an unknown one a marker byte, its length and its bytes.
    Decision known =
        Decision.unscored("a", start, start.plus(1), "ON_TIME", 0, true, true, features, start);
    Decision unknown =
        Decision.unscored("a", start, start.plus(1), "ON_TIMX", 0, true, true, features, start);
    assertThat(
        CoderUtils.encodeToByteArray(coder, unknown).length
            - CoderUtils.encodeToByteArray(coder, known).length,
        is(4 + "ON_TIMX".length()));
  }
}
