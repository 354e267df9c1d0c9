# Cloud Storage: one bucket for the job's staging/ and temp/ files, models/ and the Flex Template
# spec under templates/. Created here, before the main stage, because the template spec must be in
# it before the job can be created. Uniform bucket-level access (IAM only, no ACLs), public access
# prevention enforced, versioning on so a replaced model can be restored; old temp files and old
# versions are deleted by lifecycle rules. staging/ is kept: a running job's new and replacement
# workers fetch their files from it, and the runner names staged files by content hash, so
# relaunching the same build adds nothing.

locals {
  bucket_name = var.bucket_name == "" ? "${var.project_id}-${var.name_prefix}" : var.bucket_name
}

data "google_storage_project_service_account" "gcs" {
  project = var.project_id

  depends_on = [google_project_service.tidemark]
}

# CMEK: the Cloud Storage service agent encrypts and decrypts the bucket's objects.
resource "google_kms_crypto_key_iam_member" "storage_service_agent" {
  count         = local.kms_key_name != null && var.grant_kms_to_service_agents ? 1 : 0
  crypto_key_id = var.kms_key_name
  role          = "roles/cloudkms.cryptoKeyEncrypterDecrypter"
  member        = "serviceAccount:${data.google_storage_project_service_account.gcs.email_address}"
}

resource "google_storage_bucket" "tidemark" {
  name                        = local.bucket_name
  location                    = var.region
  storage_class               = "STANDARD"
  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  force_destroy               = !var.deletion_protection
  labels                      = local.labels

  versioning {
    enabled = true
  }

  dynamic "encryption" {
    for_each = local.kms_key_name == null ? [] : [local.kms_key_name]
    content {
      default_kms_key_name = encryption.value
    }
  }

  lifecycle_rule {
    condition {
      age            = var.temp_retention_days
      matches_prefix = ["temp/"]
    }
    action {
      type = "Delete"
    }
  }

  lifecycle_rule {
    condition {
      days_since_noncurrent_time = var.noncurrent_version_retention_days
      with_state                 = "ARCHIVED"
    }
    action {
      type = "Delete"
    }
  }

  depends_on = [google_project_service.tidemark, google_kms_crypto_key_iam_member.storage_service_agent]
}
