package dev.tidemark.pipelines.io.kafka;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A transactional producer that survives being handed back mid-transaction: our answer to a Beam
 * defect in {@code KafkaIO.write().withEOS()}.
 *
 * <p>The defect (Beam 2.70, {@code KafkaExactlyOnceSink.ExactlyOnceWriter}): the sink keeps its
 * producers in a static per-JVM cache keyed by sink group id, and returns a producer to that cache
 * in a {@code finally} block even when the bundle failed between {@code beginTransaction} and
 * {@code commitTransaction}. When the runner restarts the task in the same JVM (Flink's task
 * failover does), the new attempt takes that producer from the cache and calls {@code
 * beginTransaction} on it again: "Invalid transition attempted from state IN_TRANSACTION to state
 * IN_TRANSACTION". That failure again returns the producer to the cache, so every restart fails
 * until the cache evicts it after a minute without use.
 *
 * <p>The fix: this wrapper remembers whether a transaction is open. {@link #beginTransaction()} on
 * a producer whose previous transaction was never committed or aborted first aborts it. That is
 * exactly what a restart needs: the failed attempt's records were never committed, so no {@code
 * read_committed} consumer saw them, and the restarted attempt re-sends them from the checkpoint.
 * If the abort itself fails the producer is unusable; the wrapper then reports it as fenced, which
 * makes the sink close it and open a fresh producer (same transactional id, which fences any zombie
 * and aborts its open transaction broker-side).
 */
public final class RecoveringProducer<K, V> implements Producer<K, V> {
  private static final Logger LOG = LoggerFactory.getLogger(RecoveringProducer.class);

  private final Producer<K, V> delegate;
  private boolean inTransaction;
  private long recoveredTransactions;

  public RecoveringProducer(Producer<K, V> delegate) {
    this.delegate = delegate;
  }

  /** How many stale open transactions this producer aborted before beginning a new one. */
  public synchronized long recoveredTransactions() {
    return recoveredTransactions;
  }

  @Override
  public synchronized void initTransactions() {
    delegate.initTransactions();
    inTransaction = false;
  }

  @Override
  public synchronized void beginTransaction() {
    if (inTransaction) {
      LOG.warn(
          "aborting a transaction left open by a failed attempt before beginning a new one"
              + " (Beam KafkaIO EOS writer cache; see RecoveringProducer)");
      try {
        delegate.abortTransaction();
      } catch (KafkaException | IllegalStateException e) {
        throw new ProducerFencedException(
            "cannot abort the transaction a failed attempt left open; the sink must replace this"
                + " producer: "
                + e);
      }
      inTransaction = false;
      recoveredTransactions++;
    }
    delegate.beginTransaction();
    inTransaction = true;
  }

  @Override
  @Deprecated
  public synchronized void sendOffsetsToTransaction(
      Map<TopicPartition, OffsetAndMetadata> offsets, String consumerGroupId) {
    delegate.sendOffsetsToTransaction(offsets, new ConsumerGroupMetadata(consumerGroupId));
  }

  @Override
  public synchronized void sendOffsetsToTransaction(
      Map<TopicPartition, OffsetAndMetadata> offsets, ConsumerGroupMetadata groupMetadata) {
    delegate.sendOffsetsToTransaction(offsets, groupMetadata);
  }

  @Override
  public synchronized void commitTransaction() {
    delegate.commitTransaction();
    inTransaction = false;
  }

  @Override
  public synchronized void abortTransaction() {
    delegate.abortTransaction();
    inTransaction = false;
  }

  @Override
  public Future<RecordMetadata> send(ProducerRecord<K, V> record) {
    return delegate.send(record);
  }

  @Override
  public Future<RecordMetadata> send(ProducerRecord<K, V> record, Callback callback) {
    return delegate.send(record, callback);
  }

  @Override
  public void flush() {
    delegate.flush();
  }

  @Override
  public List<PartitionInfo> partitionsFor(String topic) {
    return delegate.partitionsFor(topic);
  }

  @Override
  public Map<MetricName, ? extends Metric> metrics() {
    return delegate.metrics();
  }

  @Override
  public Uuid clientInstanceId(Duration timeout) {
    return delegate.clientInstanceId(timeout);
  }

  @Override
  public void close() {
    delegate.close();
  }

  @Override
  public void close(Duration timeout) {
    delegate.close(timeout);
  }
}
