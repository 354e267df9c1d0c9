package dev.tidemark.pipelines.io;

import dev.tidemark.transforms.values.DeadLetter;
import dev.tidemark.transforms.values.Decision;
import dev.tidemark.transforms.values.DuplicateRecord;
import dev.tidemark.transforms.values.TooLateRecord;
import java.util.List;
import org.apache.beam.sdk.values.PCollection;

/**
 * The four outputs of the Tidemark graph, as the sinks receive them. Each sink names them with
 * {@link #NAMES}: the file sink's directories, the Kafka sink's topic keys, the summary's lines.
 */
public final class Outputs {
  /** The outputs' names, in this order: decisions, dead letters, duplicates, too-late records. */
  public static final List<String> NAMES =
      List.of("decisions", "dead-letters", "duplicates", "too-late");

  public final PCollection<Decision> decisions;
  public final PCollection<DeadLetter> deadLetters;
  public final PCollection<DuplicateRecord> duplicates;
  public final PCollection<TooLateRecord> tooLate;

  public Outputs(
      PCollection<Decision> decisions,
      PCollection<DeadLetter> deadLetters,
      PCollection<DuplicateRecord> duplicates,
      PCollection<TooLateRecord> tooLate) {
    this.decisions = decisions;
    this.deadLetters = deadLetters;
    this.duplicates = duplicates;
    this.tooLate = tooLate;
  }
}
