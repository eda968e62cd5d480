// Project scoping with real Keystone tokens (test/helpers/keystone.ts). On the bare-metal API, Ironic's:
// a project sees and acts on the nodes it owns or leases and the allocations it owns; the system
// admin sees all; what is out of the caller's scope is a 404 ("could not be found"), what is in
// scope but not the caller's to do a 403; a new allocation is the caller's project's. The legacy
// defaults (--no-enforce-new-defaults --no-enforce-scope) keep what their rules say. On the
// identifier API, pools of a project: its readers and members see and use them (and shared ones),
// other projects get 404, admins, the system scope and services reach all.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type HttpResponse, request } from '../helpers/http.js';
import { type RealKeystone, realKeystone } from '../helpers/keystone.js';
import { type TestServer, startServer } from '../helpers/server.js';

const PERSONAS = ['admin', 'sys-admin', 'p1-member', 'p1-reader', 'p2-member', 'nova'] as const;
type Persona = (typeof PERSONAS)[number];

let ks: RealKeystone & { stop(): Promise<void> };
const tokens = {} as Record<Persona, string>;

function call(server: TestServer, who: Persona, method: string, path: string, body?: unknown): Promise<HttpResponse> {
  return request(method, `${server.url}/baremetal${path}`, body, { headers: { 'x-auth-token': tokens[who], 'x-openstack-ironic-api-version': '1.82' } });
}

/** Ironic's error text (its faultstring). */
const fault = (res: HttpResponse): string => JSON.parse(res.body.error_message).faultstring as string;

before(async () => {
  ks = await realKeystone();
  for (const user of PERSONAS) tokens[user] = await ks.token(user);
});
after(() => ks?.stop());

/** Nodes of every relation to p1: owned, leased (owned by p2), p2's alone, nobody's. */
async function makeNodes(server: TestServer, tag: string): Promise<Record<'owned' | 'leased' | 'other' | 'none', string>> {
  const p1 = ks.projects.p1!;
  const p2 = ks.projects.p2!;
  const specs = { owned: { owner: p1 }, leased: { owner: p2, lessee: p1 }, other: { owner: p2 }, none: {} };
  const out = {} as Record<keyof typeof specs, string>;
  for (const [key, spec] of Object.entries(specs) as Array<[keyof typeof specs, Record<string, string>]>) {
    const res = await call(server, 'sys-admin', 'POST', '/v1/nodes', { driver: 'fake-hardware', name: `${key}-${tag}`, resource_class: `bm-${tag}`, ...spec });
    assert.equal(res.status, 201, res.text);
    out[key] = res.body.uuid as string;
  }
  return out;
}

function names(res: HttpResponse): string[] {
  assert.equal(res.status, 200, res.text);
  return (res.body.nodes as Array<{ name: string }>).map((n) => n.name.split('-')[0]!).sort();
}

