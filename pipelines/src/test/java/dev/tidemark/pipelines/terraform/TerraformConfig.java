package dev.tidemark.pipelines.terraform;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The structure of the {@code terraform/} configuration, read without Terraform: blocks with their
 * labels, and attributes with their expressions kept as source text.
 *
 * <p>It parses only what tests need (no expression evaluation): a block is {@code type "label"... {
 * body }}, an attribute is {@code name = expression} up to the end of the line at bracket depth
 * zero; strings, {@code ${...}} templates, heredocs and comments are skipped over correctly. The
 * full, schema-aware check of the configuration is {@code terraform/check/check.mjs}.
 *
 * <pre>{@code
 * TerraformConfig tf = TerraformConfig.load(TerraformConfig.projectDirectory());
 * Path schema = tf.tableSchemaFile("decisions");   // terraform/schemas/decisions.json
 * List<String> key = tf.primaryKey("decisions");    // [decision_id]
 * }</pre>
 */
public final class TerraformConfig {

  /** A block: {@code type "label1" "label2" { ... }}, with the file it is in. */
  public static final class Block {
    private final String file;
    private final String type;
    private final List<String> labels;
    private final Map<String, String> attributes = new LinkedHashMap<>();
    private final List<Block> blocks = new ArrayList<>();

    Block(String file, String type, List<String> labels) {
      this.file = file;
      this.type = type;
      this.labels = List.copyOf(labels);
    }

    public String file() {
      return file;
    }

    public String type() {
      return type;
    }

    public List<String> labels() {
      return labels;
    }

    /** Attribute expressions as source text, in file order. */
    public Map<String, String> attributes() {
      return Collections.unmodifiableMap(attributes);
    }

    public Optional<String> attribute(String name) {
      return Optional.ofNullable(attributes.get(name));
    }

    /** Nested blocks, including {@code dynamic "x"} blocks (type "dynamic", label "x"). */
    public List<Block> blocks() {
      return Collections.unmodifiableList(blocks);
    }

    public List<Block> blocks(String blockType) {
      return blocks.stream().filter(b -> b.type.equals(blockType)).collect(Collectors.toList());
    }

    /** {@code resource.google_x.name} style address; nested blocks have their type only. */
    public String address() {
      return Stream.concat(Stream.of(type), labels.stream()).collect(Collectors.joining("."));
    }

    @Override
    public String toString() {
      return file + ": " + address();
    }
  }

  /** One IAM grant in the configuration: the role and the block that grants it. */
  public static final class RoleGrant {
    private final String role;
    private final Block grantedBy;

    RoleGrant(String role, Block grantedBy) {
      this.role = role;
      this.grantedBy = grantedBy;
    }

    /**
     * The role, e.g. {@code roles/dataflow.worker}; {@code custom/NAME} for a reference to the
     * {@code google_project_iam_custom_role} resource NAME; else the expression.
     */
    public String role() {
      return role;
    }

    /**
     * Whether the role is a string literal or a custom role of this configuration (any other
     * expression cannot be checked statically).
     */
    public boolean isLiteral() {
      return role.startsWith("roles/")
          || role.startsWith(CUSTOM_ROLE_PREFIX)
          || role.startsWith("projects/")
          || role.startsWith("organizations/");
    }

    public Block grantedBy() {
      return grantedBy;
    }

    @Override
    public String toString() {
      return role + " (" + grantedBy + ")";
    }
  }

  /** How {@link RoleGrant#role()} names a custom role of this configuration. */
  public static final String CUSTOM_ROLE_PREFIX = "custom/";

  private static final Pattern CUSTOM_ROLE_REFERENCE =
      Pattern.compile("^google_project_iam_custom_role\\.(\\w+)(?:\\[0\\])?\\.(?:id|name)$");
  private static final Pattern STRING_LITERAL = Pattern.compile("\"((?:[^\"\\\\$]|\\\\.)*)\"");

  private final Path directory;
  private final List<Block> topLevel;

  private TerraformConfig(Path directory, List<Block> topLevel) {
    this.directory = directory;
    this.topLevel = topLevel;
  }

  /** The project's {@code terraform/} folder, found from the module's working directory. */
  public static Path projectDirectory() {
    Path dir = Paths.get("").toAbsolutePath();
    for (Path p = dir; p != null; p = p.getParent()) {
      if (Files.isDirectory(p.resolve("terraform")) && Files.isRegularFile(p.resolve("pom.xml"))) {
        return p.resolve("terraform");
      }
    }
    throw new IllegalStateException("No terraform/ folder above " + dir);
  }

  /** The bootstrap stage ({@code terraform/bootstrap/}), applied before the main stage. */
  public static Path bootstrapDirectory() {
    return projectDirectory().resolve("bootstrap");
  }

