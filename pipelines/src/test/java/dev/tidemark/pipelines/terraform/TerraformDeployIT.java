package dev.tidemark.pipelines.terraform;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.hasItems;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;

import com.fasterxml.jackson.databind.JsonNode;
import dev.tidemark.model.ModelEngine;
import dev.tidemark.model.ModelMetadata;
import dev.tidemark.pipelines.RunnerProfiles;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.launch.Launch;
import dev.tidemark.pipelines.launch.Summary;
import dev.tidemark.transforms.util.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The first deploy, as {@code terraform/README.md} walks it, holds together without Google: the
 * bootstrap stage makes what the build script and the main stage use, under the same names, and the
 * job the main stage's defaults start scores with the model those defaults upload.
 */
@RunWith(JUnit4.class)
public class TerraformDeployIT {
  private static final TerraformConfig MAIN =
      TerraformConfig.load(TerraformConfig.projectDirectory());
  private static final TerraformConfig BOOTSTRAP =
      TerraformConfig.load(TerraformConfig.bootstrapDirectory());
  private static final Pattern PATH_MODULE = Pattern.compile("\"\\$\\{path\\.module\\}/([^\"]+)\"");

  /** The lines of the bundled sample the default deploy's model scores here. */
  private static final int SAMPLE_LINES = 120;

  @Rule public TemporaryFolder folder = new TemporaryFolder();

  /** The local file Terraform uploads as the job's model with its defaults. */
  private static Path defaultModelFile() {
    TerraformConfig.Block object = MAIN.resource("google_storage_bucket_object", "model");
    assertThat(object.attribute("name").orElseThrow(), is("\"models/${var.model_name}\""));
    assertThat(
        object.attribute("source").orElseThrow(),
        is("\"${local.model_source_dir}/${var.model_name}\""));
    assertThat(MAIN.variableDefault("model_source_dir"), is(""));
    Matcher dir = PATH_MODULE.matcher(MAIN.local("model_source_dir"));
    assertThat(MAIN.local("model_source_dir"), dir.find(), is(true));
    return MAIN.directory()
        .resolve(dir.group(1))
        .resolve(MAIN.variableDefault("model_name"))
        .normalize();
  }

  /** The job's parameters: the expression of local.job_parameters, which the job passes. */
  private static String jobParameters() {
    assertThat(
        MAIN.resource("google_dataflow_flex_template_job", "tidemark")
            .attribute("parameters")
            .orElseThrow(),
        is("local.job_parameters"));
    return MAIN.local("job_parameters");
  }

  @Test
  public void theJobScoresWithTheObjectTerraformUploads() {
    assertThat(jobParameters(), containsString("modelUri        = local.model_uri"));
    assertThat(
        MAIN.local("model_uri"),
        is(
            "\"${data.google_storage_bucket.tidemark.url}/${google_storage_bucket_object.model.name}\""));
    TerraformConfig.Block sidecar = MAIN.resource("google_storage_bucket_object", "model_sidecar");
    assertThat(sidecar.attribute("name").orElseThrow(), is("\"models/${var.model_name}.json\""));
    assertThat(
        sidecar.attribute("source").orElseThrow(),
        is("\"${local.model_source_dir}/${var.model_name}.json\""));
    String dependsOn =
        MAIN.resource("google_dataflow_flex_template_job", "tidemark")
            .attribute("depends_on")
            .orElseThrow();
    assertThat(dependsOn, containsString("google_storage_bucket_object.model_sidecar"));
  }

