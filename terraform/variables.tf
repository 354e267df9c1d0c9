# Inputs of the main stage. Only project_id has no default; project_id, region, name_prefix and
# bucket_name must be the bootstrap stage's (terraform/bootstrap/), which made the bucket and the
# image repository this stage uses.

variable "project_id" {
  description = "Google Cloud project that holds every resource and runs the job."
  type        = string
}

variable "region" {
  description = "Region of the Dataflow job, the bucket and the Pub/Sub resources."
  type        = string
  default     = "europe-west1"
}

variable "name_prefix" {
  description = "Prefix of resource names (service account, topic, subscription, job)."
  type        = string
  default     = "tidemark"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{2,19}$", var.name_prefix))
    error_message = "name_prefix must be 3-20 characters: lower-case letters, digits and '-', starting with a letter."
  }
}

variable "labels" {
  description = "Labels applied to every resource that takes labels, and to the job."
  type        = map(string)
  default     = {}
}

# --- CMEK -------------------------------------------------------------------------------------

variable "kms_key_name" {
  description = <<-EOT
    Cloud KMS key (projects/P/locations/L/keyRings/R/cryptoKeys/K) that encrypts the dataset,
    the bucket, the topic and the job's state. Empty = Google-managed encryption. The key must be
    in the same location as the resources (the region; for the dataset, dataset_location).
  EOT
  type        = string
  default     = ""

  validation {
    condition     = var.kms_key_name == "" || can(regex("^projects/[^/]+/locations/[^/]+/keyRings/[^/]+/cryptoKeys/[^/]+$", var.kms_key_name))
    error_message = "kms_key_name must be empty or projects/P/locations/L/keyRings/R/cryptoKeys/K."
  }
}

variable "grant_kms_to_service_agents" {
  description = "With kms_key_name set: grant the BigQuery, Cloud Storage, Pub/Sub, Dataflow and Compute Engine service agents Encrypter/Decrypter on the key. Set false when the key's owner grants them."
  type        = bool
  default     = true
}

# --- BigQuery ---------------------------------------------------------------------------------

variable "dataset_id" {
  description = "BigQuery dataset of the job's tables (decisions, dead_letters, duplicates, too_late and the model loop's five: schemas/tables.json)."
  type        = string
  default     = "tidemark"
}

variable "dataset_location" {
  description = "BigQuery location of the dataset. Empty = the region."
  type        = string
  default     = ""
}

variable "max_staleness" {
  description = <<-EOT
    max_staleness of the CDC tables, as a BigQuery INTERVAL literal 'Y-M D H:M:S'
    ("0-0 0 0:15:0" = 15 minutes). Queries may read data this old; BigQuery applies the upserts
    in the background within the interval, which makes queries cheaper and faster.
  EOT
  type        = string
  default     = "0-0 0 0:15:0"

  validation {
    condition     = can(regex("^[0-9]+-[0-9]+ [0-9]+ [0-9]+:[0-9]+:[0-9]+$", var.max_staleness))
    error_message = "max_staleness must look like \"0-0 0 0:15:0\" (years-months days hours:minutes:seconds)."
  }
}

variable "deletion_protection" {
  description = "Refuse to destroy the BigQuery tables (and keep the bucket's objects) on terraform destroy."
  type        = bool
  default     = true
}

# --- Cloud Storage ----------------------------------------------------------------------------

variable "bucket_name" {
  description = "The bootstrap stage's bucket (staging/, temp/, models/, templates/). Empty = \"<project_id>-<name_prefix>\", the bootstrap stage's default."
  type        = string
  default     = ""
}

variable "model_name" {
  description = "Model file the job scores with (--modelUri = gs://BUCKET/models/<model_name>), uploaded with its sidecar <model_name>.json from model_source_dir. The sidecar names the engine."
  type        = string
  default     = "tidemark-fraud-xgb-v1.ubj"
}

variable "model_source_dir" {
  description = "Local folder holding model_name and its sidecar. Empty = the shipped models (model/src/main/resources/models)."
  type        = string
  default     = ""
}

# --- Input ------------------------------------------------------------------------------------

variable "input_source" {
  description = "Where the job reads CloudEvents: \"pubsub\" (the subscription created here) or \"kafka\"."
  type        = string
  default     = "pubsub"

  validation {
    condition     = contains(["pubsub", "kafka"], var.input_source)
    error_message = "input_source must be \"pubsub\" or \"kafka\"."
  }
}

variable "subscription_ack_deadline_seconds" {
  description = "Ack deadline of the input subscription. Dataflow extends it while it works on a message."
  type        = number
  default     = 60
}

