import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { DIALECTS } from '../helpers/databases.js';
import { PlacementClient } from '../helpers/http.js';
import { serverFor } from '../helpers/server.js';

for (const dialect of DIALECTS) {
  describe(`resource providers (${dialect})`, () => {
    let api: PlacementClient;
    serverFor(dialect, (server) => (api = new PlacementClient(server.placementUrl)));

    test('create, show, rename, list and delete a provider', async () => {
      const created = await api.post('/resource_providers', { name: 'cn1' });
      assert.equal(created.status, 200);
      assert.equal(created.body.generation, 0);
      assert.equal(created.body.root_provider_uuid, created.body.uuid);
      assert.match(created.headers.get('location')!, /\/placement\/resource_providers\/[0-9a-f-]{36}$/);
      const uuid = created.body.uuid as string;

      const shown = await api.get(`/resource_providers/${uuid}`);
      assert.equal(shown.body.name, 'cn1');
      assert.deepEqual(
        shown.body.links.map((l: { rel: string }) => l.rel),
        ['self', 'inventories', 'usages', 'aggregates', 'traits', 'allocations'],
      );

      const renamed = await api.put(`/resource_providers/${uuid}`, { name: 'cn1-renamed ☃' });
      assert.equal(renamed.status, 200);
      assert.equal(renamed.body.name, 'cn1-renamed ☃');

      const listed = await api.get(`/resource_providers?name=${encodeURIComponent('cn1-renamed ☃')}`);
      assert.equal(listed.body.resource_providers.length, 1);

      assert.equal((await api.delete(`/resource_providers/${uuid}`)).status, 204);
      assert.equal((await api.get(`/resource_providers/${uuid}`)).status, 404);
    });

    test('before 1.20 creation answers 201 with a location and no body', async () => {
      const res = await api.at('1.19').post('/resource_providers', { name: 'old-style' });
      assert.equal(res.status, 201);
      assert.equal(res.text, '');
      assert.ok(res.headers.get('location'));
    });

    test('a duplicate name is a 409 placement.duplicate_name', async () => {
      await api.post('/resource_providers', { name: 'dup' });
      const res = await api.post('/resource_providers', { name: 'dup' });
      assert.equal(res.status, 409);
      assert.equal(res.body.errors[0].code, 'placement.duplicate_name');
    });

    test('nested trees: children report their root; a parent with children cannot be deleted', async () => {
      const root = (await api.post('/resource_providers', { name: 'root' })).body.uuid;
      const child = (await api.post('/resource_providers', { name: 'child', parent_provider_uuid: root })).body;
      assert.equal(child.root_provider_uuid, root);
      const grandchild = (await api.post('/resource_providers', { name: 'grandchild', parent_provider_uuid: child.uuid })).body;
      assert.equal(grandchild.root_provider_uuid, root);
      const tree = await api.get(`/resource_providers?in_tree=${grandchild.uuid}`);
      assert.equal(tree.body.resource_providers.length, 3);
      const del = await api.delete(`/resource_providers/${root}`);
      assert.equal(del.status, 409);
      assert.equal(del.body.errors[0].code, 'placement.resource_provider.cannot_delete_parent');
      // 1.37: un-parenting moves the whole subtree into a tree of its own
      const unparented = await api.put(`/resource_providers/${child.uuid}`, { name: 'child', parent_provider_uuid: null });
      assert.equal(unparented.status, 200);
      const moved = await api.get(`/resource_providers/${grandchild.uuid}`);
      assert.equal(moved.body.root_provider_uuid, child.uuid);
      // a loop is refused
      const loop = await api.put(`/resource_providers/${child.uuid}`, { name: 'child', parent_provider_uuid: grandchild.uuid });
      assert.equal(loop.status, 400);
      assert.match(loop.text, /creating loop in the provider tree is not allowed/);
    });

    test('uuids are kept as Placement keeps them: aggregates and other references as sent, new providers and PUT consumers normalized', async () => {
      const rp = (await api.post('/resource_providers', { name: 'uuid-forms' })).body.uuid as string;
      await api.put(`/resource_providers/${rp}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 8 } } });
      const upper = randomUUID().toUpperCase();
      const dashless = randomUUID().replace(/-/g, '');
      const set = await api.put(`/resource_providers/${rp}/aggregates`, { aggregates: [upper, dashless], resource_provider_generation: 1 });
      assert.equal(set.status, 200, set.text);
      assert.deepEqual(set.body.aggregates.sort(), [upper, dashless].sort(), 'echoed as sent');
      assert.deepEqual((await api.get(`/resource_providers/${rp}/aggregates`)).body.aggregates.sort(), [upper, dashless].sort());
      // member_of compares as sent, too
      assert.equal((await api.get(`/resource_providers?member_of=${upper}`)).body.resource_providers.length, 1);
      assert.equal((await api.get(`/resource_providers?member_of=${upper.toLowerCase()}`)).body.resource_providers.length, 0);

      // a new provider's own uuid is normalized (dashes, lower case); lookups are as sent
      const given = randomUUID();
      const created = await api.post('/resource_providers', { name: 'upper-case', uuid: given.toUpperCase() });
      assert.equal(created.body.uuid, given);
      assert.equal((await api.get(`/resource_providers/${given.toUpperCase()}`)).status, 404);

      // PUT /allocations/{consumer} normalizes the consumer; GET looks it up as sent
      const consumer = randomUUID();
      const put = await api.put(`/allocations/${consumer.replace(/-/g, '')}`, {
        allocations: { [rp]: { resources: { VCPU: 1 } } },
        project_id: 'p',
        user_id: 'u',
        consumer_generation: null,
        consumer_type: 'INSTANCE',
      });
      assert.equal(put.status, 204, put.text);
      assert.deepEqual(Object.keys((await api.get(`/allocations/${consumer}`)).body.allocations), [rp]);
      assert.deepEqual((await api.get(`/allocations/${consumer.replace(/-/g, '')}`)).body.allocations, {});
      assert.deepEqual(Object.keys((await api.get(`/resource_providers/${rp}/allocations`)).body.allocations), [consumer]);
      // a provider referenced by another spelling of its uuid is not found, as in Placement
      const other = await api.put(`/allocations/${randomUUID()}`, {
        allocations: { [rp.toUpperCase()]: { resources: { VCPU: 1 } } },
        project_id: 'p',
        user_id: 'u',
        consumer_generation: null,
        consumer_type: 'INSTANCE',
      });
      assert.equal(other.status, 400, other.text);
    });

    test('a schema failure is worded as Placement words it: one line, the schema printed by pprint', async () => {
      // Both texts as the real Placement 8.0 answered them (scripts/schema-differential.ts
      // compares every Placement schema with generated instances).
      const bad = await api.post('/resource_providers', { name: 'a', uuid: 'not-a-uuid' });
      assert.equal(bad.status, 400);
      assert.equal(
        bad.body.errors[0].detail,
        "The server could not comply with the request since it is either malformed or otherwise incorrect.\n\n JSON does not validate: 'not-a-uuid' is not a 'uuid'  Failed validating 'format' in schema['properties']['uuid']:     {'format': 'uuid', 'type': 'string'}  On instance['uuid']:     'not-a-uuid'  ",
      );
      const extra = await api.post('/resource_providers', { name: 'a', bogus: 1 });
      assert.equal(
        extra.body.errors[0].detail,
        "The server could not comply with the request since it is either malformed or otherwise incorrect.\n\n JSON does not validate: Additional properties are not allowed ('bogus' was unexpected)  Failed validating 'additionalProperties' in schema:     {'additionalProperties': False,      'properties': {'name': {'maxLength': 200, 'type': 'string'},                     'parent_provider_uuid': {'anyOf': [{'format': 'uuid',                                                         'type': 'string'},                                                        {'type': 'null'}]},                     'uuid': {'format': 'uuid', 'type': 'string'}},      'required': ['name'],      'type': 'object'}  On instance:     {'bogus': 1, 'name': 'a'}  ",
      );
    });
  });
}
