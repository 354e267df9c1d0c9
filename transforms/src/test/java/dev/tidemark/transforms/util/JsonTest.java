package dev.tidemark.transforms.util;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * {@link Json#canonical}: the canonical form feeds every event's fingerprint, which dedup state
 * keeps across restarts, so its bytes must not change when its implementation does.
 */
@RunWith(JUnit4.class)
public class JsonTest {

  /**
   * The first implementation (each name and scalar written by {@link JsonNode#toString()}), kept as
   * the reference for the bytes.
   */
  private static String reference(JsonNode node) {
    StringBuilder out = new StringBuilder();
    appendReference(node, out);
    return out.toString();
  }

  private static void appendReference(JsonNode node, StringBuilder out) {
    if (node.isObject()) {
      List<String> names = new ArrayList<>();
      node.fieldNames().forEachRemaining(names::add);
      Collections.sort(names);
      out.append('{');
      for (int i = 0; i < names.size(); i++) {
        if (i > 0) {
          out.append(',');
        }
        out.append(TextNode.valueOf(names.get(i)).toString()).append(':');
        appendReference(node.get(names.get(i)), out);
      }
      out.append('}');
    } else if (node.isArray()) {
      out.append('[');
      for (int i = 0; i < node.size(); i++) {
        if (i > 0) {
          out.append(',');
        }
        appendReference(node.get(i), out);
      }
      out.append(']');
    } else if (node.isNumber()) {
      out.append(node.decimalValue().stripTrailingZeros().toString());
    } else {
      out.append(node.toString());
    }
  }

  private static JsonNode parse(String json) throws Exception {
    return Json.MAPPER.readTree(json);
  }

  @Test
  public void fieldsAreSortedAndNumbersCompared() throws Exception {
    assertThat(
        Json.canonical(
            parse("{\"b\": [1, 100.0, 1E+2, -0.50], \"a\": {\"z\": null, \"y\": true}}")),
        is("{\"a\":{\"y\":true,\"z\":null},\"b\":[1,1E+2,1E+2,-0.5]}"));
  }

  @Test
  public void stringsAreEscapedAsJsonNodeWritesThem() throws Exception {
    String json =
        "{\"q\\\"uote\": \"back\\\\slash\", \"ctl\": \"\\u0001\\t\\n\\u001f\","
            + " \"uni\": \"caf\u00e9 \u2028 \\ud83d\\ude00 \\u007f\", \"\": \"\"}";
    JsonNode node = parse(json);
    assertThat(Json.canonical(node), is(reference(node)));
    assertThat(
        Json.canonical(node),
        is(
            "{\"\":\"\",\"ctl\":\"\\u0001\\t\\n\\u001F\",\"q\\\"uote\":\"back\\\\slash\","
                + "\"uni\":\"caf\u00e9 \u2028 \ud83d\ude00 \u007f\"}"));
  }

  @Test
  public void randomDocumentsHaveTheReferenceBytes() {
    Random random = new Random(20261130L);
    for (int i = 0; i < 2_000; i++) {
      JsonNode node = randomObject(random, 0);
      assertThat(node.toString(), Json.canonical(node), is(reference(node)));
    }
  }

  private static final String CHARACTERS = "aZ09 \"\\/\b\f\n\r\t\u0000\u001f\u007f\u00e9\u2028€";

  private static String randomString(Random random) {
    StringBuilder text = new StringBuilder();
    int length = random.nextInt(8);
    for (int i = 0; i < length; i++) {
      if (random.nextInt(10) == 0) {
        text.appendCodePoint(0x1F600 + random.nextInt(40)); // a surrogate pair
      } else {
        text.append(CHARACTERS.charAt(random.nextInt(CHARACTERS.length())));
      }
    }
    return text.toString();
  }

  private static JsonNode randomValue(Random random, int depth) {
    JsonNodeFactory nodes = JsonNodeFactory.instance;
    switch (random.nextInt(depth < 3 ? 8 : 6)) {
      case 0:
        return nodes.textNode(randomString(random));
      case 1:
        return nodes.numberNode(random.nextLong() >> random.nextInt(64));
      case 2:
        return nodes.numberNode(
            new BigDecimal(random.nextInt(2_000_000) - 1_000_000)
                .scaleByPowerOfTen(random.nextInt(21) - 10));
      case 3:
        return nodes.booleanNode(random.nextBoolean());
      case 4:
        return nodes.nullNode();
      case 5:
        return nodes.textNode(String.valueOf(random.nextDouble()));
      case 6:
        return randomObject(random, depth + 1);
      default:
        var array = nodes.arrayNode();
        int size = random.nextInt(4);
        for (int i = 0; i < size; i++) {
          array.add(randomValue(random, depth + 1));
        }
        return array;
    }
  }

  private static ObjectNode randomObject(Random random, int depth) {
    ObjectNode object = JsonNodeFactory.instance.objectNode();
    int size = random.nextInt(6);
    for (int i = 0; i < size; i++) {
      object.set(randomString(random), randomValue(random, depth));
    }
    return object;
  }
}
