package dev.tidemark.pipelines.terraform;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A plan of a {@link TerraformConfig} made without Terraform: which resources exist for given
 * variables ({@code count} and {@code for_each} evaluated), every argument of each instance
 * evaluated by {@link TerraformValues}, and the order Terraform would create them in (the graph of
 * references and {@code depends_on}). The attributes providers compute are given their documented
 * formats ({@link #computed}), with a fixed project number.
 */
public final class TerraformPlan {
  /** The project number the plan's computed attributes use. */
  public static final String PROJECT_NUMBER = "123456789012";

  /** Arguments that are not values: Terraform's meta-arguments. */
  private static final Set<String> META =
      Set.of("provider", "depends_on", "count", "for_each", "lifecycle");

  /** A reference from an expression's text: var/local/data or a resource type's block. */
  private static final Pattern REFERENCE =
      Pattern.compile(
          "(?<![\\w.\"-])(var\\.\\w+|local\\.\\w+|data\\.\\w+\\.\\w+|(?:google|time)_\\w+\\.\\w+)");

  private final TerraformValues values;

  /**
   * Every instance's evaluated arguments, by address ({@code type.name} or {@code type.name[key]}).
   */
  private final Map<String, Map<String, Object>> instances = new TreeMap<>();

  public TerraformPlan(TerraformConfig config, Map<String, Object> variables) {
    this.values = new TerraformValues(config, variables, TerraformPlan::computed);
    for (TerraformConfig.Block b : config.blocks()) {
      if (b.type().equals("resource") || b.type().equals("data")) {
        plan(b);
      }
    }
  }

  public TerraformValues values() {
    return values;
  }

  /** Every planned instance's address, data sources as {@code data.type.name}. */
  public Set<String> addresses() {
    return instances.keySet();
  }

  /** The evaluated arguments of one instance. */
  public Map<String, Object> instance(String address) {
    Map<String, Object> arguments = instances.get(address);
    if (arguments == null) {
      throw new IllegalArgumentException(
          "not in the plan: " + address + "; planned: " + addresses());
    }
    return arguments;
  }

  /** Whether the plan has at least one instance of {@code type.name}. */
  public boolean has(String typeAndName) {
    return instances.keySet().stream()
        .anyMatch(a -> a.equals(typeAndName) || a.startsWith(typeAndName + "["));
  }

  private void plan(TerraformConfig.Block block) {
    String address =
        (block.type().equals("data") ? "data." : "")
            + block.labels().get(0)
            + "."
            + block.labels().get(1);
    Map<String, Map<String, Object>> bindings = new LinkedHashMap<>();
    if (block.attribute("count").isPresent()) {
      int count = ((BigDecimal) values.argument(block, "count")).intValueExact();
      for (int k = 0; k < count; k++) {
        bindings.put(address + "[" + k + "]", Map.of("count", Map.of("index", new BigDecimal(k))));
      }
    } else if (block.attribute("for_each").isPresent()) {
      Object each = values.argument(block, "for_each");
      for (Map.Entry<?, ?> e : ((Map<?, ?>) each).entrySet()) {
        Map<String, Object> eachValue = new LinkedHashMap<>();
        eachValue.put("key", e.getKey());
        eachValue.put("value", e.getValue());
        bindings.put(address + "[\"" + e.getKey() + "\"]", Map.of("each", eachValue));
      }
    } else {
      bindings.put(address, Map.of());
    }
    for (Map.Entry<String, Map<String, Object>> instance : bindings.entrySet()) {
      instances.put(instance.getKey(), arguments(block, instance.getValue()));
    }
  }

  /** A block's arguments and nested blocks (lists of maps), evaluated. */
  private Map<String, Object> arguments(TerraformConfig.Block block, Map<String, Object> bound) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (Map.Entry<String, String> a : block.attributes().entrySet()) {
      if (!META.contains(a.getKey())) {
        out.put(a.getKey(), values.evaluate(a.getValue(), bound));
      }
    }
    for (TerraformConfig.Block nested : block.blocks()) {
      if (nested.type().equals("lifecycle")) {
        continue;
      }
      if (nested.type().equals("dynamic")) {
        String name = nested.labels().get(0);
        Object each = values.evaluate(nested.attribute("for_each").orElseThrow(), bound);
        List<Object> contents = new ArrayList<>();
        for (Object element : (List<?>) each) {
          Map<String, Object> inner = new LinkedHashMap<>(bound);
          inner.put(name, Map.of("value", element));
          for (TerraformConfig.Block content : nested.blocks("content")) {
            contents.add(arguments(content, inner));
          }
        }
        addBlock(out, name, contents);
      } else {
        addBlock(out, nested.type(), List.of(arguments(nested, bound)));
      }
    }
    return out;
  }

  @SuppressWarnings("unchecked")
  private static void addBlock(Map<String, Object> out, String name, List<Object> blocks) {
    ((List<Object>) out.computeIfAbsent(name, k -> new ArrayList<>())).addAll(blocks);
  }

  /**
   * The blocks each block refers to or depends on ({@code resource.type.name}, {@code
   * data.type.name}, {@code local.name}, {@code var.name}, {@code output.name}), from the source
   * text: what Terraform orders the plan by.
   */
  public static Map<String, Set<String>> graph(TerraformConfig config) {
    Map<String, Set<String>> graph = new TreeMap<>();
    for (TerraformConfig.Block b : config.blocks()) {
      switch (b.type()) {
        case "resource":
          graph.put("resource." + b.labels().get(0) + "." + b.labels().get(1), references(b));
          break;
        case "data":
          graph.put("data." + b.labels().get(0) + "." + b.labels().get(1), references(b));
          break;
        case "output":
          graph.put("output." + b.labels().get(0), references(b));
          break;
        case "variable":
          graph.put("var." + b.labels().get(0), new TreeSet<>());
          break;
        case "locals":
          for (Map.Entry<String, String> a : b.attributes().entrySet()) {
            graph.put("local." + a.getKey(), references(a.getValue()));
          }
          break;
        default:
          break;
      }
    }
    return graph;
  }

  private static Set<String> references(TerraformConfig.Block block) {
    Set<String> out = new TreeSet<>();
    for (String expression : block.attributes().values()) {
      out.addAll(references(expression));
    }
    for (TerraformConfig.Block nested : block.blocks()) {
      out.addAll(references(nested));
    }
    return out;
  }

  static Set<String> references(String expression) {
    Set<String> out = new TreeSet<>();
    Matcher m = REFERENCE.matcher(expression);
    while (m.find()) {
      String ref = m.group(1);
      out.add(
          ref.startsWith("var.") || ref.startsWith("local.") || ref.startsWith("data.")
              ? ref
              : "resource." + ref);
    }
    return out;
  }

  /** What the providers compute, in their documented formats. */
  static Object computed(String key, TerraformValues v) {
    String project = (String) v.variable("project_id");
    String region = (String) v.variable("region");
    String[] parts = key.split("\\.");
    boolean data = parts[0].equals("data");
    String type = parts[data ? 1 : 0];
    String name = parts[data ? 2 : 1];
    String attribute = parts[data ? 3 : 2];
    TerraformConfig.Block block =
        v.config().blocks().stream()
            .filter(
                b ->
                    b.type().equals(data ? "data" : "resource")
                        && b.labels().equals(List.of(type, name)))
            .findFirst()
            .orElseThrow();
    switch (type + "." + attribute) {
      case "google_storage_bucket.url":
        return "gs://" + v.argument(block, "name");
      case "google_service_account.email":
        return v.argument(block, "account_id") + "@" + project + ".iam.gserviceaccount.com";
      case "google_pubsub_topic.id":
        return "projects/" + project + "/topics/" + v.argument(block, "name");
      case "google_pubsub_subscription.id":
        return "projects/" + project + "/subscriptions/" + v.argument(block, "name");
      case "google_compute_network.id":
        return "projects/" + project + "/global/networks/" + v.argument(block, "name");
      case "google_compute_subnetwork.id":
        return "projects/"
            + project
            + "/regions/"
            + region
            + "/subnetworks/"
            + v.argument(block, "name");
      case "google_compute_subnetwork.self_link":
        return "https://www.googleapis.com/compute/v1/projects/"
            + project
            + "/regions/"
            + region
            + "/subnetworks/"
            + v.argument(block, "name");
      case "google_secret_manager_secret.id":
        return "projects/" + project + "/secrets/" + v.argument(block, "secret_id");
      case "google_secret_manager_secret_version.name":
        // The version's name carries the project's number, not its id.
        return ((String) v.argument(block, "secret"))
                .replaceFirst("^projects/[^/]+/", "projects/" + PROJECT_NUMBER + "/")
            + "/versions/1";
      case "google_artifact_registry_repository.id":
        return "projects/"
            + project
            + "/locations/"
            + v.argument(block, "location")
            + "/repositories/"
            + v.argument(block, "repository_id");
      case "google_storage_project_service_account.email_address":
        return "service-" + PROJECT_NUMBER + "@gs-project-accounts.iam.gserviceaccount.com";
      case "google_project_iam_custom_role.id":
        return "projects/" + project + "/roles/" + v.argument(block, "role_id");
      case "google_project.number":
        return PROJECT_NUMBER;
      case "google_bigquery_default_service_account.email":
        return "bq-" + PROJECT_NUMBER + "@bigquery-encryption.iam.gserviceaccount.com";
      case "google_project_service_identity.member":
        String service = ((String) v.argument(block, "service")).replace(".googleapis.com", "");
        String agent =
            service.equals("dataflow") ? "dataflow-service-producer-prod" : "gcp-sa-" + service;
        return "serviceAccount:service-"
            + PROJECT_NUMBER
            + "@"
            + agent
            + ".iam.gserviceaccount.com";
      case "google_dataflow_flex_template_job.job_id":
        return "2026-12-05_00_00_00-1";
      default:
        return null;
    }
  }
}
