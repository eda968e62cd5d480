// GET /allocation_candidates beyond what Placement's own gabbits cover: bounded generation on wide
// symmetric trees, a `limit` sample spread over roots, allot's strategies, and bad input.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { PlacementClient } from '../helpers/http.js';
import { defaultConfig } from '../../src/config.js';
import { type TestServer, startServer } from '../helpers/server.js';

/** The server's cap on candidates for these tests (the default is 10 000). */
const CAP = 500;

async function provider(api: PlacementClient, name: string, parent?: string): Promise<string> {
  const res = await api.post('/resource_providers', { name, parent_provider_uuid: parent ?? null });
  assert.equal(res.status, 200, res.text);
  return res.body.uuid;
}

async function inventory(api: PlacementClient, uuid: string, inventories: Record<string, { total: number }>): Promise<void> {
  const gen = (await api.get(`/resource_providers/${uuid}`)).body.generation;
  const res = await api.put(`/resource_providers/${uuid}/inventories`, { resource_provider_generation: gen, inventories });
  assert.equal(res.status, 200, res.text);
}

async function use(api: PlacementClient, uuid: string, resources: Record<string, number>): Promise<void> {
  const res = await api.put(`/allocations/${randomUUID()}`, {
    allocations: { [uuid]: { resources } },
    project_id: 'p',
    user_id: 'u',
    consumer_generation: null,
    consumer_type: 'INSTANCE',
  });
  assert.equal(res.status, 204, res.text);
}

/** The roots of the providers each candidate allocates from (1.29+ summaries carry the root). */
function rootsOf(body: any): string[] {
  return body.allocation_requests.map((r: any) => {
    const roots = new Set(Object.keys(r.allocations).map((u) => body.provider_summaries[u].root_provider_uuid));
    assert.equal(roots.size, 1);
    return [...roots][0];
  });
}

const groups = (n: number, resources: string) => Array.from({ length: n }, (_, i) => `resources${i + 1}=${resources}`).join('&');

