package dev.tidemark.pipelines.terraform;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.startsWith;

import dev.tidemark.pipelines.terraform.TerraformConfig.RoleGrant;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.BeforeClass;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The worker's IAM in {@code terraform/}: no primitive role anywhere, and every role granted is one
 * that {@code terraform/README.md} lists and justifies on the same kind of resource (its role
 * table: lines {@code | `roles/...` | where | why |}), and the README lists no role that is not
 * granted there.
 */
@RunWith(JUnit4.class)
public class TerraformIamTest {

  private static final Set<String> PRIMITIVE_ROLES =
      Set.of("roles/owner", "roles/editor", "roles/viewer");
  private static final Pattern README_ROLE_ROW =
      Pattern.compile("(?m)^\\|\\s*`((?:roles|custom)/[^`]+)`[^|]*\\|\\s*([^|]*?)\\s*\\|");

  /** The README's "granted on" column, as the Terraform resource type that makes such a grant. */
  private static final Map<String, String> GRANTED_ON =
      Map.ofEntries(
          Map.entry("project", "google_project_iam_member"),
          Map.entry("the Kafka cluster's project", "google_project_iam_member"),
          Map.entry("the dataset", "google_bigquery_dataset_iam_member"),
          Map.entry("each table", "google_bigquery_table_iam_member"),
          Map.entry("the bucket", "google_storage_bucket_iam_member"),
          Map.entry("the subscription", "google_pubsub_subscription_iam_member"),
          Map.entry("the topic", "google_pubsub_topic_iam_member"),
          Map.entry("each secret the job reads", "google_secret_manager_secret_iam_member"),
          Map.entry(
              "the template image's repository", "google_artifact_registry_repository_iam_member"),
          Map.entry("the Shared VPC subnetwork", "google_compute_subnetwork_iam_member"),
          Map.entry("the CMEK key", "google_kms_crypto_key_iam_member"));

  private static TerraformConfig tf;

  /** The grants of both stages: the bootstrap stage's and the main stage's. */
  private static List<RoleGrant> grants;

  private static Set<String> justified;
  private static String readme;

  @BeforeClass
  public static void load() throws IOException {
    tf = TerraformConfig.load(TerraformConfig.projectDirectory());
    grants = new ArrayList<>(tf.iamRoles());
    grants.addAll(TerraformConfig.load(TerraformConfig.bootstrapDirectory()).iamRoles());
    readme = Files.readString(tf.directory().resolve("README.md"), StandardCharsets.UTF_8);
    justified = new TreeSet<>();
    Matcher m = README_ROLE_ROW.matcher(readme);
    while (m.find()) {
      String resourceType = GRANTED_ON.get(m.group(2));
      assertThat(
          "terraform/README.md row " + m.group(1) + ": unknown 'granted on' " + m.group(2),
          resourceType,
          notNullValue());
      justified.add(grant(m.group(1), resourceType));
    }
  }

  /**
   * A role on a kind of resource, e.g. {@code roles/pubsub.subscriber on google_pubsub_topic...}.
   */
  private static String grant(String role, String resourceType) {
    return role + " on " + resourceType;
  }

  private static String grant(RoleGrant g) {
    return grant(g.role(), g.grantedBy().labels().get(0));
  }

  @Test
  public void grantsRoles() {
    assertThat(grants, not(empty()));
    assertThat(justified, not(empty()));
  }

  @Test
  public void everyRoleIsALiteral() {
    List<RoleGrant> computed =
        grants.stream().filter(g -> !g.isLiteral()).collect(Collectors.toList());
    assertThat("roles must be literals so that they can be reviewed here", computed, is(empty()));
  }

  @Test
  public void noPrimitiveRole() {
    List<RoleGrant> primitive =
        grants.stream()
            .filter(g -> PRIMITIVE_ROLES.contains(g.role()))
            .collect(Collectors.toList());
    assertThat(primitive, is(empty()));
  }

  @Test
  public void everyRoleIsJustifiedInTheReadme() {
    List<String> unjustified =
        grants.stream()
            .map(TerraformIamTest::grant)
            .filter(g -> !justified.contains(g))
            .collect(Collectors.toList());
    assertThat(
        "add a row | `role` | where | why | to terraform/README.md (where: one of "
            + GRANTED_ON.keySet()
            + "), or drop the grant",
        unjustified,
        is(empty()));
  }

  @Test
  public void readmeListsOnlyRolesThatAreGranted() {
    Set<String> granted =
        grants.stream().map(TerraformIamTest::grant).collect(Collectors.toCollection(TreeSet::new));
    Set<String> stale = new TreeSet<>(justified);
    stale.removeAll(granted);
    assertThat(stale, is(empty()));
  }

