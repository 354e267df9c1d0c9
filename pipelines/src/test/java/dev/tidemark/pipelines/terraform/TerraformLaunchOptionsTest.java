package dev.tidemark.pipelines.terraform;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.junit.Assert.assertThrows;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tidemark.pipelines.RunnerProfiles;
import dev.tidemark.pipelines.TidemarkOptions;
import dev.tidemark.pipelines.dataflow.FlexTemplateLauncher;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.beam.runners.dataflow.DataflowRunner;
import org.apache.beam.runners.dataflow.options.DataflowPipelineOptions;
import org.apache.beam.sdk.extensions.gcp.auth.NoopCredentialFactory;
import org.apache.beam.sdk.extensions.gcp.storage.PathValidator;
import org.apache.beam.sdk.extensions.gcp.util.gcsfs.GcsPath;
import org.apache.beam.sdk.io.fs.ResourceId;
import org.apache.beam.sdk.options.PipelineOptions;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.junit.runner.RunWith;
import org.junit.runners.JUnit4;

/**
 * The options the template launcher gets from the job Terraform creates with its defaults, checked
 * by Beam as on the launcher VM: the job resource's environment arguments become the Dataflow
 * pipeline options the provider sends ({@code --tempLocation}, {@code --serviceAccount}, {@code
 * --subnetwork}, {@code --usePublicIps}, ...), its parameters become flags, the {@code dataflow}
 * profile goes under them, and the result goes through {@code PipelineOptionsFactory}'s validation
 * and {@link DataflowRunner#fromOptions}: required options, the project id, the job name, the
 * region, the worker settings, and the temp and staging paths (their form, by Beam's {@link
 * GcsPath}; whether the bucket exists needs Google). Credentials are a no-op, nothing is staged.
 */
@RunWith(JUnit4.class)
public class TerraformLaunchOptionsTest {
  private static final TerraformConfig MAIN =
      TerraformConfig.load(TerraformConfig.projectDirectory());

  /**
   * The flex template job's arguments, each with the pipeline option it becomes; {@code null}: an
   * argument that is not a pipeline option (the template, what destroy does, the parameters).
   */
  private static final Map<String, String> ENVIRONMENT = environment();

  private static Map<String, String> environment() {
    Map<String, String> flags = new LinkedHashMap<>();
    flags.put("name", "jobName");
    flags.put("region", "region");
    flags.put("temp_location", "tempLocation");
    flags.put("staging_location", "stagingLocation");
    flags.put("service_account_email", "serviceAccount");
    flags.put("subnetwork", "subnetwork");
    flags.put("machine_type", "workerMachineType");
    flags.put("max_workers", "maxNumWorkers");
    flags.put("kms_key_name", "dataflowKmsKey");
    flags.put("enable_streaming_engine", "enableStreamingEngine");
    flags.put("ip_configuration", "usePublicIps");
    flags.put("labels", "labels");
    flags.put("container_spec_gcs_path", null);
    flags.put("on_delete", null);
    flags.put("skip_wait_on_job_termination", null);
    flags.put("parameters", null);
    return flags;
  }

  @Rule public final TemporaryFolder folder = new TemporaryFolder();

  /** The path form checks of Beam's GCS validator, without asking Google whether buckets exist. */
  public static final class GcsPathForm implements PathValidator {
    public static PathValidator fromOptions(PipelineOptions options) {
      return new GcsPathForm();
    }

    private static String check(String path) {
      GcsPath gcs = GcsPath.fromUri(path);
      if (gcs.getBucket().isEmpty() || gcs.getObject().isEmpty()) {
        throw new IllegalArgumentException("not gs://BUCKET/OBJECT: " + path);
      }
      return path;
    }

    @Override
    public void validateInputFilePatternSupported(String filepattern) {
      check(filepattern);
    }

    @Override
    public void validateOutputFilePrefixSupported(String filePrefix) {
      check(filePrefix);
    }

    @Override
    public void validateOutputResourceSupported(ResourceId resourceId) {
      check(resourceId.toString());
    }

    @Override
    public String verifyPath(String path) {
      return check(path);
    }
  }

