package dev.tidemark.launcher;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * One {@code tidemark} command run in this JVM through {@link Tidemark#execute}: its exit code and
 * what it printed on standard output and error. The output still reaches the test's own log.
 */
public final class CliRun {
  public final int exit;
  public final String out;
  public final String err;

  private CliRun(int exit, String out, String err) {
    this.exit = exit;
    this.out = out;
    this.err = err;
  }

  /** Runs {@code args} as the command line. */
  public static CliRun of(String... args) {
    PrintStream out = System.out;
    PrintStream err = System.err;
    ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    ByteArrayOutputStream stderr = new ByteArrayOutputStream();
    int exit;
    try {
      System.setOut(new PrintStream(new Tee(stdout, out), true, StandardCharsets.UTF_8));
      System.setErr(new PrintStream(new Tee(stderr, err), true, StandardCharsets.UTF_8));
      exit = Tidemark.execute(args);
    } finally {
      System.setOut(out);
      System.setErr(err);
    }
    return new CliRun(
        exit, stdout.toString(StandardCharsets.UTF_8), stderr.toString(StandardCharsets.UTF_8));
  }

  /** Writes to the capture and to the original stream. */
  private static final class Tee extends OutputStream {
    private final OutputStream capture;
    private final OutputStream original;

    Tee(OutputStream capture, OutputStream original) {
      this.capture = capture;
      this.original = original;
    }

    @Override
    public synchronized void write(int b) throws IOException {
      capture.write(b);
      original.write(b);
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) throws IOException {
      capture.write(b, off, len);
      original.write(b, off, len);
    }

    @Override
    public void flush() throws IOException {
      original.flush();
    }
  }
}
