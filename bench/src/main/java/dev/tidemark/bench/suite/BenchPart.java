package dev.tidemark.bench.suite;

/**
 * One part of the suite: measures side by side and records its figures, series (for the charts) and
 * notes in the shared results. A part that cannot measure something records {@code null} for it
 * with the reason in a note; an exception fails only that part (the suite notes it).
 */
public interface BenchPart {
  /** A short name for the table and the notes. */
  String name();

  void run(BenchProfile profile, BenchResults results) throws Exception;
}