for (const dialect of DIALECTS) {
  describe(`bare-metal project scoping on ${dialect}`, () => {
    let server: TestServer;
    let nodes: Record<'owned' | 'leased' | 'other' | 'none', string>;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect), ...ks.allotConfig() });
      nodes = await makeNodes(server, dialect);
    });
    after(() => server.close());

    test('node lists: the system admin sees all; a project its owned and leased nodes; another project filter is 403', async () => {
      const expected: Record<Persona, string[]> = {
        'sys-admin': ['leased', 'none', 'other', 'owned'],
        'p1-member': ['leased', 'owned'],
        'p1-reader': ['leased', 'owned'],
        'p2-member': ['leased', 'other'],
        admin: [],
        nova: [],
      };
      for (const p of PERSONAS) {
        for (const path of ['/v1/nodes', '/v1/nodes/detail']) {
          const res = await call(server, p, 'GET', path);
          assert.equal(res.status, 200, `${p} ${path}: ${res.text}`);
          assert.deepEqual(names(res), expected[p], `${p} ${path}`);
        }
      }
      const own = await call(server, 'p1-member', 'GET', `/v1/nodes?project=${ks.projects.p1}`);
      assert.deepEqual(names(own), ['leased', 'owned']);
      const other = await call(server, 'p1-member', 'GET', `/v1/nodes?project=${ks.projects.p2}`);
      assert.equal(other.status, 403, other.text);
      assert.match(fault(other), /baremetal:node:list_all/);
      const bySystem = await call(server, 'sys-admin', 'GET', `/v1/nodes?project=${ks.projects.p2}`);
      assert.deepEqual(names(bySystem), ['leased', 'other']);
      // a filter by owner narrows within the project's own view, never beyond it
      assert.deepEqual(names(await call(server, 'p1-member', 'GET', `/v1/nodes?owner=${ks.projects.p2}`)), ['leased']);
    });

    test('GET a node: owner and lessee see it; another project gets 404 "could not be found", not 403', async () => {
      const visible: Record<Persona, Array<keyof typeof nodes>> = {
        'sys-admin': ['owned', 'leased', 'other', 'none'],
        'p1-member': ['owned', 'leased'],
        'p1-reader': ['owned', 'leased'],
        'p2-member': ['leased', 'other'],
        admin: [],
        nova: [],
      };
      for (const p of PERSONAS) {
        for (const key of Object.keys(nodes) as Array<keyof typeof nodes>) {
          for (const sub of ['', '/states', '/traits']) {
            const res = await call(server, p, 'GET', `/v1/nodes/${nodes[key]}${sub}`);
            if (visible[p].includes(key)) assert.equal(res.status, 200, `${p} GET ${key}${sub}: ${res.text}`);
            else {
              assert.equal(res.status, 404, `${p} GET ${key}${sub}: ${res.text}`);
              assert.equal(fault(res), `Node ${nodes[key]} could not be found.`);
            }
          }
        }
      }
      // below the system readers, what tells of the infrastructure is redacted unless the node's owner asks
      const asOwner = await call(server, 'p1-reader', 'GET', `/v1/nodes/${nodes.owned}`);
      assert.deepEqual(asOwner.body.driver_info, {});
      assert.equal(asOwner.body.last_error, null);
      const asLessee = await call(server, 'p1-reader', 'GET', `/v1/nodes/${nodes.leased}`);
      assert.deepEqual(asLessee.body.driver_info, { content: '** Redacted - requires baremetal:node:get:driver_info permission. **' });
      assert.equal(asLessee.body.last_error, '** Value Redacted - Requires baremetal:node:get:last_error permission. **');
      assert.deepEqual(asLessee.body.driver_internal_info, { content: '** Redacted - Requires baremetal:node:get:driver_internal_info permission. **' });
      const asSystem = await call(server, 'sys-admin', 'GET', `/v1/nodes/${nodes.leased}`);
      assert.deepEqual(asSystem.body.driver_info, {});
      assert.equal(asSystem.body.last_error, null);
      // by name too: the 404 names what was asked for
      const byName = await call(server, 'p1-member', 'GET', `/v1/nodes/other-${dialect}`);
      assert.equal(byName.status, 404);
      assert.equal(fault(byName), `Node other-${dialect} could not be found.`);
    });

    test("ports, port groups and volumes are their node's: a project sees those of the nodes it owns or leases, others' are 404; chassis are the system's", async () => {
      const ports = {} as Record<keyof typeof nodes, string>;
      let i = 0;
      for (const key of Object.keys(nodes) as Array<keyof typeof nodes>) {
        const res = await call(server, 'sys-admin', 'POST', '/v1/ports', {
          node_uuid: nodes[key],
          address: `52:54:00:${dialect === 'sqlite' ? '10' : '20'}:00:0${i++}`,
        });
        assert.equal(res.status, 201, res.text);
        ports[key] = res.body.uuid;
      }
      const seen = async (who: Persona) => {
        const res = await call(server, who, 'GET', '/v1/ports');
        assert.equal(res.status, 200, res.text);
        const uuids = (res.body.ports as Array<{ uuid: string }>).map((p) => p.uuid);
        return (Object.keys(ports) as Array<keyof typeof ports>).filter((k) => uuids.includes(ports[k])).sort();
      };
      assert.deepEqual(await seen('sys-admin'), ['leased', 'none', 'other', 'owned']);
      assert.deepEqual(await seen('p1-member'), ['leased', 'owned']);
      assert.deepEqual(await seen('p2-member'), ['leased', 'other']);
      assert.equal((await call(server, 'p1-reader', 'GET', `/v1/ports/${ports.owned}`)).status, 200);
      const hidden = await call(server, 'p1-member', 'GET', `/v1/ports/${ports.other}`);
      assert.equal(hidden.status, 404, hidden.text);
      assert.equal(fault(hidden), `Port ${ports.other} could not be found.`);
      assert.equal((await call(server, 'p1-member', 'GET', `/v1/nodes/${nodes.other}/ports`)).status, 404);
      // creating a port needs the system admin or the owner's admin: a member is refused
      const byMember = await call(server, 'p1-member', 'POST', '/v1/ports', { node_uuid: nodes.owned, address: '52:54:00:99:99:99' });
      assert.equal(byMember.status, 403, byMember.text);
      assert.match(fault(byMember), /baremetal:port:create/);
      assert.equal((await call(server, 'p1-member', 'GET', `/v1/nodes/${nodes.owned}/vifs`)).status, 200);
      assert.equal((await call(server, 'p1-member', 'GET', `/v1/nodes/${nodes.other}/vifs`)).status, 404);
      assert.equal((await call(server, 'p1-member', 'GET', '/v1/volume/connectors')).status, 200);
      assert.equal((await call(server, 'p1-member', 'GET', '/v1/chassis')).status, 403);
      assert.equal((await call(server, 'p1-member', 'GET', '/v1/drivers')).status, 403);
      assert.equal((await call(server, 'sys-admin', 'GET', '/v1/chassis')).status, 200);
    });

    test("PATCH a node: members of the owner or lessee edit extra; a reader is 403; another project's node is 404; owner is the system's", async () => {
      const patch = (p: Persona, node: string, ops: unknown) => call(server, p, 'PATCH', `/v1/nodes/${node}`, ops);
      const extra = [{ op: 'add', path: '/extra/who', value: 'x' }];
      assert.equal((await patch('p1-member', nodes.owned, extra)).status, 200);
      assert.equal((await patch('p1-member', nodes.leased, extra)).status, 200);
      const reader = await patch('p1-reader', nodes.owned, extra);
      assert.equal(reader.status, 403, reader.text);
      assert.match(fault(reader), /baremetal:node:update_extra/);
      for (const key of ['other', 'none'] as const) assert.equal((await patch('p1-member', nodes[key], extra)).status, 404, key);
      // the owner's member sets the lessee of its node, not of a node it only leases; the owner is for the system
      const lessee = [{ op: 'add', path: '/lessee', value: ks.projects.p2 }];
      assert.equal((await patch('p1-member', nodes.owned, lessee)).status, 200);
      assert.equal((await patch('p1-member', nodes.leased, lessee)).status, 403);
      const owner = await patch('p1-member', nodes.owned, [{ op: 'add', path: '/owner', value: ks.projects.p2 }]);
      assert.equal(owner.status, 403, owner.text);
      assert.match(fault(owner), /baremetal:node:update:owner/);
      assert.equal((await patch('sys-admin', nodes.none, extra)).status, 200);
      // maintenance: the owner's member yes, the lessee's member no (lessees need admin)
      assert.equal((await call(server, 'p1-member', 'PUT', `/v1/nodes/${nodes.owned}/maintenance`, { reason: 'r' })).status, 202);
      assert.equal((await call(server, 'p1-member', 'PUT', `/v1/nodes/${nodes.leased}/maintenance`, { reason: 'r' })).status, 403);
      assert.equal((await call(server, 'p1-member', 'DELETE', `/v1/nodes/${nodes.owned}/maintenance`)).status, 202);
      // deleting: a member may not, even its own; another project's node is not found
      assert.equal((await call(server, 'p1-member', 'DELETE', `/v1/nodes/${nodes.owned}`)).status, 403);
      assert.equal((await call(server, 'p1-member', 'DELETE', `/v1/nodes/${nodes.other}`)).status, 404);
    });

    test('a project admin creates nodes for its own project only, and deletes them; a member creates none', async () => {
      const made = await call(server, 'admin', 'POST', '/v1/nodes', { driver: 'fake-hardware', name: `admins-${dialect}` });
      assert.equal(made.status, 201, made.text);
      const adminProject = made.body.owner as string;
      assert.ok(adminProject && adminProject !== ks.projects.p1 && adminProject !== ks.projects.p2, made.text);
      assert.deepEqual(names(await call(server, 'admin', 'GET', '/v1/nodes')), ['admins']);
      const foreign = await call(server, 'admin', 'POST', '/v1/nodes', { driver: 'fake-hardware', owner: ks.projects.p1 });
      assert.equal(foreign.status, 400, foreign.text);
      assert.equal(fault(foreign), 'Cannot create a node as a project scoped admin with an owner other than your own project.');
      const byMember = await call(server, 'p1-member', 'POST', '/v1/nodes', { driver: 'fake-hardware' });
      assert.equal(byMember.status, 403, byMember.text);
      assert.match(fault(byMember), /baremetal:node:create/);
      // the system admin's node has the owner it is given (or none)
      const bySystem = await call(server, 'sys-admin', 'POST', '/v1/nodes', { driver: 'fake-hardware', owner: ks.projects.p2 });
      assert.equal(bySystem.body.owner, ks.projects.p2);
      assert.equal((await call(server, 'admin', 'DELETE', `/v1/nodes/${made.body.uuid}`)).status, 204);
      assert.equal((await call(server, 'sys-admin', 'DELETE', `/v1/nodes/${bySystem.body.uuid}`)).status, 204);
    });

    test("allocations: the owner defaults to the caller's project; each project sees only its own; out of scope is 404", async () => {
      const p1 = ks.projects.p1!;
      const p2 = ks.projects.p2!;
      const create = (p: Persona, body: Record<string, unknown>) => call(server, p, 'POST', '/v1/allocations', { resource_class: `bm-${dialect}`, ...body });
      const mine = await create('p1-member', { name: `p1-${dialect}` });
      assert.equal(mine.status, 201, mine.text);
      assert.equal(mine.body.owner, p1);
      const explicit = await create('p1-member', { name: `p1b-${dialect}`, owner: p1 });
      assert.equal(explicit.status, 201, explicit.text);
      assert.equal(explicit.body.owner, p1);
      const theirs = await create('p2-member', { name: `p2-${dialect}` });
      assert.equal(theirs.body.owner, p2);
      const system = await create('sys-admin', { name: `sys-${dialect}` });
      assert.equal(system.status, 201, system.text);
      assert.equal(system.body.owner, null);
      const forOther = await create('sys-admin', { name: `sys-p2-${dialect}`, owner: p2 });
      assert.equal(forOther.body.owner, p2);
      // naming another project as owner, or creating as a reader or a service: refused
      const stolen = await create('p1-member', { name: `steal-${dialect}`, owner: p2 });
      assert.equal(stolen.status, 403, stolen.text);
      assert.equal((await create('p1-reader', { name: `r-${dialect}` })).status, 403);
      assert.equal((await create('nova', { name: `n-${dialect}` })).status, 403);
      // candidates another project's nodes: as if they did not exist
      const hidden = await create('p1-member', { name: `hidden-${dialect}`, candidate_nodes: [nodes.other] });
      assert.equal(hidden.status, 400, hidden.text);
      assert.equal(fault(hidden), `Nodes cannot be found: ${nodes.other}`);
      assert.equal((await create('p1-member', { name: `cand-${dialect}`, candidate_nodes: [nodes.owned, nodes.leased] })).status, 201);

      const listed = async (p: Persona, query = '') => {
        const res = await call(server, p, 'GET', `/v1/allocations${query}`);
        assert.equal(res.status, 200, `${p}: ${res.text}`);
        return (res.body.allocations as Array<{ name: string }>).map((a) => a.name).sort();
      };
      assert.deepEqual(await listed('p1-member'), [`cand-${dialect}`, `p1-${dialect}`, `p1b-${dialect}`]);
      assert.deepEqual(await listed('p1-reader'), [`cand-${dialect}`, `p1-${dialect}`, `p1b-${dialect}`]);
      assert.deepEqual(await listed('p2-member'), [`p2-${dialect}`, `sys-p2-${dialect}`]);
      assert.deepEqual(await listed('admin'), []);
      assert.equal((await listed('sys-admin')).length, 6);
      assert.deepEqual(await listed('sys-admin', `?owner=${p2}`), [`p2-${dialect}`, `sys-p2-${dialect}`]);
      assert.equal((await call(server, 'p1-member', 'GET', `/v1/allocations?owner=${p2}`)).status, 403);

      const one = (p: Persona, method: string, name: string, body?: unknown) => call(server, p, method, `/v1/allocations/${name}`, body);
      assert.equal((await one('p1-reader', 'GET', `p1-${dialect}`)).status, 200);
      assert.equal((await one('sys-admin', 'GET', `p1-${dialect}`)).status, 200);
      for (const p of ['p1-member', 'p1-reader'] as const) {
        for (const [method, body] of [
          ['GET', undefined],
          ['PATCH', [{ op: 'add', path: '/extra/k', value: 'v' }]],
          ['DELETE', undefined],
        ] as const) {
          const res = await one(p, method, `p2-${dialect}`, body);
          assert.equal(res.status, 404, `${p} ${method} p2's: ${res.text}`);
          assert.equal(fault(res), `Allocation p2-${dialect} could not be found.`);
        }
      }
      assert.equal((await one('p1-member', 'GET', `sys-${dialect}`)).status, 404, "an allocation without owner is the system's");
      assert.equal((await one('p1-reader', 'PATCH', `p1-${dialect}`, [{ op: 'add', path: '/extra/k', value: 'v' }])).status, 403);
      assert.equal((await one('p1-reader', 'DELETE', `p1-${dialect}`)).status, 403);
      const patched = await one('p1-member', 'PATCH', `p1-${dialect}`, [{ op: 'add', path: '/extra/k', value: 'v' }]);
      assert.equal(patched.status, 200, patched.text);
      assert.equal((await one('p1-member', 'DELETE', `p1-${dialect}`)).status, 204);
      assert.equal((await one('sys-admin', 'DELETE', `p2-${dialect}`)).status, 204);
    });
  });
}