for (const dialect of DIALECTS) {
  describe(`allocation candidates (${dialect})`, () => {
    let server: TestServer;
    let api: PlacementClient;
    /** a root with 8 identical children of 8 VCPU each: the explosion case */
    let wide: string;
    /** 12 roots, each with two NUMA children of 4 VCPU */
    const computes: string[] = [];

    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect), maxCandidates: CAP });
      api = new PlacementClient(server.placementUrl);
      assert.equal((await api.put('/resource_classes/CUSTOM_WIDE')).status, 201);
      wide = await provider(api, 'wide');
      for (let i = 0; i < 8; i++) await inventory(api, await provider(api, `wide-${i}`, wide), { CUSTOM_WIDE: { total: 8 } });
      for (let i = 0; i < 12; i++) {
        const cn = await provider(api, `cn${i}`);
        computes.push(cn);
        for (const numa of [0, 1]) await inventory(api, await provider(api, `cn${i}-numa${numa}`, cn), { VCPU: { total: 4 }, MEMORY_MB: { total: 4096 } });
      }
    });
    after(() => server.close());

    test('8 children × 6 groups stops at the configured cap, with valid candidates', async () => {
      // group_policy=none: 8⁶ = 262 144 combinations; isolate: 8·7·6·5·4·3 = 20 160.
      for (const policy of ['none', 'isolate']) {
        const res = await api.get(`/allocation_candidates?${groups(6, 'CUSTOM_WIDE:1')}&group_policy=${policy}`);
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.allocation_requests.length, CAP);
        const seen = new Set<string>();
        for (const r of res.body.allocation_requests) {
          const providers = Object.keys(r.mappings).map((s) => r.mappings[s][0]);
          if (policy === 'isolate') assert.equal(new Set(providers).size, 6);
          const total = Object.values(r.allocations).reduce((n: number, a: any) => n + a.resources.CUSTOM_WIDE, 0);
          assert.equal(total, 6);
          seen.add(JSON.stringify(r.mappings));
        }
        assert.equal(seen.size, CAP, 'candidates are distinct');
        // Only the one tree is summarised.
        assert.equal(Object.keys(res.body.provider_summaries).length, 9);
      }
      const limited = await api.get(`/allocation_candidates?${groups(6, 'CUSTOM_WIDE:1')}&group_policy=none&limit=7`);
      assert.equal(limited.body.allocation_requests.length, 7);
    });

    test('with the default configuration the same trees stop at the default cap', async () => {
      const defaults = await startServer({ db: await freshDatabaseUrl(dialect) });
      try {
        const own = new PlacementClient(defaults.placementUrl);
        assert.equal((await own.put('/resource_classes/CUSTOM_WIDE')).status, 201);
        const root = await provider(own, 'wide');
        for (let i = 0; i < 8; i++) await inventory(own, await provider(own, `wide-${i}`, root), { CUSTOM_WIDE: { total: 8 } });
        for (const policy of ['isolate', 'none']) {
          const res = await own.get(`/allocation_candidates?${groups(6, 'CUSTOM_WIDE:1')}&group_policy=${policy}`);
          assert.equal(res.status, 200);
          assert.equal(res.body.allocation_requests.length, defaultConfig().maxCandidates);
          assert.match(res.headers.get('server-timing')!, /candidates;desc="10000 capped"/);
        }
      } finally {
        await defaults.close();
      }
    });

    test('a limit sample is spread over the roots, one candidate per root first', async () => {
      // Each root has 4 candidates (2 NUMA nodes for each of 2 groups); Placement's first 12 would
      // come from 3 roots.
      const res = await api.get('/allocation_candidates?resources1=VCPU:1&resources2=VCPU:1&group_policy=none&limit=12');
      assert.equal(res.status, 200, res.text);
      const roots = rootsOf(res.body);
      assert.equal(roots.length, 12);
      assert.deepEqual(new Set(roots), new Set(computes));
      // Without a limit every candidate of every root comes back: 12 roots × 4.
      const all = await api.get('/allocation_candidates?resources1=VCPU:1&resources2=VCPU:1&group_policy=none');
      assert.equal(all.body.allocation_requests.length, 48);
      // The first round already visits every root.
      assert.deepEqual(new Set(rootsOf(all.body).slice(0, 12)), new Set(computes));
    });

    test('strategies: spread takes the emptiest roots first, pack the fullest, random varies', async () => {
      // cn0 is the fullest (6 of 8 VCPU used), cn1 next (3), the others empty.
      await use(api, (await api.get(`/resource_providers?in_tree=${computes[0]}`)).body.resource_providers[1].uuid, { VCPU: 3 });
      await use(api, (await api.get(`/resource_providers?in_tree=${computes[0]}`)).body.resource_providers[2].uuid, { VCPU: 3 });
      await use(api, (await api.get(`/resource_providers?in_tree=${computes[1]}`)).body.resource_providers[1].uuid, { VCPU: 3 });
      const order = async (strategy: string) => rootsOf((await api.get(`/allocation_candidates?resources=VCPU:1&limit=12&allot_strategy=${strategy}`)).body);
      const packed = await order('pack');
      assert.deepEqual(packed.slice(0, 2), [computes[0], computes[1]]);
      const spread = await order('spread');
      assert.deepEqual(spread.slice(-2), [computes[1], computes[0]]);
      // Stable is the provider creation order, and the same every time.
      assert.deepEqual(await order('stable'), computes);
      assert.deepEqual(await order('stable'), computes);
      // Random: over 30 single-candidate samples, more than one root turns up.
      const firsts = new Set<string>();
      for (let i = 0; i < 30; i++) {
        const res = await api.get('/allocation_candidates?resources=VCPU:1&limit=1&allot_strategy=random');
        assert.equal(res.body.allocation_requests.length, 1);
        firsts.add(rootsOf(res.body)[0]!);
      }
      assert.ok(firsts.size > 1);
      // Within a root, pack also prefers the fuller NUMA node: cn1's used node comes first.
      const cn1 = await api.get(`/allocation_candidates?resources=VCPU:1&in_tree=${computes[1]}&allot_strategy=pack`);
      const usedNode = (await api.get(`/resource_providers?in_tree=${computes[1]}`)).body.resource_providers[1].uuid;
      assert.deepEqual(Object.keys(cn1.body.allocation_requests[0].allocations), [usedNode]);
    });

    test('old microversions: list form at 1.10, no traits before 1.17, requested classes only before 1.27', async () => {
      const old = await api.at('1.10').get(`/allocation_candidates?resources=CUSTOM_WIDE:1`);
      assert.equal(old.status, 200);
      // Before 1.29 only providers that can serve the whole request alone count.
      assert.equal(old.body.allocation_requests.length, 8);
      assert.ok(Array.isArray(old.body.allocation_requests[0].allocations));
      assert.deepEqual(Object.keys(old.body.allocation_requests[0].allocations[0]), ['resource_provider', 'resources']);
      const summary = Object.values(old.body.provider_summaries)[0] as any;
      assert.deepEqual(Object.keys(summary), ['resources']);
      assert.equal(old.headers.get('last-modified'), null);
      const v126 = await api.at('1.26').get(`/allocation_candidates?resources=VCPU:1&in_tree=${computes[5]}`);
      assert.equal(v126.status, 400, 'in_tree arrives at 1.31');
      const mid = await api.at('1.26').get(`/allocation_candidates?resources=MEMORY_MB:1`);
      for (const s of Object.values(mid.body.provider_summaries) as any[]) assert.deepEqual(Object.keys(s.resources), ['MEMORY_MB']);
      const recent = await api.get(`/allocation_candidates?resources=MEMORY_MB:1&limit=1`);
      const node = Object.keys(recent.body.allocation_requests[0].allocations)[0]!;
      assert.deepEqual(Object.keys(recent.body.provider_summaries[node].resources).sort(), ['MEMORY_MB', 'VCPU']);
      assert.ok(recent.headers.get('last-modified'));
    });

    test('names that do not exist: classes and traits are a 400, aggregates and trees match nothing', async () => {
      const cls = await api.get('/allocation_candidates?resources=CUSTOM_NOPE:1');
      assert.equal(cls.status, 400);
      assert.match(cls.body.errors[0].detail, /No such resource class CUSTOM_NOPE/);
      const trait = await api.get('/allocation_candidates?resources=VCPU:1&required=CUSTOM_NOPE,CUSTOM_ALSO_NOPE');
      assert.equal(trait.status, 400);
      assert.match(trait.body.errors[0].detail, /No such trait\(s\): CUSTOM_ALSO_NOPE, CUSTOM_NOPE\./);
      for (const q of [`member_of=${randomUUID()}`, `in_tree=${randomUUID()}`]) {
        const res = await api.get(`/allocation_candidates?resources=VCPU:1&${q}`);
        assert.equal(res.status, 200);
        assert.deepEqual(res.body, { allocation_requests: [], provider_summaries: {} });
      }
    });

    test('bad input is a 400 in Placement format, never a 500', async () => {
      const bad = [
        'resources=VCPU:abc',
        'resources=VCPU:-1',
        'resources=VCPU:1:2',
        'resources=:1',
        'resources=%E2%98%83:1',
        'resources=VCPU:1&limit=0',
        'resources=VCPU:1&limit=1e3',
        'resources=VCPU:1&limit=%F0%9F%92%A9',
        'resources=VCPU:1&group_policy=bogus',
        'resources=VCPU:1&required=',
        'resources=VCPU:1&required=!',
        'resources=VCPU:1&required=in:',
        'resources=VCPU:1&required=in:A,!B',
        'resources=VCPU:1&required=CUSTOM_%E2%98%83',
        'resources=VCPU:1&required=HW_CPU_X86_AVX2,!HW_CPU_X86_AVX2',
        'resources=VCPU:1&member_of=in:',
        'resources=VCPU:1&member_of=not-a-uuid',
        `resources=VCPU:1&member_of=${randomUUID()},${randomUUID()}`,
        'resources=VCPU:1&in_tree=not-a-uuid',
        'resources=VCPU:1&root_required=A&root_required=B',
        'resources=VCPU:1&root_required=HW_CPU_X86_AVX2,!HW_CPU_X86_AVX2',
        'resources=VCPU:1&same_subtree=_X',
        'resources=VCPU:1&same_subtree=,',
        'resources_A=VCPU:1&resources_B=VCPU:1',
        'required_A=HW_CPU_X86_AVX2',
        'resources=VCPU:1&unknown=1',
        'resources=VCPU:1&allot_strategy=fastest',
        `resources_${'x'.repeat(65)}=VCPU:1`,
        'group_policy=none',
        '',
      ];
      for (const q of bad) {
        const res = await api.get(`/allocation_candidates?${q}`);
        assert.equal(res.status, 400, `${q} → ${res.status} ${res.text}`);
        assert.equal(res.body.errors[0].status, 400);
        assert.equal(typeof res.body.errors[0].detail, 'string');
      }
      // Out-of-range numbers and many groups are answered (nothing fits, or a bounded set).
      for (const q of [
        'resources=VCPU:99999999999999999999999',
        'resources=VCPU:1&limit=99999999999999999999',
        `${groups(300, 'CUSTOM_WIDE:1')}&group_policy=none`,
      ]) {
        const res = await api.get(`/allocation_candidates?${q}`);
        assert.equal(res.status, 200, `${q.slice(0, 60)} → ${res.status} ${res.text.slice(0, 300)}`);
        assert.ok(res.body.allocation_requests.length <= CAP);
      }
    });
  });
}
