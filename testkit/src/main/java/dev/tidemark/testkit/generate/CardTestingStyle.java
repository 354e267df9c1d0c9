package dev.tidemark.testkit.generate;

/**
 * What a card-testing burst looks like in a generated payments stream: 8 to 20 payments of one
 * account within 1 to 3 minutes, labelled {@code fraud}.
 */
public enum CardTestingStyle {
  /** 0.50 to 3.00 each, every one at another merchant: what the shipped models were trained on. */
  SPREAD,
  /**
   * 2.00 to 12.00 each, all at one merchant (a fraudster testing cards through one weak checkout).
   * The shipped models never saw it and flag none of it; a stream that switches to it is a drift
   * their labelled errors show, and a model trained on its labels learns it.
   */
  ONE_MERCHANT
}
