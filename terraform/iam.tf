# IAM: the job's worker service account and the only roles it gets, each on the smallest
# resource that supports the grant. terraform/README.md lists and justifies every role; the
# Java test TerraformIamTest fails on a role granted here that the README does not justify, and
# on any primitive role (owner, editor, viewer).

resource "google_service_account" "worker" {
  account_id   = "${var.name_prefix}-worker"
  display_name = "Tidemark Dataflow worker"
  description  = "Runs the Tidemark Flex Template launcher and workers."
}

locals {
  worker_member = "serviceAccount:${google_service_account.worker.email}"
}

# Project level: Dataflow has no narrower resource for this role.
resource "google_project_iam_member" "worker_dataflow_worker" {
  project = var.project_id
  role    = "roles/dataflow.worker"
  member  = local.worker_member
}

# Write access on the tables the job writes, not on the dataset: the dataset-level role would
# also let the worker delete tables and create new ones.
resource "google_bigquery_table_iam_member" "worker_data_editor" {
  for_each   = local.tables
  project    = var.project_id
  dataset_id = google_bigquery_dataset.tidemark.dataset_id
  table_id   = google_bigquery_table.tidemark[each.key].table_id
  role       = "roles/bigquery.dataEditor"
  member     = local.worker_member
}

# BigQueryIO checks at launch, on the launcher VM that runs as this account, that the dataset
# exists (datasets.get) before it checks the tables; the table grants do not cover the dataset.
# metadataViewer reads metadata only: no row, and no table can be created or deleted with it.
resource "google_bigquery_dataset_iam_member" "worker_dataset_metadata" {
  project    = var.project_id
  dataset_id = google_bigquery_dataset.tidemark.dataset_id
  role       = "roles/bigquery.metadataViewer"
  member     = local.worker_member
}

# Cloud Storage grants are conditioned on object name prefixes (IAM conditions need uniform
# bucket-level access, which the bucket has). A listing is checked on the bucket, not on an
# object, so the write grant also holds on the bucket resource itself: the runner lists staging/
# and temp/ to find files it already staged and to clean up.
locals {
  objects = "projects/_/buckets/${data.google_storage_bucket.tidemark.name}/objects"
}

# Read-only models/: the job must not be able to replace the model it scores with.
resource "google_storage_bucket_iam_member" "worker_models_reader" {
  bucket = data.google_storage_bucket.tidemark.name
  role   = "roles/storage.objectViewer"
  member = local.worker_member

  condition {
    title       = "models-read-only"
    description = "Read the model and its sidecar under models/."
    expression  = "resource.name.startsWith(\"${local.objects}/models/\")"
  }
}

# Read and write temp/ and staging/, where the runner stages the job's files and keeps temporary
# ones; objectUser has no IAM or ACL permissions, unlike objectAdmin.
resource "google_storage_bucket_iam_member" "worker_temp_staging_user" {
  bucket = data.google_storage_bucket.tidemark.name
  role   = "roles/storage.objectUser"
  member = local.worker_member

  condition {
    title       = "temp-and-staging"
    description = "Create, read, replace and delete objects under temp/ and staging/; list the bucket."
    expression  = "resource.type == \"storage.googleapis.com/Bucket\" || resource.name.startsWith(\"${local.objects}/temp/\") || resource.name.startsWith(\"${local.objects}/staging/\")"
  }
}

# Pub/Sub input only, as every Pub/Sub grant below: with Kafka input the worker reads no Pub/Sub.
resource "google_pubsub_subscription_iam_member" "worker_subscriber" {
  count        = local.use_kafka ? 0 : 1
  subscription = google_pubsub_subscription.events.name
  role         = "roles/pubsub.subscriber"
  member       = local.worker_member
}

resource "google_pubsub_subscription_iam_member" "worker_subscription_viewer" {
  count        = local.use_kafka ? 0 : 1
  subscription = google_pubsub_subscription.events.name
  role         = "roles/pubsub.viewer"
  member       = local.worker_member
}

# The labels' subscription, read beside the events (--pubsubLabelsSubscription), as the events'.
resource "google_pubsub_subscription_iam_member" "worker_labels_subscriber" {
  count        = local.use_kafka ? 0 : 1
  subscription = google_pubsub_subscription.labels.name
  role         = "roles/pubsub.subscriber"
  member       = local.worker_member
}

resource "google_pubsub_subscription_iam_member" "worker_labels_subscription_viewer" {
  count        = local.use_kafka ? 0 : 1
  subscription = google_pubsub_subscription.labels.name
  role         = "roles/pubsub.viewer"
  member       = local.worker_member
}

# Pub/Sub input read with a timestamp attribute (the dataflow profile's --pubsubTimestampAttribute=
# ce-time): Dataflow derives the watermark from a tracking subscription that the job creates on
# the topic when it starts and deletes when it drains, named
# "<subscription>__df_internal<16 hex characters>". The name is not known in advance, so it cannot
# be created here. Creating a subscription is checked on the project, and attaching it on the
# topic; without both the job runs but reads nothing and logs "Creating watermark tracking pubsub
# subscription ... failed". The custom role holds only the tracking subscription's life cycle.
resource "google_project_iam_custom_role" "pubsub_tracking" {
  count       = local.use_kafka ? 0 : 1
  project     = var.project_id
  role_id     = "${replace(var.name_prefix, "-", "_")}_pubsub_tracking"
  title       = "Tidemark Pub/Sub watermark tracking"
  description = "Create, read, pull and delete the watermark-tracking subscription Dataflow makes for a Pub/Sub read with a timestamp attribute."
  permissions = [
    "pubsub.subscriptions.consume",
    "pubsub.subscriptions.create",
    "pubsub.subscriptions.delete",
    "pubsub.subscriptions.get",
  ]
}

