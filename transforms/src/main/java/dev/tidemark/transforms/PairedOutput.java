package dev.tidemark.transforms;

import java.util.Map;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.transforms.PTransform;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.PCollectionTuple;
import org.apache.beam.sdk.values.PInput;
import org.apache.beam.sdk.values.POutput;
import org.apache.beam.sdk.values.PValue;
import org.apache.beam.sdk.values.TupleTag;

/**
 * The typed two-collection output of a Tidemark transform: a main output and an audit output (the
 * records it diverted). Subclasses name the two accessors after what they hold.
 */
abstract class PairedOutput<MainT, AuditT> implements POutput {
  private final PCollection<MainT> main;
  private final TupleTag<MainT> mainTag;
  private final PCollection<AuditT> audit;
  private final TupleTag<AuditT> auditTag;

  PairedOutput(PCollectionTuple outputs, TupleTag<MainT> mainTag, TupleTag<AuditT> auditTag) {
    this.main = outputs.get(mainTag);
    this.mainTag = mainTag;
    this.audit = outputs.get(auditTag);
    this.auditTag = auditTag;
  }

  PCollection<MainT> main() {
    return main;
  }

  PCollection<AuditT> audit() {
    return audit;
  }

  @Override
  public Pipeline getPipeline() {
    return main.getPipeline();
  }

  @Override
  public Map<TupleTag<?>, PValue> expand() {
    return Map.of(mainTag, main, auditTag, audit);
  }

  @Override
  public void finishSpecifyingOutput(
      String transformName, PInput input, PTransform<?, ?> transform) {}
}