function ids(server: TestServer, who: Persona, method: string, path: string, body?: unknown): Promise<HttpResponse> {
  return request(method, `${server.url}/ids${path}`, body, { headers: { 'x-auth-token': tokens[who] } });
}

/** A 404 in the identifier API's format: problem+json, `ids.not_found`. */
function assertNotFound(res: HttpResponse, what: string): void {
  assert.equal(res.status, 404, `${what}: ${res.text}`);
  assert.equal(res.headers.get('content-type'), 'application/problem+json', what);
  assert.equal(res.body.code, 'ids.not_found', what);
}

for (const dialect of DIALECTS) {
  describe(`identifier pools per project on ${dialect}`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect), ...ks.allotConfig() });
    });
    after(() => server.close());

    test("readers read and members use their project's pools and the shared ones; another project's is 404; admins see all", async () => {
      const p1 = ks.projects.p1!;
      const p2 = ks.projects.p2!;
      const pools = { p1: `p1-vni-${dialect}`, p2: `p2-vni-${dialect}`, shared: `shared-vni-${dialect}` };
      for (const [key, project] of [
        ['p1', p1],
        ['p2', p2],
        ['shared', undefined],
      ] as const) {
        const res = await ids(server, 'admin', 'POST', '/v1/pools', {
          name: pools[key],
          kind: 'integer',
          ranges: ['1-100'],
          ...(project ? { project_id: project } : {}),
        });
        assert.equal(res.status, 201, res.text);
        assert.equal(res.body.project_id, project ?? null);
      }
      // members may not make pools, not even for their own project
      assert.equal(
        (await ids(server, 'p1-member', 'POST', '/v1/pools', { name: `mine-${dialect}`, kind: 'integer', ranges: ['1-9'], project_id: p1 })).status,
        403,
      );

      const listed = async (p: Persona) => {
        const res = await ids(server, p, 'GET', '/v1/pools');
        assert.equal(res.status, 200, `${p}: ${res.text}`);
        return (res.body.items as Array<{ name: string }>).map((x) => x.name).sort();
      };
      const all = Object.values(pools).sort();
      for (const p of ['admin', 'sys-admin', 'nova'] as const) assert.deepEqual(await listed(p), all, p);
      assert.deepEqual(await listed('p1-member'), [pools.p1, pools.shared].sort());
      assert.deepEqual(await listed('p1-reader'), [pools.p1, pools.shared].sort());
      assert.deepEqual(await listed('p2-member'), [pools.p2, pools.shared].sort());

      assert.equal((await ids(server, 'p1-reader', 'GET', `/v1/pools/${pools.p1}`)).status, 200);
      assert.equal((await ids(server, 'p1-reader', 'GET', `/v1/pools/${pools.shared}`)).status, 200);
      for (const path of [
        `/v1/pools/${pools.p2}`,
        `/v1/pools/${pools.p2}/free-ranges`,
        `/v1/pools/${pools.p2}/allocations`,
        `/v1/allocations?pool=${pools.p2}`,
      ]) {
        assertNotFound(await ids(server, 'p1-reader', 'GET', path), `p1-reader GET ${path}`);
      }

      // members allocate in their project's and shared pools; a reader may not; another project's pool is not found
      const take = (p: Persona, pool: string, owner: string) => ids(server, p, 'POST', `/v1/pools/${pool}/allocations`, { owner });
      const mine = await take('p1-member', pools.p1, 'vm-1');
      assert.equal(mine.status, 201, mine.text);
      assert.equal((await take('p1-member', pools.shared, 'vm-1')).status, 201);
      assert.equal((await take('p1-reader', pools.p1, 'vm-2')).status, 403);
      assertNotFound(await take('p1-member', pools.p2, 'vm-1'), "p1-member allocating in p2's pool");
      // all or nothing: a batch naming another project's pool takes nothing from the member's own
      const batch = await ids(server, 'p1-member', 'POST', '/v1/allocations', {
        allocations: [
          { pool: pools.p1, owner: 'vm-3' },
          { pool: pools.p2, owner: 'vm-3' },
        ],
      });
      assertNotFound(batch, 'a batch with a pool of another project');
      const ownValues = await ids(server, 'p1-reader', 'GET', `/v1/pools/${pools.p1}/allocations`);
      assert.deepEqual(
        (ownValues.body.items as Array<{ owner: string }>).map((a) => a.owner),
        ['vm-1'],
      );

      // values in another project's pool: not found for reading, changing and releasing
      const theirs = await take('p2-member', pools.p2, 'vm-9');
      assert.equal(theirs.status, 201, theirs.text);
      const id = theirs.body.id as string;
      assertNotFound(await ids(server, 'p1-member', 'GET', `/v1/allocations/${id}`), 'GET');
      assertNotFound(await ids(server, 'p1-member', 'PATCH', `/v1/allocations/${id}`, { metadata: { k: 'v' } }), 'PATCH');
      assertNotFound(await ids(server, 'p1-member', 'DELETE', `/v1/allocations/${id}`), 'DELETE');
      const seenByP1 = await ids(server, 'p1-reader', 'GET', '/v1/allocations');
      assert.deepEqual((seenByP1.body.items as Array<{ pool: string }>).map((a) => a.pool).sort(), [pools.p1, pools.shared].sort());
      const seenByAdmin = await ids(server, 'sys-admin', 'GET', '/v1/allocations');
      assert.equal(seenByAdmin.body.items.length, 3);
      assert.equal((await ids(server, 'p2-member', 'GET', `/v1/allocations/${id}`)).status, 200);
      assert.equal((await ids(server, 'p2-member', 'DELETE', `/v1/allocations/${id}`)).status, 204);
      assert.equal((await ids(server, 'p1-member', 'DELETE', `/v1/allocations/${mine.body.id}`)).status, 204);
      // a p1 instance whose (shared) spec names p2's pool: validating it allocates nothing, whoever
      // validates it — an instance takes from its project's pools and the shared ones
      const morePool = `p2-more-${dialect}`;
      assert.equal((await ids(server, 'admin', 'POST', '/v1/pools', { name: morePool, kind: 'integer', ranges: ['1-9'], project_id: p2 })).status, 201);
      const spec = await ids(server, 'admin', 'POST', '/v1/allocation-specs', {
        name: `p2-spec-${dialect}`,
        attributes: { vni: { from: 'pool', pool: morePool } },
      });
      assert.equal(spec.status, 201, spec.text);
      const instance = await ids(server, 'p1-member', 'POST', '/v1/service-instances', {
        service_type: 'wire',
        allocation_spec: `p2-spec-${dialect}`,
        attributes: {},
      });
      assert.equal(instance.status, 201, instance.text);
      assert.equal(instance.body.project_id, p1);
      assertNotFound(await ids(server, 'p1-member', 'POST', `/v1/service-instances/${instance.body.id}/validate`), "validating with p2's pool");
      assertNotFound(await ids(server, 'admin', 'POST', `/v1/service-instances/${instance.body.id}/validate`), "p1's instance with p2's pool, by an admin");
      assertNotFound(await ids(server, 'p2-member', 'POST', `/v1/service-instances/${instance.body.id}/validate`), "p1's instance, by p2");
      // admins manage every project's pools
      assert.equal((await ids(server, 'admin', 'PATCH', `/v1/pools/${pools.p2}`, { description: 'p2 VNIs' })).status, 200);
      assert.equal((await ids(server, 'sys-admin', 'DELETE', `/v1/pools/${pools.p2}`)).status, 204);
    });
  });
}

