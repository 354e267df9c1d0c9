package dev.tidemark.tools.train;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Arrays;
import java.util.Comparator;

/**
 * Ranking and threshold metrics of scores against 0/1 labels: AUC-PR as average precision (the
 * step-wise area scikit-learn's {@code average_precision_score} computes, ties grouped), ROC-AUC
 * (Mann-Whitney, ties counted half), and precision/recall of {@code score >= threshold}.
 */
public record ClassificationMetrics(
    int rows,
    int positives,
    double aucPr,
    double rocAuc,
    double threshold,
    long truePositives,
    long falsePositives,
    long falseNegatives,
    long trueNegatives) {

  /** Precision at the threshold; 0 when nothing is flagged. */
  public double precision() {
    long flagged = truePositives + falsePositives;
    return flagged == 0 ? 0 : (double) truePositives / flagged;
  }

  /** Recall at the threshold; 0 when there are no positives. */
  public double recall() {
    return positives == 0 ? 0 : (double) truePositives / positives;
  }

  /** Computes the metrics; {@code scores} and {@code labels} have one entry per row. */
  public static ClassificationMetrics of(double[] scores, boolean[] labels, double threshold) {
    int n = scores.length;
    if (labels.length != n) {
      throw new IllegalArgumentException("one label per score");
    }
    int positives = 0;
    long tp = 0;
    long fp = 0;
    for (int i = 0; i < n; i++) {
      positives += labels[i] ? 1 : 0;
      if (scores[i] >= threshold) {
        if (labels[i]) {
          tp++;
        } else {
          fp++;
        }
      }
    }
    int negatives = n - positives;
    return new ClassificationMetrics(
        n,
        positives,
        averagePrecision(scores, labels, positives),
        rocAuc(scores, labels, positives, negatives),
        threshold,
        tp,
        fp,
        positives - tp,
        negatives - fp);
  }

  private static Integer[] byScoreDescending(double[] scores) {
    Integer[] order = new Integer[scores.length];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, Comparator.comparingDouble((Integer i) -> -scores[i]).thenComparing(i -> i));
    return order;
  }

  static double averagePrecision(double[] scores, boolean[] labels, int positives) {
    if (positives == 0) {
      return Double.NaN;
    }
    Integer[] order = byScoreDescending(scores);
    double ap = 0;
    long tp = 0;
    long seen = 0;
    double lastRecall = 0;
    int i = 0;
    while (i < order.length) {
      double score = scores[order[i]];
      while (i < order.length && scores[order[i]] == score) {
        tp += labels[order[i]] ? 1 : 0;
        seen++;
        i++;
      }
      double recall = (double) tp / positives;
      double precision = (double) tp / seen;
      ap += (recall - lastRecall) * precision;
      lastRecall = recall;
    }
    return ap;
  }

  static double rocAuc(double[] scores, boolean[] labels, int positives, int negatives) {
    if (positives == 0 || negatives == 0) {
      return Double.NaN;
    }
    Integer[] order = byScoreDescending(scores);
    // Count, for each positive, the negatives scored below it (ties count half).
    double wins = 0;
    long negativesBelowOrEqual = negatives;
    int i = 0;
    while (i < order.length) {
      double score = scores[order[i]];
      int pos = 0;
      int neg = 0;
      while (i < order.length && scores[order[i]] == score) {
        if (labels[order[i]]) {
          pos++;
        } else {
          neg++;
        }
        i++;
      }
      negativesBelowOrEqual -= neg;
      wins += pos * (negativesBelowOrEqual + neg / 2.0);
    }
    return wins / ((double) positives * negatives);
  }

  /** The metrics as a JSON object for the sidecar. */
  public ObjectNode toJson() {
    ObjectNode node = JsonNodeFactory.instance.objectNode();
    node.put("rows", rows);
    node.put("positives", positives);
    node.put("aucPr", round(aucPr));
    node.put("rocAuc", round(rocAuc));
    node.put("threshold", threshold);
    node.put("precision", round(precision()));
    node.put("recall", round(recall()));
    node.put("truePositives", truePositives);
    node.put("falsePositives", falsePositives);
    node.put("falseNegatives", falseNegatives);
    node.put("trueNegatives", trueNegatives);
    return node;
  }

  static double round(double value) {
    return Double.isFinite(value) ? Math.round(value * 1e6) / 1e6 : value;
  }
}
