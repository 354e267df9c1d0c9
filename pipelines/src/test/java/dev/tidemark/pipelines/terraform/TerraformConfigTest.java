package dev.tidemark.pipelines.terraform;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/** The parser on small configurations written here: the HCL shapes that the real one uses. */
@RunWith(JUnit4.class)
public class TerraformConfigTest {

  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  private TerraformConfig write(String text) throws IOException {
    Path dir = folder.newFolder("terraform").toPath();
    Files.writeString(dir.resolve("main.tf"), text, StandardCharsets.UTF_8);
    return TerraformConfig.load(dir);
  }

  private static final String TABLE =
      String.join(
          "\n",
          "# comment with { and \"",
          "locals {",
          "  s = \"a ${var.x == \"}\" ? \"{\" : \"b\"} c\" // trailing",
          "  h = <<-EOT",
          "    text with } and \" and ${var.x}",
          "  EOT",
          "}",
          "resource \"google_bigquery_table\" \"decisions\" {",
          "  dataset_id = google_bigquery_dataset.d.dataset_id",
          "  schema     = file(\"${path.module}/schemas/decisions.json\")",
          "  /* block",
          "     comment */",
          "  table_constraints {",
          "    primary_key {",
          "      columns = [\"decision_id\", \"version\"]",
          "    }",
          "  }",
          "  dynamic \"encryption_configuration\" {",
          "    for_each = var.k == \"\" ? [] : [var.k]",
          "    content { kms_key_name = encryption_configuration.value }",
          "  }",
          "  lifecycle { prevent_destroy = true }",
          "}",
          "resource \"google_project_iam_member\" \"w\" {",
          "  project = var.p",
          "  role    = \"roles/dataflow.worker\"",
          "  member  = \"serviceAccount:${google_service_account.w.email}\"",
          "}",
          "data \"google_iam_policy\" \"p\" {",
          "  binding {",
          "    role    = \"roles/editor\"",
          "    members = [\"user:a@example.com\"]",
          "  }",
          "}",
          "");

  @Test
  public void keepsNestedAndDynamicBlocks() throws IOException {
    TerraformConfig.Block table = write(TABLE).resource("google_bigquery_table", "decisions");
    assertThat(
        table.blocks().stream().map(TerraformConfig.Block::address).collect(Collectors.toList()),
        contains("table_constraints", "dynamic.encryption_configuration", "lifecycle"));
    assertThat(
        table.blocks("dynamic").get(0).blocks("content").get(0).attribute("kms_key_name").get(),
        is("encryption_configuration.value"));
  }

  @Test
  public void findsRolesInResourcesAndNestedBlocks() throws IOException {
    List<String> roles =
        write(TABLE).iamRoles().stream()
            .map(g -> g.role() + " " + g.grantedBy().address())
            .collect(Collectors.toList());
    assertThat(
        roles,
        contains(
            "roles/dataflow.worker resource.google_project_iam_member.w",
            "roles/editor data.google_iam_policy.p"));
  }

  @Test
  public void computedRoleIsNotALiteral() throws IOException {
    TerraformConfig tf =
        write("resource \"google_project_iam_member\" \"w\" {\n  role = var.role\n}\n");
    assertThat(tf.iamRoles().get(0).isLiteral(), is(false));
  }

  @Test
  public void unclosedBlockNamesFileAndLine() throws IOException {
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> write("resource \"a\" \"b\" {\n  x = 1\n"));
    assertThat(e.getMessage(), containsString("main.tf:3"));
  }
}
