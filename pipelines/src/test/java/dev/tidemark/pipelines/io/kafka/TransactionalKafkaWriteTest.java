package dev.tidemark.pipelines.io.kafka;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
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
            new TransactionalKafkaWrite.ShardPosition("3f1c-lineage", 12345L).format());
    assertThat(position.lineage, is("3f1c-lineage"));
    assertThat(position.next, is(12345L));
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
                "{\"score\":0.5}".getBytes(StandardCharsets.UTF_8), Map.of("version", "3")));
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    TransactionalKafkaWrite.Sequenced.Coder.of().encode(record, bytes);
    TransactionalKafkaWrite.Sequenced back =
        TransactionalKafkaWrite.Sequenced.Coder.of()
            .decode(new ByteArrayInputStream(bytes.toByteArray()));
    assertThat(back.lineage, is("lineage"));
    assertThat(back.number, is(7L));
    assertThat(back.key, is("decision-1"));
    assertThat(back.value, is(record.value));
    assertThat("format version first", bytes.toByteArray()[0], is((byte) 1));
  }
}
