#!/usr/bin/env node
// Offline check of the Terraform configuration against the google and google-beta provider
// schemas, for a machine where `terraform init/validate` cannot download providers.
//
//   node check.mjs [DIR]        (DIR defaults to the terraform/ folder above this script)
//
// It parses every *.tf in DIR with @cdktf/hcl2json (HashiCorp's HCL parser built to WASM) and
// reports, with file and resource:
//   - resource and data source types that the provider they use does not have
//     (google_dataflow_flex_template_job needs `provider = google-beta`);
//   - argument and block names the schema does not have, nested blocks included, and
//     missing required arguments and blocks;
//   - references to undeclared var.*, local.*, resources, data sources or attributes;
//   - unknown arguments of variable/output/provider blocks, file("${path.module}/...") paths
//     that do not exist, and password/secret/token variables that are not `sensitive`.
// It prints every error and exits 1 if there is one, 0 otherwise.

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import hcl from "@cdktf/hcl2json";
import { loadProvider } from "./schema.mjs";

const PROVIDER_PACKAGES = {
  google: "@cdktf/provider-google",
  "google-beta": "@cdktf/provider-google-beta",
  time: "@cdktf/provider-time",
};

const RESOURCE_META = new Set(["count", "for_each", "provider", "depends_on", "lifecycle", "provisioner", "connection"]);
const DATA_META = new Set(["count", "for_each", "provider", "depends_on", "lifecycle"]);
const VARIABLE_ARGS = new Set(["type", "default", "description", "sensitive", "nullable", "validation", "ephemeral"]);
const OUTPUT_ARGS = new Set(["value", "description", "sensitive", "depends_on", "precondition", "ephemeral"]);
const PROVIDER_META = new Set(["alias", "version"]);
const TOP_LEVEL = new Set(["terraform", "provider", "variable", "locals", "output", "resource", "data", "module", "moved", "import", "removed", "check"]);
// Roots of references that are not declarations of this module.
const BUILTIN_ROOTS = new Set(["path", "terraform", "count", "each", "self"]);
const SECRET_NAME = /(password|secret_data|token|private_key|credentials)/;