for (const dialect of DIALECTS) {
  describe(`service instances and specs per project on ${dialect}`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect), ...ks.allotConfig() });
    });
    after(() => server.close());

    test("an instance is its creator's project's (404 to others, in every operation); a spec of a project is that project's; the node and capacity it holds are its project's too", async () => {
      const p1 = ks.projects.p1!;
      const p2 = ks.projects.p2!;
      // a node p1 owns and one p2 owns; bandwidth on a fabric provider; a shared VLAN pool
      for (const [name, owner] of [
        [`inst-p1-${dialect}`, p1],
        [`inst-p2-${dialect}`, p2],
      ] as const) {
        const node = await call(server, 'sys-admin', 'POST', '/v1/nodes', { driver: 'fake-hardware', name, resource_class: `inst-${dialect}`, owner });
        assert.equal(node.status, 201, node.text);
        for (const [verb, target] of [
          ['provision', 'manage'],
          ['provision', 'provide'],
          ['power', 'power off'],
        ] as const) {
          assert.equal((await call(server, 'sys-admin', 'PUT', `/v1/nodes/${name}/states/${verb}`, { target })).status, 202);
          for (let i = 0; i < 400; i++) {
            const n = (await call(server, 'sys-admin', 'GET', `/v1/nodes/${name}`)).body;
            if (n.target_provision_state === null && n.target_power_state === null && n.reservation === null) break;
            await new Promise((r) => setTimeout(r, 25));
          }
        }
      }
      const placement = (method: string, path: string, body?: unknown) =>
        request(method, `${server.url}/placement${path}`, body, { headers: { 'x-auth-token': tokens.admin, 'openstack-api-version': 'placement 1.39' } });
      const fabric = await placement('POST', '/resource_providers', { name: `fabric-${dialect}` });
      assert.equal(fabric.status, 200, fabric.text);
      const inv = await placement('PUT', `/resource_providers/${fabric.body.uuid}/inventories`, {
        resource_provider_generation: fabric.body.generation,
        inventories: { NET_BW_EGR_KILOBIT_PER_SEC: { total: 100000 } },
      });
      assert.equal(inv.status, 200, inv.text);
      assert.equal((await ids(server, 'admin', 'POST', '/v1/pools', { name: `inst-vlan-${dialect}`, kind: 'integer', ranges: ['10-19'] })).status, 201);
      const attributes = {
        server: { from: 'node', resource_class: `inst-${dialect}` },
        uplink: { from: 'capacity', resources: { NET_BW_EGR_KILOBIT_PER_SEC: 1000 } },
        vlan: { from: 'pool', pool: `inst-vlan-${dialect}` },
      };
      const shared = `inst-shared-${dialect}`;
      const p1Only = `inst-p1-${dialect}`;
      assert.equal((await ids(server, 'admin', 'POST', '/v1/allocation-specs', { name: shared, attributes })).status, 201);
      assert.equal((await ids(server, 'admin', 'POST', '/v1/allocation-specs', { name: p1Only, attributes, project_id: p1 })).status, 201);

      // specs: p1's is p1's
      assert.equal((await ids(server, 'p1-reader', 'GET', `/v1/allocation-specs/${p1Only}`)).status, 200);
      assertNotFound(await ids(server, 'p2-member', 'GET', `/v1/allocation-specs/${p1Only}`), "p1's spec, by p2");
      const p2Specs = (await ids(server, 'p2-member', 'GET', '/v1/allocation-specs')).body.items.map((x: { name: string }) => x.name);
      assert.ok(p2Specs.includes(shared) && !p2Specs.includes(p1Only), JSON.stringify(p2Specs));
      const withP1Spec = await ids(server, 'p2-member', 'POST', '/v1/service-instances', { allocation_spec: p1Only, attributes: {} });
      assert.equal(withP1Spec.status, 422, withP1Spec.text);

      // an instance is its creator's project's; naming another needs ids:all_projects
      const other = await ids(server, 'p1-member', 'POST', '/v1/service-instances', { allocation_spec: shared, attributes: {}, project_id: p2 });
      assert.equal(other.status, 403, other.text);
      assert.equal(other.body.code, 'ids.forbidden');
      const made = await ids(server, 'p1-member', 'POST', '/v1/service-instances', { allocation_spec: p1Only, attributes: {}, validate: true, promote: true });
      assert.equal(made.status, 201, made.text);
      assert.equal(made.body.project_id, p1);
      const id = made.body.id as string;
      // the node it holds is one p1 owns, allocated to p1; the capacity's consumer is p1's
      assert.equal(made.body.active_attributes.server.name, `inst-p1-${dialect}`);
      const allocation = made.body.active_attributes.server.allocation;
      const asP1 = await call(server, 'p1-member', 'GET', `/v1/allocations/${allocation}`);
      assert.equal(asP1.status, 200, asP1.text);
      assert.equal(asP1.body.owner, p1);
      assert.equal((await call(server, 'p2-member', 'GET', `/v1/allocations/${allocation}`)).status, 404);
      const consumer = await placement('GET', `/allocations/${id}`);
      assert.equal(consumer.body.project_id, p1);

      // p2 does not see it, in any operation; p1's readers and admins do
      assert.equal((await ids(server, 'p1-reader', 'GET', `/v1/service-instances/${id}`)).status, 200);
      assert.equal((await ids(server, 'sys-admin', 'GET', `/v1/service-instances/${id}`)).status, 200);
      for (const [method, path, body] of [
        ['GET', `/v1/service-instances/${id}`, undefined],
        ['PATCH', `/v1/service-instances/${id}`, { attributes: {} }],
        ['POST', `/v1/service-instances/${id}/validate`, undefined],
        ['POST', `/v1/service-instances/${id}/promote`, undefined],
        ['POST', `/v1/service-instances/${id}/rollback`, undefined],
        ['DELETE', `/v1/service-instances/${id}/attribute-sets/rollback`, undefined],
        ['DELETE', `/v1/service-instances/${id}`, undefined],
      ] as const) {
        assertNotFound(await ids(server, 'p2-member', method, path, body), `p2-member ${method} ${path}`);
      }
      const listed = (who: Persona) => ids(server, who, 'GET', '/v1/service-instances').then((r) => (r.body.items as Array<{ id: string }>).map((i) => i.id));
      assert.ok((await listed('p1-reader')).includes(id));
      assert.ok(!(await listed('p2-member')).includes(id));
      assert.ok((await listed('admin')).includes(id));
      // readers read; members change
      assert.equal((await ids(server, 'p1-reader', 'DELETE', `/v1/service-instances/${id}`)).status, 403);
      const gone = await ids(server, 'p1-member', 'DELETE', `/v1/service-instances/${id}`);
      assert.equal(gone.status, 200, gone.text);
      assert.deepEqual(gone.body.holdings, []);
      // an admin may make one for another project
      const forP2 = await ids(server, 'admin', 'POST', '/v1/service-instances', { allocation_spec: shared, attributes: {}, project_id: p2, validate: true });
      assert.equal(forP2.status, 201, forP2.text);
      assert.equal(forP2.body.project_id, p2);
      assert.equal(forP2.body.candidate_attributes.server.name, `inst-p2-${dialect}`, "a p2 instance gets p2's node");
    });
  });
}

