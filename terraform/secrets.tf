# Secret Manager: the Kafka SASL password, read by the workers at start-up
# (--kafkaPasswordSecret). Either an existing secret (kafka_password_secret_id) or one created
# here from kafka_password, written through the write-only secret_data_wo so that the password is
# in neither the plan nor the state.

locals {
  create_kafka_secret = local.use_kafka && var.kafka_password_secret_id == ""
}

resource "google_secret_manager_secret" "kafka_password" {
  count     = local.create_kafka_secret ? 1 : 0
  secret_id = "${var.name_prefix}-kafka-password"
  labels    = local.labels

  replication {
    auto {}
  }
}

resource "google_secret_manager_secret_version" "kafka_password" {
  count                  = local.create_kafka_secret ? 1 : 0
  secret                 = google_secret_manager_secret.kafka_password[0].id
  secret_data_wo         = var.kafka_password
  secret_data_wo_version = var.kafka_password_version
}

locals {
  # projects/P/secrets/S, or "" when the job reads Pub/Sub.
  kafka_secret_id = !local.use_kafka ? "" : (
    local.create_kafka_secret ? google_secret_manager_secret.kafka_password[0].id : var.kafka_password_secret_id
  )
  # projects/P/secrets/S/versions/V, what --kafkaPasswordSecret takes.
  kafka_secret_version = !local.use_kafka ? "" : (
    local.create_kafka_secret ? google_secret_manager_secret_version.kafka_password[0].name : "${var.kafka_password_secret_id}/versions/${var.kafka_password_secret_version}"
  )
}
