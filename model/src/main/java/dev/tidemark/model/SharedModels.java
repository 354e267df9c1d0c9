package dev.tidemark.model;

import java.util.HashMap;
import java.util.Map;

/**
 * The per-JVM registry of loaded models, keyed by model identity ({@link ModelIdentity}: the URI
 * and, for a watched model, its content), reference-counted: the first DoFn instance to ask loads
 * the model, later ones (other threads, other steps scoring with the same model) share it, and the
 * last to release it closes it. Loads happen under one lock, so a JVM never loads the same model
 * twice at once.
 */
final class SharedModels {
  private static final Object LOCK = new Object();
  private static final Map<String, Entry> ENTRIES = new HashMap<>();

  private SharedModels() {}

  private static final class Entry {
    final String key;
    final LoadedModel model;
    int references;

    Entry(String key, LoadedModel model) {
      this.key = key;
      this.model = model;
    }
  }

  /** One DoFn instance's hold on a shared model. Close it exactly once, in {@code @Teardown}. */
  static final class Lease implements AutoCloseable {
    private final Entry entry;
    private final boolean loadedByThisLease;
    private boolean closed;

    private Lease(Entry entry, boolean loadedByThisLease) {
      this.entry = entry;
      this.loadedByThisLease = loadedByThisLease;
    }

    LoadedModel model() {
      return entry.model;
    }

    /** Whether this lease's acquire loaded the model (so it reports the load metrics). */
    boolean loadedByThisLease() {
      return loadedByThisLease;
    }

    @Override
    public void close() {
      synchronized (LOCK) {
        if (closed) {
          return;
        }
        closed = true;
        if (--entry.references == 0) {
          ENTRIES.remove(entry.key);
          entry.model.close();
        }
      }
    }
  }

  /**
   * The shared model for {@code config}'s model (URI, and content when the config fixes it),
   * loading it if no one holds it. The sidecar names the engine, so one identity is one loaded
   * model.
   */
  static Lease acquire(ScoringConfig config) {
    String key = config.identity().format();
    synchronized (LOCK) {
      Entry entry = ENTRIES.get(key);
      boolean loaded = false;
      if (entry == null) {
        entry = new Entry(key, LoadedModel.load(config));
        ENTRIES.put(key, entry);
        loaded = true;
      } else {
        // Same file, but this transform may expect another engine, name or version.
        config.check(entry.model.metadata(), config.modelUri + ".json");
      }
      entry.references++;
      return new Lease(entry, loaded);
    }
  }

  /** How many leases hold the model (0 when it is not loaded); for tests. */
  static int references(String modelUri) {
    synchronized (LOCK) {
      Entry entry = ENTRIES.get(modelUri);
      return entry == null ? 0 : entry.references;
    }
  }
}
