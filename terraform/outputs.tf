# Outputs, each named after the pipeline flag it feeds (snake_case of the flag), so a run by hand
# is: --pubsubSubscription=$(terraform output -raw pubsub_subscription) and so on.

output "project" {
  description = "--project"
  value       = var.project_id
}

output "region" {
  description = "--region"
  value       = var.region
}

output "temp_location" {
  description = "--tempLocation (gs://BUCKET/temp)"
  value       = local.temp_location
}

output "staging_location" {
  description = "--stagingLocation (gs://BUCKET/staging)"
  value       = local.staging_location
}

output "service_account" {
  description = "--serviceAccount (the worker service account's email)"
  value       = google_service_account.worker.email
}

output "subnetwork" {
  description = "--subnetwork (the created subnetwork's self link, or the given one); a Managed Kafka cluster's network configuration names it."
  value       = local.subnetwork
}

output "pubsub_subscription" {
  description = "--pubsubSubscription (projects/P/subscriptions/S)"
  value       = local.pubsub_subscription
}

output "pubsub_topic" {
  description = "--pubsubTopic (projects/P/topics/T): the topic producers publish CloudEvents to. The job reads --pubsubSubscription; give it this instead to read through a subscription the runner creates (exactly one of the two)."
  value       = google_pubsub_topic.events.id
}

output "pubsub_labels_subscription" {
  description = "--pubsubLabelsSubscription (projects/P/subscriptions/S): the job reads labels there beside a Pub/Sub source."
  value       = local.labels_subscription
}

output "pubsub_labels_topic" {
  description = "The topic producers publish labels to (structured-mode label CloudEvents with the ce-time attribute); the job reads them through --pubsubLabelsSubscription."
  value       = google_pubsub_topic.labels.id
}

output "bigquery_dataset" {
  description = "--bigQueryDataset (PROJECT:DATASET)"
  value       = local.bigquery_dataset
}

output "model_uri" {
  description = "--modelUri (gs://BUCKET/models/NAME); upload the model there before starting the job."
  value       = local.model_uri
}

output "kafka_password_secret" {
  description = "--kafkaPasswordSecret (projects/P/secrets/S/versions/V); empty when input_source = \"pubsub\". Names the secret, does not hold it."
  value       = local.kafka_secret_version
}

output "job_id" {
  description = "Dataflow job id of the running Flex Template job."
  value       = google_dataflow_flex_template_job.tidemark.job_id
}
