package dev.tidemark.pipelines.launch;

import java.util.Map;
import java.util.TreeMap;
import picocli.CommandLine;

/** The exit codes every Tidemark command shares, and their listing in each command's help. */
public final class ExitCodes {
  /** The command did what it was asked (for {@code run}: the identity holds). */
  public static final int DONE = 0;

  /** {@code run}: the job ended but its accounting identity does not hold. */
  public static final int IDENTITY_BROKEN = 1;

  /** The command line or an option is wrong; the message says how to fix it. */
  public static final int USAGE_ERROR = 2;

  /** The options were accepted, then the run failed (the job, a file, a broker). */
  public static final int RUN_FAILED = 3;

  /** The exit codes as every command's {@code --help} lists them. */
  public static final Map<String, String> LISTING =
      new TreeMap<>(
          Map.of(
              " " + DONE,
              "done (run: the accounting identity holds)",
              " " + IDENTITY_BROKEN,
              "run: the job ended, its accounting identity is broken",
              " " + USAGE_ERROR,
              "usage error: a wrong command, option or value",
              " " + RUN_FAILED,
              "the run failed: the job, an input, a broker or the Flink cluster"));

  private ExitCodes() {}

  /** The exit code of a finished run: {@link #DONE}, or {@link #IDENTITY_BROKEN}. */
  public static int of(Summary summary) {
    return summary.identityHolds() ? DONE : IDENTITY_BROKEN;
  }

  /** Lists the exit codes in the help of the command and of each subcommand. */
  public static void document(CommandLine command) {
    command.getCommandSpec().usageMessage().exitCodeListHeading("%nExit codes:%n");
    command.getCommandSpec().usageMessage().exitCodeList(LISTING);
    command.getSubcommands().values().forEach(ExitCodes::document);
  }
}
