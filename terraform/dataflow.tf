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
  # Where terraform/build-template.sh writes the spec, unless given.
  container_spec_gcs_path = var.container_spec_gcs_path == "" ? "${data.google_storage_bucket.tidemark.url}/templates/tidemark.json" : var.container_spec_gcs_path

  # tomap: the two branches have different keys, so as object literals they would not unify.
  source_parameters = local.use_kafka ? tomap({
    source                = "kafka"
    kafkaBootstrapServers = var.kafka_bootstrap_servers
    kafkaInputTopic       = var.kafka_input_topic
    kafkaSecurityProtocol = var.kafka_security_protocol
    kafkaSaslMechanism    = var.kafka_sasl_mechanism
    kafkaUsername         = var.kafka_username
    kafkaPasswordSecret   = local.kafka_secret_version
    }) : tomap({
    source             = "pubsub"
    pubsubSubscription = local.pubsub_subscription
  })
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
  subnetwork              = var.subnetwork == "" ? null : var.subnetwork
  ip_configuration        = var.use_public_ips ? "WORKER_IP_PUBLIC" : "WORKER_IP_PRIVATE"
  labels                  = local.labels

  parameters = merge(
    local.source_parameters,
    # sink: the template writes to BigQuery (the dataflow profile's sink).
    {
      bigQueryDataset = local.bigquery_dataset
      modelUri        = local.model_uri
    },
    var.extra_parameters,
  )

  # The job needs its tables, its model and sidecar, its permissions and (CMEK) the service
  # agents' key grants before the first worker starts.
  depends_on = [
    google_bigquery_table.decisions,
    google_bigquery_table.dead_letters,
    google_bigquery_table.duplicates,
    google_bigquery_table.too_late,
    google_storage_bucket_object.model,
    google_storage_bucket_object.model_sidecar,
    google_project_iam_member.worker_dataflow_worker,
    google_bigquery_table_iam_member.worker_data_editor,
    google_storage_bucket_iam_member.worker_models_reader,
    google_storage_bucket_iam_member.worker_temp_staging_user,
    google_pubsub_subscription_iam_member.worker_subscriber,
    google_pubsub_subscription_iam_member.worker_subscription_viewer,
    google_project_iam_member.worker_pubsub_tracking,
    google_pubsub_topic_iam_member.worker_attach_subscription,
    google_secret_manager_secret_iam_member.worker_kafka_password,
    google_artifact_registry_repository_iam_member.worker_template_image,
    google_kms_crypto_key_iam_member.service_agents,
  ]
}
