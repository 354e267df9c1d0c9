package dev.tidemark.pipelines.terraform;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.checkerframework.checker.nullness.qual.Nullable;

/**
 * What a {@code terraform plan} would compute for the expressions of a {@link TerraformConfig},
 * without Terraform or its providers: variables take their defaults unless given, locals are
 * evaluated from their expressions, and a resource's or data source's attribute is its own argument
 * when the block sets it, otherwise what {@code computed} says the provider returns (a bucket's
 * {@code url}, a service account's {@code email}, ...). A reference nothing can resolve fails with
 * its name, so a test that evaluates an expression also proves that every reference in it leads
 * somewhere.
 *
 * <p>It understands the subset of HCL the configuration uses on the paths tests evaluate: string
 * templates with {@code ${...}}, numbers, {@code true}/{@code false}/{@code null}, lists, maps
 * (objects), references with {@code [0]} or {@code ["key"]} steps, {@code == != && || !}, the
 * conditional {@code c ? a : b} (only the chosen branch is evaluated, as Terraform does) and the
 * functions {@code merge}, {@code tomap}, {@code toset} (for {@code for_each}), {@code concat},
 * {@code replace} (of a substring), {@code file}, {@code startswith}, {@code endswith} and {@code
 * regex}; {@code for} expressions over a map. Anything else fails, naming the expression.
 */
public final class TerraformValues {
  private final TerraformConfig config;
  private final Map<String, Object> variables = new HashMap<>();
  private final BiFunction<String, TerraformValues, Object> computed;
  private final Map<String, Object> locals = new HashMap<>();

  /**
   * @param given variable values that replace the defaults (a variable without a default must be
   *     given)
   * @param computed the value of {@code TYPE.NAME.ATTRIBUTE} (or {@code data.TYPE.NAME.ATTRIBUTE})
   *     for attributes a block does not set itself, or {@code null} if unknown
   */
  public TerraformValues(
      TerraformConfig config,
      Map<String, Object> given,
      BiFunction<String, TerraformValues, Object> computed) {
    this.config = config;
    this.computed = computed;
    for (TerraformConfig.Block b : config.blocks()) {
      if (b.type().equals("variable")) {
        String name = b.labels().get(0);
        if (given.containsKey(name)) {
          variables.put(name, given.get(name));
        } else if (b.attribute("default").isPresent()) {
          variables.put(name, evaluate(b.attribute("default").get()));
        }
      }
    }
    for (String name : given.keySet()) {
      config.variable(name); // fails on a variable the configuration does not declare
    }
  }

  public TerraformConfig config() {
    return config;
  }

  /** The value of {@code var.name}. */
  public Object variable(String name) {
    if (!variables.containsKey(name)) {
      throw new IllegalStateException("var." + name + " has no default and was not given");
    }
    return variables.get(name);
  }

  /** The value of {@code local.name}. */
  public Object local(String name) {
    if (!locals.containsKey(name)) {
      locals.put(name, evaluate(config.local(name)));
    }
    return locals.get(name);
  }

  /** The value of argument {@code name} of {@code block}. */
  public Object argument(TerraformConfig.Block block, String name) {
    return evaluate(
        block
            .attribute(name)
            .orElseThrow(() -> new IllegalStateException(block + " has no argument " + name)));
  }

  /** The value of an expression's source text. */
  public Object evaluate(String expression) {
    return evaluate(expression, Map.of());
  }

  /**
   * The value of an expression with names bound ({@code each}, {@code count}, a dynamic block's
   * iterator).
   */
  public Object evaluate(String expression, Map<String, Object> bound) {
    Parser parser = new Parser(expression);
    parser.scope.putAll(bound);
    Object value = parser.expression(true);
    parser.skipSpace();
    if (parser.i != expression.length()) {
      throw parser.error("unexpected text");
    }
    return value;
  }

