# Artifact Registry: the Docker repository of the Flex Template image (terraform/build-template.sh
# pushes it). The worker service account, which also runs the template's launcher, gets reader on
# it in the main stage.

resource "google_artifact_registry_repository" "tidemark" {
  location      = var.region
  repository_id = var.name_prefix
  format        = "DOCKER"
  description   = "Tidemark Dataflow Flex Template images."
  labels        = local.labels

  depends_on = [google_project_service.tidemark]
}
