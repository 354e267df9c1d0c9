package dev.tidemark.spec;

import java.util.List;

/**
 * A spec that cannot be used, with every problem found in it: each a path into the spec ({@code
 * features[3].of}) and what is wrong there. The command line maps it to exit code 2.
 */
public final class SpecException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** One problem: where in the spec, and what. */
  public record Problem(String path, String message) {
    @Override
    public String toString() {
      return path.isEmpty() ? message : path + ": " + message;
    }
  }

  private final String location;
  private final List<Problem> problems;

  public SpecException(String location, List<Problem> problems) {
    super(describe(location, problems));
    this.location = location;
    this.problems = List.copyOf(problems);
  }

  /** The spec's path or URI, as the caller named it. */
  public String location() {
    return location;
  }

  /** The problems, in the order they were found (at least one). */
  public List<Problem> problems() {
    return problems;
  }

  private static String describe(String location, List<Problem> problems) {
    StringBuilder text =
        new StringBuilder("the spec ")
            .append(location)
            .append(" cannot be used (")
            .append(problems.size())
            .append(problems.size() == 1 ? " problem):" : " problems):");
    for (Problem problem : problems) {
      text.append("\n  ").append(problem);
    }
    return text.toString();
  }
}
