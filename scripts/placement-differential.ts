// Play the same Placement requests against allot and the real Placement and show every answer
// that differs (status, or body with request ids and server-made uuids set aside). Run:
//
//   /usr/bin/python3 "$ALLOT_REAL_PLACEMENT" --port 8780 &   # the real Placement (scripts/references.ts)
//   node dist/cli/main.js serve --db sqlite::memory: --port 0 --placement-port 8781 &
//   npx tsx scripts/placement-differential.ts http://127.0.0.1:8780 http://127.0.0.1:8781
//
// The scenarios are the behaviours users found different from outside (error wording of schema
// failures at each microversion, inventory changes over usage, uuids echoed as sent); add to them
// when a new difference is reported. Each scenario runs on a fresh set of providers.
import { randomUUID } from 'node:crypto';
import { requireAnswering } from './references.js';

type Step = { method: string; path: string; body?: unknown; version?: string; headers?: Record<string, string> };
type Vars = Record<'rp' | 'p2' | 'c1' | 'c2' | 'c3' | 'agg' | 'agg2', string>;
type Scenario = { name: string; steps: (v: Vars) => Step[] };

const INVENTORY = { VCPU: { total: 8 }, DISK_GB: { total: 100 }, MEMORY_MB: { total: 2048 } };
const claim = (rp: string, generation: number | null = null) => ({
  allocations: { [rp]: { resources: { VCPU: 4, DISK_GB: 10 } } },
  project_id: 'p',
  user_id: 'u',
  consumer_generation: generation,
});

const SCENARIOS: Scenario[] = [
  {
    name: 'schema failures at each microversion',
    steps: (v) => [
      { method: 'POST', path: '/resource_providers', body: { name: 'x', uuid: 'not-a-uuid' }, version: '1.39' },
      { method: 'POST', path: '/resource_providers', body: { name: 'x', bogus: 1 }, version: '1.39' },
      { method: 'POST', path: '/resource_providers', body: { name: 'x', bogus: 1 }, version: '1.0' },
      { method: 'POST', path: '/resource_providers', body: { name: 'x'.repeat(201) }, version: '1.20' },
      { method: 'PUT', path: `/resource_providers/${v.rp}/aggregates`, body: { aggregates: ['x'], resource_provider_generation: 0 }, version: '1.19' },
      { method: 'PUT', path: `/resource_providers/${v.rp}/aggregates`, body: ['not-a-uuid'], version: '1.1' },
      { method: 'POST', path: '/resource_classes', body: { name: 'BAD' }, version: '1.39' },
      {
        method: 'PUT',
        path: `/resource_providers/${v.rp}/inventories`,
        body: { resource_provider_generation: 1, inventories: { VCPU: { total: 0 } } },
        version: '1.39',
      },
      { method: 'PUT', path: `/resource_providers/${v.rp}/traits`, body: { traits: ['bad-trait'], resource_provider_generation: 1 }, version: '1.39' },
      {
        method: 'PUT',
        path: `/allocations/${v.c1}`,
        body: { allocations: { [v.rp]: { resources: { VCPU: 0 } } }, project_id: 'p', user_id: 'u', consumer_generation: null },
        version: '1.39',
      },
      { method: 'PUT', path: `/allocations/${v.c1}`, body: { allocations: [{ resource_provider: { uuid: v.rp }, resources: { VCPU: 1 } }] }, version: '1.8' },
      { method: 'POST', path: '/allocations', body: { [v.c1]: { allocations: {}, project_id: 'p' } }, version: '1.28' },
      { method: 'GET', path: '/resource_providers?uuid=nope', version: '1.39' },
      { method: 'GET', path: '/usages', version: '1.9' },
    ],
  },
  {
    name: 'inventory changes over current usage',
    steps: (v) => [
      { method: 'PUT', path: `/allocations/${v.c1}`, body: claim(v.rp), version: '1.39' },
      // lower capacity below usage: accepted, the provider is over capacity until consumers leave
      {
        method: 'PUT',
        path: `/resource_providers/${v.rp}/inventories`,
        body: { resource_provider_generation: 2, inventories: { VCPU: { total: 2 }, DISK_GB: { total: 100 }, MEMORY_MB: { total: 2048 } } },
        version: '1.39',
      },
      { method: 'PUT', path: `/resource_providers/${v.rp}/inventories/DISK_GB`, body: { resource_provider_generation: 3, total: 5 }, version: '1.39' },
      { method: 'GET', path: `/resource_providers/${v.rp}/usages`, version: '1.39' },
      { method: 'PUT', path: `/allocations/${v.c2}`, body: claim(v.rp), version: '1.39' },
      // removing classes in use: every class named, in Placement's order
      {
        method: 'PUT',
        path: `/resource_providers/${v.rp}/inventories`,
        body: { resource_provider_generation: 4, inventories: { MEMORY_MB: { total: 2048 } } },
        version: '1.39',
      },
      { method: 'DELETE', path: `/resource_providers/${v.rp}/inventories/VCPU`, version: '1.39' },
      { method: 'DELETE', path: `/resource_providers/${v.rp}/inventories/MEMORY_MB`, version: '1.39' },
      { method: 'DELETE', path: `/resource_providers/${v.rp}/inventories`, version: '1.39' },
      {
        method: 'POST',
        path: '/reshaper',
        body: { inventories: { [v.rp]: { resource_provider_generation: 5, inventories: { MEMORY_MB: { total: 1 } } } }, allocations: {} },
        version: '1.39',
      },
    ],
  },
  {
    name: 'uuids as the client sent them',
    steps: (v) => [
      {
        method: 'PUT',
        path: `/resource_providers/${v.rp}/aggregates`,
        body: { aggregates: [v.agg.toUpperCase(), v.agg2.replace(/-/g, '')], resource_provider_generation: 1 },
        version: '1.39',
      },
      { method: 'GET', path: `/resource_providers/${v.rp}/aggregates`, version: '1.39' },
      { method: 'GET', path: `/resource_providers?member_of=${v.agg}`, version: '1.39' },
      { method: 'GET', path: `/resource_providers?member_of=${v.agg.toUpperCase()}`, version: '1.39' },
      { method: 'POST', path: '/resource_providers', body: { name: `upper-${v.p2}`, uuid: v.p2.toUpperCase() }, version: '1.39' },
      { method: 'GET', path: `/resource_providers/${v.p2.toUpperCase()}`, version: '1.39' },
      { method: 'PUT', path: `/allocations/${v.c1.replace(/-/g, '')}`, body: claim(v.rp), version: '1.39' },
      { method: 'GET', path: `/allocations/${v.c1}`, version: '1.39' },
      { method: 'GET', path: `/allocations/${v.c1.replace(/-/g, '')}`, version: '1.39' },
      { method: 'POST', path: '/allocations', body: { [v.c2.toUpperCase()]: claim(v.rp) }, version: '1.39' },
      { method: 'GET', path: `/resource_providers/${v.rp}/allocations`, version: '1.39' },
      { method: 'PUT', path: `/allocations/${v.c3}`, body: claim(v.rp.toUpperCase()), version: '1.39' },
    ],
  },
];

