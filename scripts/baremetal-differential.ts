// Play the same bare-metal requests against allot and the real Ironic and show every answer that
// differs (status, Allow and Location, or the body: key order kept, uuids, timestamps and request
// ids set aside). Run:
//
//   /usr/bin/python3 "$ALLOT_REAL_IRONIC" start --state-dir /tmp/ironic --port 6399   # the real Ironic (scripts/references.ts)
//   node dist/cli/main.js serve --db sqlite::memory: --port 0 --baremetal-port 6398 \
//     --conductor-id ironic-reference --log-level warn &
//   npx tsx scripts/baremetal-differential.ts http://127.0.0.1:6399 http://127.0.0.1:6398 [scenario substring]
//
// (`--conductor-id ironic-reference` names allot's conductor as real_ironic.py names Ironic's.)
// Each scenario creates its own nodes, named with a per-run suffix, and looks only at them. The
// scenarios are issue 14's bare-metal items and the version table; add to them when a new
// difference is reported. A step marked `known` is a difference docs/baremetal.md owns up to: it
// is shown but not counted. Exit status 1 when anything else differs.
import { randomBytes } from 'node:crypto';
import { requireAnswering } from './references.js';

type Step = {
  method: string;
  path: string;
  body?: unknown;
  /** a body sent as these exact bytes */
  raw?: string;
  version?: string | null;
  headers?: Record<string, string>;
  /** poll GET path until the node settles (no target, no reservation); nothing is compared */
  settle?: boolean;
  /** remember a uuid from the answer (JSON path in the body) under a name for later paths and bodies (`{name}`) */
  save?: [name: string, field: string];
  /** compare only the status and these top-level keys (answers that depend on timing) */
  only?: string[];
  /** a difference docs/baremetal.md owns up to (why); shown, not counted */
  known?: string;
};
type Scenario = { name: string; steps: (v: Vars) => Step[] };
type Vars = { s: string };

const FAKE = { driver: 'fake-hardware' };
const V = '1.82';

/** manage → provide → power off: an available node with a power state */
const availableSteps = (name: string, extra: Record<string, unknown> = {}): Step[] => [
  { method: 'POST', path: '/v1/nodes', body: { ...FAKE, name, ...extra }, only: ['name'] },
  { method: 'PUT', path: `/v1/nodes/${name}/states/provision`, body: { target: 'manage' } },
  { method: 'GET', path: `/v1/nodes/${name}`, settle: true },
  { method: 'PUT', path: `/v1/nodes/${name}/states/provision`, body: { target: 'provide' } },
  { method: 'GET', path: `/v1/nodes/${name}`, settle: true },
  { method: 'PUT', path: `/v1/nodes/${name}/states/power`, body: { target: 'power off' } },
  { method: 'GET', path: `/v1/nodes/${name}`, settle: true },
];

