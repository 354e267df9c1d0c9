package dev.tidemark.pipelines.terraform;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.endsWith;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasKey;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * Plans of both stages made without Terraform ({@link TerraformPlan}): for the default deploy and
 * for the variables of the other documented ones (Kafka with a password, Google's Managed Kafka, an
 * existing Shared VPC subnetwork with CMEK), every instance's arguments, every local and every
 * output evaluate, so every reference between resources leads to a declared block with a value; the
 * graph Terraform orders the apply by has no cycle; and the job is created after what it needs.
 */
@RunWith(JUnit4.class)
public class TerraformPlanTest {
  private static final TerraformConfig MAIN =
      TerraformConfig.load(TerraformConfig.projectDirectory());
  private static final TerraformConfig BOOTSTRAP =
      TerraformConfig.load(TerraformConfig.bootstrapDirectory());
  private static final String JOB = "google_dataflow_flex_template_job.tidemark";
  private static final String PROJECT = "tidemark-demo";

  /** The variables the README's walk gives: the project and the build's tag. */
  static Map<String, Object> defaults() {
    Map<String, Object> variables = new LinkedHashMap<>();
    variables.put("project_id", PROJECT);
    variables.put("template_version", "t1");
    return variables;
  }

  private static TerraformPlan plan(Map<String, Object> extra) {
    Map<String, Object> variables = defaults();
    variables.putAll(extra);
    TerraformPlan plan = new TerraformPlan(MAIN, variables);
    // Every local and output evaluates too (an unused local would otherwise go unchecked).
    for (TerraformConfig.Block b : MAIN.blocks()) {
      if (b.type().equals("locals")) {
        b.attributes().keySet().forEach(plan.values()::local);
      } else if (b.type().equals("output")) {
        plan.values().argument(b, "value");
      }
    }
    return plan;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> block(Map<String, Object> arguments, String name) {
    List<Object> blocks = (List<Object>) arguments.get(name);
    assertThat(name + " blocks", blocks.size(), is(1));
    return (Map<String, Object>) blocks.get(0);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> parameters(TerraformPlan plan) {
    return (Map<String, Object>) plan.instance(JOB).get("parameters");
  }

  @Test
  public void theDefaultDeployCreatesANetworkWithPrivateGoogleAccessAndTheWorkersRule() {
    TerraformPlan plan = plan(Map.of());
    Map<String, Object> subnetwork = plan.instance("google_compute_subnetwork.workers[0]");
    assertThat(subnetwork.get("private_ip_google_access"), is(true));
    Map<String, Object> firewall = plan.instance("google_compute_firewall.dataflow_internal[0]");
    assertThat(firewall.get("direction"), is("INGRESS"));
    assertThat(firewall.get("source_tags"), is(List.of("dataflow")));
    assertThat(firewall.get("target_tags"), is(List.of("dataflow")));
    Map<String, Object> allow = block(firewall, "allow");
    assertThat(allow.get("protocol"), is("tcp"));
    assertThat(allow.get("ports"), is(List.of("12345-12346")));
    assertThat("no NAT for Pub/Sub", plan.has("google_compute_router_nat.nat"), is(false));

    Map<String, Object> job = plan.instance(JOB);
    assertThat(
        job.get("subnetwork"),
        is(
            "https://www.googleapis.com/compute/v1/projects/"
                + PROJECT
                + "/regions/europe-west1/subnetworks/tidemark-workers"));
    assertThat(job.get("ip_configuration"), is("WORKER_IP_PRIVATE"));
    assertThat(
        job.get("container_spec_gcs_path"),
        is("gs://" + PROJECT + "-tidemark/templates/tidemark-t1.json"));
    assertThat(parameters(plan).get("source"), is("pubsub"));
    // The labels are read beside the events, from the subscription created for them.
    assertThat(
        parameters(plan).get("pubsubLabelsSubscription"),
        is(
            "projects/"
                + PROJECT
                + "/subscriptions/"
                + plan.instance("google_pubsub_subscription.labels").get("name")));
    assertThat(
        plan.instance("google_pubsub_subscription_iam_member.worker_labels_subscriber[0]")
            .get("role"),
        is("roles/pubsub.subscriber"));
  }

  @Test
  public void theLauncherMayReadTheDatasetsMetadataAndNothingElseOnIt() {
    TerraformPlan plan = plan(Map.of());
    Map<String, Object> grant =
        plan.instance("google_bigquery_dataset_iam_member.worker_dataset_metadata");
    assertThat(grant.get("role"), is("roles/bigquery.metadataViewer"));
    assertThat(grant.get("dataset_id"), is("tidemark"));
    assertThat(
        grant.get("member"),
        is("serviceAccount:tidemark-worker@" + PROJECT + ".iam.gserviceaccount.com"));
    // The job's BigQuery check at launch stays on (the grant is what it needs).
    assertThat(parameters(plan), not(hasKey("bigQueryValidate")));
  }

  @Test
  public void aKafkaWithAPasswordGetsNatAndAGrantOnEverySecretTheJobReads() {
    Map<String, Object> extra = new HashMap<>();
    extra.put("input_source", "kafka");
    extra.put("kafka_bootstrap_servers", "broker-1.example.com:9093");
    extra.put("kafka_input_topic", "payments");
    extra.put("kafka_username_secret_id", "projects/" + PROJECT + "/secrets/kafka-user");
    extra.put("kafka_password", "not-in-the-plan");
    extra.put(
        "extra_parameters",
        Map.of(
            "kafkaTruststoreSecret",
            "projects/" + PROJECT + "/secrets/kafka-ca/versions/2",
            "kafkaTruststoreType",
            "PEM"));
    TerraformPlan plan = plan(extra);

    assertThat(plan.has("google_compute_router_nat.nat"), is(true));
    Map<String, Object> parameters = parameters(plan);
    assertThat(
        parameters.get("kafkaUsernameSecret"),
        is("projects/" + PROJECT + "/secrets/kafka-user/versions/latest"));
    assertThat(parameters, not(hasKey("kafkaUsername")));
    Map<String, String> granted = new TreeMap<>();
    for (String address : plan.addresses()) {
      if (address.startsWith("google_secret_manager_secret_iam_member.worker_secrets[")) {
        Map<String, Object> grant = plan.instance(address);
        assertThat(grant.get("role"), is("roles/secretmanager.secretAccessor"));
        granted.put(address, (String) grant.get("secret_id"));
      }
    }
    assertThat(
        granted,
        is(
            Map.of(
                "google_secret_manager_secret_iam_member.worker_secrets[\"kafkaPasswordSecret\"]",
                "projects/" + TerraformPlan.PROJECT_NUMBER + "/secrets/tidemark-kafka-password",
                "google_secret_manager_secret_iam_member.worker_secrets[\"kafkaUsernameSecret\"]",
                "projects/" + PROJECT + "/secrets/kafka-user",
                "google_secret_manager_secret_iam_member.worker_secrets[\"kafkaTruststoreSecret\"]",
                "projects/" + PROJECT + "/secrets/kafka-ca")));
    assertThat(plan.has("google_pubsub_subscription_iam_member.worker_subscriber"), is(false));
    assertThat(parameters, not(hasKey("pubsubLabelsSubscription")));
  }

  @Test
  public void googlesManagedKafkaLogsInWithTheServiceAccountAndNoSecret() {
    Map<String, Object> extra = new HashMap<>();
    extra.put("input_source", "kafka");
    extra.put(
        "kafka_bootstrap_servers",
        "bootstrap.events.europe-west1.managedkafka." + PROJECT + ".cloud.goog:9092");
    extra.put("kafka_input_topic", "payments");
    extra.put("kafka_auth", "managed_kafka");
    TerraformPlan plan = plan(extra);

    Map<String, Object> parameters = parameters(plan);
    assertThat(parameters.get("kafkaSecurityProtocol"), is("SASL_SSL"));
    assertThat(parameters.get("kafkaSaslMechanism"), is("OAUTHBEARER"));
    assertThat(
        parameters.get("kafkaOauthLoginCallbackHandler"),
        is("com.google.cloud.hosted.kafka.auth.GcpLoginCallbackHandler"));
    assertThat(parameters.keySet().stream().anyMatch(k -> k.endsWith("Secret")), is(false));
    assertThat(plan.has("google_secret_manager_secret.kafka_password"), is(false));
    Map<String, Object> client =
        plan.instance("google_project_iam_member.worker_managed_kafka_client[0]");
    assertThat(client.get("role"), is("roles/managedkafka.client"));
    assertThat(client.get("project"), is(PROJECT));
    assertThat(
        "Managed Kafka is inside the VPC", plan.has("google_compute_router_nat.nat"), is(false));
  }

  @Test
  public void anExistingSharedVpcSubnetworkWithCmekCreatesNoNetworkAndGrantsItsUse() {
    String subnetwork =
        "https://www.googleapis.com/compute/v1/projects/host-project/regions/europe-west1/subnetworks/shared";
    Map<String, Object> extra = new HashMap<>();
    extra.put("subnetwork", subnetwork);
    extra.put("grant_shared_vpc_network_user", true);
    extra.put(
        "kms_key_name", "projects/" + PROJECT + "/locations/europe-west1/keyRings/r/cryptoKeys/k");
    TerraformPlan plan = plan(extra);

    assertThat(plan.has("google_compute_network.tidemark"), is(false));
    assertThat(plan.has("google_compute_firewall.dataflow_internal"), is(false));
    assertThat(plan.instance(JOB).get("subnetwork"), is(subnetwork));
    Set<String> networkUsers = new TreeSet<>();
    for (String key : List.of("worker", "dataflow")) {
      Map<String, Object> grant =
          plan.instance(
              "google_compute_subnetwork_iam_member.shared_vpc_network_user[\"" + key + "\"]");
      assertThat(grant.get("project"), is("host-project"));
      assertThat(grant.get("subnetwork"), is("shared"));
      assertThat(grant.get("role"), is("roles/compute.networkUser"));
      networkUsers.add((String) grant.get("member"));
    }
    assertThat(
        networkUsers,
        hasItem(
            "serviceAccount:service-"
                + TerraformPlan.PROJECT_NUMBER
                + "@dataflow-service-producer-prod.iam.gserviceaccount.com"));
    // The agents the key is granted to are created first: their members come from the identities.
    assertThat(plan.has("google_project_service_identity.pubsub"), is(true));
    assertThat(
        plan.instance("google_kms_crypto_key_iam_member.service_agents[\"pubsub\"]").get("member"),
        is(
            "serviceAccount:service-"
                + TerraformPlan.PROJECT_NUMBER
                + "@gcp-sa-pubsub.iam.gserviceaccount.com"));
  }

  @Test
  public void theBootstrapStagePlansAndEnablesWhatTerraformItselfCalls() {
    TerraformPlan plan = new TerraformPlan(BOOTSTRAP, Map.of("project_id", PROJECT));
    Set<String> services =
        plan.addresses().stream()
            .filter(a -> a.startsWith("google_project_service.tidemark["))
            .map(a -> (String) plan.instance(a).get("service"))
            .collect(Collectors.toCollection(TreeSet::new));
    assertThat(services, hasItem("serviceusage.googleapis.com"));
    assertThat(services, hasItem("cloudresourcemanager.googleapis.com"));
    assertThat(services, hasItem("compute.googleapis.com"));
    for (TerraformConfig.Block b : BOOTSTRAP.blocks()) {
      if (b.type().equals("output")) {
        plan.values().argument(b, "value");
      }
    }
  }

  /** The walk in terraform/README.md names what each apply adds: the plans' resource counts. */
  @Test
  public void theReadmeNamesTheResourceCountsOfBothApplies() throws Exception {
    String readme =
        java.nio.file.Files.readString(
            MAIN.directory().resolve("README.md"), java.nio.charset.StandardCharsets.UTF_8);
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("Resources: (\\d+) added").matcher(readme);
    List<Integer> named = new ArrayList<>();
    while (m.find()) {
      named.add(Integer.parseInt(m.group(1)));
    }
    TerraformPlan bootstrap = new TerraformPlan(BOOTSTRAP, Map.of("project_id", PROJECT));
    assertThat(named, is(List.of(resources(bootstrap), resources(plan(Map.of())))));
  }

  private static int resources(TerraformPlan plan) {
    return (int) plan.addresses().stream().filter(a -> !a.startsWith("data.")).count();
  }

  @Test
  public void everyReferenceNamesADeclaredBlockAndTheGraphHasNoCycle() {
    for (TerraformConfig config : List.of(MAIN, BOOTSTRAP)) {
      Map<String, Set<String>> graph = TerraformPlan.graph(config);
      List<String> dangling = new ArrayList<>();
      graph.forEach(
          (from, tos) ->
              tos.stream()
                  .filter(to -> !graph.containsKey(to))
                  .forEach(to -> dangling.add(from + " -> " + to)));
      assertThat(config.directory() + ": dangling references", dangling, is(empty()));
      assertThat(config.directory() + ": cycle", cycle(graph), is(List.of()));
    }
  }

  /**
   * The job waits for the wait after the grants, which waits for every grant of the main stage; and
   * it is created after its network.
   */
  @Test
  public void theJobIsCreatedAfterEveryGrantHasHadTimeToApply() {
    Map<String, Set<String>> graph = TerraformPlan.graph(MAIN);
    Set<String> beforeJob = reachable(graph, "resource." + JOB);
    assertThat(beforeJob, hasItem("resource.time_sleep.iam_propagation"));
    Set<String> beforeWait = reachable(graph, "resource.time_sleep.iam_propagation");
    List<String> notAwaited = new ArrayList<>();
    for (String node : graph.keySet()) {
      if (node.startsWith("resource.")
          && node.contains("_iam_member.")
          && !beforeWait.contains(node)) {
        notAwaited.add(node);
      }
    }
    assertThat("grants the wait does not wait for", notAwaited, is(empty()));
    for (String network :
        List.of(
            "resource.google_compute_subnetwork.workers",
            "resource.google_compute_firewall.dataflow_internal",
            "resource.google_compute_router_nat.nat")) {
      assertThat(beforeJob, hasItem(network));
    }
    assertThat(
        reachable(graph, "resource.google_kms_crypto_key_iam_member.service_agents"),
        hasItem("resource.google_project_service_identity.dataflow"));
    assertThat(
        MAIN.resource("time_sleep", "iam_propagation").attribute("create_duration").orElseThrow(),
        is("var.iam_propagation_wait"));
    assertThat(MAIN.variableDefault("iam_propagation_wait"), endsWith("s"));
  }

  private static Set<String> reachable(Map<String, Set<String>> graph, String from) {
    Set<String> seen = new TreeSet<>();
    Deque<String> todo = new ArrayDeque<>(graph.getOrDefault(from, Set.of()));
    while (!todo.isEmpty()) {
      String node = todo.pop();
      if (seen.add(node)) {
        todo.addAll(graph.getOrDefault(node, Set.of()));
      }
    }
    return seen;
  }

  /** A cycle in the graph as its nodes, or an empty list. */
  private static List<String> cycle(Map<String, Set<String>> graph) {
    Map<String, Integer> state = new HashMap<>();
    for (String start : graph.keySet()) {
      List<String> path = new ArrayList<>();
      List<String> found = visit(graph, start, state, path);
      if (!found.isEmpty()) {
        return found;
      }
    }
    return List.of();
  }

  private static List<String> visit(
      Map<String, Set<String>> graph, String node, Map<String, Integer> state, List<String> path) {
    Integer s = state.get(node);
    if (s != null && s == 2) {
      return List.of();
    }
    if (s != null && s == 1) {
      return new ArrayList<>(path.subList(path.indexOf(node), path.size()));
    }
    state.put(node, 1);
    path.add(node);
    for (String next : graph.getOrDefault(node, Set.of())) {
      List<String> found = visit(graph, next, state, path);
      if (!found.isEmpty()) {
        return found;
      }
    }
    path.remove(path.size() - 1);
    state.put(node, 2);
    return List.of();
  }
}
