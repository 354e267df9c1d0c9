# Inputs of the bootstrap stage. project_id, region and name_prefix must be the values the main
# stage (terraform/) gets: both derive the bucket's and the repository's names from them.

variable "project_id" {
  description = "Google Cloud project that holds every resource and runs the job."
  type        = string
}

variable "region" {
  description = "Region of the bucket and the Artifact Registry repository (the job's region)."
  type        = string
  default     = "europe-west1"
}

variable "name_prefix" {
  description = "Prefix of resource names; the main stage's name_prefix."
  type        = string
  default     = "tidemark"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{2,19}$", var.name_prefix))
    error_message = "name_prefix must be 3-20 characters: lower-case letters, digits and '-', starting with a letter."
  }
}

variable "labels" {
  description = "Labels applied to the bucket and the repository."
  type        = map(string)
  default     = {}
}

variable "bucket_name" {
  description = "Bucket for staging/, temp/, models/ and templates/. Empty = \"<project_id>-<name_prefix>\"; the main stage's bucket_name."
  type        = string
  default     = ""
}

variable "kms_key_name" {
  description = "Cloud KMS key (projects/P/locations/L/keyRings/R/cryptoKeys/K) for the bucket's objects. Empty = Google-managed encryption."
  type        = string
  default     = ""

  validation {
    condition     = var.kms_key_name == "" || can(regex("^projects/[^/]+/locations/[^/]+/keyRings/[^/]+/cryptoKeys/[^/]+$", var.kms_key_name))
    error_message = "kms_key_name must be empty or projects/P/locations/L/keyRings/R/cryptoKeys/K."
  }
}

variable "grant_kms_to_service_agents" {
  description = "With kms_key_name set: grant the Cloud Storage service agent Encrypter/Decrypter on the key. Set false when the key's owner grants it."
  type        = bool
  default     = true
}

variable "temp_retention_days" {
  description = "Objects under temp/ older than this are deleted (staging/ is kept: a running job's new workers read it)."
  type        = number
  default     = 14
}

variable "noncurrent_version_retention_days" {
  description = "Overwritten or deleted object versions (e.g. a replaced model) are kept this long."
  type        = number
  default     = 30
}

variable "deletion_protection" {
  description = "Keep the bucket's objects on terraform destroy (false: destroy the bucket with them)."
  type        = bool
  default     = true
}

locals {
  kms_key_name = var.kms_key_name == "" ? null : var.kms_key_name
  labels       = merge({ app = "tidemark" }, var.labels)
}
