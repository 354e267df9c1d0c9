# Secret Manager: the Kafka SASL password, read by the workers at start-up
# (--kafkaPasswordSecret). Either an existing secret (kafka_password_secret_id) or one created
# here from kafka_password, written through the write-only secret_data_wo so that the password is
# in neither the plan nor the state. Every secret the job reads (this one, the user name's, and
# any store or store password passed in extra_parameters) gets an accessor grant in iam.tf.

locals {
  password_auth       = local.use_kafka && var.kafka_auth == "password"
  create_kafka_secret = local.password_auth && var.kafka_password_secret_id == ""
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
  # projects/P/secrets/S/versions/V, what --kafkaPasswordSecret takes; "" without a password.
  kafka_secret_version = !local.password_auth ? "" : (
    local.create_kafka_secret ? google_secret_manager_secret_version.kafka_password[0].name : "${var.kafka_password_secret_id}/versions/${var.kafka_password_secret_version}"
  )

  # Every secret the job reads, by the parameter that names it: each parameter named *Secret is a
  # secret version projects/P/secrets/S/versions/V, granted on its secret projects/P/secrets/S.
  job_secrets = {
    for name, version in local.job_parameters :
    name => regex("^(projects/[^/]+/secrets/[^/]+)/versions/[^/]+$", version)[0]
    if endswith(name, "Secret")
  }
}
