// A list sorted by a field newer than the request's microversion, on both databases, over HTTP:
// Ironic's rule per collection. Nodes (and /detail, and a chassis' or node's sub-lists' parents),
// ports and port groups refuse a sort key their request does not show with 406 Not Acceptable;
// conductors and deploy templates check their sort key against the node's versioned fields (as
// Ironic does); chassis, allocations and volume connectors/targets do not check it at all.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';
import type { HttpResponse } from '../helpers/http.js';
import { type TestServer, startServer } from '../helpers/server.js';
import { IronicClient, fault } from './helpers.js';

function notAcceptable(res: HttpResponse): void {
  assert.equal(res.status, 406, res.text);
  assert.equal(fault(res).faultstring, 'Request not acceptable.');
}

for (const dialect of DIALECTS) {
  describe(`bare-metal list sort keys by microversion (${dialect})`, () => {
    let server: TestServer;
    let api: IronicClient;
    let nodeUuid: string;
    before(async () => {
      server = await startServer({ db: await freshDatabaseUrl(dialect) });
      api = new IronicClient(`${server.url}/baremetal`);
      const created = await api.post('/v1/nodes', { driver: 'fake-hardware', owner: 'p1' });
      assert.equal(created.status, 201, created.text);
      nodeUuid = created.body.uuid;
    });
    after(() => server.close());

    test('nodes: a sort key newer than the request is a 406, from its version on it sorts', async () => {
      for (const path of ['/v1/nodes', '/v1/nodes/detail']) {
        notAcceptable(await api.at('1.49').get(`${path}?sort_key=owner`));
        notAcceptable(await api.at('1.60').get(`${path}?sort_key=retired`));
        const sorted = await api.at('1.50').get(`${path}?sort_key=owner`);
        assert.equal(sorted.status, 200, sorted.text);
        assert.equal(sorted.body.nodes.length, 1);
      }
      // an unsortable field newer than the request: the 406 comes first, as in Ironic
      notAcceptable(await api.at('1.36').get('/v1/nodes?sort_key=traits'));
      assert.equal((await api.at('1.37').get('/v1/nodes?sort_key=traits')).status, 400);
    });

    test('ports and port groups: their own fields decide', async () => {
      notAcceptable(await api.at('1.33').get('/v1/ports?sort_key=physical_network'));
      notAcceptable(await api.at('1.33').get(`/v1/nodes/${nodeUuid}/ports?sort_key=physical_network`));
      assert.equal((await api.at('1.34').get('/v1/ports?sort_key=physical_network')).status, 200);
      notAcceptable(await api.at('1.52').get('/v1/ports?sort_key=is_smartnic'));
      assert.equal((await api.at('1.53').get('/v1/ports/detail?sort_key=is_smartnic')).status, 200);
      notAcceptable(await api.at('1.25').get('/v1/portgroups?sort_key=mode'));
      notAcceptable(await api.at('1.25').get(`/v1/nodes/${nodeUuid}/portgroups?sort_key=mode`));
      assert.equal((await api.at('1.26').get('/v1/portgroups?sort_key=mode')).status, 200);
    });

    test("conductors and deploy templates: the node's fields decide", async () => {
      // owner is a node field of 1.50: at 1.49 Ironic's check refuses it before asking whether conductors sort by it
      notAcceptable(await api.at('1.49').get('/v1/conductors?sort_key=owner'));
      const conductors = await api.at('1.50').get('/v1/conductors?sort_key=owner');
      assert.equal(conductors.status, 400, conductors.text);
      assert.equal(fault(conductors).faultstring, 'The sort_key value "owner" is an invalid field for sorting');
      notAcceptable(await api.at('1.60').get('/v1/deploy_templates?sort_key=retired'));
      notAcceptable(await api.at('1.60').get('/v1/deploy_templates?detail=True&sort_key=retired'));
      const templates = await api.at('1.61').get('/v1/deploy_templates?sort_key=retired');
      assert.equal(templates.status, 400, templates.text);
      assert.equal(fault(templates).faultstring, 'The sort_key value "retired" is an invalid field for sorting');
      assert.equal((await api.at('1.55').get('/v1/deploy_templates?sort_key=name')).status, 200);
    });

    test('chassis, allocations and volumes do not check the sort key against versions', async () => {
      // an allocation's owner came in 1.60; Ironic sorts by it at 1.52 all the same
      assert.equal((await api.at('1.52').get('/v1/allocations?sort_key=owner')).status, 200);
      assert.equal((await api.at('1.1').get('/v1/chassis?sort_key=description')).status, 200);
      assert.equal((await api.at('1.32').get('/v1/volume/connectors?sort_key=type')).status, 200);
      assert.equal((await api.at('1.32').get('/v1/volume/targets?sort_key=boot_index')).status, 200);
    });
  });
}