const SCENARIOS: Scenario[] = [
  {
    name: 'paths without /v1',
    steps: ({ s }) => [
      { method: 'POST', path: '/nodes', body: { ...FAKE, name: `root-${s}`, resource_class: `rc-${s}` } },
      { method: 'GET', path: `/nodes/root-${s}` },
      { method: 'GET', path: `/nodes?resource_class=rc-${s}` },
      { method: 'GET', path: `/nodes/detail?resource_class=rc-${s}` },
      { method: 'GET', path: `/nodes/root-${s}/states` },
      { method: 'GET', path: `/nodes?resource_class=rc-${s}&fields=name,uuid,power_state` },
      { method: 'GET', path: `/nodes?resource_class=rc-${s}&fields=extra,name,uuid` },
      { method: 'PATCH', path: `/nodes/root-${s}`, body: [{ op: 'add', path: '/extra/a', value: 1 }], only: ['extra', 'reservation'] },
      { method: 'GET', path: `/nodes/root-${s}/traits` },
      { method: 'GET', path: `/nodes/root-${s}/allocation` },
      { method: 'GET', path: `/allocations?resource_class=rc-${s}` },
      { method: 'GET', path: `/allocations/nope-${s}` },
      { method: 'GET', path: '/conductors' },
      { method: 'GET', path: '/conductors/ironic-reference', only: ['hostname', 'alive', 'drivers', 'conductor_group', 'links'] },
      // the conductor list's paging, as the other lists' (one conductor on each side)
      { method: 'GET', path: '/conductors?limit=1', only: ['conductors'] },
      { method: 'GET', path: '/conductors?limit=1&fields=hostname&sort_key=hostname&sort_dir=desc' },
      { method: 'GET', path: '/conductors?marker=ironic-reference' },
      { method: 'GET', path: '/conductors?marker=nosuch' },
      { method: 'GET', path: '/conductors?sort_key=alive' },
      { method: 'GET', path: '/conductors?sort_key=bogus' },
      { method: 'GET', path: '/conductors?fields=hostname&detail=true' },
      { method: 'GET', path: '/conductors?limit=0' },
      { method: 'DELETE', path: `/nodes/root-${s}` },
      { method: 'GET', path: '/bogus' },
      { method: 'GET', path: `/nodes/?resource_class=rc-${s}`, version: V },
    ],
  },
  {
    name: 'older microversions',
    steps: ({ s }) => [
      { method: 'POST', path: '/v1/nodes', body: FAKE, version: '1.1', save: ['old', 'uuid'] },
      { method: 'GET', path: '/v1/nodes/{old}', version: '1.1' },
      { method: 'GET', path: '/v1/nodes/{old}', version: '1.2' },
      { method: 'GET', path: '/v1/nodes/{old}/states', version: '1.1' },
      { method: 'GET', path: '/v1/nodes?instance_uuid=11111111-2222-3333-4444-555555555555', version: '1.1' },
      { method: 'POST', path: '/v1/nodes', body: { ...FAKE, name: `ver-${s}` }, version: '1.5' },
      { method: 'GET', path: `/v1/nodes/ver-${s}`, version: '1.4' },
      { method: 'GET', path: `/v1/nodes/ver-${s}`, version: '1.5' },
      { method: 'GET', path: `/v1/nodes/ver-${s}/traits`, version: '1.36' },
      { method: 'PUT', path: `/v1/nodes/ver-${s}/traits`, body: { traits: ['CUSTOM_A'] }, version: '1.36' },
      { method: 'DELETE', path: `/v1/nodes/ver-${s}/traits`, version: '1.36' },
      { method: 'PUT', path: `/v1/nodes/ver-${s}/traits/CUSTOM_A`, version: '1.36' },
      { method: 'DELETE', path: `/v1/nodes/ver-${s}/traits/CUSTOM_A`, version: '1.36' },
      { method: 'GET', path: `/v1/nodes/ver-${s}/allocation`, version: '1.51' },
      { method: 'DELETE', path: `/v1/nodes/ver-${s}/allocation`, version: '1.51' },
      { method: 'GET', path: '/v1/allocations', version: '1.51' },
      { method: 'POST', path: '/v1/allocations', body: { resource_class: 'x' }, version: '1.51' },
      { method: 'GET', path: '/v1/allocations/x', version: '1.51' },
      { method: 'DELETE', path: '/v1/allocations/x', version: '1.51' },
      { method: 'PATCH', path: '/v1/allocations/x', body: [], version: '1.51' },
      { method: 'PATCH', path: '/v1/allocations/x', body: [], version: '1.56' },
      { method: 'GET', path: '/v1/conductors', version: '1.48' },
      { method: 'GET', path: '/v1/conductors/ironic-reference', version: '1.48' },
      { method: 'GET', path: `/v1/nodes?fields=uuid`, version: '1.7' },
      { method: 'GET', path: `/v1/nodes?provision_state=enroll`, version: '1.8' },
      { method: 'GET', path: `/v1/nodes?driver=fake-hardware`, version: '1.15' },
      { method: 'GET', path: `/v1/nodes?resource_class=x`, version: '1.20' },
      { method: 'GET', path: `/v1/nodes?fault=power%20failure`, version: '1.41' },
      { method: 'GET', path: `/v1/nodes?detail=true`, version: '1.42' },
      { method: 'GET', path: `/v1/nodes?conductor_group=x`, version: '1.45' },
      { method: 'GET', path: `/v1/nodes?conductor=x`, version: '1.48' },
      { method: 'GET', path: `/v1/nodes?owner=x`, version: '1.49' },
      { method: 'GET', path: `/v1/nodes?description_contains=zzz-${s}`, version: '1.50' },
      { method: 'GET', path: `/v1/nodes?retired=true&description_contains=zzz-${s}`, version: '1.60' },
      { method: 'GET', path: `/v1/nodes?lessee=x`, version: '1.64' },
      { method: 'GET', path: `/v1/nodes?shard=x`, version: '1.81' },
      { method: 'GET', path: `/v1/nodes?sharded=true`, version: '1.81' },
      { method: 'GET', path: `/v1/nodes?fields=owner`, version: '1.49' },
      { method: 'GET', path: `/v1/nodes/ver-${s}?fields=traits`, version: '1.36' },
      { method: 'GET', path: '/v1/allocations?owner=x', version: '1.59' },
      { method: 'GET', path: '/v1/allocations?fields=owner', version: '1.59' },
      { method: 'POST', path: '/v1/allocations', body: { resource_class: 'x', owner: 'o' }, version: '1.59' },
      { method: 'POST', path: '/v1/allocations', body: { resource_class: 'x', node: `ver-${s}` }, version: '1.57' },
      { method: 'PATCH', path: `/v1/nodes/ver-${s}`, body: [{ op: 'add', path: '/owner', value: 'x' }], version: '1.49' },
      { method: 'POST', path: '/v1/nodes', body: { ...FAKE, owner: 'x' }, version: '1.49' },
      { method: 'PUT', path: `/v1/nodes/ver-${s}/states/provision`, body: { target: 'manage' }, version: '1.3' },
      { method: 'PUT', path: `/v1/nodes/ver-${s}/states/power`, body: { target: 'soft power off' }, version: '1.26' },
      { method: 'PUT', path: `/v1/nodes/ver-${s}/states/power`, body: { target: 'power on', timeout: 5 }, version: '1.26' },
      { method: 'GET', path: '/v1', version: '1.1', known: 'the /v1 root lists only the resources allot serves (issue 14, last item)' },
      { method: 'GET', path: '/v1', version: '1.51', known: 'the /v1 root lists only the resources allot serves (issue 14, last item)' },
      { method: 'DELETE', path: '/v1/nodes/{old}', version: '1.1' },
      { method: 'DELETE', path: `/v1/nodes/ver-${s}` },
    ],
  },
  {
    // every field of every resource at every version (Ironic's version table), on one node and
    // one (failed) allocation
    name: 'every version',
    steps: ({ s }) => [
      { method: 'POST', path: '/v1/nodes', body: { ...FAKE, name: `all-${s}`, resource_class: `all-${s}` }, only: ['name'] },
      { method: 'POST', path: '/v1/allocations', body: { resource_class: `none-${s}`, name: `all-a-${s}` }, only: ['name'] },
      { method: 'GET', path: `/v1/allocations/all-a-${s}`, settle: true },
      ...Array.from({ length: 82 }, (_, i) => `1.${i + 1}`).flatMap((version): Step[] => [
        { method: 'GET', path: `/v1/nodes/all-${s}`, version },
        { method: 'GET', path: `/v1/nodes/all-${s}/states`, version },
        { method: 'GET', path: `/v1/nodes?resource_class=all-${s}`, version },
        { method: 'GET', path: `/v1/nodes/detail?resource_class=all-${s}`, version },
        { method: 'GET', path: `/v1/nodes/all-${s}/traits`, version },
        { method: 'GET', path: `/v1/nodes/all-${s}/allocation`, version },
        { method: 'GET', path: `/v1/allocations/all-a-${s}`, version },
        { method: 'GET', path: `/v1/allocations?resource_class=none-${s}`, version },
        { method: 'GET', path: '/v1/conductors', version },
      ]),
      { method: 'DELETE', path: `/v1/allocations/all-a-${s}` },
      { method: 'DELETE', path: `/v1/nodes/all-${s}` },
    ],
  },
  {
    name: 'empty Content-Type',
    steps: ({ s }) => [
      { method: 'POST', path: '/v1/nodes', raw: JSON.stringify({ ...FAKE, name: `ct-${s}` }), headers: { 'content-type': '' }, only: ['name', 'driver'] },
      {
        method: 'PATCH',
        path: `/v1/nodes/ct-${s}`,
        raw: JSON.stringify([{ op: 'add', path: '/extra/a', value: 1 }]),
        headers: { 'content-type': '' },
        only: ['extra'],
      },
      {
        method: 'POST',
        path: '/v1/nodes',
        raw: JSON.stringify({ ...FAKE, name: `ct2-${s}` }),
        headers: { 'content-type': 'text/plain' },
        only: ['name'],
        known: 'a type that names something else than JSON is a 415',
      },
      { method: 'DELETE', path: `/v1/nodes/ct-${s}` },
      { method: 'DELETE', path: `/v1/nodes/ct2-${s}`, known: 'allot refused to create it' },
    ],
  },
  {
    name: 'identifiers that are neither uuid nor name',
    steps: ({ s }) => [
      { method: 'GET', path: '/v1/nodes/bad%20name' },
      { method: 'GET', path: '/v1/nodes/bad!' },
      { method: 'PATCH', path: '/v1/nodes/bad!', body: [] },
      { method: 'DELETE', path: '/v1/nodes/bad!' },
      { method: 'GET', path: '/v1/nodes/bad!/states' },
      { method: 'PUT', path: '/v1/nodes/bad!/states/power', body: { target: 'power on' } },
      { method: 'PUT', path: '/v1/nodes/bad!/states/provision', body: { target: 'manage' } },
      { method: 'PUT', path: '/v1/nodes/bad!/maintenance', body: {} },
      { method: 'GET', path: '/v1/nodes/bad!/traits' },
      { method: 'GET', path: '/v1/nodes/bad!/allocation' },
      { method: 'DELETE', path: '/v1/nodes/bad!/allocation' },
      { method: 'GET', path: '/v1/allocations/bad!' },
      { method: 'DELETE', path: '/v1/allocations/bad!' },
      { method: 'PATCH', path: '/v1/allocations/bad!', body: [] },
      { method: 'GET', path: '/v1/allocations?node=bad!' },
      { method: 'GET', path: `/v1/nodes/${'x'.repeat(256)}` },
      { method: 'GET', path: `/v1/nodes/nope-${s}` },
      { method: 'GET', path: `/v1/allocations/nope-${s}` },
      { method: 'POST', path: '/v1/allocations', body: { resource_class: 'x', candidate_nodes: ['bad!'] } },
      { method: 'POST', path: '/v1/allocations', body: { node: 'bad!' } },
    ],
  },
  {
    name: 'filters',
    steps: () => [
      { method: 'GET', path: '/v1/nodes?fault=bogus' },
      { method: 'GET', path: '/v1/nodes?fault=power%20failure&resource_class=none' },
      { method: 'GET', path: '/v1/nodes?provision_state=bogus' },
      { method: 'GET', path: '/v1/nodes?sharded=maybe' },
      { method: 'GET', path: '/v1/nodes?retired=maybe' },
      { method: 'GET', path: '/v1/nodes?associated=maybe' },
      { method: 'GET', path: '/v1/nodes?maintenance=maybe' },
      { method: 'GET', path: '/v1/nodes?detail=maybe' },
      { method: 'GET', path: '/v1/nodes?instance_uuid=nope' },
      { method: 'GET', path: '/v1/nodes?chassis_uuid=nope' },
      { method: 'GET', path: '/v1/nodes?chassis_uuid=11111111-2222-3333-4444-555555555555' },
      { method: 'GET', path: '/v1/nodes?project=none' },
      { method: 'GET', path: '/v1/nodes?sort_key=extra' },
      { method: 'GET', path: '/v1/allocations?sort_key=candidate_nodes' },
      { method: 'GET', path: '/v1/nodes?limit=abc' },
      { method: 'GET', path: '/v1/nodes?limit=0' },
      { method: 'GET', path: '/v1/nodes?sort_key=bogus' },
      { method: 'GET', path: '/v1/nodes?sort_key=traits' },
      { method: 'GET', path: '/v1/nodes?sort_dir=up' },
      { method: 'GET', path: '/v1/nodes?marker=nope' },
      { method: 'GET', path: '/v1/nodes?fields=bogus', known: 'an invalid field is a 400 (the reference: 500)' },
      { method: 'GET', path: '/v1/nodes?fields=uuid&detail=true' },
      { method: 'GET', path: '/v1/nodes/detail?fields=uuid' },
      { method: 'GET', path: '/v1/nodes/detail?detail=true' },
      { method: 'GET', path: '/v1/nodes?bogus=1' },
      { method: 'GET', path: '/v1/allocations?node=nosuch' },
      { method: 'GET', path: '/v1/allocations?resource_class=none' },
      { method: 'GET', path: '/v1/allocations?marker=nope' },
      { method: 'GET', path: '/v1/allocations?limit=abc' },
      { method: 'GET', path: '/v1/allocations?sort_key=traits' },
      { method: 'GET', path: '/v1/allocations?sort_key=bogus' },
      { method: 'GET', path: '/v1/allocations?fields=bogus', known: 'an invalid field is a 400 (the reference ignores it)' },
      { method: 'GET', path: '/v1/allocations?bogus=1' },
    ],
  },
  {
    name: 'PATCH holds the reservation; un-retire and un-protect clear the reason',
    steps: ({ s }) => [
      ...availableSteps(`res-${s}`, { resource_class: `rc-${s}` }),
      {
        method: 'PATCH',
        path: `/v1/nodes/res-${s}`,
        body: [{ op: 'add', path: '/instance_uuid', value: '11111111-2222-3333-4444-55555555aaaa' }],
        only: ['instance_uuid', 'reservation'],
      },
      { method: 'GET', path: `/v1/nodes/res-${s}`, only: ['instance_uuid', 'reservation'] },
      { method: 'PATCH', path: `/v1/nodes/res-${s}`, body: [{ op: 'remove', path: '/instance_uuid' }], only: ['instance_uuid', 'reservation'] },
      { method: 'PUT', path: `/v1/nodes/res-${s}/states/provision`, body: { target: 'active' } },
      { method: 'GET', path: `/v1/nodes/res-${s}`, settle: true },
      {
        method: 'PATCH',
        path: `/v1/nodes/res-${s}`,
        body: [
          { op: 'add', path: '/retired', value: true },
          { op: 'add', path: '/retired_reason', value: 'old' },
        ],
        only: ['retired', 'retired_reason'],
      },
      { method: 'PATCH', path: `/v1/nodes/res-${s}`, body: [{ op: 'add', path: '/retired', value: false }], only: ['retired', 'retired_reason'] },
      {
        method: 'PATCH',
        path: `/v1/nodes/res-${s}`,
        body: [
          { op: 'add', path: '/retired', value: true },
          { op: 'add', path: '/retired_reason', value: 'again' },
        ],
        only: ['retired', 'retired_reason'],
      },
      {
        method: 'PATCH',
        path: `/v1/nodes/res-${s}`,
        body: [
          { op: 'add', path: '/retired', value: false },
          { op: 'add', path: '/retired_reason', value: 'named' },
        ],
        only: ['retired', 'retired_reason'],
      },
      { method: 'PATCH', path: `/v1/nodes/res-${s}`, body: [{ op: 'add', path: '/retired_reason', value: 'alone' }] },
      {
        method: 'PATCH',
        path: `/v1/nodes/res-${s}`,
        body: [
          { op: 'add', path: '/protected', value: true },
          { op: 'add', path: '/protected_reason', value: 'why' },
        ],
        only: ['protected', 'protected_reason'],
      },
      { method: 'PATCH', path: `/v1/nodes/res-${s}`, body: [{ op: 'add', path: '/protected', value: false }], only: ['protected', 'protected_reason'] },
      {
        method: 'PATCH',
        path: `/v1/nodes/res-${s}`,
        body: [
          { op: 'add', path: '/protected', value: true },
          { op: 'add', path: '/protected_reason', value: 'again' },
        ],
        only: ['protected', 'protected_reason'],
      },
      {
        method: 'PATCH',
        path: `/v1/nodes/res-${s}`,
        body: [
          { op: 'add', path: '/protected', value: false },
          { op: 'add', path: '/protected_reason', value: 'named' },
        ],
        only: ['protected', 'protected_reason'],
      },
      { method: 'PATCH', path: `/v1/nodes/res-${s}`, body: [{ op: 'add', path: '/protected_reason', value: 'alone' }] },
      {
        method: 'PATCH',
        path: `/v1/nodes/res-${s}`,
        body: [{ op: 'remove', path: '/retired' }],
        only: ['retired', 'retired_reason'],
        known: 'removing retired sets it false (the reference: null)',
      },
      { method: 'PUT', path: `/v1/nodes/res-${s}/states/provision`, body: { target: 'undeploy' } },
      { method: 'GET', path: `/v1/nodes/res-${s}`, settle: true },
    ],
  },
  {
    name: 'power off, then allocate at once',
    steps: ({ s }) => [
      { method: 'POST', path: '/v1/nodes', body: { ...FAKE, name: `pw-${s}`, resource_class: `pw-${s}` }, only: ['name'] },
      { method: 'PUT', path: `/v1/nodes/pw-${s}/states/provision`, body: { target: 'manage' } },
      { method: 'GET', path: `/v1/nodes/pw-${s}`, settle: true },
      { method: 'PUT', path: `/v1/nodes/pw-${s}/states/provision`, body: { target: 'provide' } },
      { method: 'GET', path: `/v1/nodes/pw-${s}`, settle: true },
      { method: 'PUT', path: `/v1/nodes/pw-${s}/states/power`, body: { target: 'power off' } },
      { method: 'POST', path: '/v1/allocations', body: { resource_class: `pw-${s}`, name: `pw-a-${s}` }, only: ['state', 'resource_class'] },
      { method: 'GET', path: `/v1/allocations/pw-a-${s}`, settle: true },
      { method: 'GET', path: `/v1/allocations/pw-a-${s}`, only: ['state', 'last_error'] },
      { method: 'DELETE', path: `/v1/allocations/pw-a-${s}` },
    ],
  },
  {
    // issue 28: the answer to a new allocation; the node's states with the node last; a port group's
    // physical network; a port group PATCH at 1.23
    name: 'allocation answer, states paths, physical networks, port group patch',
    steps: ({ s }) => [
      ...availableSteps(`i28-${s}`, { resource_class: `i28-${s}` }),
      { method: 'POST', path: '/v1/allocations', body: { resource_class: `i28-${s}`, name: `i28-a-${s}`, extra: { k: 1 } } },
      { method: 'GET', path: `/v1/allocations/i28-a-${s}`, settle: true },
      { method: 'GET', path: `/v1/allocations/i28-a-${s}`, only: ['state', 'last_error'] },
      { method: 'DELETE', path: `/v1/allocations/i28-a-${s}` },
      {
        method: 'POST',
        path: '/v1/allocations',
        body: { resource_class: `i28-${s}`, name: `i28-b-${s}` },
        headers: { prefer: 'wait=5' },
        only: ['state', 'last_error'],
        known: 'allot honours Prefer: wait=N (the answer is the outcome); Ironic ignores it',
      },
      { method: 'GET', path: `/v1/allocations/i28-b-${s}`, settle: true },
      { method: 'DELETE', path: `/v1/allocations/i28-b-${s}` },
      { method: 'GET', path: `/v1/nodes/states/console/i28-${s}` },
      { method: 'GET', path: `/v1/nodes/states/console/i28-${s}`, version: '1.1' },
      { method: 'GET', path: `/nodes/states/console/i28-${s}` },
      { method: 'GET', path: `/v1/nodes/states/i28-${s}`, only: ['provision_state', 'power_state', 'console_enabled'] },
      { method: 'POST', path: `/v1/nodes/states/console/i28-${s}`, body: {} },
      { method: 'GET', path: `/v1/nodes/states/console/nope-${s}` },
      { method: 'PUT', path: `/v1/nodes/maintenance/i28-${s}`, body: { reason: 'x' } },
      { method: 'GET', path: `/v1/nodes/i28-${s}`, only: ['maintenance', 'maintenance_reason'] },
      { method: 'DELETE', path: `/v1/nodes/maintenance/i28-${s}` },
      { method: 'GET', path: `/v1/nodes/management/boot_device/i28-${s}` },
      { method: 'DELETE', path: `/v1/nodes/i28-${s}` },
      // ports of a group share a physical network (an enroll node: connectivity may change)
      { method: 'POST', path: '/v1/nodes', body: { ...FAKE, name: `pn-${s}` }, only: ['name'] },
      { method: 'GET', path: `/v1/nodes/pn-${s}`, save: ['pn', 'uuid'], only: ['name'] },
      { method: 'POST', path: '/v1/portgroups', body: { node_uuid: '{pn}', name: `pg-${s}` }, version: '1.34', save: ['pg', 'uuid'], only: ['name'] },
      {
        method: 'POST',
        path: '/v1/ports',
        body: { node_uuid: '{pn}', address: '52:54:00:28:00:01', portgroup_uuid: '{pg}', physical_network: 'physnet1' },
        version: '1.34',
        only: ['physical_network'],
      },
      {
        method: 'POST',
        path: '/v1/ports',
        body: { node_uuid: '{pn}', address: '52:54:00:28:00:02', portgroup_uuid: '{pg}', physical_network: 'physnet2' },
        version: '1.34',
      },
      { method: 'POST', path: '/v1/ports', body: { node_uuid: '{pn}', address: '52:54:00:28:00:03', portgroup_uuid: '{pg}' }, version: '1.34' },
      {
        method: 'POST',
        path: '/v1/ports',
        body: { node_uuid: '{pn}', address: '52:54:00:28:00:04', physical_network: 'physnet2' },
        version: '1.34',
        save: ['p4', 'uuid'],
        only: ['physical_network'],
      },
      { method: 'PATCH', path: '/v1/ports/{p4}', body: [{ op: 'replace', path: '/portgroup_uuid', value: '{pg}' }], version: '1.34' },
      {
        method: 'PATCH',
        path: '/v1/ports/{p4}',
        body: [
          { op: 'replace', path: '/physical_network', value: 'physnet1' },
          { op: 'replace', path: '/portgroup_uuid', value: '{pg}' },
        ],
        version: '1.34',
        only: ['physical_network', 'portgroup_uuid'],
        known: 'a port PATCH applies every operation (the reference drops a portgroup_uuid change that is not the first)',
      },
      {
        method: 'PATCH',
        path: '/v1/ports/{p4}',
        body: [{ op: 'replace', path: '/portgroup_uuid', value: '{pg}' }],
        version: '1.34',
        only: ['physical_network', 'portgroup_uuid'],
      },
      { method: 'PATCH', path: '/v1/ports/{p4}', body: [{ op: 'replace', path: '/physical_network', value: 'physnet3' }], version: '1.34' },
      // a port group PATCH at 1.23: properties (1.26) after another operation pass, first do not
      {
        method: 'PATCH',
        path: `/v1/portgroups/pg-${s}`,
        body: [
          { op: 'add', path: '/extra/key1', value: 'value1' },
          { op: 'add', path: '/properties/key1', value: 'value1' },
        ],
        version: '1.23',
      },
      { method: 'GET', path: `/v1/portgroups/pg-${s}`, version: '1.23' },
      { method: 'GET', path: `/v1/portgroups/pg-${s}`, version: '1.25' },
      { method: 'GET', path: `/v1/portgroups/pg-${s}?fields=properties`, version: '1.25' },
      { method: 'GET', path: `/v1/portgroups/detail?node=pn-${s}`, version: '1.23' },
      { method: 'GET', path: `/v1/portgroups/pg-${s}`, version: '1.26', only: ['extra', 'properties'] },
      { method: 'PATCH', path: `/v1/portgroups/pg-${s}`, body: [{ op: 'add', path: '/properties/key2', value: 'v' }], version: '1.23' },
      { method: 'PATCH', path: `/v1/portgroups/pg-${s}`, body: [{ op: 'replace', path: '/mode', value: '802.3ad' }], version: '1.23' },
      { method: 'DELETE', path: `/v1/nodes/pn-${s}` },
    ],
  },
];