  /** {@code TYPE.NAME.ATTRIBUTE} of a resource ({@code data.TYPE...} for a data source). */
  private Object attribute(String kind, String type, String name, String attribute) {
    return attribute(kind, type, name, attribute, null);
  }

  /**
   * As {@link #attribute(String, String, String, String)}, of the instance {@code instance} (a
   * {@code for_each} key or a {@code count} index; null for the block): an argument is evaluated
   * with {@code each} or {@code count} bound to it.
   */
  private Object attribute(
      String kind, String type, String name, String attribute, @Nullable Object instance) {
    TerraformConfig.Block block =
        config.blocks().stream()
            .filter(b -> b.type().equals(kind) && b.labels().equals(List.of(type, name)))
            .findFirst()
            .orElseThrow(
                () ->
                    new IllegalStateException(
                        "reference to undeclared " + kind + " " + type + "." + name));
    if (block.attribute(attribute).isPresent()) {
      if (instance != null && block.attribute("for_each").isPresent()) {
        Map<?, ?> each = (Map<?, ?>) argument(block, "for_each");
        if (!each.containsKey(instance)) {
          throw new IllegalStateException(
              type + "." + name + " has no instance " + instance + " (keys " + each.keySet() + ")");
        }
        Map<String, Object> eachValue = new LinkedHashMap<>();
        eachValue.put("key", instance);
        eachValue.put("value", each.get(instance));
        return evaluate(block.attribute(attribute).get(), Map.of("each", eachValue));
      }
      if (instance != null && block.attribute("count").isPresent()) {
        return evaluate(
            block.attribute(attribute).get(), Map.of("count", Map.of("index", instance)));
      }
      return argument(block, attribute);
    }
    String key = (kind.equals("data") ? "data." : "") + type + "." + name + "." + attribute;
    Object value = computed.apply(key, this);
    if (value == null) {
      throw new IllegalStateException("no value known for " + key);
    }
    return value;
  }

  static String text(Object value) {
    if (value instanceof BigDecimal) {
      return ((BigDecimal) value).stripTrailingZeros().toPlainString();
    }
    if (value instanceof String || value instanceof Boolean) {
      return value.toString();
    }
    throw new IllegalStateException("not a string in a template: " + value);
  }

  private static boolean truth(Object value) {
    if (value instanceof Boolean) {
      return (Boolean) value;
    }
    throw new IllegalStateException("not a bool: " + value);
  }

  /** A recursive-descent evaluator over one expression's text. */
  private final class Parser {
    final String s;
    int i;

    /** The names a {@code for} expression binds, while its body is evaluated. */
    final Map<String, Object> scope = new HashMap<>();

    Parser(String s) {
      this.s = s;
    }

    IllegalStateException error(String message) {
      return new IllegalStateException(message + " at " + i + " in: " + s);
    }

    void skipSpace() {
      while (i < s.length()) {
        char c = s.charAt(i);
        if (Character.isWhitespace(c)) {
          i++;
        } else if (c == '#' || s.startsWith("//", i)) {
          while (i < s.length() && s.charAt(i) != '\n') {
            i++;
          }
        } else {
          return;
        }
      }
    }

    boolean eat(String token) {
      skipSpace();
      if (s.startsWith(token, i)) {
        i += token.length();
        return true;
      }
      return false;
    }

    void expect(String token) {
      if (!eat(token)) {
        throw error("'" + token + "' expected");
      }
    }

    /** {@code c ? a : b}; with {@code evaluate} false, only skipped over. */
    Object expression(boolean evaluate) {
      Object condition = or(evaluate);
      if (eat("?")) {
        boolean chosen = evaluate && truth(condition);
        Object whenTrue = expression(evaluate && chosen);
        expect(":");
        Object whenFalse = expression(evaluate && !chosen);
        return !evaluate ? null : chosen ? whenTrue : whenFalse;
      }
      return condition;
    }