variable "kafka_bootstrap_servers" {
  description = "Kafka brokers (host:port,...) when input_source = \"kafka\"."
  type        = string
  default     = ""
}

variable "kafka_input_topic" {
  description = "Kafka topic of the CloudEvents when input_source = \"kafka\"."
  type        = string
  default     = ""
}

variable "kafka_auth" {
  description = <<-EOT
    How the job logs in to Kafka (input_source = "kafka"): "password", SASL PLAIN or SCRAM with a
    user name and a password in Secret Manager, for a Kafka outside Google; or "managed_kafka",
    Google Cloud Managed Service for Apache Kafka: SASL_SSL with OAUTHBEARER, the token of the
    job's service account obtained by Google's GcpLoginCallbackHandler, no password.
  EOT
  type        = string
  default     = "password"

  validation {
    condition     = contains(["password", "managed_kafka"], var.kafka_auth)
    error_message = "kafka_auth must be \"password\" or \"managed_kafka\"."
  }
}

variable "managed_kafka_project" {
  description = "With kafka_auth = \"managed_kafka\": the project of the Kafka cluster, where the job's service account gets roles/managedkafka.client. Empty = project_id."
  type        = string
  default     = ""
}

variable "kafka_username" {
  description = "SASL user name (kafka_auth = \"password\"), or empty with kafka_username_secret_id."
  type        = string
  default     = ""
}

variable "kafka_username_secret_id" {
  description = "Existing Secret Manager secret (projects/P/secrets/S) holding the SASL user name, instead of kafka_username (kafka_auth = \"password\")."
  type        = string
  default     = ""

  validation {
    condition     = var.kafka_username_secret_id == "" || can(regex("^projects/[^/]+/secrets/[^/]+$", var.kafka_username_secret_id))
    error_message = "kafka_username_secret_id must be empty or projects/P/secrets/S."
  }
}

variable "kafka_username_secret_version" {
  description = "Version of kafka_username_secret_id that the job reads."
  type        = string
  default     = "latest"
}

variable "kafka_security_protocol" {
  description = "Kafka security protocol with kafka_auth = \"password\" (--kafkaSecurityProtocol); \"managed_kafka\" always uses SASL_SSL."
  type        = string
  default     = "SASL_SSL"

  validation {
    condition     = contains(["SASL_SSL", "SASL_PLAINTEXT"], var.kafka_security_protocol)
    error_message = "kafka_security_protocol must be SASL_SSL or SASL_PLAINTEXT: the job authenticates with the secret's password."
  }
}

variable "kafka_sasl_mechanism" {
  description = "SASL mechanism with kafka_auth = \"password\" (--kafkaSaslMechanism)."
  type        = string
  default     = "SCRAM-SHA-512"

  validation {
    condition     = contains(["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"], var.kafka_sasl_mechanism)
    error_message = "kafka_sasl_mechanism must be PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512."
  }
}

variable "kafka_password_secret_id" {
  description = "Existing Secret Manager secret (projects/P/secrets/S) holding the SASL password. Empty with input_source = \"kafka\" and kafka_auth = \"password\" = create one from kafka_password."
  type        = string
  default     = ""

  validation {
    condition     = var.kafka_password_secret_id == "" || can(regex("^projects/[^/]+/secrets/[^/]+$", var.kafka_password_secret_id))
    error_message = "kafka_password_secret_id must be empty or projects/P/secrets/S."
  }
}

variable "kafka_password_secret_version" {
  description = "Version of kafka_password_secret_id that the job reads."
  type        = string
  default     = "latest"
}

variable "kafka_password" {
  description = "SASL password written into the secret that Terraform creates (write-only: kept out of plan and state). Unused when kafka_password_secret_id is set."
  type        = string
  default     = null
  sensitive   = true
  ephemeral   = true
}

variable "kafka_password_version" {
  description = "Bump to write a new kafka_password into the secret (write-only values are not compared)."
  type        = number
  default     = 1
}

# --- Dataflow ---------------------------------------------------------------------------------

variable "container_spec_gcs_path" {
  description = "gs:// path of the Flex Template spec file. Empty = gs://BUCKET/templates/tidemark-<template_version>.json, where terraform/build-template.sh writes it."
  type        = string
  default     = ""

  validation {
    condition     = var.container_spec_gcs_path == "" || startswith(var.container_spec_gcs_path, "gs://")
    error_message = "container_spec_gcs_path must be empty or a gs:// path to the template spec JSON."
  }

  validation {
    condition     = var.container_spec_gcs_path != "" || var.template_version != ""
    error_message = "Set template_version to the tag terraform/build-template.sh printed (or container_spec_gcs_path to a spec)."
  }
}

