package dev.tidemark.model;

import com.google.protobuf.CodedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * A logistic regression {@code score = sigmoid(features · weights + bias)} written as an ONNX
 * {@code ModelProto} with protobuf's {@link CodedOutputStream} (there is no ONNX Java artifact), in
 * the field numbers of {@code onnx.proto}.
 *
 * <p>Graph: input {@code features} float {@code [N, k]}; initializers {@code weights} float {@code
 * [k, 1]} and {@code bias} float {@code [1]}; nodes {@code MatMul(features, weights) -> matmul},
 * {@code Add(matmul, bias) -> logit}, {@code Sigmoid(logit) -> score}; output {@code score} float
 * {@code [N, 1]}. IR version 8, opset 13 of the default domain: ONNX Runtime 1.x and any exporter
 * of the last years agree on these.
 */
public final class OnnxLogisticRegression {
  public static final String INPUT = "features";
  public static final String OUTPUT = "score";
  public static final long IR_VERSION = 8;
  public static final long OPSET = 13;

  private static final int FLOAT = 1;

  private final float[] weights;
  private final float bias;

  /** Weights on the raw (unstandardised) features, in input order. */
  public OnnxLogisticRegression(float[] weights, float bias) {
    this.weights = weights.clone();
    this.bias = bias;
  }

  public float[] weights() {
    return weights.clone();
  }

  public float bias() {
    return bias;
  }

  /**
   * The model's score in plain Java, in float32 like ONNX Runtime, for tests and for evaluation.
   */
  public float score(float[] features) {
    float logit = 0f;
    for (int j = 0; j < weights.length; j++) {
      logit += features[j] * weights[j];
    }
    logit += bias;
    return (float) (1.0 / (1.0 + Math.exp(-logit)));
  }

  /** The serialised ModelProto. */
  public byte[] toOnnx(String graphName, String docString) {
    int k = weights.length;
    byte[] graph =
        message(
            out -> {
              writeMessage(out, 1, node("MatMul", "MatMul", List.of(INPUT, "weights"), "matmul"));
              writeMessage(out, 1, node("Add", "Add", List.of("matmul", "bias"), "logit"));
              writeMessage(out, 1, node("Sigmoid", "Sigmoid", List.of("logit"), OUTPUT));
              out.writeString(2, graphName);
              writeMessage(out, 5, tensor("weights", new long[] {k, 1}, weights));
              writeMessage(out, 5, tensor("bias", new long[] {1}, new float[] {bias}));
              writeMessage(out, 11, valueInfo(INPUT, "N", k));
              writeMessage(out, 12, valueInfo(OUTPUT, "N", 1));
            });
    return message(
        out -> {
          out.writeInt64(1, IR_VERSION);
          out.writeString(2, "tidemark");
          out.writeString(6, docString);
          writeMessage(out, 7, graph);
          writeMessage(
              out,
              8,
              message(
                  opset -> {
                    opset.writeString(1, "");
                    opset.writeInt64(2, OPSET);
                  }));
        });
  }

  /** NodeProto: input = 1, output = 2, name = 3, op_type = 4. */
  private static byte[] node(String name, String opType, List<String> inputs, String output) {
    return message(
        out -> {
          for (String input : inputs) {
            out.writeString(1, input);
          }
          out.writeString(2, output);
          out.writeString(3, name);
          out.writeString(4, opType);
        });
  }

  /** TensorProto: dims = 1, data_type = 2, float_data = 4 (packed), name = 8. */
  private static byte[] tensor(String name, long[] dims, float[] values) {
    return message(
        out -> {
          for (long dim : dims) {
            out.writeInt64(1, dim);
          }
          out.writeInt32(2, FLOAT);
          out.writeTag(4, com.google.protobuf.WireFormat.WIRETYPE_LENGTH_DELIMITED);
          out.writeUInt32NoTag(values.length * 4);
          for (float value : values) {
            out.writeFloatNoTag(value);
          }
          out.writeString(8, name);
        });
  }

  /**
   * ValueInfoProto (name = 1, type = 2) of a float tensor {@code [symbolicRows, columns]}:
   * TypeProto tensor_type = 1; Tensor elem_type = 1, shape = 2; TensorShapeProto dim = 1; Dimension
   * dim_value = 1, dim_param = 2.
   */
  private static byte[] valueInfo(String name, String symbolicRows, long columns) {
    byte[] shape =
        message(
            out -> {
              writeMessage(out, 1, message(dim -> dim.writeString(2, symbolicRows)));
              writeMessage(out, 1, message(dim -> dim.writeInt64(1, columns)));
            });
    byte[] tensorType =
        message(
            out -> {
              out.writeInt32(1, FLOAT);
              writeMessage(out, 2, shape);
            });
    byte[] type = message(out -> writeMessage(out, 1, tensorType));
    return message(
        out -> {
          out.writeString(1, name);
          writeMessage(out, 2, type);
        });
  }

  @FunctionalInterface
  private interface Fields {
    void write(CodedOutputStream out) throws IOException;
  }

  private static byte[] message(Fields fields) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    CodedOutputStream out = CodedOutputStream.newInstance(bytes);
    try {
      fields.write(out);
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  private static void writeMessage(CodedOutputStream out, int field, byte[] message)
      throws IOException {
    out.writeByteArray(field, message);
  }
}
