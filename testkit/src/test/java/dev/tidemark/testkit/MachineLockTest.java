package dev.tidemark.testkit;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.nullValue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/** The machine is held by one JVM at a time, and a holder that exits lets go of it. */
public class MachineLockTest {
  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  /** A JVM that holds the lock file given as its argument until its standard input closes. */
  public static final class Holder {
    public static void main(String[] args) throws Exception {
      MachineLock.hold("holder", Paths.get(args[0]));
      System.out.println("held");
      System.out.flush();
      while (System.in.read() >= 0) {
        // Holds until the test closes the pipe.
      }
      MachineLock.release();
    }
  }

  @Test
  public void aSecondJvmWaitsUntilTheHolderExits() throws Exception {
    Path file = folder.getRoot().toPath().resolve(MachineLock.FILE_NAME);
    Process holder =
        new ProcessBuilder(
                List.of(
                    Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp",
                    System.getProperty("java.class.path"),
                    Holder.class.getName(),
                    file.toString()))
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    try {
      BufferedReader out =
          new BufferedReader(
              new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
      assertThat(out.readLine(), is("held"));
      try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
        assertThat("another JVM holds the machine", channel.tryLock(), is(nullValue()));
      }

      AtomicBoolean held = new AtomicBoolean();
      Thread waiter =
          new Thread(
              () -> {
                MachineLock.hold("test", file);
                held.set(true);
              });
      waiter.start();
      assertThat("the holder still runs", holder.isAlive(), is(true));
      assertThat("the machine was not free", held.get(), is(false));
      holder.getOutputStream().close();
      assertThat(holder.waitFor(60, TimeUnit.SECONDS), is(true));
      waiter.join(TimeUnit.SECONDS.toMillis(60));
      assertThat("the waiter held the machine once the holder exited", held.get(), is(true));
      MachineLock.release();
      try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE);
          FileLock free = channel.tryLock()) {
        assertThat("released, the machine is free", free, is(notNullValue()));
      }
    } finally {
      holder.destroyForcibly();
      holder.waitFor(30, TimeUnit.SECONDS);
    }
  }
}
