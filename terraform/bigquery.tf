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

resource "google_bigquery_table" "decisions" {
  dataset_id          = google_bigquery_dataset.tidemark.dataset_id
  table_id            = local.table_names.decisions
  description         = "One row per account and window: the latest fired pane, upserted by decision_id."
  labels              = local.labels
  deletion_protection = var.deletion_protection
  schema              = file("${path.module}/schemas/decisions.json")
  max_staleness       = var.max_staleness
  clustering          = ["decision_id"]

  table_constraints {
    primary_key {
      columns = ["decision_id"]
    }
  }
}

resource "google_bigquery_table" "dead_letters" {
  dataset_id          = google_bigquery_dataset.tidemark.dataset_id
  table_id            = local.table_names.dead_letters
  description         = "Records that failed a step, with the original bytes, reason, step and exception; upserted by dead_letter_id."
  labels              = local.labels
  deletion_protection = var.deletion_protection
  schema              = file("${path.module}/schemas/dead_letters.json")
  max_staleness       = var.max_staleness
  clustering          = ["dead_letter_id"]

  table_constraints {
    primary_key {
      columns = ["dead_letter_id"]
    }
  }
}

resource "google_bigquery_table" "duplicates" {
  dataset_id          = google_bigquery_dataset.tidemark.dataset_id
  table_id            = local.table_names.duplicates
  description         = "Events dropped as duplicates; upserted by duplicate_id."
  labels              = local.labels
  deletion_protection = var.deletion_protection
  schema              = file("${path.module}/schemas/duplicates.json")
  max_staleness       = var.max_staleness
  clustering          = ["duplicate_id"]

  table_constraints {
    primary_key {
      columns = ["duplicate_id"]
    }
  }
}

resource "google_bigquery_table" "too_late" {
  dataset_id          = google_bigquery_dataset.tidemark.dataset_id
  table_id            = local.table_names.too_late
  description         = "Events that arrived after the allowed lateness; upserted by too_late_id."
  labels              = local.labels
  deletion_protection = var.deletion_protection
  schema              = file("${path.module}/schemas/too_late.json")
  max_staleness       = var.max_staleness
  clustering          = ["too_late_id"]

  table_constraints {
    primary_key {
      columns = ["too_late_id"]
    }
  }
}

resource "google_bigquery_table" "evaluations" {
  dataset_id          = google_bigquery_dataset.tidemark.dataset_id
  table_id            = local.table_names.evaluations
  description         = "Online evaluation per model version, role and window of label time, the latest pane; upserted by evaluation_id with the pane index as sequence number."
  labels              = local.labels
  deletion_protection = var.deletion_protection
  schema              = file("${path.module}/schemas/evaluations.json")
  max_staleness       = var.max_staleness
  clustering          = ["evaluation_id"]

  table_constraints {
    primary_key {
      columns = ["evaluation_id"]
    }
  }
}

resource "google_bigquery_table" "unmatched_labels" {
  dataset_id          = google_bigquery_dataset.tidemark.dataset_id
  table_id            = local.table_names.unmatched_labels
  description         = "Labels no decision could be judged by; upserted by label_id."
  labels              = local.labels
  deletion_protection = var.deletion_protection
  schema              = file("${path.module}/schemas/unmatched_labels.json")
  max_staleness       = var.max_staleness
  clustering          = ["label_id"]

  table_constraints {
    primary_key {
      columns = ["label_id"]
    }
  }
}

resource "google_bigquery_table" "label_duplicates" {
  dataset_id          = google_bigquery_dataset.tidemark.dataset_id
  table_id            = local.table_names.label_duplicates
  description         = "Labels dropped as duplicates; upserted by duplicate_id."
  labels              = local.labels
  deletion_protection = var.deletion_protection
  schema              = file("${path.module}/schemas/label_duplicates.json")
  max_staleness       = var.max_staleness
  clustering          = ["duplicate_id"]

  table_constraints {
    primary_key {
      columns = ["duplicate_id"]
    }
  }
}

resource "google_bigquery_table" "label_dead_letters" {
  dataset_id          = google_bigquery_dataset.tidemark.dataset_id
  table_id            = local.table_names.label_dead_letters
  description         = "Labels that failed a step and rows the model-loop tables rejected, with the original bytes, reason, step and exception; upserted by dead_letter_id."
  labels              = local.labels
  deletion_protection = var.deletion_protection
  schema              = file("${path.module}/schemas/label_dead_letters.json")
  max_staleness       = var.max_staleness
  clustering          = ["dead_letter_id"]

  table_constraints {
    primary_key {
      columns = ["dead_letter_id"]
    }
  }
}

resource "google_bigquery_table" "drift_alarms" {
  dataset_id          = google_bigquery_dataset.tidemark.dataset_id
  table_id            = local.table_names.drift_alarms
  description         = "Drift alarms of the scores and the labelled error rate per model version; upserted by drift_alarm_id."
  labels              = local.labels
  deletion_protection = var.deletion_protection
  schema              = file("${path.module}/schemas/drift_alarms.json")
  max_staleness       = var.max_staleness
  clustering          = ["drift_alarm_id"]

  table_constraints {
    primary_key {
      columns = ["drift_alarm_id"]
    }
  }
}
