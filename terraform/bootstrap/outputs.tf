# What the build script and the main stage take from this stage.

output "bucket" {
  description = "The bucket's name; the main stage's bucket_name when it is not the default."
  value       = google_storage_bucket.tidemark.name
}

output "template_specs" {
  description = "gs:// folder the build writes each Flex Template spec to, as tidemark-<TAG>.json; the main stage runs the one its template_version names."
  value       = "${google_storage_bucket.tidemark.url}/templates"
}

output "template_image" {
  description = "The Flex Template image, without its tag: REGION-docker.pkg.dev/PROJECT/REPOSITORY/tidemark-flex."
  value       = "${var.region}-docker.pkg.dev/${var.project_id}/${google_artifact_registry_repository.tidemark.repository_id}/tidemark-flex"
}

output "template_image_repository" {
  description = "projects/P/locations/L/repositories/R of the image; the main stage's default template_image_repository."
  value       = google_artifact_registry_repository.tidemark.id
}
