// Provider schemas read from the .jsii assemblies of the prebuilt CDKTF provider packages.
//
// Each Terraform resource or data source is a jsii class whose docs link to the registry page
// ("Represents a {@link .../docs/resources/bigquery_table google_bigquery_table}"); its
// arguments are the properties of the "<Class>Config" struct. A property whose type is (a list
// of) another struct is a nested block; the struct's own properties are the block's arguments.
// Each property's docs link ends in "#<terraform_name>", which gives the snake_case name without
// guessing it from the camelCase one. The class's getters are the attributes a reference may
// read (google_x.name.attr).

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);

const REPRESENTS =
  /Represents a \{@link https:\/\/registry\.terraform\.io\/providers\/hashicorp\/([a-z-]+)\/([^/]+)\/docs\/(resources|data-sources)\/\S+ (\S+)\}/;
const ANCHOR = /\{@link https:\/\/registry\.terraform\.io\/\S+#([a-z0-9_]+) /;

function camelToSnake(name) {
  return name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
}

function terraformName(property) {
  const docs = `${property.docs?.summary ?? ""} ${property.docs?.remarks ?? ""}`;
  const m = ANCHOR.exec(docs);
  return m ? m[1] : camelToSnake(property.name);
}

/** The struct a property's type names, directly or as the element of a list/set (a block). */
function structOf(type, types) {
  if (!type) return null;
  if (type.fqn && types[type.fqn]?.datatype) return type.fqn;
  if (type.collection) return structOf(type.collection.elementtype, types);
  if (type.union) {
    for (const t of type.union.types) {
      const s = structOf(t, types);
      if (s) return s;
    }
  }
  return null;
}

function blockSchema(structFqn, types, seen = new Set()) {
  const struct = types[structFqn];
  const schema = { attributes: new Map(), blocks: new Map() };
  if (!struct || seen.has(structFqn)) return schema;
  seen.add(structFqn);
  for (const p of struct.properties ?? []) {
    const name = terraformName(p);
    const required = !p.optional;
    const nested = structOf(p.type, types);
    if (nested) {
      schema.blocks.set(name, { required, schema: blockSchema(nested, types, new Set(seen)) });
    } else {
      schema.attributes.set(name, { required });
    }
  }
  return schema;
}

/**
 * Loads one provider package ("@cdktf/provider-google") and returns
 * { name, version, resources: Map(type -> entry), dataSources: Map(type -> entry), provider }
 * where entry = { schema, attributes: Set(readable attribute names) }.
 */
const cache = new Map();

export function loadProvider(packageName) {
  if (!cache.has(packageName)) cache.set(packageName, readProvider(packageName));
  return cache.get(packageName);
}

function readProvider(packageName) {
  const pkgDir = dirname(require.resolve(`${packageName}/package.json`));
  const assembly = JSON.parse(readFileSync(join(pkgDir, ".jsii"), "utf8"));
  const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
  const types = assembly.types;
  const result = {
    packageName,
    packageVersion: pkg.version,
    name: null,
    version: pkg.cdktf?.provider?.version ?? "unknown",
    resources: new Map(),
    dataSources: new Map(),
    provider: null,
  };
  for (const [fqn, type] of Object.entries(types)) {
    if (type.kind !== "class") continue;
    const config = `${fqn}Config`;
    if (!types[config]) continue;
    const m = REPRESENTS.exec(type.docs?.summary ?? "");
    if (m) {
      result.name ??= m[1];
      const attributes = new Set();
      for (const p of type.properties ?? []) {
        if (p.static || p.name.endsWith("Input")) continue;
        attributes.add(camelToSnake(p.name));
      }
      const schema = blockSchema(config, types);
      for (const a of schema.attributes.keys()) attributes.add(a);
      for (const b of schema.blocks.keys()) attributes.add(b);
      const target = m[3] === "resources" ? result.resources : result.dataSources;
      target.set(m[4], { schema, attributes });
    } else if (/\.provider\.[A-Za-z]+Provider$/.test(fqn)) {
      result.provider = { schema: blockSchema(config, types) };
    }
  }
  return result;
}
