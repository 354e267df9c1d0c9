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

/**
 * The transactional sink's formats (the committed shard position, the sequenced record, the
 * writer's kept record) and which kept records a timer may write.
 */
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

  @Test
  public void aKeptRecordSurvivesItsCoderAndOldBagsReadAsAnotherRunsRecords() throws Exception {
    TransactionalKafkaWrite.Sequenced record =
        new TransactionalKafkaWrite.Sequenced(
            "lineage",
            9L,
            "decision-2",
            new HeaderedValue("{}".getBytes(StandardCharsets.UTF_8), Map.of("version", "1")),
            "beef");
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    TransactionalKafkaWrite.Held.Coder.of()
        .encode(new TransactionalKafkaWrite.Held(4, record, "run-a"), bytes);
    TransactionalKafkaWrite.Held back =
        TransactionalKafkaWrite.Held.Coder.of()
            .decode(new ByteArrayInputStream(bytes.toByteArray()));
    assertThat(back.run, is("run-a"));
    assertThat(back.shard, is(4));
    // The FlinkRunner fires a timer that waited for a checkpoint without its key.
    assertThat(TransactionalKafkaWrite.Writer.shardOf(back, null), is(4));
    assertThat(back.record.number, is(9L));
    assertThat(back.record.key, is("decision-2"));
    assertThat(back.record.value, is(record.value));
    assertThat(back.record.chain, is("beef"));
    assertThat("format version first", bytes.toByteArray()[0], is((byte) 3));

    // The writer's bag as savepoints taken before runs were kept hold it: Sequenced's format.
    ByteArrayOutputStream old = new ByteArrayOutputStream();
    TransactionalKafkaWrite.Sequenced.Coder.of().encode(record, old);
    TransactionalKafkaWrite.Held restored =
        TransactionalKafkaWrite.Held.Coder.of().decode(new ByteArrayInputStream(old.toByteArray()));
    assertThat(restored.run, is(""));
    assertThat(TransactionalKafkaWrite.Writer.shardOf(restored, 2), is(2));
    assertThrows(
        IllegalStateException.class, () -> TransactionalKafkaWrite.Writer.shardOf(restored, null));
    assertThat(restored.record.chain, is("beef"));
    assertThat(
        "a record of no run is another run's",
        TransactionalKafkaWrite.Writer.writable(restored, "run-b", false),
        is(true));
  }

  @Test
  public void aRestoredTimerWritesOnlyRecordsAnEarlierRunKept() {
    TransactionalKafkaWrite.Sequenced record =
        new TransactionalKafkaWrite.Sequenced(
            "l", 0, "k", new HeaderedValue(new byte[0], Map.of()), null);
    TransactionalKafkaWrite.Held earlier = new TransactionalKafkaWrite.Held(0, record, "run-1");
    TransactionalKafkaWrite.Held now = new TransactionalKafkaWrite.Held(0, record, "run-2");
    // This run's own timer fired: a checkpoint completed since either was kept.
    assertThat(TransactionalKafkaWrite.Writer.writable(earlier, "run-2", true), is(true));
    assertThat(TransactionalKafkaWrite.Writer.writable(now, "run-2", true), is(true));
    // A timer the restore brought back: this run's records may hold numbers no checkpoint has.
    assertThat(TransactionalKafkaWrite.Writer.writable(earlier, "run-2", false), is(true));
    assertThat(TransactionalKafkaWrite.Writer.writable(now, "run-2", false), is(false));
  }
}
