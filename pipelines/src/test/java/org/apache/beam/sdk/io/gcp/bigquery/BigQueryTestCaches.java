package org.apache.beam.sdk.io.gcp.bigquery;

/**
 * Opens BigQueryIO's package-private {@code clearStaticCaches()} to tests: created-table, schema
 * and stream-writer caches are static and would otherwise leak from one test's fake tables to the
 * next.
 */
public final class BigQueryTestCaches {
  private BigQueryTestCaches() {}

  public static void clear() throws Exception {
    BigQueryIO.clearStaticCaches();
  }
}
