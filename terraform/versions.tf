# Terraform and provider versions. The offline checker (check/) validates this configuration
# against the schemas of hashicorp/google and hashicorp/google-beta 6.50.0, so the constraints
# below allow 6.50 and later 6.x releases only (and hashicorp/time 0.13, checked against 0.13.1).
terraform {
  # 1.11: write-only arguments (secret_data_wo) and ephemeral variables keep the Kafka password
  # out of the plan and the state.
  required_version = ">= 1.11"

  required_providers {
    google = {
      source  = "hashicorp/google"
      version = "~> 6.50"
    }
    # google_dataflow_flex_template_job exists only in the beta provider.
    google-beta = {
      source  = "hashicorp/google-beta"
      version = "~> 6.50"
    }
    # time_sleep: the wait after the IAM grants (iam.tf).
    time = {
      source  = "hashicorp/time"
      version = "~> 0.13"
    }
  }
}

provider "google" {
  project = var.project_id
  region  = var.region
}

provider "google-beta" {
  project = var.project_id
  region  = var.region
}