resource "google_project_iam_member" "worker_pubsub_tracking" {
  count   = local.use_kafka ? 0 : 1
  project = var.project_id
  role    = google_project_iam_custom_role.pubsub_tracking[0].id
  member  = local.worker_member
}

# pubsub.topics.attachSubscription, for the tracking subscription; subscriber is the smallest
# predefined role that has it, and on a topic it grants nothing else.
resource "google_pubsub_topic_iam_member" "worker_attach_subscription" {
  count  = local.use_kafka ? 0 : 1
  topic  = google_pubsub_topic.events.name
  role   = "roles/pubsub.subscriber"
  member = local.worker_member
}

# The labels are read with the same timestamp attribute: a tracking subscription on their topic too.
resource "google_pubsub_topic_iam_member" "worker_labels_attach_subscription" {
  count  = local.use_kafka ? 0 : 1
  topic  = google_pubsub_topic.labels.name
  role   = "roles/pubsub.subscriber"
  member = local.worker_member
}

# Every secret the job reads (secrets.tf: each *Secret parameter, extra_parameters included).
resource "google_secret_manager_secret_iam_member" "worker_secrets" {
  for_each  = local.job_secrets
  secret_id = each.value
  role      = "roles/secretmanager.secretAccessor"
  member    = local.worker_member
}

# Google's Managed Service for Apache Kafka: the connect permission, checked on the cluster's
# project (Kafka input with kafka_auth = "managed_kafka" only).
resource "google_project_iam_member" "worker_managed_kafka_client" {
  count   = local.use_kafka && var.kafka_auth == "managed_kafka" ? 1 : 0
  project = var.managed_kafka_project == "" ? var.project_id : var.managed_kafka_project
  role    = "roles/managedkafka.client"
  member  = local.worker_member
}

resource "google_artifact_registry_repository_iam_member" "worker_template_image" {
  repository = local.template_image_repository
  role       = "roles/artifactregistry.reader"
  member     = local.worker_member
}

# CMEK: the Google service agents that encrypt and decrypt for the dataset, topic and job (the
# bucket's, Cloud Storage's agent, is granted in the bootstrap stage). A new project has no
# Pub/Sub or Dataflow service agent until something creates it, and a grant to an account that
# does not exist fails: google_project_service_identity creates them first. The BigQuery data
# source does the same for BigQuery's agent; Compute Engine's exists once its API is enabled.
data "google_project" "this" {
  project_id = var.project_id
}

data "google_bigquery_default_service_account" "bq" {
  project = var.project_id
}

resource "google_project_service_identity" "pubsub" {
  provider = google-beta
  count    = local.kms_key_name != null ? 1 : 0
  project  = var.project_id
  service  = "pubsub.googleapis.com"
}

resource "google_project_service_identity" "dataflow" {
  provider = google-beta
  count    = local.kms_key_name != null ? 1 : 0
  project  = var.project_id
  service  = "dataflow.googleapis.com"
}

locals {
  kms_service_agents = local.kms_key_name == null ? {} : {
    bigquery = "serviceAccount:${data.google_bigquery_default_service_account.bq.email}"
    pubsub   = google_project_service_identity.pubsub[0].member
    dataflow = google_project_service_identity.dataflow[0].member
    compute  = "serviceAccount:service-${data.google_project.this.number}@compute-system.iam.gserviceaccount.com"
  }
}

resource "google_kms_crypto_key_iam_member" "service_agents" {
  for_each      = var.grant_kms_to_service_agents ? local.kms_service_agents : {}
  crypto_key_id = var.kms_key_name
  role          = "roles/cloudkms.cryptoKeyEncrypterDecrypter"
  member        = each.value
}

# IAM changes take effect over minutes, not when the API call returns: a job created at once by a
# new service account, or before its grants apply, fails at launch (image pull, dataset check,
# staging). The job waits for this, which waits for every grant it needs.
resource "time_sleep" "iam_propagation" {
  create_duration = var.iam_propagation_wait

  depends_on = [
    google_project_iam_member.worker_dataflow_worker,
    google_bigquery_dataset_iam_member.worker_dataset_metadata,
    google_bigquery_table_iam_member.worker_data_editor,
    google_storage_bucket_iam_member.worker_models_reader,
    google_storage_bucket_iam_member.worker_temp_staging_user,
    google_pubsub_subscription_iam_member.worker_subscriber,
    google_pubsub_subscription_iam_member.worker_subscription_viewer,
    google_project_iam_member.worker_pubsub_tracking,
    google_pubsub_topic_iam_member.worker_attach_subscription,
    google_pubsub_subscription_iam_member.worker_labels_subscriber,
    google_pubsub_subscription_iam_member.worker_labels_subscription_viewer,
    google_pubsub_topic_iam_member.worker_labels_attach_subscription,
    google_secret_manager_secret_iam_member.worker_secrets,
    google_project_iam_member.worker_managed_kafka_client,
    google_artifact_registry_repository_iam_member.worker_template_image,
    google_compute_subnetwork_iam_member.shared_vpc_network_user,
    google_kms_crypto_key_iam_member.service_agents,
  ]
}
