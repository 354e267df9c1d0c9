# Pub/Sub: the topic producers publish CloudEvents to and the subscription the job reads
# (--pubsubSubscription); the topic labels are published to and the subscription the job reads
# them from beside the events (--pubsubLabelsSubscription, with Pub/Sub input). Created for
# input_source = "kafka" too: they cost nothing idle and keep the outputs stable.

resource "google_pubsub_topic" "events" {
  name                       = "${var.name_prefix}-events"
  kms_key_name               = local.kms_key_name
  message_retention_duration = "604800s"
  labels                     = local.labels

  depends_on = [google_kms_crypto_key_iam_member.service_agents]
}

resource "google_pubsub_subscription" "events" {
  name                       = "${var.name_prefix}-events-dataflow"
  topic                      = google_pubsub_topic.events.id
  ack_deadline_seconds       = var.subscription_ack_deadline_seconds
  message_retention_duration = "604800s"
  labels                     = local.labels

  # A streaming job's subscription must not disappear while the job is stopped.
  expiration_policy {
    ttl = ""
  }
}

# Labels arrive hours to days after their events: the same seven days of retention.
resource "google_pubsub_topic" "labels" {
  name                       = "${var.name_prefix}-labels"
  kms_key_name               = local.kms_key_name
  message_retention_duration = "604800s"
  labels                     = local.labels

  depends_on = [google_kms_crypto_key_iam_member.service_agents]
}

resource "google_pubsub_subscription" "labels" {
  name                       = "${var.name_prefix}-labels-dataflow"
  topic                      = google_pubsub_topic.labels.id
  ack_deadline_seconds       = var.subscription_ack_deadline_seconds
  message_retention_duration = "604800s"
  labels                     = local.labels

  expiration_policy {
    ttl = ""
  }
}
