# Dataflow: the streaming Flex Template job (Streaming Engine). The resource exists only in the
# google-beta provider. Pipeline flags are passed as template parameters; the job's environment
# (temp/staging locations, service account, KMS key, network) through the resource's own
# arguments, which the provider turns into the same --tempLocation, --stagingLocation,
# --serviceAccount flags.

locals {
  job_name = var.job_name == "" ? "${var.name_prefix}-scoring" : var.job_name

  # Values of the pipeline flags, shared with outputs.tf.
  temp_location       = "${data.google_storage_bucket.tidemark.url}/temp"
  staging_location    = "${data.google_storage_bucket.tidemark.url}/staging"
  model_uri           = "${data.google_storage_bucket.tidemark.url}/${google_storage_bucket_object.model.name}"
  bigquery_dataset    = "${var.project_id}:${google_bigquery_dataset.tidemark.dataset_id}"
  pubsub_subscription = google_pubsub_subscription.events.id
  labels_subscription = google_pubsub_subscription.labels.id
  # Where terraform/build-template.sh writes the build tagged template_version, unless given: a
  # new build is a new path, so the job sees the change and rolls it out.
  container_spec_gcs_path = var.container_spec_gcs_path == "" ? "${data.google_storage_bucket.tidemark.url}/templates/tidemark-${var.template_version}.json" : var.container_spec_gcs_path

  # Google's login callback handler for Managed Service for Apache Kafka (on the Dataflow jar).
  managed_kafka_login_handler = "com.google.cloud.hosted.kafka.auth.GcpLoginCallbackHandler"

  # tomap: the branches have different keys, so as object literals they would not unify.
  kafka_login = var.kafka_auth == "managed_kafka" ? tomap({
    kafkaSecurityProtocol          = "SASL_SSL"
    kafkaSaslMechanism             = "OAUTHBEARER"
    kafkaOauthLoginCallbackHandler = local.managed_kafka_login_handler
    }) : merge(
    tomap({
      kafkaSecurityProtocol = var.kafka_security_protocol
      kafkaSaslMechanism    = var.kafka_sasl_mechanism
      kafkaPasswordSecret   = local.kafka_secret_version
    }),
    var.kafka_username_secret_id == "" ? tomap({ kafkaUsername = var.kafka_username }) : tomap({
      kafkaUsernameSecret                                      = "${var.kafka_username_secret_id}/versions/${var.kafka_username_secret_version}"
    }),
  )

  source_parameters = local.use_kafka ? merge(
    tomap({
      source                = "kafka"
      kafkaBootstrapServers = var.kafka_bootstrap_servers
      kafkaInputTopic       = var.kafka_input_topic
    }),
    local.kafka_login,
    ) : tomap({
      source                   = "pubsub"
      pubsubSubscription       = local.pubsub_subscription
      pubsubLabelsSubscription = local.labels_subscription
  })

  # Every template parameter the job gets.
  job_parameters = merge(
    local.source_parameters,
    # sink: the template writes to BigQuery (the dataflow profile's sink).
    {
      bigQueryDataset = local.bigquery_dataset
      modelUri        = local.model_uri
    },
    var.extra_parameters,
  )
}

resource "google_dataflow_flex_template_job" "tidemark" {
  provider = google-beta

  name                    = local.job_name
  region                  = var.region
  container_spec_gcs_path = local.container_spec_gcs_path
  on_delete               = var.on_delete

  skip_wait_on_job_termination = var.skip_wait_on_job_termination

  enable_streaming_engine = true
  service_account_email   = google_service_account.worker.email
  temp_location           = local.temp_location
  staging_location        = local.staging_location
  kms_key_name            = local.kms_key_name
  machine_type            = var.machine_type
  max_workers             = var.max_workers
  subnetwork              = local.subnetwork
  ip_configuration        = var.use_public_ips ? "WORKER_IP_PUBLIC" : "WORKER_IP_PRIVATE"
  labels                  = local.labels

  parameters = local.job_parameters

  # The job needs its tables, its model and sidecar, its network, and its permissions in effect
  # (the wait after the grants) before the launcher starts. A change of container_spec_gcs_path
  # (a new template_version) or of the parameters updates the running streaming job in place:
  # the provider relaunches it with update = true under the same name, and Dataflow keeps its
  # state if the new graph is compatible (step names are fixed literals for that reason).
  depends_on = [
    google_bigquery_table.tidemark,
    google_storage_bucket_object.model,
    google_storage_bucket_object.model_sidecar,
    google_compute_firewall.dataflow_internal,
    google_compute_router_nat.nat,
    time_sleep.iam_propagation,
  ]
}
