// A node's owner may not change while the node holds an allocation that has an owner (Ironic's
// 409): the rule is decided on the node and its allocation as locked by the PATCH's own
// transaction, so an allocation that takes the node concurrently cannot slip past it. Proven with
// concurrent clients over HTTP: a PATCH of the owner races an allocation of the node, many rounds.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { IronicClient, allocationSettled, availableNode, fault } from './helpers.js';

const ROUNDS = 40;

for (const dialect of DIALECTS) {
  describe(`bare-metal: a node's owner against its allocation, concurrently (${dialect})`, () => {
    let server: TestServer;
    let api: IronicClient;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect), transitionTime: 10 });
      api = new IronicClient(`${server.url}/baremetal`);
    });
    after(() => server.close());

    test(`an owner PATCH racing an owned allocation of the node: the node never ends allocated to another project's allocation (${ROUNDS} rounds)`, async (t) => {
      const node = await availableNode(api, { name: 'race-node', resource_class: 'race', owner: 'proj-a' });
      const outcomes = { patched: 0, refused: 0, allocated: 0 };
      for (let round = 0; round < ROUNDS; round++) {
        const [allocated, patched] = await Promise.all([
          api.post('/v1/allocations', { resource_class: 'race', owner: 'proj-a', candidate_nodes: [node.uuid], name: `race-${round}` }),
          api.patch(`/v1/nodes/${node.uuid}`, [{ op: 'replace', path: '/owner', value: 'proj-b' }]),
        ]);
        assert.equal(allocated.status, 201, allocated.text);
        const allocation = await allocationSettled(api, allocated.body.uuid);
        const after = (await api.get(`/v1/nodes/${node.uuid}`)).body;
        if (patched.status === 200) outcomes.patched++;
        else {
          assert.equal(patched.status, 409, patched.text);
          assert.equal(fault(patched).faultstring, `Cannot update owner of node "${node.uuid}" while it is allocated to an allocation with an  owner.`);
          outcomes.refused++;
        }
        if (allocation.state === 'active') {
          outcomes.allocated++;
          assert.equal(allocation.node_uuid, node.uuid);
          // the invariant: an owned allocation's node belongs to (or is leased by) the allocation's owner
          assert.equal(after.owner, 'proj-a', `round ${round}: node owned by ${after.owner} holds allocation ${allocation.uuid} of proj-a`);
          assert.equal(patched.status, 409, `round ${round}: the owner change was accepted while the node was allocated`);
        } else {
          // the owner changed first: the allocation found no node of its owner
          assert.equal(allocation.state, 'error', JSON.stringify(allocation));
          assert.equal(patched.status, 200, patched.text);
          assert.equal(after.owner, 'proj-b');
        }
        // back to the start: the node free and proj-a's
        assert.equal((await api.delete(`/v1/allocations/${allocation.uuid}`)).status, 204);
        const reset = await api.patch(`/v1/nodes/${node.uuid}`, [{ op: 'replace', path: '/owner', value: 'proj-a' }]);
        assert.equal(reset.status, 200, reset.text);
      }
      // which order won each round is the machine's: reported, not asserted
      t.diagnostic(JSON.stringify(outcomes));
    });
  });
}
