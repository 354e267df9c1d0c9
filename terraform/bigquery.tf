# BigQuery: the dataset and the tables the job writes through the Storage Write API with CDC
# upserts: the four outputs and the model loop's five (evaluations, unmatched labels, the labels'
# duplicates and dead letters, drift alarms). CDC needs a primary key on every table (BigQuery does not enforce it; the pipeline's
# deterministic ids make it true) and, to keep queries cheap, max_staleness. The job writes with
# CREATE_NEVER, so the tables and their schemas come from here; the schema files and the table
# names (schemas/tables.json) are generated from the pipeline spec: ./tidemark schemas --spec=SPEC
# --output=terraform/schemas.

locals {
  dataset_location = var.dataset_location == "" ? var.region : var.dataset_location
  table_names      = jsondecode(file("${path.module}/schemas/tables.json"))

  # Each table by its role in schemas/tables.json (which names it, and names its schema file
  # schemas/<role>.json): the primary key, which is also the clustering column, and what it holds.
  tables = {
    decisions = {
      primary_key = "decision_id"
      description = "One row per account and window: the latest fired pane, upserted by decision_id."
    }
    dead_letters = {
      primary_key = "dead_letter_id"
      description = "Records that failed a step, with the original bytes, reason, step and exception; upserted by dead_letter_id."
    }
    duplicates = {
      primary_key = "duplicate_id"
      description = "Events dropped as duplicates; upserted by duplicate_id."
    }
    too_late = {
      primary_key = "too_late_id"
      description = "Events that arrived after the allowed lateness; upserted by too_late_id."
    }
    evaluations = {
      primary_key = "evaluation_id"
      description = "Online evaluation per model version, role and window of label time, the latest pane; upserted by evaluation_id with the pane index as sequence number."
    }
    unmatched_labels = {
      primary_key = "label_id"
      description = "Labels no decision could be judged by; upserted by label_id."
    }
    label_duplicates = {
      primary_key = "duplicate_id"
      description = "Labels dropped as duplicates; upserted by duplicate_id."
    }
    label_dead_letters = {
      primary_key = "dead_letter_id"
      description = "Labels that failed a step and rows the model-loop tables rejected, with the original bytes, reason, step and exception; upserted by dead_letter_id."
    }
    drift_alarms = {
      primary_key = "drift_alarm_id"
      description = "Drift alarms of the scores and the labelled error rate per model version; upserted by drift_alarm_id."
    }
  }
}

resource "google_bigquery_dataset" "tidemark" {
  dataset_id  = var.dataset_id
  location    = local.dataset_location
  description = "Tidemark decisions and the records the pipeline set aside."
  labels      = local.labels

  dynamic "default_encryption_configuration" {
    for_each = local.kms_key_name == null ? [] : [local.kms_key_name]
    content {
      kms_key_name = default_encryption_configuration.value
    }
  }

  depends_on = [google_kms_crypto_key_iam_member.service_agents]
}

resource "google_bigquery_table" "tidemark" {
  for_each = local.tables

  dataset_id          = google_bigquery_dataset.tidemark.dataset_id
  table_id            = local.table_names[each.key]
  description         = each.value.description
  labels              = local.labels
  deletion_protection = var.deletion_protection
  schema              = file("${path.module}/schemas/${each.key}.json")
  max_staleness       = var.max_staleness
  clustering          = [each.value.primary_key]

  table_constraints {
    primary_key {
      columns = [each.value.primary_key]
    }
  }
}
