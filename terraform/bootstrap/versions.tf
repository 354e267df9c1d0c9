# Terraform and provider versions of the bootstrap stage: the same constraints as the main stage
# (terraform/versions.tf), which the offline checker (../check/) validates against.
terraform {
  required_version = ">= 1.11"

  required_providers {
    google = {
      source  = "hashicorp/google"
      version = "~> 6.50"
    }
  }
}

provider "google" {
  project = var.project_id
  region  = var.region
}