variable "template_version" {
  description = "The build's tag (terraform/build-template.sh prints it; the commit by default): the job runs gs://BUCKET/templates/tidemark-<template_version>.json. A new value rolls the new build out (an in-place update of the streaming job)."
  type        = string
  default     = ""

  validation {
    condition     = var.template_version == "" || can(regex("^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$", var.template_version))
    error_message = "template_version must be a Docker tag: letters, digits, '_', '.', '-', at most 128 characters."
  }
}

variable "template_image_repository" {
  description = "Artifact Registry repository (projects/P/locations/L/repositories/R) of the template's container image; the worker service account, which also runs the launcher, gets reader on it. Empty = the bootstrap stage's repository (named name_prefix, in the region)."
  type        = string
  default     = ""

  validation {
    condition     = var.template_image_repository == "" || can(regex("^projects/[^/]+/locations/[^/]+/repositories/[^/]+$", var.template_image_repository))
    error_message = "template_image_repository must be empty or projects/P/locations/L/repositories/R."
  }
}

variable "job_name" {
  description = "Dataflow job name. Empty = \"<name_prefix>-scoring\"."
  type        = string
  default     = ""
}

variable "on_delete" {
  description = "What terraform destroy (or a replacement) does to the running streaming job: \"drain\" (finish in-flight work, then stop) or \"cancel\" (stop now, in-flight data is lost)."
  type        = string
  default     = "drain"

  validation {
    condition     = contains(["drain", "cancel"], var.on_delete)
    error_message = "on_delete must be \"drain\" or \"cancel\"."
  }
}

variable "skip_wait_on_job_termination" {
  description = "Do not wait for the drain/cancel to finish on destroy."
  type        = bool
  default     = false
}

variable "machine_type" {
  description = "Worker machine type."
  type        = string
  default     = "n2-standard-2"
}

variable "max_workers" {
  description = "Upper bound of autoscaling."
  type        = number
  default     = 5
}

variable "subnetwork" {
  description = "Existing subnetwork of the launcher and the workers, as a self link or projects/P/regions/R/subnetworks/S (a Shared VPC's: the host project's). It needs Private Google Access unless use_public_ips. Empty = a VPC, subnetwork, firewall rule and (see cloud_nat) Cloud NAT created here."
  type        = string
  default     = ""

  validation {
    condition     = var.subnetwork == "" || can(regex("projects/[^/]+/regions/[^/]+/subnetworks/[^/]+$", var.subnetwork))
    error_message = "subnetwork must be empty or end in projects/P/regions/R/subnetworks/S."
  }
}

variable "subnetwork_cidr" {
  description = "IP range of the subnetwork created here (subnetwork empty). One address per worker and one for the launcher."
  type        = string
  default     = "10.64.0.0/20"
}

variable "use_public_ips" {
  description = "Give the launcher and the workers public IPs (WORKER_IP_PUBLIC). False (default): private IPs, Google's APIs through Private Google Access, anything else through Cloud NAT."
  type        = bool
  default     = false
}

variable "cloud_nat" {
  description = "Create a Cloud NAT for the created subnetwork. Null (default) = only when private workers read a Kafka outside Google (input_source = \"kafka\" and kafka_auth = \"password\")."
  type        = bool
  default     = null

  validation {
    condition     = var.cloud_nat != true || var.subnetwork == ""
    error_message = "cloud_nat creates a NAT for the subnetwork this stage creates; with an existing subnetwork, give its network a NAT where it is managed."
  }
}

variable "grant_shared_vpc_network_user" {
  description = "With an existing subnetwork: grant roles/compute.networkUser on it to the job's service account and Dataflow's service agent (needs IAM admin on the subnetwork's project)."
  type        = bool
  default     = false
}

variable "iam_propagation_wait" {
  description = "How long the job's creation waits after the grants it needs (IAM changes take minutes to take effect), as a Go duration (\"120s\")."
  type        = string
  default     = "120s"
}

variable "extra_parameters" {
  description = "More pipeline flags for the template (name without '--' => value), e.g. { maxOutOfOrderness = \"PT30S\" }. Every flag named *Secret (a trust or key store, their passwords) is a Secret Manager secret version the job's service account gets accessor on."
  type        = map(string)
  default     = {}
}

# --- Derived values used by several files -------------------------------------------------------

locals {
  # null, not "", is what the providers take as "no customer-managed key".
  kms_key_name = var.kms_key_name == "" ? null : var.kms_key_name
  labels       = merge({ app = "tidemark" }, var.labels)
  use_kafka    = var.input_source == "kafka"
  template_image_repository = var.template_image_repository == "" ? (
    "projects/${var.project_id}/locations/${var.region}/repositories/${var.name_prefix}"
  ) : var.template_image_repository
}
