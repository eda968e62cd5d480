// The identifier API's safety promises found broken from outside (issue 14, "Identifiers"), over
// HTTP on SQLite and PostgreSQL: a value a live service instance uses cannot be freed by
// accident; columns hold every value the API accepts; malformed ranges are refused; idempotent
// repeats compare the whole request.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { IdsClient } from './helpers.js';

function problem(res: { status: number; headers: Headers; body: any; text: string }, status: number, code: string) {
  assert.equal(res.status, status, res.text);
  assert.equal(res.headers.get('content-type'), 'application/problem+json');
  assert.equal(res.body.code, code, res.text);
}

for (const dialect of DIALECTS) {
  describe(`identifier safety (${dialect})`, () => {
    let server: TestServer;
    let api: IdsClient;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect), idsWorkerIntervalMs: 60_000 });
      api = new IdsClient(server.url);
    });
    after(() => server.close());

    const allocationOf = async (owner: string, pool: string) => {
      const items = await api.all(`/pools/${pool}/allocations?owner=${encodeURIComponent(owner)}`);
      assert.equal(items.length, 1, `${owner} holds one value in ${pool}`);
      return items[0];
    };

    test('a value a live instance refers to is not released unless forced; a forced release is recorded and noticed', async () => {
      assert.equal((await api.post('/pools', { name: 'tiny', kind: 'integer', ranges: ['1-3'] })).status, 201);
      assert.equal((await api.post('/allocation-specs', { name: 'tiny-wire', attributes: { vni: { from: 'pool', pool: 'tiny' } } })).status, 201);
      const id = (await api.post('/service-instances', { allocation_spec: 'tiny-wire', attributes: { name: 'w1' } })).body.id;
      const owner = `service-instance/${id}`;
      assert.equal((await api.post(`/service-instances/${id}/validate`)).body.candidate_attributes.vni, 1);
      const held = await allocationOf(owner, 'tiny');

      // candidate set
      const refused = await api.delete(`/allocations/${held.id}`);
      problem(refused, 409, 'ids.value_held_by_instance');
      assert.equal(refused.body.instance, id);
      assert.equal(refused.body.attribute, 'vni');
      assert.deepEqual(refused.body.sets, ['candidate']);
      assert.match(refused.body.detail, new RegExp(`service instance ${id}`));
      problem(await api.delete(`/allocations/${held.id}?force=yes`), 400, 'ids.invalid_request');
      problem(await api.delete(`/allocations/${held.id}?force=false`), 409, 'ids.value_held_by_instance');

      // active set, then active + rollback
      assert.equal((await api.post(`/service-instances/${id}/promote`)).body.state, 'up');
      assert.deepEqual((await api.delete(`/allocations/${held.id}`)).body.sets, ['active']);
      assert.equal((await api.patch(`/service-instances/${id}`, { attributes: { name: 'w1-renamed' } })).body.state, 'update');
      assert.deepEqual((await api.delete(`/allocations/${held.id}`)).body.sets, ['candidate', 'active']);
      await api.post(`/service-instances/${id}/validate`);
      assert.equal((await api.post(`/service-instances/${id}/promote`)).body.rollback_attributes.vni, 1);
      assert.deepEqual((await api.delete(`/allocations/${held.id}`)).body.sets, ['active', 'rollback']);

      // The unforced path never hands the value to another owner: not asked for, not automatically.
      problem(await api.post('/pools/tiny/allocations', { owner: 'other', value: 1 }), 409, 'ids.value_in_use');
      assert.equal((await api.post('/pools/tiny/allocations', { owner: 'b' })).body.value, 2);
      assert.equal((await api.post('/pools/tiny/allocations', { owner: 'c' })).body.value, 3);
      problem(await api.post('/pools/tiny/allocations', { owner: 'd' }), 409, 'ids.pool_exhausted');
      assert.equal((await api.get(`/allocations/${held.id}`)).status, 200, 'the refused releases left the allocation in place');

      // Forced: released, recorded on the instance (its version moves).
      const before = (await api.get(`/service-instances/${id}`)).body;
      assert.deepEqual(before.forced_releases, []);
      assert.equal((await api.delete(`/allocations/${held.id}?force=true`)).status, 204);
      assert.equal((await api.get(`/allocations/${held.id}`)).status, 404);
      const after = (await api.get(`/service-instances/${id}`)).body;
      assert.equal(after.version, before.version + 1);
      assert.equal(after.forced_releases.length, 1);
      const [record] = after.forced_releases;
      assert.deepEqual({ ...record, released_at: undefined }, { allocation_id: held.id, pool: 'tiny', attribute: 'vni', value: 1, sets: ['active', 'rollback'], released_at: undefined });

      // Another owner takes the freed value; the instance's next validation notices and allocates another.
      assert.equal((await api.post('/pools/tiny/allocations', { owner: 'd' })).body.value, 1);
      assert.equal((await api.delete(`/allocations/${(await allocationOf('c', 'tiny')).id}`)).status, 204);
      await api.patch(`/service-instances/${id}`, { attributes: { name: 'w1-again' } });
      const revalidated = (await api.post(`/service-instances/${id}/validate`)).body;
      assert.equal(revalidated.candidate_attributes.vni, 3, 'a value taken by another owner is replaced, not shared');
      assert.deepEqual(revalidated.forced_releases, []);
      assert.equal((await allocationOf(owner, 'tiny')).value, 3);
      assert.equal((await allocationOf('d', 'tiny')).value, 1);
    });

    test('a value released by force and still free is taken again by the next validation', async () => {
      assert.equal((await api.post('/pools', { name: 'small', kind: 'integer', ranges: ['10-20'] })).status, 201);
      assert.equal((await api.post('/allocation-specs', { name: 'small-wire', attributes: { tag: { from: 'pool', pool: 'small' } } })).status, 201);
      const id = (await api.post('/service-instances', { allocation_spec: 'small-wire', attributes: {} })).body.id;
      const tag = (await api.post(`/service-instances/${id}/validate`)).body.candidate_attributes.tag;
      const held = await allocationOf(`service-instance/${id}`, 'small');
      assert.equal((await api.delete(`/allocations/${held.id}?force=true`)).status, 204);
      assert.deepEqual((await api.get(`/service-instances/${id}`)).body.forced_releases.map((f: any) => f.sets), [['candidate']]);
      const again = (await api.post(`/service-instances/${id}/validate`)).body;
      assert.equal(again.candidate_attributes.tag, tag);
      assert.deepEqual(again.forced_releases, []);
      assert.equal((await allocationOf(`service-instance/${id}`, 'small')).value, tag);
      // Once the instance is terminated its values are free to release as any other.
      await api.delete(`/service-instances/${id}`);
      assert.equal((await api.all(`/pools/small/allocations`)).length, 0);
    });
  });
}
