package dev.tidemark.bench.flink;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * An enumerator checkpoint of the benchmark's sources: the splits not yet assigned, each written
 * with the source's split serializer, length-prefixed.
 */
final class SplitsSerializer<S> implements SimpleVersionedSerializer<Collection<S>> {
  private final SimpleVersionedSerializer<S> splits;

  SplitsSerializer(SimpleVersionedSerializer<S> splits) {
    this.splits = splits;
  }

  @Override
  public int getVersion() {
    return 1;
  }

  @Override
  public byte[] serialize(Collection<S> checkpoint) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(checkpoint.size());
      for (S split : checkpoint) {
        byte[] one = splits.serialize(split);
        out.writeInt(one.length);
        out.write(one);
      }
    }
    return bytes.toByteArray();
  }

  @Override
  public Collection<S> deserialize(int version, byte[] serialized) throws IOException {
    List<S> result = new ArrayList<>();
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized))) {
      int n = in.readInt();
      for (int i = 0; i < n; i++) {
        byte[] one = new byte[in.readInt()];
        in.readFully(one);
        result.add(splits.deserialize(version, one));
      }
    }
    return result;
  }
}
