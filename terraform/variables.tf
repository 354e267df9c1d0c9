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
  description = "BigQuery dataset of the decisions, dead_letters, duplicates and too_late tables."
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

variable "kafka_username" {
  description = "SASL user name when input_source = \"kafka\"."
  type        = string
  default     = ""
}

variable "kafka_security_protocol" {
  description = "Kafka security protocol when input_source = \"kafka\" (--kafkaSecurityProtocol)."
  type        = string
  default     = "SASL_SSL"

  validation {
    condition     = contains(["SASL_SSL", "SASL_PLAINTEXT"], var.kafka_security_protocol)
    error_message = "kafka_security_protocol must be SASL_SSL or SASL_PLAINTEXT: the job authenticates with the secret's password."
  }
}

variable "kafka_sasl_mechanism" {
  description = "SASL mechanism when input_source = \"kafka\" (--kafkaSaslMechanism)."
  type        = string
  default     = "SCRAM-SHA-512"

  validation {
    condition     = contains(["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"], var.kafka_sasl_mechanism)
    error_message = "kafka_sasl_mechanism must be PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512."
  }
}

variable "kafka_password_secret_id" {
  description = "Existing Secret Manager secret (projects/P/secrets/S) holding the SASL password. Empty with input_source = \"kafka\" = create one from kafka_password."
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
  description = "gs:// path of the Flex Template spec file (terraform/build-template.sh writes it). Empty = gs://BUCKET/templates/tidemark.json, where the build script writes it."
  type        = string
  default     = ""

  validation {
    condition     = var.container_spec_gcs_path == "" || startswith(var.container_spec_gcs_path, "gs://")
    error_message = "container_spec_gcs_path must be empty or a gs:// path to the template spec JSON."
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
  description = "Subnetwork self link or regions/R/subnetworks/S. Empty = the default network."
  type        = string
  default     = ""
}

variable "use_public_ips" {
  description = "Give workers public IPs. False needs Private Google Access (and a NAT for an outside Kafka)."
  type        = bool
  default     = false
}

variable "extra_parameters" {
  description = "More pipeline flags for the template (name without '--' => value), e.g. { maxOutOfOrderness = \"PT30S\" }."
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