    Object or(boolean evaluate) {
      Object left = and(evaluate);
      while (eat("||")) {
        Object right = and(evaluate);
        left = evaluate ? (Boolean) (truth(left) || truth(right)) : null;
      }
      return left;
    }

    Object and(boolean evaluate) {
      Object left = comparison(evaluate);
      while (eat("&&")) {
        Object right = comparison(evaluate);
        left = evaluate ? (Boolean) (truth(left) && truth(right)) : null;
      }
      return left;
    }

    Object comparison(boolean evaluate) {
      Object left = unary(evaluate);
      while (true) {
        if (eat("==")) {
          Object right = unary(evaluate);
          left = evaluate ? (Boolean) equal(left, right) : null;
        } else if (eat("!=")) {
          Object right = unary(evaluate);
          left = evaluate ? (Boolean) !equal(left, right) : null;
        } else {
          return left;
        }
      }
    }

    boolean equal(Object a, Object b) {
      if (a instanceof BigDecimal && b instanceof BigDecimal) {
        return ((BigDecimal) a).compareTo((BigDecimal) b) == 0;
      }
      return Objects.equals(a, b);
    }

    Object unary(boolean evaluate) {
      if (eat("!")) {
        Object value = unary(evaluate);
        return evaluate ? (Boolean) !truth(value) : null;
      }
      return postfix(evaluate, primary(evaluate));
    }

    /** {@code [index]} steps after a parenthesised expression or a call. */
    Object postfix(boolean evaluate, Object value) {
      while (true) {
        skipSpace();
        if (i < s.length() && s.charAt(i) == '[') {
          i++;
          Object index = expression(evaluate);
          expect("]");
          value = evaluate ? index(value, index) : null;
        } else {
          return value;
        }
      }
    }

    Object index(Object value, Object index) {
      if (value instanceof List && index instanceof BigDecimal) {
        return ((List<?>) value).get(((BigDecimal) index).intValueExact());
      }
      if (value instanceof Map && index instanceof String) {
        Map<?, ?> map = (Map<?, ?>) value;
        if (!map.containsKey(index)) {
          throw error("no key " + index);
        }
        return map.get(index);
      }
      throw error("cannot index " + value + " with " + index);
    }

    Object primary(boolean evaluate) {
      skipSpace();
      if (i >= s.length()) {
        throw error("expression expected");
      }
      char c = s.charAt(i);
      if (c == '"') {
        return string(evaluate);
      }
      if (c == '(') {
        i++;
        Object value = expression(evaluate);
        expect(")");
        return value;
      }
      if (c == '[') {
        i++;
        List<Object> list = new ArrayList<>();
        while (!eat("]")) {
          list.add(expression(evaluate));
          eat(",");
        }
        return list;
      }
      if (c == '{') {
        i++;
        skipSpace();
        if (s.startsWith("for ", i)) {
          return forMap(evaluate);
        }
        Map<String, Object> map = new LinkedHashMap<>();
        while (!eat("}")) {
          skipSpace();
          String key = s.charAt(i) == '"' ? text(string(true)) : identifier();
          if (!eat("=")) {
            expect(":");
          }
          map.put(key, expression(evaluate));
          eat(",");
        }
        return map;
      }
      if (Character.isDigit(c)) {
        int start = i;
        while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) {
          i++;
        }
        return new BigDecimal(s.substring(start, i));
      }
      if (c == '<') {
        throw error("heredocs are not evaluated");
      }
      String name = identifier();
      switch (name) {
        case "true":
          return Boolean.TRUE;
        case "false":
          return Boolean.FALSE;
        case "null":
          return null;
        default:
          break;
      }
      skipSpace();
      if (i < s.length() && s.charAt(i) == '(') {
        i++;
        List<Object> args = new ArrayList<>();
        while (!eat(")")) {
          args.add(expression(evaluate));
          eat(",");
        }
        return evaluate ? call(name, args) : null;
      }
      return reference(name, evaluate);
    }

