// "Who holds VLAN 105?" and "release it": an allocation found by its pool and a value
// (`GET /pools/{name}/allocations?value=`: a value inside a held block finds the block, a prefix
// finds the blocks holding part of it) and released by them (`DELETE /pools/{name}/allocations?value=`,
// the allocation's value exactly, with the rules of a release by id: If-Match, the held-by-instance
// refusal and ?force=true), on every pool kind, with racing releases.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { HttpResponse } from '../helpers/http.js';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { IdsClient } from './helpers.js';

function problem(res: HttpResponse, status: number, code: string) {
  assert.equal(res.status, status, res.text);
  assert.equal(res.headers.get('content-type'), 'application/problem+json');
  assert.equal(res.body.code, code, res.text);
}

const values = (res: HttpResponse) => {
  assert.equal(res.status, 200, res.text);
  return res.body.items.map((a: { value: unknown }) => a.value);
};

for (const dialect of DIALECTS) {
  describe(`identifiers by value (${dialect})`, () => {
    let server: TestServer;
    let api: IdsClient;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect) });
      api = new IdsClient(server.url);
    });
    after(() => server.close());

    const allocate = async (pool: string, body: Record<string, unknown>) => {
      const res = await api.post(`/pools/${pool}/allocations`, body);
      assert.equal(res.status, 201, res.text);
      return res.body;
    };

    test('integer pool: the allocation holding a value, a block by any value inside it, nothing for a free value', async () => {
      assert.equal((await api.post('/pools', { name: 'vlan', kind: 'integer', ranges: ['1-4094'] })).status, 201);
      const a105 = await allocate('vlan', { owner: 'svc-a', value: 105 });
      await allocate('vlan', { owner: 'svc-b', value: 200, count: 4 });
      const found = await api.get('/pools/vlan/allocations?value=105');
      assert.deepEqual(
        found.body.items.map((a: { id: string; owner: string }) => [a.id, a.owner]),
        [[a105.id, 'svc-a']],
      );
      for (const inside of [200, 202, 203]) assert.deepEqual(values(await api.get(`/pools/vlan/allocations?value=${inside}`)), [200]);
      assert.deepEqual(values(await api.get('/pools/vlan/allocations?value=106')), []);
      assert.deepEqual(values(await api.get('/pools/vlan/allocations?value=9999')), [], 'outside the ranges: nobody holds it');
      // the other filters still apply
      assert.deepEqual(values(await api.get('/pools/vlan/allocations?value=105&owner=svc-b')), []);
      for (const bad of ['abc', '-1', '1.5', '9007199254740992', '10.0.0.1']) {
        const res = await api.get(`/pools/vlan/allocations?value=${encodeURIComponent(bad)}`);
        problem(res, 400, 'ids.invalid_request');
        assert.equal(res.body.errors[0].parameter, 'value');
      }
      problem(await api.get('/pools/nope/allocations?value=1'), 404, 'ids.not_found');
    });

    test('address and prefix pools: values as the kind writes them; a prefix finds the blocks holding part of it', async () => {
      assert.equal((await api.post('/pools', { name: 'mgmt', kind: 'address', ranges: ['10.0.0.0/24'] })).status, 201);
      await allocate('mgmt', { owner: 'host-1', value: '10.0.0.5' });
      await allocate('mgmt', { owner: 'host-2', value: '10.0.0.8', count: 4 });
      assert.deepEqual(values(await api.get('/pools/mgmt/allocations?value=10.0.0.5')), ['10.0.0.5']);
      assert.deepEqual(values(await api.get('/pools/mgmt/allocations?value=10.0.0.10')), ['10.0.0.8']);
      assert.deepEqual(values(await api.get('/pools/mgmt/allocations?value=10.0.0.6')), []);
      problem(await api.get('/pools/mgmt/allocations?value=2001:db8::1'), 400, 'ids.invalid_request');
      problem(await api.get(`/pools/mgmt/allocations?value=${encodeURIComponent('10.0.0.0/30')}`), 400, 'ids.invalid_request');

      assert.equal((await api.post('/pools', { name: 'nets', kind: 'prefix', ranges: ['10.1.0.0/16'], prefix_length: 24 })).status, 201);
      await allocate('nets', { owner: 'net-1', value: '10.1.3.0/24' });
      await allocate('nets', { owner: 'net-2', value: '10.1.4.0/23', prefix_length: 23 });
      const q = (v: string) => api.get(`/pools/nets/allocations?value=${encodeURIComponent(v)}`);
      assert.deepEqual(values(await q('10.1.3.0/24')), ['10.1.3.0/24']);
      assert.deepEqual(values(await q('10.1.3.77')), ['10.1.3.0/24'], 'an address inside a prefix');
      assert.deepEqual(values(await q('10.1.3.128/25')), ['10.1.3.0/24'], 'a smaller prefix inside one');
      assert.deepEqual(values(await q('10.1.5.0/24')), ['10.1.4.0/23']);
      assert.deepEqual(values(await q('10.1.0.0/16')), ['10.1.3.0/24', '10.1.4.0/23'], 'a larger prefix: the blocks inside it, in value order');
      assert.deepEqual(values(await q('10.1.2.0/23')), ['10.1.3.0/24']);
      assert.deepEqual(values(await q('10.1.6.0/24')), []);
      const paged = await api.get(`/pools/nets/allocations?value=${encodeURIComponent('10.1.0.0/16')}&limit=1`);
      assert.deepEqual(values(paged), ['10.1.3.0/24']);
      assert.deepEqual(values(await api.get(`/pools/nets/allocations?value=${encodeURIComponent('10.1.0.0/16')}&limit=1&cursor=${paged.body.next_cursor}`)), [
        '10.1.4.0/23',
      ]);
      const hostBits = await q('10.1.3.1/24');
      problem(hostBits, 400, 'ids.invalid_request');
      assert.match(hostBits.body.detail, /host bits set; did you mean 10\.1\.3\.0\/24/);
    });

    test('release by value: the allocation whose value it is, with If-Match; a value inside a block is 404 naming the block', async () => {
      assert.equal((await api.post('/pools', { name: 'vni', kind: 'integer', ranges: ['5000-5999'] })).status, 201);
      const one = await allocate('vni', { owner: 'w-1', value: 5005 });
      const block = await allocate('vni', { owner: 'w-2', value: 5008, count: 8 });

      const inside = await api.delete('/pools/vni/allocations?value=5010');
      problem(inside, 404, 'ids.not_found');
      assert.deepEqual(inside.body.overlapping, { allocation_id: block.id, value: 5008 });
      assert.match(inside.body.detail, /no allocation of pool "vni" has the value 5010; allocation .* of value 5008 holds part of it/);
      problem(await api.delete('/pools/vni/allocations?value=5006'), 404, 'ids.not_found');
      problem(await api.delete('/pools/vni/allocations'), 400, 'ids.invalid_request');
      problem(await api.delete('/pools/vni/allocations?value=x'), 400, 'ids.invalid_request');
      assert.deepEqual(values(await api.get('/pools/vni/allocations')), [5005, 5008], 'nothing was released');

      problem(await api.delete('/pools/vni/allocations?value=5005', { headers: { 'if-match': '"7"' } }), 412, 'ids.precondition_failed');
      assert.equal((await api.delete('/pools/vni/allocations?value=5005', { headers: { 'if-match': `"${one.version}"` } })).status, 204);
      assert.equal((await api.delete('/pools/vni/allocations?value=5008')).status, 204);
      assert.deepEqual(values(await api.get('/pools/vni/allocations')), []);
      // free again at once
      assert.equal((await api.post('/pools/vni/allocations', { owner: 'w-3', value: 5005 })).status, 201);
      assert.equal((await api.post('/pools/vni/allocations', { owner: 'w-4', value: 5008, count: 8 })).status, 201);

      // a prefix is released by its prefix, not by an address inside it
      assert.equal((await api.post('/pools', { name: 'p6', kind: 'prefix', ranges: ['2001:db8::/48'], prefix_length: 64 })).status, 201);
      await allocate('p6', { owner: 'site-1', value: '2001:db8:0:7::/64' });
      problem(await api.delete(`/pools/p6/allocations?value=${encodeURIComponent('2001:db8:0:7::1')}`), 404, 'ids.not_found');
      assert.equal((await api.delete(`/pools/p6/allocations?value=${encodeURIComponent('2001:db8:0:7::/64')}`)).status, 204);
    });

    test('release by value refuses a value a live service instance refers to, unless forced (recorded on the instance)', async () => {
      assert.equal((await api.post('/pools', { name: 'wires', kind: 'integer', ranges: ['1-9'] })).status, 201);
      assert.equal((await api.post('/allocation-specs', { name: 'wire', attributes: { vni: { from: 'pool', pool: 'wires' } } })).status, 201);
      const id = (await api.post('/service-instances', { allocation_spec: 'wire', attributes: {} })).body.id;
      assert.equal((await api.post(`/service-instances/${id}/validate`)).body.candidate_attributes.vni, 1);
      const refused = await api.delete('/pools/wires/allocations?value=1');
      problem(refused, 409, 'ids.value_held_by_instance');
      assert.equal(refused.body.instance, id);
      assert.equal((await api.delete('/pools/wires/allocations?value=1&force=true')).status, 204);
      const instance = (await api.get(`/service-instances/${id}`)).body;
      assert.deepEqual(
        instance.forced_releases.map((f: { pool: string; value: number; sets: string[] }) => [f.pool, f.value, f.sets]),
        [['wires', 1, ['candidate']]],
      );
    });

    test('racing releases of one value: exactly one succeeds, the value is then free, and nothing else is released', async () => {
      assert.equal((await api.post('/pools', { name: 'race', kind: 'integer', ranges: ['1-100'] })).status, 201);
      const bystander = await allocate('race', { owner: 'bystander', value: 50 });
      for (let round = 0; round < 10; round++) {
        const held = await allocate('race', { owner: `round-${round}`, value: 7 });
        const answers = await Promise.all([
          api.delete('/pools/race/allocations?value=7'),
          api.delete('/pools/race/allocations?value=7'),
          api.delete(`/allocations/${held.id}`),
          api.delete('/pools/race/allocations?value=7'),
        ]);
        const statuses = answers.map((r) => r.status).sort();
        assert.deepEqual(statuses, [204, 404, 404, 404], answers.map((r) => r.text).join('\n'));
        assert.deepEqual(values(await api.get('/pools/race/allocations?value=7')), []);
      }
      assert.equal((await api.get(`/allocations/${bystander.id}`)).status, 200);
    });
  });
}
