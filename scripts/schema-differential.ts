// Are allot's Placement schemas Placement's, and does allot's validator find and word the same
// error as python-jsonschema for the same input? scripts/schema-differential.py (Debian's
// python3-placement) gives Placement's schemas and its verdicts on generated instances; this
// compares them with src/placement/schemas.ts and src/core/json-schema.ts.
//
//   npx tsx scripts/schema-differential.ts [--cases N] [--seed S]
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type JsonSchema, describeSchemaError, validate } from '../src/core/json-schema.js';
import * as schemas from '../src/placement/schemas.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const run = spawnSync('/usr/bin/python3', [path.join(here, 'schema-differential.py'), ...process.argv.slice(2)], { encoding: 'utf8', maxBuffer: 1 << 30 });
if (run.status !== 0) {
  console.error(run.stderr);
  process.exit(2);
}
const { schemas: placement, cases } = JSON.parse(run.stdout) as {
  schemas: Record<string, unknown>;
  cases: Array<{ schema: string; instance: unknown; error: string | null }>;
};

/** `allocationsPut@1.28` → schemas.allocationsPut['1.28']; `inventoryUpdate` → schemas.inventoryUpdate */
function ours(name: string): JsonSchema {
  const [table, version] = name.split('@') as [string, string | undefined];
  const entry = (schemas as Record<string, unknown>)[table];
  return (version ? (entry as Record<string, JsonSchema>)[version] : entry) as JsonSchema;
}

let failures = 0;
for (const [name, schema] of Object.entries(placement)) {
  const mine = JSON.stringify(ours(name));
  if (mine !== JSON.stringify(schema)) {
    failures++;
    console.log(`schema ${name} differs (key order counts):\n  placement ${JSON.stringify(schema)}\n  allot     ${mine}`);
  }
}
let differing = 0;
for (const c of cases) {
  const error = validate(ours(c.schema), c.instance);
  const text = error ? describeSchemaError(error) : null;
  if (text === c.error) continue;
  differing++;
  if (differing <= 10)
    console.log(`\n${c.schema} on ${JSON.stringify(c.instance)}\n  placement: ${JSON.stringify(c.error)}\n  allot:     ${JSON.stringify(text)}`);
}
console.log(`\n${Object.keys(placement).length} schemas (${failures} differ), ${cases.length} instances (${differing} answered differently)`);
process.exit(failures || differing ? 1 : 0);