  /**
   * A custom role's README row names each of its permissions, and the role holds no permission that
   * changes IAM policies or topics: it is reviewed like a predefined role.
   */
  @Test
  public void customRolesHoldOnlyThePermissionsTheirRowNames() {
    List<String> custom =
        grants.stream()
            .map(RoleGrant::role)
            .filter(r -> r.startsWith(TerraformConfig.CUSTOM_ROLE_PREFIX))
            .distinct()
            .collect(Collectors.toList());
    assertThat(custom, is(List.of("custom/pubsub_tracking")));
    for (String role : custom) {
      Matcher row =
          Pattern.compile("(?m)^\\|\\s*`" + Pattern.quote(role) + "`(.*)$").matcher(readme);
      assertThat("README row for " + role, row.find(), is(true));
      List<String> permissions =
          tf.customRolePermissions(role.substring(TerraformConfig.CUSTOM_ROLE_PREFIX.length()));
      assertThat(permissions, not(empty()));
      for (String permission : permissions) {
        assertThat(role + " in the README", row.group(1), containsString("`" + permission + "`"));
        assertThat(permission, not(containsString("setIamPolicy")));
        assertThat(permission, not(startsWith("pubsub.topics.")));
      }
    }
  }

  /** {@code ${local.objects}/models/}: a prefix of object names in the bucket. */
  private static final Pattern OBJECT_PREFIX =
      Pattern.compile(
          "resource\\.name\\.startsWith\\(\\\\\"\\$\\{local\\.objects\\}/([a-z]+/)\\\\\"\\)");

  /** The object name prefixes a bucket grant's IAM condition lets it act on. */
  private static Set<String> objectPrefixes(TerraformConfig.Block grant) {
    List<TerraformConfig.Block> conditions = grant.blocks("condition");
    assertThat(grant + " must be conditioned on object prefixes", conditions.size(), is(1));
    Matcher m = OBJECT_PREFIX.matcher(conditions.get(0).attribute("expression").orElseThrow());
    Set<String> prefixes = new TreeSet<>();
    while (m.find()) {
      prefixes.add(m.group(1));
    }
    return prefixes;
  }

  /**
   * The worker reads {@code models/} and nothing lets it write there; it writes only {@code temp/}
   * and {@code staging/}. Every bucket grant is conditioned on object prefixes.
   */
  @Test
  public void theWorkerReadsModelsAndWritesOnlyTempAndStaging() {
    assertThat(
        tf.local("objects"),
        is("\"projects/_/buckets/${data.google_storage_bucket.tidemark.name}/objects\""));
    Map<String, Set<String>> prefixesByRole = new TreeMap<>();
    for (RoleGrant g : grants) {
      if (g.grantedBy().labels().get(0).equals("google_storage_bucket_iam_member")) {
        prefixesByRole.put(g.role(), objectPrefixes(g.grantedBy()));
      }
    }
    assertThat(
        prefixesByRole,
        is(
            Map.of(
                "roles/storage.objectViewer", Set.of("models/"),
                "roles/storage.objectUser", Set.of("temp/", "staging/"))));
  }

  /**
   * BigQuery write access is on the four tables the job writes; on the dataset the worker may only
   * read metadata (the launch's dataset check).
   */
  @Test
  public void bigQueryWriteIsOnTheTablesOnly() {
    List<String> onDataset = new ArrayList<>();
    for (RoleGrant g : grants) {
      if (g.grantedBy().labels().get(0).startsWith("google_bigquery_dataset_iam")) {
        onDataset.add(g.role());
      }
    }
    assertThat(onDataset, is(List.of("roles/bigquery.metadataViewer")));
    // One grant per table, on that table.
    TerraformPlan plan = new TerraformPlan(tf, TerraformPlanTest.defaults());
    Set<Object> granted = new TreeSet<>();
    Set<Object> tables = new TreeSet<>();
    for (String address : plan.addresses()) {
      if (address.startsWith("google_bigquery_table_iam_member.worker_data_editor[")) {
        granted.add(plan.instance(address).get("table_id"));
      } else if (address.startsWith("google_bigquery_table.tidemark[")) {
        tables.add(plan.instance(address).get("table_id"));
      }
    }
    assertThat(granted, is(tables));
    assertThat(tables, hasItem("decisions"));
  }

  @Test
  public void flexTemplateJobUsesTheBetaProvider() {
    assertThat(
        tf.resource("google_dataflow_flex_template_job", "tidemark").attribute("provider").get(),
        is("google-beta"));
    assertThat(
        tf.resources().stream().map(b -> b.labels().get(0)).collect(Collectors.toList()),
        hasItem("google_bigquery_table"));
  }
}
