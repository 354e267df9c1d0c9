#!/usr/bin/env node
// Proves the checker fails: copies the configuration to a temp folder, breaks it in one way at a
// time, and asserts that check.mjs reports that break (and exits 1 from the command line), and
// that it passes the real configuration.
//
//   node selftest.mjs [DIR]     (DIR defaults to the terraform/ folder above this script)

import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { check } from "./check.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const source = resolve(process.argv[2] ?? join(here, ".."));

// Each case: one edit (file, text to find, replacement) or a new file, and the message expected.
const CASES = [
  {
    name: "wrong argument name",
    edit: ["bigquery.tf", "max_staleness       = var.max_staleness", "max_stalenes        = var.max_staleness"],
    expect: 'resource "google_bigquery_table" "tidemark": unknown argument or block "max_stalenes" (did you mean "max_staleness"?)',
  },
  {
    name: "wrong argument name in a nested block",
    edit: ["bigquery.tf", "columns = [each.value.primary_key]", "column = [each.value.primary_key]"],
    expect: 'resource "google_bigquery_table" "tidemark" > table_constraints > primary_key: unknown argument or block "column"',
  },
  {
    name: "missing required argument",
    edit: ["dataflow.tf", "  container_spec_gcs_path = local.container_spec_gcs_path\n", ""],
    expect: 'resource "google_dataflow_flex_template_job" "tidemark": missing required argument "container_spec_gcs_path"',
  },
  {
    name: "dangling resource reference",
    edit: ["outputs.tf", "value       = google_service_account.worker.email", "value       = google_service_account.workers.email"],
    expect: 'output "service_account": reference to undeclared resource "google_service_account.workers"',
  },
  {
    name: "unknown attribute of a resource",
    edit: ["outputs.tf", "google_dataflow_flex_template_job.tidemark.job_id", "google_dataflow_flex_template_job.tidemark.jobid"],
    expect: 'output "job_id": "google_dataflow_flex_template_job.tidemark" has no attribute "jobid"',
  },
  {
    name: "undeclared variable",
    edit: ["storage.tf", "source = \"${local.model_source_dir}/${var.model_name}\"", "source = \"${local.model_source_dir}/${var.model_nmae}\""],
    expect: 'resource "google_storage_bucket_object" "model": reference to undeclared variable "var.model_nmae"',
  },
  {
    name: "undeclared local",
    edit: ["dataflow.tf", "temp_location           = local.temp_location", "temp_location           = local.temp_locaton"],
    expect: 'resource "google_dataflow_flex_template_job" "tidemark": reference to undeclared local value "local.temp_locaton"',
  },
  {
    name: "misspelt argument of the time provider's resource",
    edit: ["iam.tf", "create_duration = var.iam_propagation_wait", "create_duraton = var.iam_propagation_wait"],
    expect: 'resource "time_sleep" "iam_propagation": unknown argument or block "create_duraton"',
  },
  {
    name: "beta-only resource without provider = google-beta",
    edit: ["dataflow.tf", "  provider = google-beta\n", ""],
    expect: 'provider google 6.50.0 has no resource type "google_dataflow_flex_template_job" (it is in google-beta: set provider = google-beta)',
  },
  {
    name: "secret variable not sensitive",
    edit: ["variables.tf", "  sensitive   = true\n  ephemeral   = true\n", "  ephemeral   = true\n"],
    expect: 'variable "kafka_password": looks like a secret; mark it sensitive = true',
  },
  {
    name: "injected file with an unknown resource type",
    add: ["broken.tf", 'resource "google_bigquery_tabel" "x" {\n  dataset_id = "d"\n  table_id   = "t"\n}\n'],
    expect: 'broken.tf: resource "google_bigquery_tabel" "x": provider google 6.50.0 has no resource type "google_bigquery_tabel"',
  },
  {
    name: "injected file that does not parse",
    add: ["broken.tf", 'resource "google_pubsub_topic" "x" {\n  name = \n}\n'],
    expect: "broken.tf: HCL does not parse",
  },
  {
    name: "file() per instance without a local map to check it against",
    edit: ["bigquery.tf", "  for_each = local.tables\n", "  for_each = toset([\"decisions\"])\n"],
    expect: 'bigquery.tf: resource "google_bigquery_table" "tidemark": file() with ${each.key} needs for_each = a local map',
  },
  {
    name: "missing schema file",
    edit: ["bigquery.tf", "    too_late = {", "    toolate = {"],
    expect: 'bigquery.tf: file("${path.module}/schemas/toolate.json") does not exist',
  },
];

let passed = 0;
let failed = 0;
const report = (ok, name, detail) => {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? "ok  " : "FAIL"} ${name}${detail ? `\n       ${detail}` : ""}`);
};

function copy() {
  const dir = mkdtempSync(join(tmpdir(), "tf-selftest-"));
  const skip = [join(source, "check"), join(source, ".terraform")];
  cpSync(source, dir, { recursive: true, filter: (p) => !skip.some((s) => p === s || p.startsWith(`${s}/`)) });
  return dir;
}

function breakCopy(dir, c) {
  if (c.add) {
    writeFileSync(join(dir, c.add[0]), c.add[1]);
    return;
  }
  const [file, find, replace] = c.edit;
  const text = readFileSync(join(dir, file), "utf8");
  if (!text.includes(find)) throw new Error(`selftest is stale: ${file} no longer contains ${JSON.stringify(find)}`);
  writeFileSync(join(dir, file), text.replace(find, replace));
}

// The real configuration passes.
{
  const { errors } = await check(source);
  report(errors.length === 0, "real configuration passes", errors.join("\n       "));
}

// Each break is reported with its message.
for (const c of CASES) {
  const dir = copy();
  try {
    breakCopy(dir, c);
    const { errors } = await check(dir);
    const hit = errors.some((e) => e.includes(c.expect));
    report(hit, c.name, hit ? "" : `expected an error containing:\n         ${c.expect}\n       got:\n         ${errors.join("\n         ") || "(no errors)"}`);
  } catch (e) {
    report(false, c.name, String(e.message ?? e));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// And from the command line a broken copy exits 1 with the error on stderr.
{
  const dir = copy();
  try {
    breakCopy(dir, CASES[0]);
    let status = 0;
    let stderr = "";
    try {
      execFileSync(process.execPath, [join(here, "check.mjs"), dir], { stdio: "pipe" });
    } catch (e) {
      status = e.status;
      stderr = String(e.stderr);
    }
    const ok = status === 1 && stderr.includes(CASES[0].expect);
    report(ok, "command line exits 1 and prints the error", ok ? "" : `status ${status}, stderr:\n${stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`terraform check selftest: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
