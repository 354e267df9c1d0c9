# Cloud Storage: the bootstrap stage's bucket (bootstrap/storage.tf: staging/, temp/, models/,
# templates/), found here by the same name, and the model the job scores with, uploaded with its
# sidecar under models/ before the job starts.

locals {
  bucket_name = var.bucket_name == "" ? "${var.project_id}-${var.name_prefix}" : var.bucket_name
  # The shipped models, unless model_source_dir names another folder.
  model_source_dir = var.model_source_dir == "" ? "${path.module}/../model/src/main/resources/models" : var.model_source_dir
}

data "google_storage_bucket" "tidemark" {
  name = local.bucket_name
}

resource "google_storage_bucket_object" "model" {
  bucket = data.google_storage_bucket.tidemark.name
  name   = "models/${var.model_name}"
  source = "${local.model_source_dir}/${var.model_name}"
}

# The sidecar names the model's engine, name, version, feature order and SHA-256; the job reads it
# next to the model file.
resource "google_storage_bucket_object" "model_sidecar" {
  bucket       = data.google_storage_bucket.tidemark.name
  name         = "models/${var.model_name}.json"
  source       = "${local.model_source_dir}/${var.model_name}.json"
  content_type = "application/json"
}