  /** The launcher's arguments for the default deploy: the job's environment and parameters. */
  private static List<String> launchArguments(Map<String, Object> variables) throws Exception {
    TerraformPlan plan = new TerraformPlan(MAIN, variables);
    Map<String, Object> job = plan.instance("google_dataflow_flex_template_job.tidemark");
    Set<String> unmapped = new TreeSet<>(job.keySet());
    unmapped.removeAll(ENVIRONMENT.keySet());
    assertThat("job arguments this test does not map to options", unmapped, is(Set.of()));
    List<String> args = new ArrayList<>();
    args.add("--project=" + plan.values().variable("project_id"));
    for (Map.Entry<String, String> e : ENVIRONMENT.entrySet()) {
      Object value = job.get(e.getKey());
      if (e.getValue() == null || value == null) {
        continue;
      }
      if (e.getKey().equals("ip_configuration")) {
        value = value.equals("WORKER_IP_PUBLIC");
      } else if (e.getKey().equals("labels")) {
        value = new ObjectMapper().writeValueAsString(value);
      } else if (value instanceof BigDecimal) {
        value = ((BigDecimal) value).toPlainString();
      }
      args.add("--" + e.getValue() + "=" + value);
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> parameters = (Map<String, Object>) job.get("parameters");
    parameters.forEach((name, value) -> args.add("--" + name + "=" + value));
    return args;
  }

  /** The launcher's options, as {@link FlexTemplateLauncher} makes them, then Beam's checks. */
  private DataflowPipelineOptions launch(List<String> args) throws Exception {
    List<String> withTemp = new ArrayList<>(args);
    // Unset, gcpTempLocation's default asks Cloud Storage about the temp bucket (the launcher VM
    // can; here it would retry for a while): given the value it derives from tempLocation.
    args.stream()
        .filter(a -> a.startsWith("--tempLocation="))
        .forEach(a -> withTemp.add("--gcpTempLocation=" + a.substring("--tempLocation=".length())));
    List<String> arguments =
        RunnerProfiles.fromEnvironment().arguments(FlexTemplateLauncher.PROFILE, withTemp);
    TidemarkOptions options =
        PipelineOptionsFactory.fromArgs(arguments.toArray(new String[0]))
            .withValidation()
            .as(TidemarkOptions.class);
    DataflowPipelineOptions dataflow = options.as(DataflowPipelineOptions.class);
    dataflow.setCredentialFactoryClass(NoopCredentialFactory.class);
    dataflow.setPathValidatorClass(GcsPathForm.class);
    Path jar = Files.createTempFile(folder.getRoot().toPath(), "tidemark", ".jar");
    dataflow.setFilesToStage(List.of(jar.toString()));
    DataflowRunner.fromOptions(dataflow);
    return dataflow;
  }

  @Test
  public void theDefaultDeploysLaunchOptionsPassBeamsDataflowValidation() throws Exception {
    List<String> args = launchArguments(TerraformPlanTest.defaults());
    DataflowPipelineOptions options = launch(args);

    assertThat(options.getProject(), is("tidemark-demo"));
    assertThat(options.getRegion(), is("europe-west1"));
    assertThat(options.getJobName(), is("tidemark-scoring"));
    assertThat(options.getTempLocation(), is("gs://tidemark-demo-tidemark/temp"));
    assertThat(options.getStagingLocation(), is("gs://tidemark-demo-tidemark/staging"));
    assertThat(
        options.getServiceAccount(), is("tidemark-worker@tidemark-demo.iam.gserviceaccount.com"));
    assertThat(options.getUsePublicIps(), is(false));
    assertThat(
        options.getSubnetwork(),
        is(
            "https://www.googleapis.com/compute/v1/projects/tidemark-demo/regions/europe-west1/subnetworks/tidemark-workers"));
    assertThat(options.isStreaming(), is(true));
    assertThat(options.isEnableStreamingEngine(), is(true));
    assertThat(options.getMaxNumWorkers(), is(5));
    assertThat(options.getLabels(), is(Map.of("app", "tidemark")));
    TidemarkOptions tidemark = options.as(TidemarkOptions.class);
    assertThat(tidemark.getBigQueryDataset(), is("tidemark-demo:tidemark"));
    assertThat(
        tidemark.getModelUri(), is("gs://tidemark-demo-tidemark/models/tidemark-fraud-xgb-v1.ubj"));
    // BigQueryIO's dataset and table checks stay on at launch: the worker may read the metadata.
    assertThat(tidemark.getBigQueryValidate(), is(true));
  }

  /** The same checks refuse what Dataflow would refuse, so passing them means something. */
  @Test
  public void beamsValidationRefusesABadProjectAndABadTempLocation() throws Exception {
    List<String> args = launchArguments(TerraformPlanTest.defaults());
    List<String> numbered = new ArrayList<>(args);
    numbered.replaceAll(a -> a.startsWith("--project=") ? "--project=123456789012" : a);
    IllegalArgumentException project =
        assertThrows(IllegalArgumentException.class, () -> launch(numbered));
    assertThat(project.getMessage(), containsString("Project ID '123456789012' invalid"));

    List<String> local = new ArrayList<>(args);
    local.replaceAll(a -> a.startsWith("--tempLocation=") ? "--tempLocation=gs://" : a);
    assertThrows(IllegalArgumentException.class, () -> launch(local));
  }
}
