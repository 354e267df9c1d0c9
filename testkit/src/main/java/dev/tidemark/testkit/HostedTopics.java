package dev.tidemark.testkit;

import java.time.Duration;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;

/**
 * Waits until topics a moment old are ready on every running broker: each partition has a leader
 * and every broker hosts the logs of the partitions it is a replica of.
 *
 * <p>A broker answers metadata requests with a new partition before it has created the partition's
 * log and leads it: a producer sending then gets {@code NOT_LEADER_OR_FOLLOWER}, and its idempotent
 * retries can fail for good with an out-of-order sequence number. On a replicated cluster a topic
 * the controller created or grew is not yet known to every broker: a client bootstrapped from one
 * that does not know it fails, and a job's Kafka read listed there misses the new partitions. A
 * broker creates a partition's log when it applies the metadata that names it, after updating the
 * metadata it answers clients with, so its log directories ({@code describeLogDirs}, answered by
 * each broker itself) say it knows. Asking each bootstrap server with {@code describeTopics} would
 * not: an admin client sends metadata requests to the least-loaded node it knows.
 */
public final class HostedTopics {
  /** Accepts a topic with any number of partitions. */
  public static final int ANY_COUNT = 0;

  private HostedTopics() {}

  /**
   * Polls until every one of {@code topics} has {@code partitions} partitions (or any number, for
   * {@link #ANY_COUNT}) and is ready on every running broker; throws after {@code timeout}, saying
   * what it still waited for.
   */
  public static void await(Admin admin, List<String> topics, int partitions, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    String waiting = "not described yet";
    while (true) {
      try {
        waiting = waitingFor(admin, topics, partitions);
        if (waiting.isEmpty()) {
          return;
        }
      } catch (ExecutionException e) {
        // A topic not known yet to the broker asked, or a broker restarting.
        waiting = e.getCause().toString();
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "topics " + topics + " not ready on every broker after " + timeout + ": " + waiting);
      }
      Thread.sleep(100);
    }
  }

  /** What {@link #await} still waits for, or "" when nothing. */
  static String waitingFor(Admin admin, List<String> topics, int partitions)
      throws ExecutionException, InterruptedException {
    Map<Integer, Set<TopicPartition>> replicas = new TreeMap<>();
    for (TopicDescription topic : admin.describeTopics(topics).allTopicNames().get().values()) {
      if (partitions != ANY_COUNT && topic.partitions().size() != partitions) {
        return topic.name() + " has " + topic.partitions().size() + " partitions";
      }
      for (TopicPartitionInfo partition : topic.partitions()) {
        TopicPartition id = new TopicPartition(topic.name(), partition.partition());
        if (partition.leader() == null) {
          return id + " has no leader";
        }
        for (Node replica : partition.replicas()) {
          replicas.computeIfAbsent(replica.id(), k -> new HashSet<>()).add(id);
        }
      }
    }
    Set<Integer> running = new HashSet<>();
    admin.describeCluster().nodes().get().forEach(node -> running.add(node.id()));
    replicas.keySet().retainAll(running);
    Map<Integer, Map<String, LogDirDescription>> dirs =
        admin.describeLogDirs(replicas.keySet()).allDescriptions().get();
    for (Map.Entry<Integer, Set<TopicPartition>> broker : replicas.entrySet()) {
      Set<TopicPartition> hosted = new HashSet<>();
      dirs.getOrDefault(broker.getKey(), Map.of())
          .values()
          .forEach(dir -> hosted.addAll(dir.replicaInfos().keySet()));
      if (!hosted.containsAll(broker.getValue())) {
        Set<TopicPartition> missing = new TreeSet<>(Comparator.comparing(TopicPartition::toString));
        missing.addAll(broker.getValue());
        missing.removeAll(hosted);
        return "broker " + broker.getKey() + " does not host " + missing + " yet";
      }
    }
    return "";
  }
}
