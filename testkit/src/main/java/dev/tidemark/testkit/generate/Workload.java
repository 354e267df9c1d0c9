package dev.tidemark.testkit.generate;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * What a generated stream is about: one per bundled spec ({@code specs/<name>.yaml}). The timing of
 * the stream (arrival delays, late and too-late events, duplicates, malformed lines, directives) is
 * the same for all of them; only the events' content differs.
 */
public enum Workload {
  /**
   * Card payments of type {@value EventGenerator#EVENT_TYPE}, labelled {@code fraud}/{@code legit}.
   */
  PAYMENTS("payments", EventGenerator.EVENT_TYPE),
  /**
   * Login attempts of type {@value LoginsContent#EVENT_TYPE}, labelled {@code takeover}/{@code
   * legit}.
   */
  LOGINS("logins", LoginsContent.EVENT_TYPE);

  private final String specName;
  private final String eventType;

  Workload(String specName, String eventType) {
    this.specName = specName;
    this.eventType = eventType;
  }

  /** The name of the bundled spec this workload's events are for, e.g. {@code logins}. */
  public String specName() {
    return specName;
  }

  /** The CloudEvents {@code type} of every valid event. */
  public String eventType() {
    return eventType;
  }

  /**
   * The workload of the bundled spec named {@code name}.
   *
   * @throws IllegalArgumentException naming the specs there are workloads for
   */
  public static Workload forSpec(String name) {
    for (Workload workload : values()) {
      if (workload.specName.equals(name)) {
        return workload;
      }
    }
    throw new IllegalArgumentException(
        "the generator writes events for the bundled specs "
            + names()
            + ", not for a spec named '"
            + name
            + "'; for another spec, capture or write a replay file of its events");
  }

  /** The spec names there are workloads for. */
  public static List<String> names() {
    return Arrays.stream(values()).map(Workload::specName).toList();
  }

  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}