  @Test
  public void theDefaultDeployScoresTheBundledSampleWithTheXgboostModel() throws IOException {
    Path model = defaultModelFile();
    ModelMetadata sidecar =
        ModelMetadata.parse(Files.readAllBytes(Path.of(model + ".json")), model + ".json");
    assertThat(sidecar.engine(), is(ModelEngine.XGBOOST));
    // Nothing the job passes names an engine: the sidecar does.
    assertThat(jobParameters(), not(containsString("modelEngine")));
    assertThat(MAIN.variable("extra_parameters").attribute("default").orElseThrow(), is("{}"));

    // The start of the bundled sample: the run's cost is in its replay clock's steps (a round of
    // the DirectRunner each), and its first records name the model that scores them as well as the
    // whole sample would (TidemarkRunIT scores the whole sample with the same shipped model).
    Path sample = MAIN.directory().getParent().resolve("samples/sample-replay.ndjson");
    Path input = folder.getRoot().toPath().resolve("sample-start.ndjson");
    try (Stream<String> lines = Files.lines(sample, StandardCharsets.UTF_8)) {
      Files.write(input, lines.limit(SAMPLE_LINES).toList(), StandardCharsets.UTF_8);
    }
    Path out = folder.newFolder("out").toPath();
    List<String> arguments =
        RunnerProfiles.fromEnvironment()
            .arguments(
                RunnerProfiles.DEFAULT_PROFILE,
                List.of("--input=" + input, "--output=" + out, "--modelUri=" + model));
    Summary run =
        Launch.run(
            PipelineOptionsFactory.fromArgs(arguments.toArray(new String[0]))
                .withValidation()
                .as(TidemarkOptions.class));
    assertThat(run.identityViolations(), is(List.of()));

    long decisions = 0;
    try (Stream<Path> files = Files.list(out.resolve("decisions"))) {
      for (Path file : (Iterable<Path>) files::iterator) {
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
          JsonNode decision = Json.MAPPER.readTree(line);
          assertThat(line, decision.get("model").get("name").asText(), is(sidecar.name()));
          assertThat(line, decision.get("model").get("engine").asText(), is("XGBoost"));
          decisions++;
        }
      }
    }
    assertThat(decisions, greaterThan(0L));
    JsonNode summary = Json.MAPPER.readTree(out.resolve("summary.json").toFile());
    assertThat(summary.get("decisions").asLong(), is(decisions));
    assertThat(summary.get("deadLettersByReason").has("scoring_failed"), is(false));
  }

  @Test
  public void bothStagesNameTheBucketAlike() {
    assertThat(BOOTSTRAP.local("bucket_name"), is(MAIN.local("bucket_name")));
    for (String variable : List.of("project_id", "region", "name_prefix", "bucket_name")) {
      assertThat(
          variable,
          BOOTSTRAP.variable(variable).attribute("default"),
          is(MAIN.variable(variable).attribute("default")));
    }
    assertThat(
        BOOTSTRAP.resource("google_storage_bucket", "tidemark").attribute("name").orElseThrow(),
        is("local.bucket_name"));
  }

  /**
   * Each build writes its own spec, tidemark-TAG.json, in the folder the bootstrap stage names; the
   * main stage runs the one template_version names, so a new build is a change Terraform sees.
   */
  @Test
  public void theTemplateSpecAndImageAreWhereTheBuildPutsThem() {
    assertThat(
        output(BOOTSTRAP, "template_specs"),
        is("\"${google_storage_bucket.tidemark.url}/templates\""));
    assertThat(
        MAIN.local("container_spec_gcs_path"),
        containsString(
            "\"${data.google_storage_bucket.tidemark.url}/templates/tidemark-${var.template_version}.json\""));
    assertThat(
        BOOTSTRAP
            .resource("google_artifact_registry_repository", "tidemark")
            .attribute("repository_id")
            .orElseThrow(),
        is("var.name_prefix"));
    assertThat(
        MAIN.local("template_image_repository"),
        containsString(
            "\"projects/${var.project_id}/locations/${var.region}/repositories/${var.name_prefix}\""));
  }

  @Test
  public void theBootstrapEnablesTheApisTheJobUses() {
    List<String> services = new ArrayList<>();
    Matcher m =
        Pattern.compile("\"([a-z]+\\.googleapis\\.com)\"").matcher(BOOTSTRAP.local("services"));
    while (m.find()) {
      services.add(m.group(1));
    }
    assertThat(
        services,
        hasItems(
            "dataflow.googleapis.com",
            "bigquery.googleapis.com",
            "bigquerystorage.googleapis.com",
            "pubsub.googleapis.com",
            "secretmanager.googleapis.com",
            "artifactregistry.googleapis.com",
            "storage.googleapis.com",
            "compute.googleapis.com",
            "serviceusage.googleapis.com",
            "cloudresourcemanager.googleapis.com"));
    assertThat(
        BOOTSTRAP
            .resource("google_project_service", "tidemark")
            .attribute("disable_on_destroy")
            .orElseThrow(),
        is("false"));
  }

  /** The build script's commands, as {@code --dry-run} prints them, and its exit code. */
  private static List<String> dryRun(java.util.Map<String, String> env, String... args)
      throws Exception {
    Path script = MAIN.directory().resolve("build-template.sh");
    List<String> command = new ArrayList<>(List.of("bash", script.toString(), "--dry-run"));
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.environment().put("TIDEMARK_TEMPLATE_IMAGE", "europe-west1-docker.pkg.dev/p/tidemark/img");
    pb.environment().put("TIDEMARK_TEMPLATE_SPECS", "gs://p-tidemark/templates");
    pb.environment().remove("TIDEMARK_LAUNCHER_BASE");
    pb.environment().putAll(env);
    Process process = pb.start();
    String printed = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS), is(true));
    List<String> lines = new ArrayList<>(printed.lines().map(String::trim).toList());
    lines.add("exit=" + process.exitValue());
    return lines;
  }

  @Test
  public void theBuildScriptBuildsThePushedImageIntoTheSpecOfItsTag() throws Exception {
    String base =
        "gcr.io/dataflow-templates-base/java17-template-launcher-base@sha256:" + "0".repeat(64);
    List<String> lines = dryRun(java.util.Map.of("TIDEMARK_LAUNCHER_BASE", base), "--tag=t1");
    assertThat(
        lines,
        hasItems(
            "mvn -B -DskipTests -pl pipelines -am package",
            "docker build -f pipelines/flex-template/Dockerfile --build-arg LAUNCHER_BASE="
                + base
                + " -t europe-west1-docker.pkg.dev/p/tidemark/img:t1 .",
            "docker push europe-west1-docker.pkg.dev/p/tidemark/img:t1",
            "gcloud dataflow flex-template build gs://p-tidemark/templates/tidemark-t1.json"
                + " --image=europe-west1-docker.pkg.dev/p/tidemark/img:t1 --sdk-language=JAVA"
                + " --metadata-file=pipelines/flex-template/metadata.json",
            "exit=0"));
    // Every file the build reads is in the repository.
    Path root = MAIN.directory().getParent();
    assertThat(Files.isRegularFile(root.resolve("pipelines/flex-template/Dockerfile")), is(true));
    assertThat(
        Files.isRegularFile(root.resolve("pipelines/flex-template/metadata.json")), is(true));
  }

  /** Unpinned, the build looks the launcher image's digest up and builds on that digest. */
  @Test
  public void theBuildScriptPinsTheLauncherBaseByDigest() throws Exception {
    List<String> looked = dryRun(java.util.Map.of(), "--tag=t2");
    assertThat(
        looked,
        hasItems(
            "gcloud container images describe"
                + " gcr.io/dataflow-templates-base/java17-template-launcher-base:latest"
                + " --format=value\\(image_summary.digest\\)",
            "docker build -f pipelines/flex-template/Dockerfile --build-arg"
                + " LAUNCHER_BASE=gcr.io/dataflow-templates-base/java17-template-launcher-base@sha256:DIGEST"
                + " -t europe-west1-docker.pkg.dev/p/tidemark/img:t2 .",
            "exit=0"));
    List<String> unpinned =
        dryRun(
            java.util.Map.of(
                "TIDEMARK_LAUNCHER_BASE",
                "gcr.io/dataflow-templates-base/java17-template-launcher-base:latest"),
            "--tag=t3");
    assertThat(unpinned, hasItems("exit=2"));
    assertThat(String.join("\n", unpinned), containsString("must be pinned by digest"));
    assertThat(dryRun(java.util.Map.of(), "--tag=bad tag"), hasItems("exit=2"));
  }

  private static String output(TerraformConfig tf, String name) {
    return tf.blocks().stream()
        .filter(b -> b.type().equals("output") && b.labels().equals(List.of(name)))
        .findFirst()
        .orElseThrow(() -> new IllegalArgumentException("No output " + name))
        .attribute("value")
        .orElseThrow();
  }
}
