package dev.tidemark.pipelines.io.kafka;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.Assert.assertThrows;

import dev.tidemark.transforms.values.Codec;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** The transactional sink's formats: the committed shard position and the sequenced record. */
@RunWith(JUnit4.class)
public class TransactionalKafkaWriteTest {
  @Test
  public void aShardPositionReadsBackWhatItWrote() {
    TransactionalKafkaWrite.ShardPosition position =
        TransactionalKafkaWrite.ShardPosition.parse(
            new TransactionalKafkaWrite.ShardPosition("3f1c-lineage", 12345L, "ab12").format());
    assertThat(position.lineage, is("3f1c-lineage"));
    assertThat(position.next, is(12345L));
    assertThat(position.chain, is("ab12"));
    // As committed before chains were kept.
    TransactionalKafkaWrite.ShardPosition old =
        TransactionalKafkaWrite.ShardPosition.parse("tidemark/1 3f1c-lineage 77");
    assertThat(old.next, is(77L));
    assertThat(old.chain, is(nullValue()));
  }

  /** A skipped record must be the one committed under its number; the chain says whether it is. */
  @Test
  public void aSkippedRecordIsCheckedAgainstTheCommittedChain() {
    HeaderedValue a = new HeaderedValue("{\"a\":1}".getBytes(StandardCharsets.UTF_8), Map.of());
    HeaderedValue b = new HeaderedValue("{\"b\":1}".getBytes(StandardCharsets.UTF_8), Map.of());
    String first = TransactionalKafkaWrite.Sequenced.chain(null, "k0", a);
    String second = TransactionalKafkaWrite.Sequenced.chain(first, "k1", b);
    // The chain covers the content, the key and every record before.
    assertThat(TransactionalKafkaWrite.Sequenced.chain(null, "k0", b).equals(first), is(false));
    assertThat(TransactionalKafkaWrite.Sequenced.chain(null, "k1", a).equals(first), is(false));
    assertThat(TransactionalKafkaWrite.Sequenced.chain(null, "k1", b).equals(second), is(false));

    TransactionalKafkaWrite.Sequenced same =
        new TransactionalKafkaWrite.Sequenced("l", 1, "k1", b, second);
    TransactionalKafkaWrite.Writer.checkSkipped("g", 0, same, 1, second);
    // Below the last committed number the chain of the last one covers it.
    TransactionalKafkaWrite.Writer.checkSkipped(
        "g", 0, new TransactionalKafkaWrite.Sequenced("l", 0, "k9", b, "other"), 1, second);
    IllegalStateException refused =
        assertThrows(
            IllegalStateException.class,
            () ->
                TransactionalKafkaWrite.Writer.checkSkipped(
                    "g",
                    0,
                    new TransactionalKafkaWrite.Sequenced(
                        "l", 1, "k1", b, TransactionalKafkaWrite.Sequenced.chain(null, "k1", b)),
                    1,
                    second));
    assertThat(refused.getMessage(), containsString("--finishBundleBeforeCheckpointing=true"));
  }

  @Test
  public void metadataOfAnotherWriterIsRefusedWithTheFix() {
    // What Beam's KafkaIO exactly-once sink commits to its sink group.
    String beams = "{\"seqId\":42,\"writerId\":\"6 - 2026-12-03 21:00:00\"}";
    IllegalStateException refused =
        assertThrows(
            IllegalStateException.class, () -> TransactionalKafkaWrite.ShardPosition.parse(beams));
    assertThat(refused.getMessage(), containsString("--kafkaSinkGroupId"));
  }

  @Test
  public void aSequencedRecordSurvivesItsCoder() throws Exception {
    TransactionalKafkaWrite.Sequenced record =
        new TransactionalKafkaWrite.Sequenced(
            "lineage",
            7L,
            "decision-1",
            new HeaderedValue(
                "{\"score\":0.5}".getBytes(StandardCharsets.UTF_8), Map.of("version", "3")),
            "c0ffee");
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    TransactionalKafkaWrite.Sequenced.Coder.of().encode(record, bytes);
    TransactionalKafkaWrite.Sequenced back =
        TransactionalKafkaWrite.Sequenced.Coder.of()
            .decode(new ByteArrayInputStream(bytes.toByteArray()));
    assertThat(back.lineage, is("lineage"));
    assertThat(back.number, is(7L));
    assertThat(back.key, is("decision-1"));
    assertThat(back.value, is(record.value));
    assertThat(back.chain, is("c0ffee"));
    assertThat("format version first", bytes.toByteArray()[0], is((byte) 2));

    // Version 1, as checkpoints taken before chains were kept hold it: no chain.
    ByteArrayOutputStream v1 = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(v1);
    out.writeByte(1);
    Codec.writeString("lineage", out);
    out.writeLong(7L);
    Codec.writeString("decision-1", out);
    HeaderedValue.Coder.of().writeVersioned(record.value, out);
    out.flush();
    TransactionalKafkaWrite.Sequenced old =
        TransactionalKafkaWrite.Sequenced.Coder.of()
            .decode(new ByteArrayInputStream(v1.toByteArray()));
    assertThat(old.key, is("decision-1"));
    assertThat(old.chain, is(nullValue()));
  }
}
