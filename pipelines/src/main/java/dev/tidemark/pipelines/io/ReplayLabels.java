package dev.tidemark.pipelines.io;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.tidemark.transforms.values.Label;
import dev.tidemark.transforms.values.RawRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.apache.beam.sdk.values.TupleTag;
import org.apache.beam.sdk.values.TupleTagList;

/**
 * Splits a replay that carries its labels ({@code --labelsInReplay}) into the events and the
 * labels: a record whose top-level {@code type} is {@value Label#TYPE} is a label, anything else
 * (other events, records that are not JSON and records the replay rejected, which the events'
 * parser dead-letters) is an event. Both keep the replay's clock: the labels arrive in the replay's
 * order, with its ingestion times, and are then parsed, deduplicated and judged as any labels
 * stream.
 */
public final class ReplayLabels extends PTransform<PCollection<RawRecord>, PCollectionTuple> {
  /** The records that are not labels: the events. */
  public static final TupleTag<RawRecord> EVENTS = new TupleTag<>("events") {};

  /** The records of type {@value Label#TYPE}. */
  public static final TupleTag<RawRecord> LABELS = new TupleTag<>("labels") {};

  private static final byte[] TYPE = Label.TYPE.getBytes(StandardCharsets.UTF_8);

  private ReplayLabels() {}

  /** The split. */
  public static ReplayLabels split() {
    return new ReplayLabels();
  }

  @Override
  public PCollectionTuple expand(PCollection<RawRecord> records) {
    PCollectionTuple split =
        records.apply(
            "SplitLabels", ParDo.of(new SplitFn()).withOutputTags(EVENTS, TupleTagList.of(LABELS)));
    split.get(EVENTS).setCoder(records.getCoder());
    split.get(LABELS).setCoder(records.getCoder());
    return split;
  }

  /** Whether {@code payload} is a JSON object whose top-level {@code type} is a label's. */
  static boolean isLabel(byte[] payload) {
    if (indexOf(payload, TYPE) < 0) {
      return false;
    }
    try (JsonParser parser = JSON.createParser(payload)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        return false;
      }
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String field = parser.currentName();
        JsonToken value = parser.nextToken();
        if (field.equals("type")) {
          return value == JsonToken.VALUE_STRING && parser.getText().equals(Label.TYPE);
        }
        parser.skipChildren();
      }
      return false;
    } catch (IOException e) {
      return false;
    }
  }

  private static final JsonFactory JSON = new JsonFactory();

  private static int indexOf(byte[] bytes, byte[] part) {
    outer:
    for (int i = 0; i + part.length <= bytes.length; i++) {
      for (int j = 0; j < part.length; j++) {
        if (bytes[i + j] != part[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }

  static final class SplitFn extends DoFn<RawRecord, RawRecord> {
    private static final long serialVersionUID = 1L;

    @ProcessElement
    public void process(@Element RawRecord record, MultiOutputReceiver out) {
      boolean label = record.sourceError() == null && isLabel(record.payload());
      out.get(label ? LABELS : EVENTS).output(record);
    }
  }
}