  /** Parses every {@code *.tf} file directly in {@code directory} (not in subfolders). */
  public static TerraformConfig load(Path directory) {
    List<Block> blocks = new ArrayList<>();
    try (Stream<Path> files = Files.list(directory)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".tf")).sorted().toList()) {
        String text = Files.readString(f, StandardCharsets.UTF_8);
        blocks.addAll(new Parser(f.getFileName().toString(), text).parseBody(true));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new TerraformConfig(directory, List.copyOf(blocks));
  }

  public Path directory() {
    return directory;
  }

  /** Top-level blocks of every file, in file and source order. */
  public List<Block> blocks() {
    return topLevel;
  }

  /** All {@code resource "type" "name"} blocks. */
  public List<Block> resources() {
    return topLevel.stream().filter(b -> b.type().equals("resource")).collect(Collectors.toList());
  }

  /**
   * The resource {@code type.name}, e.g. {@code resource("google_bigquery_table", "decisions")}.
   */
  public Block resource(String type, String name) {
    return resources().stream()
        .filter(b -> b.labels().equals(List.of(type, name)))
        .findFirst()
        .orElseThrow(
            () -> new IllegalArgumentException("No resource \"" + type + "\" \"" + name + "\""));
  }

  /** The block {@code variable "name"}. */
  public Block variable(String name) {
    return topLevel.stream()
        .filter(b -> b.type().equals("variable") && b.labels().equals(List.of(name)))
        .findFirst()
        .orElseThrow(() -> new IllegalArgumentException("No variable \"" + name + "\""));
  }

  /** The string literal a variable defaults to; fails when its default is not one. */
  public String variableDefault(String name) {
    String expression =
        variable(name)
            .attribute("default")
            .orElseThrow(() -> new IllegalStateException("variable " + name + " has no default"));
    Matcher m = STRING_LITERAL.matcher(expression.trim());
    if (!m.matches()) {
      throw new IllegalStateException(
          "variable " + name + " defaults to " + expression + ", not a string literal");
    }
    return m.group(1);
  }

  /** The expression of {@code local.name}, from whichever {@code locals} block declares it. */
  public String local(String name) {
    return topLevel.stream()
        .filter(b -> b.type().equals("locals"))
        .map(b -> b.attributes().get(name))
        .filter(java.util.Objects::nonNull)
        .findFirst()
        .orElseThrow(() -> new IllegalArgumentException("No local \"" + name + "\""));
  }

  /**
   * Every role granted anywhere: the {@code role} argument of each resource (the {@code
   * *_iam_member} and {@code *_iam_binding} resources), and {@code role} inside nested blocks (e.g.
   * {@code binding} of a {@code google_iam_policy} data source).
   */
  public List<RoleGrant> iamRoles() {
    List<RoleGrant> grants = new ArrayList<>();
    for (Block b : topLevel) {
      if (b.type().equals("resource") || b.type().equals("data")) {
        collectRoles(b, b, grants);
      }
    }
    return grants;
  }

  private static void collectRoles(Block top, Block b, List<RoleGrant> out) {
    String role = b.attributes().get("role");
    if (role != null) {
      out.add(new RoleGrant(literalOrExpression(role), top));
    }
    String roles = b.attributes().get("roles");
    if (roles != null) {
      for (String r : stringList(roles)) {
        out.add(new RoleGrant(r, top));
      }
    }
    for (Block nested : b.blocks()) {
      collectRoles(top, nested, out);
    }
  }

  private static String literalOrExpression(String expression) {
    Matcher m = STRING_LITERAL.matcher(expression.trim());
    if (m.matches()) {
      return m.group(1);
    }
    Matcher custom = CUSTOM_ROLE_REFERENCE.matcher(expression.trim());
    return custom.matches() ? CUSTOM_ROLE_PREFIX + custom.group(1) : expression.trim();
  }

  /** The permissions of the {@code google_project_iam_custom_role} resource {@code name}. */
  public List<String> customRolePermissions(String name) {
    return stringList(
        resource("google_project_iam_custom_role", name)
            .attribute("permissions")
            .orElseThrow(
                () -> new IllegalStateException("custom role " + name + " has no permissions")));
  }

  /** The string literals of a list expression {@code ["a", "b"]}; fails on anything else. */
  static List<String> stringList(String expression) {
    String e = expression.trim();
    if (!e.startsWith("[") || !e.endsWith("]")) {
      throw new IllegalStateException("Not a list literal: " + expression);
    }
    String inner = e.substring(1, e.length() - 1).trim();
    List<String> values = new ArrayList<>();
    Matcher m = STRING_LITERAL.matcher(inner);
    int at = 0;
    while (m.find()) {
      String between = inner.substring(at, m.start()).replace(",", "").trim();
      if (!between.isEmpty()) {
        throw new IllegalStateException("Not a list of string literals: " + expression);
      }
      values.add(m.group(1));
      at = m.end();
    }
    if (!inner.substring(at).replace(",", "").trim().isEmpty()) {
      throw new IllegalStateException("Not a list of string literals: " + expression);
    }
    return values;
  }

  /** A recursive-descent reader of HCL's structure. */
  private static final class Parser {
    private final String file;
    private final String s;
    private int i;

    Parser(String file, String text) {
      this.file = file;
      this.s = text;
    }

    List<Block> parseBody(boolean topLevel) {
      return parseInto(null, topLevel);
    }

    private List<Block> parseInto(Block parent, boolean topLevel) {
      List<Block> blocks = new ArrayList<>();
      while (true) {
        skipSpaceAndComments(true);
        if (i >= s.length()) {
          if (!topLevel) {
            throw error("unexpected end of file, '}' missing");
          }
          return blocks;
        }
        if (s.charAt(i) == '}') {
          if (topLevel) {
            throw error("unexpected '}'");
          }
          i++;
          return blocks;
        }
        String name = identifier();
        skipSpaceAndComments(false);
        if (i < s.length() && s.charAt(i) == '=' && !s.startsWith("==", i)) {
          i++;
          String expression = expression();
          if (parent == null) {
            throw error("attribute '" + name + "' outside a block");
          }
          parent.attributes.put(name, expression);
          continue;
        }
        List<String> labels = new ArrayList<>();
        while (i < s.length() && s.charAt(i) != '{') {
          if (s.charAt(i) == '"') {
            labels.add(quoted());
          } else {
            labels.add(identifier());
          }
          skipSpaceAndComments(false);
        }
        if (i >= s.length()) {
          throw error("'{' expected after " + name);
        }
        i++;
        Block block = new Block(file, name, labels);
        block.blocks.addAll(parseInto(block, false));
        blocks.add(block);
      }
    }

    private String identifier() {
      int start = i;
      while (i < s.length()
          && (Character.isLetterOrDigit(s.charAt(i)) || s.charAt(i) == '_' || s.charAt(i) == '-')) {
        i++;
      }
      if (start == i) {
        throw error("identifier expected, found '" + s.charAt(i) + "'");
      }
      return s.substring(start, i);
    }

    private String quoted() {
      int start = i;
      skipString();
      return s.substring(start + 1, i - 1);
    }

    /** Source text up to a newline (or the closing brace of a one-line block) at depth zero. */
    private String expression() {
      int start = i;
      int depth = 0;
      while (i < s.length()) {
        char c = s.charAt(i);
        if (c == '"') {
          skipString();
        } else if (s.startsWith("<<", i) && heredocAhead()) {
          skipHeredoc();
        } else if (c == '#' || s.startsWith("//", i)) {
          if (depth == 0) {
            break;
          }
          skipLineComment();
        } else if (s.startsWith("/*", i)) {
          skipBlockComment();
        } else if (c == '(' || c == '[' || c == '{') {
          depth++;
          i++;
        } else if (c == ')' || c == ']' || c == '}') {
          if (depth == 0) {
            break; // `name = value }` on one line
          }
          depth--;
          i++;
        } else if ((c == '\n' || c == ';') && depth == 0) {
          break;
        } else {
          i++;
        }
      }
      return s.substring(start, i).trim();
    }

    private boolean heredocAhead() {
      int j = i + 2;
      if (j < s.length() && s.charAt(j) == '-') {
        j++;
      }
      return j < s.length() && Character.isLetter(s.charAt(j));
    }

    private void skipHeredoc() {
      i += 2;
      if (s.charAt(i) == '-') {
        i++;
      }
      int start = i;
      while (i < s.length() && (Character.isLetterOrDigit(s.charAt(i)) || s.charAt(i) == '_')) {
        i++;
      }
      String marker = s.substring(start, i);
      Matcher end = Pattern.compile("(?m)^\\s*" + Pattern.quote(marker) + "\\s*$").matcher(s);
      if (!end.find(i)) {
        throw error("heredoc " + marker + " not closed");
      }
      i = end.end();
    }

    /** Skips a quoted string, including ${...} templates that hold strings of their own. */
    private void skipString() {
      i++; // opening quote
      while (i < s.length()) {
        char c = s.charAt(i);
        if (c == '\\') {
          i += 2;
        } else if (c == '"') {
          i++;
          return;
        } else if ((c == '$' || c == '%') && s.startsWith("{", i + 1)) {
          i += 2;
          int depth = 1;
          while (i < s.length() && depth > 0) {
            char d = s.charAt(i);
            if (d == '"') {
              skipString();
              continue;
            }
            if (d == '{') {
              depth++;
            } else if (d == '}') {
              depth--;
            }
            i++;
          }
        } else {
          i++;
        }
      }
      throw error("string not closed");
    }

    private void skipSpaceAndComments(boolean newlines) {
      while (i < s.length()) {
        char c = s.charAt(i);
        if (c == ' ' || c == '\t' || c == '\r' || (newlines && (c == '\n' || c == ';'))) {
          i++;
        } else if (c == '#' || s.startsWith("//", i)) {
          skipLineComment();
        } else if (s.startsWith("/*", i)) {
          skipBlockComment();
        } else {
          return;
        }
      }
    }

    private void skipLineComment() {
      while (i < s.length() && s.charAt(i) != '\n') {
        i++;
      }
    }

    private void skipBlockComment() {
      int end = s.indexOf("*/", i + 2);
      if (end < 0) {
        throw error("comment not closed");
      }
      i = end + 2;
    }

    private IllegalStateException error(String message) {
      int line = 1;
      for (int k = 0; k < Math.min(i, s.length()); k++) {
        if (s.charAt(k) == '\n') {
          line++;
        }
      }
      return new IllegalStateException(file + ":" + line + ": " + message);
    }
  }
}
