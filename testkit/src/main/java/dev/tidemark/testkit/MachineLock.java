package dev.tidemark.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import org.junit.rules.ExternalResource;

/**
 * The machine held by one test at a time, across test JVMs: the drill's multi-process cluster,
 * whose TaskManagers are declared lost after ten seconds without a heartbeat, and the benchmark
 * suite's smoke test, which saturates both cores for minutes, hold it while {@code ./tidemark test}
 * builds two modules at a time, so that they never run side by side. Other tests still run beside
 * either. The lock is an OS file lock on {@value #FILE_NAME} in {@code java.io.tmpdir}, so a JVM
 * that dies lets go of it. Within one JVM, holds nest.
 */
public final class MachineLock {
  /** The lock file's name in {@code java.io.tmpdir}. */
  public static final String FILE_NAME = "tidemark-machine.lock";

  private static int holds;
  private static FileChannel channel;
  private static FileLock lock;

  private MachineLock() {}

  /**
   * Waits until no other JVM holds the machine, then holds it (printing who waited, and how long,
   * when it had to wait). Each call needs one {@link #release}.
   */
  public static void hold(String holder) {
    hold(holder, Paths.get(System.getProperty("java.io.tmpdir"), FILE_NAME));
  }

  /** {@link #hold(String)} with the lock file {@code file}. */
  static synchronized void hold(String holder, Path file) {
    if (holds++ > 0) {
      return;
    }
    long started = System.nanoTime();
    try {
      channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      lock = channel.tryLock();
      if (lock == null) {
        System.out.println(holder + ": waiting for the machine (" + file + ")");
        lock = channel.lock();
        System.out.printf(
            "%s: held the machine after %.1f s%n", holder, (System.nanoTime() - started) / 1e9);
      }
    } catch (IOException e) {
      holds--;
      closeQuietly();
      throw new UncheckedIOException("cannot lock " + file, e);
    }
  }

  /** Lets go of one {@link #hold}; the last lets other JVMs have the machine. */
  public static synchronized void release() {
    if (holds == 0 || --holds > 0) {
      return;
    }
    closeQuietly();
  }

  /** A class rule that holds the machine around a test class or suite. */
  public static ExternalResource rule(String holder) {
    return new ExternalResource() {
      @Override
      protected void before() {
        hold(holder);
      }

      @Override
      protected void after() {
        release();
      }
    };
  }

  private static void closeQuietly() {
    try {
      if (lock != null) {
        lock.release();
      }
      if (channel != null) {
        channel.close();
      }
    } catch (IOException e) {
      // Closing the channel releases the lock; nothing else holds on to it.
    } finally {
      lock = null;
      channel = null;
    }
  }
}
