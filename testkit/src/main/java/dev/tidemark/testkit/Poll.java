package dev.tidemark.testkit;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Waiting for a condition in a test: the condition is polled every {@link #INTERVAL} until it holds
 * or the timeout passes, never a fixed sleep in its place.
 */
public final class Poll {
  /** How often the condition is polled. */
  public static final Duration INTERVAL = Duration.ofMillis(250);

  private Poll() {}

  /**
   * Returns once {@code condition} holds. Before each poll {@code check} runs (it throws for a job
   * that has failed, so the wait ends at once); after {@code timeout} an {@link AssertionError}
   * names {@code what} and what {@code describe} says of the state so far.
   */
  public static void until(
      String what,
      Duration timeout,
      Runnable check,
      BooleanSupplier condition,
      Supplier<String> describe)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      check.run();
      if (condition.getAsBoolean()) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "timed out after " + timeout + " waiting for " + what + "; " + describe.get());
      }
      Thread.sleep(INTERVAL.toMillis());
    }
  }
}