export async function check(dir) {
  const errors = [];
  const files = readdirSync(dir).filter((f) => f.endsWith(".tf")).sort();
  if (files.length === 0) errors.push(`${dir}: no .tf files`);

  // 1. Parse every file.
  const parsed = [];
  for (const f of files) {
    const text = readFileSync(join(dir, f), "utf8");
    try {
      parsed.push({ file: f, text, body: await hcl.parse(f, text) });
    } catch (e) {
      errors.push(`${f}: HCL does not parse: ${String(e.message ?? e).trim()}`);
    }
  }

  // 2. Collect declarations.
  const decl = { variables: new Map(), locals: new Set(), resources: new Map(), data: new Map(), modules: new Set(), providers: new Set() };
  for (const { file, body } of parsed) {
    for (const key of Object.keys(body)) {
      if (!TOP_LEVEL.has(key)) errors.push(`${file}: unknown top-level block "${key}"`);
    }
    for (const [name, [v]] of Object.entries(body.variable ?? {})) decl.variables.set(name, { file, v });
    for (const l of body.locals ?? []) for (const name of Object.keys(l)) decl.locals.add(name);
    for (const [type, byName] of Object.entries(body.resource ?? {})) {
      for (const name of Object.keys(byName)) decl.resources.set(`${type}.${name}`, { file, type });
    }
    for (const [type, byName] of Object.entries(body.data ?? {})) {
      for (const name of Object.keys(byName)) decl.data.set(`${type}.${name}`, { file, type });
    }
    for (const name of Object.keys(body.module ?? {})) decl.modules.add(name);
    for (const t of body.terraform ?? []) {
      for (const rp of t.required_providers ?? []) for (const name of Object.keys(rp)) decl.providers.add(name);
    }
  }

  // 3. Load the schemas of the providers the configuration requires.
  const providers = {};
  for (const name of decl.providers) {
    if (!PROVIDER_PACKAGES[name]) {
      errors.push(`terraform.required_providers: no schema package known for provider "${name}"`);
      continue;
    }
    providers[name] = loadProvider(PROVIDER_PACKAGES[name]);
  }
  if (!providers.google) errors.push(`terraform.required_providers must declare "google"`);

  // 4. Check each block.
  const refs = []; // { where, expr, extraRoots }
  for (const { file, body } of parsed) {
    for (const [name, [v]] of Object.entries(body.variable ?? {})) {
      const where = `${file}: variable "${name}"`;
      for (const k of Object.keys(v)) if (!VARIABLE_ARGS.has(k)) errors.push(`${where}: unknown argument "${k}"`);
      if (SECRET_NAME.test(name) && !/_(id|version)$/.test(name) && v.sensitive !== true) {
        errors.push(`${where}: looks like a secret; mark it sensitive = true`);
      }
      collect(refs, where, v.validation ?? [], new Set());
    }
    for (const [name, [o]] of Object.entries(body.output ?? {})) {
      const where = `${file}: output "${name}"`;
      for (const k of Object.keys(o)) if (!OUTPUT_ARGS.has(k)) errors.push(`${where}: unknown argument "${k}"`);
      if (!("value" in o)) errors.push(`${where}: missing required argument "value"`);
      collect(refs, where, o, new Set());
    }
    for (const l of body.locals ?? []) {
      for (const [name, value] of Object.entries(l)) collect(refs, `${file}: local.${name}`, value, new Set());
    }
    for (const [pname, blocks] of Object.entries(body.provider ?? {})) {
      for (const p of blocks) {
        const where = `${file}: provider "${pname}"`;
        const schema = providers[pname]?.provider?.schema;
        if (!decl.providers.has(pname)) errors.push(`${where}: not in terraform.required_providers`);
        if (schema) checkBody(errors, where, p, schema, PROVIDER_META);
        collect(refs, where, p, new Set());
      }
    }
    for (const kind of ["resource", "data"]) {
      for (const [type, byName] of Object.entries(body[kind] ?? {})) {
        for (const [name, [r]] of Object.entries(byName)) {
          const label = kind === "resource" ? `resource "${type}" "${name}"` : `data "${type}" "${name}"`;
          const where = `${file}: ${label}`;
          const providerName = providerOf(r, type);
          const provider = providers[providerName];
          if (!provider) {
            errors.push(`${where}: provider "${providerName}" is not in terraform.required_providers`);
            continue;
          }
          const entry = (kind === "resource" ? provider.resources : provider.dataSources).get(type);
          if (!entry) {
            const other = Object.entries(providers).find(
              ([n, p]) => n !== providerName && (kind === "resource" ? p.resources : p.dataSources).has(type),
            );
            errors.push(
              `${where}: provider ${providerName} ${provider.version} has no ${kind === "resource" ? "resource" : "data source"} type "${type}"` +
                (other ? ` (it is in ${other[0]}: set provider = ${other[0]})` : ""),
            );
            continue;
          }
          checkBody(errors, where, r, entry.schema, kind === "resource" ? RESOURCE_META : DATA_META);
          collect(refs, where, r, dynamicIterators(r));
        }
      }
    }
  }

  // 5. References.
  const schemaOf = (kind, type, providerName) => {
    const p = providers[providerName] ?? providers.google;
    return (kind === "resource" ? p?.resources : p?.dataSources)?.get(type);
  };
  const providerByDecl = new Map();
  for (const { body } of parsed) {
    for (const kind of ["resource", "data"]) {
      for (const [type, byName] of Object.entries(body[kind] ?? {})) {
        for (const [name, [r]] of Object.entries(byName)) providerByDecl.set(`${kind}:${type}.${name}`, providerOf(r, type));
      }
    }
  }
  const seen = new Set();
  for (const { where, expr, extraRoots } of refs) {
    for (const ref of await references(expr)) {
      const key = `${where}|${ref}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const msg = checkReference(ref, extraRoots, decl, schemaOf, providerByDecl, providers);
      if (msg) errors.push(`${where}: ${msg}`);
    }
  }

  // 6. file("${path.module}/...") must exist. A path with ${each.key} in a resource whose
  // for_each is a local map must exist for every key of that map.
  const localMaps = new Map();
  for (const { body } of parsed) {
    for (const l of body.locals ?? []) {
      for (const [name, value] of Object.entries(l)) {
        if (value && typeof value === "object" && !Array.isArray(value)) localMaps.set(name, Object.keys(value));
      }
    }
  }
  const filePath = /file\("\$\{path\.module\}\/([^"]+)"\)/g;
  const missing = (file, path) => {
    if (!existsSync(join(dir, path))) errors.push(`${file}: file("\${path.module}/${path}") does not exist`);
  };
  for (const { file, body } of parsed) {
    for (const [type, byName] of Object.entries(body.resource ?? {})) {
      for (const [name, [r]] of Object.entries(byName)) {
        const text = JSON.stringify(r).replaceAll('\\"', '"');
        const paths = [...text.matchAll(filePath)].map((m) => m[1]).filter((p) => p.includes("${each.key}"));
        if (paths.length === 0) continue;
        const local = /^\$\{local\.(\w+)\}$/.exec(typeof r.for_each === "string" ? r.for_each : "");
        const keys = local ? localMaps.get(local[1]) : undefined;
        if (!keys) {
          errors.push(`${file}: resource "${type}" "${name}": file() with \${each.key} needs for_each = a local map`);
          continue;
        }
        for (const p of paths) for (const key of keys) missing(file, p.replaceAll("${each.key}", key));
      }
    }
  }
  for (const { file, text } of parsed) {
    for (const m of text.matchAll(filePath)) {
      if (!m[1].includes("${each.key}")) missing(file, m[1]);
    }
  }

  return { errors, files, providers };
}

function providerOf(block, type) {
  if (typeof block.provider === "string") {
    const m = /^\$\{([A-Za-z0-9_-]+)(\.[A-Za-z0-9_-]+)?\}$/.exec(block.provider);
    if (m) return m[1];
  }
  return type.split("_")[0];
}

/** Checks a block body against a schema: unknown names, missing required ones, nested blocks. */
function checkBody(errors, where, body, schema, meta = new Set()) {
  for (const [key, value] of Object.entries(body)) {
    if (meta.has(key)) continue;
    if (key === "dynamic") {
      for (const [blockName, dyns] of Object.entries(value)) {
        const block = schema.blocks.get(blockName);
        if (!block) {
          errors.push(`${where}: unknown block "${blockName}" (in dynamic)${suggest(blockName, schema)}`);
          continue;
        }
        for (const d of dyns) {
          for (const k of Object.keys(d)) {
            if (!["for_each", "iterator", "labels", "content"].includes(k)) errors.push(`${where}: dynamic "${blockName}": unknown argument "${k}"`);
          }
          if (!("for_each" in d)) errors.push(`${where}: dynamic "${blockName}": missing for_each`);
          for (const c of d.content ?? []) checkBody(errors, `${where} > ${blockName}`, c, block.schema);
        }
      }
      continue;
    }
    if (schema.attributes.has(key)) continue;
    const block = schema.blocks.get(key);
    if (block) {
      const instances = Array.isArray(value) ? value : [value];
      for (const inst of instances) {
        if (inst && typeof inst === "object" && !Array.isArray(inst)) checkBody(errors, `${where} > ${key}`, inst, block.schema);
      }
      continue;
    }
    errors.push(`${where}: unknown argument or block "${key}"${suggest(key, schema)}`);
  }
  for (const [name, a] of schema.attributes) {
    if (a.required && !(name in body)) errors.push(`${where}: missing required argument "${name}"`);
  }
  for (const [name, b] of schema.blocks) {
    if (b.required && !(name in body) && !(body.dynamic && name in body.dynamic)) {
      errors.push(`${where}: missing required block "${name}"`);
    }
  }
}

function suggest(name, schema) {
  const all = [...schema.attributes.keys(), ...schema.blocks.keys()];
  let best = null;
  let bestD = Infinity;
  for (const c of all) {
    const d = distance(name, c);
    if (d < bestD) [best, bestD] = [c, d];
  }
  return best && bestD <= Math.max(2, Math.floor(name.length / 4)) ? ` (did you mean "${best}"?)` : "";
}

function distance(a, b) {
  const dp = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) dp[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      dp[i][j] = Math.min(dp[i - 1][j] + 1, dp[i][j - 1] + 1, dp[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
  }
  return dp[a.length][b.length];
}

/** Names a dynamic block's content may use as iterator roots. */
function dynamicIterators(body, out = new Set()) {
  if (!body || typeof body !== "object") return out;
  if (Array.isArray(body)) {
    for (const b of body) dynamicIterators(b, out);
    return out;
  }
  for (const [name, dyns] of Object.entries(body.dynamic ?? {})) {
    for (const d of dyns) {
      out.add(typeof d.iterator === "string" ? d.iterator : name);
      dynamicIterators(d.content, out);
    }
  }
  for (const v of Object.values(body)) if (v && typeof v === "object") dynamicIterators(v, out);
  return out;
}

/** Every string that holds an expression, with where it is. */
function collect(refs, where, value, extraRoots) {
  if (typeof value === "string") {
    if (value.includes("${")) refs.push({ where, expr: value, extraRoots });
  } else if (Array.isArray(value)) {
    for (const v of value) collect(refs, where, v, extraRoots);
  } else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "provider") continue; // checked as a provider name, not a reference
      collect(refs, where, v, extraRoots);
    }
  }
}

// References by HashiCorp's parser, plus a scan of the text for the kinds the parser's
// reference walk skips (inside templates nested in `for` expressions).
const SCAN = /(?<![\w.-])(var\.[A-Za-z_][\w-]*|local\.[A-Za-z_][\w-]*|data\.[a-z][a-z0-9_]*\.[A-Za-z_][\w-]*(?:\[[^\]]*\])?(?:\.[A-Za-z_]\w*)?|(?:google[a-z0-9_-]*|time)_[a-z0-9_]+\.[A-Za-z_][\w-]*(?:\[[^\]]*\])?(?:\.[A-Za-z_]\w*)?)/g;

async function references(expr) {
  const out = new Set();
  try {
    for (const r of await hcl.getReferencesInExpression("expr.tf", expr)) out.add(r.value);
  } catch {
    // fall back to the scan alone
  }
  for (const m of expr.matchAll(SCAN)) out.add(m[1]);
  return out;
}

function checkReference(ref, extraRoots, decl, schemaOf, providerByDecl) {
  // Index steps ([0], ["key"], or .0 as the parser spells them) are not names.
  const parts = ref
    .replace(/\[[^\]]*\]/g, "")
    .split(".")
    .filter((p) => !/^(\d+|"[^"]*")$/.test(p));
  const root = parts[0];
  if (BUILTIN_ROOTS.has(root) || extraRoots.has(root)) return null;
  if (root === "var") return decl.variables.has(parts[1]) ? null : `reference to undeclared variable "var.${parts[1]}"`;
  if (root === "local") return decl.locals.has(parts[1]) ? null : `reference to undeclared local value "local.${parts[1]}"`;
  if (root === "module") return decl.modules.has(parts[1]) ? null : `reference to undeclared module "module.${parts[1]}"`;
  if (decl.providers.has(root) && parts.length <= 2) return null; // provider = google-beta / google-beta.alias
  if (root === "data") {
    const id = `${parts[1]}.${parts[2]}`;
    const d = decl.data.get(id);
    if (!d) return `reference to undeclared data source "data.${id}"`;
    return attributeCheck(`data.${id}`, parts[3], schemaOf("data", parts[1], providerByDecl.get(`data:${id}`)));
  }
  if (/^(google[a-z0-9-]*|time)_/.test(root)) {
    if (parts.length < 2) return `incomplete reference "${ref}"`;
    const id = `${parts[0]}.${parts[1]}`;
    if (!decl.resources.has(id)) return `reference to undeclared resource "${id}"`;
    return attributeCheck(id, parts[2], schemaOf("resource", parts[0], providerByDecl.get(`resource:${id}`)));
  }
  return `unknown reference "${ref}"`;
}

function attributeCheck(id, attr, entry) {
  if (!attr || !entry) return null;
  return entry.attributes.has(attr) ? null : `"${id}" has no attribute "${attr}"`;
}

async function main() {
  const here = dirname(fileURLToPath(import.meta.url));
  const dir = resolve(process.argv[2] ?? join(here, ".."));
  const started = Date.now();
  const { errors, files, providers } = await check(dir);
  const versions = Object.values(providers).map((p) => `${p.name} ${p.version} (${p.packageName}@${p.packageVersion})`);
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  if (errors.length > 0) {
    console.error(`terraform check: ${errors.length} error(s) in ${dir}:`);
    for (const e of errors) console.error(`  - ${e}`);
    console.error(`checked against ${versions.join(", ")} in ${secs}s`);
    process.exit(1);
  }
  console.log(`terraform check: OK, ${files.length} files in ${basename(dir)}/ against ${versions.join(", ")} in ${secs}s`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