describe('bare-metal scoping with the legacy defaults (--no-enforce-new-defaults --no-enforce-scope)', () => {
  let server: TestServer;
  let nodes: Record<'owned' | 'leased' | 'other' | 'none', string>;
  before(async () => {
    server = await startServer({ db: 'sqlite::memory:', ...ks.allotConfig({ enforceNewDefaults: false, enforceScope: false }) });
    nodes = await makeNodes(server, 'legacy');
  });
  after(() => server.close());

  test("any admin sees every node again (rule:is_admin); a project member still only its own, and 404 for others'", async () => {
    assert.deepEqual(names(await call(server, 'admin', 'GET', '/v1/nodes')), ['leased', 'none', 'other', 'owned']);
    assert.equal((await call(server, 'admin', 'GET', `/v1/nodes/${nodes.other}`)).status, 200);
    assert.deepEqual(names(await call(server, 'p1-member', 'GET', '/v1/nodes')), ['leased', 'owned']);
    assert.equal((await call(server, 'p1-member', 'GET', `/v1/nodes/${nodes.other}`)).status, 404);
    // without create_pre_rbac a member's allocation is restricted to its project; an admin's (pre-RBAC) has no owner
    const byMember = await call(server, 'p1-member', 'POST', '/v1/allocations', { resource_class: 'bm-legacy' });
    assert.equal(byMember.status, 201, byMember.text);
    assert.equal(byMember.body.owner, ks.projects.p1);
    const byAdmin = await call(server, 'admin', 'POST', '/v1/allocations', { resource_class: 'bm-legacy' });
    assert.equal(byAdmin.status, 201, byAdmin.text);
    assert.equal(byAdmin.body.owner, null);
    assert.equal((await call(server, 'p1-reader', 'POST', '/v1/allocations', { resource_class: 'bm-legacy' })).status, 403);
  });
});