    /** {@code {for k, v in COLLECTION : KEY => VALUE if CONDITION}} over a map. */
    Object forMap(boolean evaluate) {
      expect("for");
      String keyName = identifier();
      expect(",");
      String valueName = identifier();
      expect("in");
      Object collection = expression(evaluate);
      expect(":");
      int body = i;
      Map<String, Object> out = new LinkedHashMap<>();
      if (evaluate) {
        for (Map.Entry<?, ?> e : ((Map<?, ?>) collection).entrySet()) {
          i = body;
          scope.put(keyName, e.getKey());
          scope.put(valueName, e.getValue());
          Object key = expression(true);
          expect("=>");
          // The value is evaluated only where the condition holds, as Terraform filters first.
          int valueAt = i;
          expression(false);
          boolean keep = !eat("if") || truth(expression(true));
          int end = i;
          if (keep) {
            i = valueAt;
            out.put(text(key), expression(true));
            i = end;
          }
          scope.remove(keyName);
          scope.remove(valueName);
        }
      }
      i = body;
      expression(false);
      expect("=>");
      expression(false);
      if (eat("if")) {
        expression(false);
      }
      expect("}");
      return evaluate ? out : null;
    }

    String identifier() {
      skipSpace();
      int start = i;
      while (i < s.length()
          && (Character.isLetterOrDigit(s.charAt(i)) || s.charAt(i) == '_' || s.charAt(i) == '-')) {
        i++;
      }
      if (start == i) {
        throw error("identifier expected");
      }
      return s.substring(start, i);
    }

    /** {@code root.a.b[0].c}: a traversal from {@code root}. */
    Object reference(String root, boolean evaluate) {
      List<Object> steps = new ArrayList<>();
      while (i < s.length()) {
        if (s.charAt(i) == '.' && i + 1 < s.length() && !Character.isDigit(s.charAt(i + 1))) {
          i++;
          steps.add(identifier());
        } else if (s.charAt(i) == '[') {
          i++;
          steps.add(new Index(expression(true)));
          expect("]");
        } else {
          break;
        }
      }
      if (!evaluate) {
        return null;
      }
      String where = root + steps;
      if (scope.containsKey(root)) {
        return rest(scope.get(root), steps, 0, where);
      }
      switch (root) {
        case "var":
          return rest(variable((String) steps.get(0)), steps, 1, where);
        case "local":
          return rest(local((String) steps.get(0)), steps, 1, where);
        case "data":
          return rest(
              attribute(
                  "data",
                  (String) steps.get(0),
                  (String) steps.get(1),
                  (String) steps.get(2 + indexSteps(steps, 2))),
              steps,
              3 + indexSteps(steps, 2),
              where);
        case "path":
          if (steps.equals(List.of("module"))) {
            return config.directory().toString();
          }
          throw error("unknown path." + steps);
        default:
          // TYPE.NAME[index].ATTRIBUTE: an argument is evaluated for that instance (each or
          // count bound); a computed attribute per block, as for its first (or only) instance.
          int skip = indexSteps(steps, 1);
          return rest(
              attribute(
                  "resource",
                  root,
                  (String) steps.get(0),
                  (String) steps.get(1 + skip),
                  skip == 0 ? null : ((Index) steps.get(1)).key()),
              steps,
              2 + skip,
              where);
      }
    }

    /** How many index steps (numbers) stand at {@code from}. */
    int indexSteps(List<Object> steps, int from) {
      int n = 0;
      while (from + n < steps.size() && steps.get(from + n) instanceof Index) {
        n++;
      }
      return n;
    }

    Object rest(Object value, List<Object> steps, int from, String where) {
      for (int k = from; k < steps.size(); k++) {
        Object step = steps.get(k);
        value = index(value, step instanceof Index ? ((Index) step).key() : step);
      }
      return value;
    }