// ---- running and comparing -------------------------------------------------------------------

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00/g;

/** A JSON body written with its key order, Python-style separators, uuids and times replaced. */
function normalize(text: string, base: string, uuids: Map<string, string>): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text;
  }
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      if (v.startsWith('{"')) {
        try {
          return { '(json)': walk(JSON.parse(v)) };
        } catch {
          /* not JSON */
        }
      }
      return v
        .split(base)
        .join('<base>')
        .replace(UUID, (u) => {
          const k = u.toLowerCase();
          if (!uuids.has(k)) uuids.set(k, `<uuid${uuids.size + 1}>`);
          return uuids.get(k)!;
        })
        .replace(TIME, '<time>')
        .replace(/req-<uuid\d+>/g, '<req>');
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return JSON.stringify(walk(value));
}

interface Answer {
  status: number;
  body: string;
  headers: string;
}

async function send(base: string, step: Step, saved: Record<string, string>, uuids: Map<string, string>): Promise<Answer> {
  const version = step.version === undefined ? V : step.version;
  const headers: Record<string, string> = { ...(version ? { 'x-openstack-ironic-api-version': version } : {}) };
  let body: string | undefined;
  if (step.raw !== undefined) body = step.raw;
  else if (step.body !== undefined) {
    // `{name}` in a body's strings is a uuid saved earlier, as in paths
    body = JSON.stringify(step.body).replace(/\{(\w+)\}/g, (m, k) => saved[k] ?? m);
    headers['content-type'] = 'application/json';
  }
  Object.assign(headers, step.headers);
  const path = step.path.replace(/\{(\w+)\}/g, (_, k) => saved[k] ?? k);
  const res = await fetch(base + path, { method: step.method, headers, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  if (step.save) {
    const value = (JSON.parse(text) as Record<string, string>)[step.save[1]];
    if (value) saved[step.save[0]] = value;
  }
  let shown = text;
  if (step.only && text.startsWith('{') && res.status < 300) {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    shown = JSON.stringify(Object.fromEntries(step.only.map((k) => [k, parsed[k]])));
  }
  const h = ['allow', 'location'].map((n) => (res.headers.get(n) ? `${n}: ${res.headers.get(n)}` : '')).filter(Boolean);
  return { status: res.status, body: normalize(shown, base, uuids), headers: normalize(JSON.stringify(h), base, uuids) };
}

async function settle(base: string, step: Step, saved: Record<string, string>, version: string): Promise<void> {
  const path = step.path.replace(/\{(\w+)\}/g, (_, k) => saved[k] ?? k);
  for (let i = 0; i < 400; i++) {
    const res = await fetch(base + path, { headers: { 'x-openstack-ironic-api-version': version } });
    const b = (await res.json()) as Record<string, unknown>;
    const idle = path.includes('/allocations/')
      ? b.state !== 'allocating'
      : b.target_provision_state === null && b.target_power_state === null && b.reservation === null;
    if (idle) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${base}${path} did not settle`);
}

const [realUrl, allotUrl, only] = process.argv.slice(2);
if (!realUrl || !allotUrl) {
  console.error('usage: baremetal-differential.ts REAL_IRONIC_URL ALLOT_URL [scenario substring]');
  process.exit(2);
}
await requireAnswering(realUrl, 'real-ironic', 'baremetal-differential');
let requests = 0;
let differ = 0;
let known = 0;
for (const scenario of SCENARIOS.filter((x) => !only || x.name.includes(only))) {
  const vars = { s: randomBytes(3).toString('hex') };
  const steps = scenario.steps(vars);
  const real = { saved: {} as Record<string, string>, uuids: new Map<string, string>() };
  const ours = { saved: {} as Record<string, string>, uuids: new Map<string, string>() };
  console.log(`## ${scenario.name}`);
  for (const step of steps) {
    if (step.settle) {
      await settle(realUrl, step, real.saved, step.version ?? V);
      await settle(allotUrl, step, ours.saved, step.version ?? V);
      continue;
    }
    const a = await send(realUrl, step, real.saved, real.uuids);
    const b = await send(allotUrl, step, ours.saved, ours.uuids);
    requests++;
    const what = `${step.method} ${step.path} @${step.version === undefined ? V : (step.version ?? 'none')}`;
    if (a.status !== b.status || a.body !== b.body || a.headers !== b.headers) {
      if (step.known) known++;
      else differ++;
      console.log(
        `${step.known ? `KNOWN (${step.known})` : 'DIFF'} ${what}\n  ironic: ${a.status} ${a.headers} ${a.body.slice(0, 600)}\n  allot:  ${b.status} ${b.headers} ${b.body.slice(0, 600)}`,
      );
    } else {
      console.log(`same ${what}: ${a.status}`);
    }
  }
}
console.log(`${requests} requests, ${differ} differ, ${known} known differences (docs/baremetal.md)`);
process.exit(differ ? 1 : 0);