interface Answer {
  status: number;
  body: unknown;
}

async function call(base: string, step: Step): Promise<Answer> {
  const res = await fetch(base + step.path, {
    method: step.method,
    headers: {
      'x-auth-token': 'admin',
      accept: 'application/json',
      ...(step.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(step.version ? { 'openstack-api-version': `placement ${step.version}` } : {}),
      ...step.headers,
    },
    body: step.body === undefined ? undefined : JSON.stringify(step.body),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : '';
  } catch {
    /* not JSON */
  }
  return { status: res.status, body };
}

/** Set aside what legitimately differs between two servers: request ids. */
function normalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalize);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value).sort(([a], [b]) => a.localeCompare(b))) out[k] = k === 'request_id' ? 'req-…' : normalize(v);
    return out;
  }
  return value;
}

async function setUp(base: string, v: Vars): Promise<void> {
  const step = async (s: Step) => {
    const a = await call(base, s);
    if (a.status >= 300) throw new Error(`set-up ${s.method} ${s.path} on ${base}: ${a.status} ${JSON.stringify(a.body)}`);
  };
  await step({ method: 'POST', path: '/resource_providers', body: { name: `rp-${v.rp}`, uuid: v.rp }, version: '1.39' });
  await step({
    method: 'PUT',
    path: `/resource_providers/${v.rp}/inventories`,
    body: { resource_provider_generation: 0, inventories: INVENTORY },
    version: '1.39',
  });
}

const [real, allot] = process.argv.slice(2);
if (!real || !allot) {
  console.error('usage: placement-differential.ts REAL_PLACEMENT_URL ALLOT_PLACEMENT_URL');
  process.exit(2);
}
await requireAnswering(real, 'real-placement', 'placement-differential');
let differences = 0;
let compared = 0;
for (const scenario of SCENARIOS) {
  const v: Vars = { rp: randomUUID(), p2: randomUUID(), c1: randomUUID(), c2: randomUUID(), c3: randomUUID(), agg: randomUUID(), agg2: randomUUID() };
  await setUp(real, v);
  await setUp(allot, v);
  for (const step of scenario.steps(v)) {
    const [a, b] = [await call(real, step), await call(allot, step)];
    compared++;
    const same = a.status === b.status && JSON.stringify(normalize(a.body)) === JSON.stringify(normalize(b.body));
    if (same) continue;
    differences++;
    console.log(`\n[${scenario.name}] ${step.method} ${step.path} (${step.version ?? 'no version'})`);
    console.log(`  real  ${a.status} ${JSON.stringify(normalize(a.body))}`);
    console.log(`  allot ${b.status} ${JSON.stringify(normalize(b.body))}`);
  }
}
console.log(`\n${compared} requests compared, ${differences} differ`);
process.exit(differences ? 1 : 0);
