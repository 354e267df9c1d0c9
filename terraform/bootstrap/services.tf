# The Google APIs the job, its resources and the build use. Enabled once here, before the main
# stage creates anything; disable_on_destroy = false: destroying Tidemark must not switch off an
# API other workloads of the project may use. Service Usage and Cloud Resource Manager are what
# Terraform itself calls (enabling APIs; project IAM and the project data source): a new project
# may have neither, and a service account running Terraform in it then fails on its first call.
# terraform/README.md enables those two with gcloud before the first apply; listing them here
# keeps them on.

locals {
  services = toset(concat(
    [
      "artifactregistry.googleapis.com",     # the Flex Template image
      "bigquery.googleapis.com",             # the dataset and tables
      "bigquerystorage.googleapis.com",      # the Storage Write API the sink writes with
      "cloudresourcemanager.googleapis.com", # project IAM grants, the project data source
      "compute.googleapis.com",              # the workers' VMs
      "dataflow.googleapis.com",             # the job
      "iam.googleapis.com",                  # the worker service account and the custom role
      "pubsub.googleapis.com",               # the input topic and subscription
      "secretmanager.googleapis.com",        # the Kafka password secret
      "serviceusage.googleapis.com",         # enabling APIs, service identities
      "storage.googleapis.com",              # the bucket
    ],
    local.kms_key_name == null ? [] : ["cloudkms.googleapis.com"],
  ))
}

resource "google_project_service" "tidemark" {
  for_each           = local.services
  project            = var.project_id
  service            = each.value
  disable_on_destroy = false
}