    /** A quoted string with {@code ${...}} templates. */
    Object string(boolean evaluate) {
      i++; // opening quote
      StringBuilder out = new StringBuilder();
      while (i < s.length()) {
        char c = s.charAt(i);
        if (c == '\\') {
          char next = s.charAt(i + 1);
          out.append(next == 'n' ? '\n' : next == 't' ? '\t' : next);
          i += 2;
        } else if (c == '"') {
          i++;
          return evaluate ? out.toString() : null;
        } else if (c == '$' && s.startsWith("${", i)) {
          i += 2;
          Object value = expression(evaluate);
          expect("}");
          if (evaluate) {
            out.append(text(value));
          }
        } else {
          out.append(c);
          i++;
        }
      }
      throw error("string not closed");
    }

    Object call(String function, List<Object> args) {
      switch (function) {
        case "merge":
          {
            Map<String, Object> merged = new LinkedHashMap<>();
            for (Object arg : args) {
              if (arg != null) {
                ((Map<?, ?>) arg).forEach((k, v) -> merged.put((String) k, v));
              }
            }
            return merged;
          }
        case "tomap":
          return new LinkedHashMap<>((Map<?, ?>) args.get(0));
        case "concat":
          {
            List<Object> all = new ArrayList<>();
            args.forEach(a -> all.addAll((List<?>) a));
            return all;
          }
        case "file":
          try {
            return java.nio.file.Files.readString(
                java.nio.file.Path.of(text(args.get(0))), java.nio.charset.StandardCharsets.UTF_8);
          } catch (java.io.IOException e) {
            throw error("file " + args.get(0) + ": " + e);
          }
        case "jsondecode":
          try {
            // An object as a map of its members, as HCL sees it (enough for a JSON object).
            return com.fasterxml.jackson.databind.json.JsonMapper.builder()
                .build()
                .readValue(text(args.get(0)), LinkedHashMap.class);
          } catch (java.io.IOException e) {
            throw error("jsondecode: " + e.getMessage());
          }
        case "toset":
          {
            // Only for_each takes sets here: as a map of each element to itself, which is how
            // for_each sees a set of strings (each.key = each.value), sorted as Terraform sorts.
            Map<String, Object> set = new java.util.TreeMap<>();
            ((List<?>) args.get(0)).forEach(e -> set.put(text(e), e));
            return set;
          }
        case "replace":
          // A literal substring replacement (a /regex/ pattern is not evaluated here).
          if (text(args.get(1)).startsWith("/")) {
            throw error("replace with a regular expression is not evaluated here");
          }
          return text(args.get(0)).replace(text(args.get(1)), text(args.get(2)));
        case "startswith":
          return text(args.get(0)).startsWith(text(args.get(1)));
        case "endswith":
          return text(args.get(0)).endsWith(text(args.get(1)));
        case "regex":
          {
            // RE2's (?P<name>...) is Java's (?<name>...); named groups give a map, as in HCL.
            String pattern = text(args.get(0)).replace("(?P<", "(?<");
            Matcher m = Pattern.compile(pattern).matcher(text(args.get(1)));
            if (!m.find()) {
              throw error("regex " + args.get(0) + " does not match " + args.get(1));
            }
            if (m.groupCount() == 0) {
              return m.group();
            }
            Matcher names = Pattern.compile("\\(\\?<([a-zA-Z][a-zA-Z0-9]*)>").matcher(pattern);
            Map<String, Object> named = new LinkedHashMap<>();
            while (names.find()) {
              named.put(names.group(1), m.group(names.group(1)));
            }
            if (!named.isEmpty()) {
              return named;
            }
            List<Object> groups = new ArrayList<>();
            for (int g = 1; g <= m.groupCount(); g++) {
              groups.add(m.group(g));
            }
            return groups;
          }
        default:
          throw error("function " + function + " is not evaluated here");
      }
    }
  }

  /** A {@code [...]} step of a traversal, as opposed to a {@code .name} step. */
  private record Index(Object key) {}
}
