# Network: where the launcher VM and the workers run. Workers have private IPs only by default
# (use_public_ips = false), so their subnetwork needs Private Google Access to reach Google's
# APIs (the launcher pulls the template image from Artifact Registry; workers call Dataflow,
# Pub/Sub, BigQuery, Cloud Storage and Secret Manager). The default network cannot be relied on:
# its subnets have Private Google Access off, and an organization policy
# (compute.skipDefaultNetworkCreation) may mean it does not exist. So, unless `subnetwork` names
# an existing one (a Shared VPC's, for example), this stage creates a VPC with one subnetwork in
# the region, Private Google Access on, the firewall rule Dataflow needs between its VMs, and,
# when the job reads a Kafka outside Google, a Cloud NAT for the way out.

locals {
  create_network = var.subnetwork == ""

  # What the job's subnetwork argument gets: the created subnetwork's self link, or the given one.
  subnetwork = local.create_network ? google_compute_subnetwork.workers[0].self_link : var.subnetwork

  # Cloud NAT: on request, or by default when private workers read a Kafka that is not Google's
  # (Managed Service for Apache Kafka is reached inside the VPC, through Private Service Connect).
  cloud_nat = local.create_network && (var.cloud_nat == null ? (
    local.use_kafka && var.kafka_auth != "managed_kafka" && !var.use_public_ips
  ) : var.cloud_nat)

  # A given subnetwork's project (the Shared VPC host), region and name, from its self link or
  # its projects/P/regions/R/subnetworks/S path; empty when this stage creates the network.
  subnetwork_parts = local.create_network ? null : regex(
    "projects/(?P<project>[^/]+)/regions/(?P<region>[^/]+)/subnetworks/(?P<name>[^/]+)$",
    var.subnetwork,
  )
}

resource "google_compute_network" "tidemark" {
  count                   = local.create_network ? 1 : 0
  name                    = "${var.name_prefix}-net"
  description             = "Tidemark Dataflow workers and the Flex Template launcher."
  auto_create_subnetworks = false
}

resource "google_compute_subnetwork" "workers" {
  count         = local.create_network ? 1 : 0
  name          = "${var.name_prefix}-workers"
  region        = var.region
  network       = google_compute_network.tidemark[0].id
  ip_cidr_range = var.subnetwork_cidr
  # Private workers and the launcher reach Google's APIs (image pull, Dataflow, BigQuery, ...).
  private_ip_google_access = true
}

# Dataflow's VMs carry the network tag "dataflow" and talk to each other on TCP 12345 (streaming)
# and 12346 (batch). Egress is open by the implied rule of every VPC.
resource "google_compute_firewall" "dataflow_internal" {
  count       = local.create_network ? 1 : 0
  name        = "${var.name_prefix}-dataflow-internal"
  network     = google_compute_network.tidemark[0].id
  description = "Dataflow workers to Dataflow workers, TCP 12345-12346."
  direction   = "INGRESS"
  source_tags = ["dataflow"]
  target_tags = ["dataflow"]

  allow {
    protocol = "tcp"
    ports    = ["12345-12346"]
  }
}

# The way out for private workers to a Kafka outside Google (the launcher lists the topic's
# partitions at launch, so it needs the same route as the workers).
resource "google_compute_router" "nat" {
  count   = local.cloud_nat ? 1 : 0
  name    = "${var.name_prefix}-nat-router"
  region  = var.region
  network = google_compute_network.tidemark[0].id
}

resource "google_compute_router_nat" "nat" {
  count                              = local.cloud_nat ? 1 : 0
  name                               = "${var.name_prefix}-nat"
  router                             = google_compute_router.nat[0].name
  region                             = var.region
  nat_ip_allocate_option             = "AUTO_ONLY"
  source_subnetwork_ip_ranges_to_nat = "LIST_OF_SUBNETWORKS"

  subnetwork {
    name                    = google_compute_subnetwork.workers[0].id
    source_ip_ranges_to_nat = ["ALL_IP_RANGES"]
  }
}

# A Shared VPC's subnetwork: the job's service account and Dataflow's service agent use it. Only
# with grant_shared_vpc_network_user, for an operator who may set IAM on the host project's
# subnetwork; otherwise the host project's admin grants the same two bindings.
resource "google_compute_subnetwork_iam_member" "shared_vpc_network_user" {
  for_each = !local.create_network && var.grant_shared_vpc_network_user ? {
    worker   = local.worker_member
    dataflow = "serviceAccount:service-${data.google_project.this.number}@dataflow-service-producer-prod.iam.gserviceaccount.com"
  } : {}
  project    = local.subnetwork_parts.project
  region     = local.subnetwork_parts.region
  subnetwork = local.subnetwork_parts.name
  role       = "roles/compute.networkUser"
  member     = each.value
}
