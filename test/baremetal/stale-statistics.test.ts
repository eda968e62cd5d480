// PostgreSQL plans a query from its statistics, and nodes enrolled faster than autovacuum analyzes
// (a minute and more) have none yet. Planned as if a resource class had one node, an allocation's
// pick read and sorted every node of the class instead of walking the free-node index (issue 15:
// 2 000 allocations over 2 000 fresh nodes ran at 414/s where 600 over 600 ran at 770/s). Here
// 3 000 free nodes appear at once with autovacuum off; once the db-statistics worker has looked
// (every --statistics-interval), allocations read a handful of node rows each.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { freshDatabaseUrl } from '../helpers/databases.js';
import { rowsRead, statisticsCurrent } from '../helpers/planner-statistics.js';
import { startServer } from '../helpers/server.js';
import { IronicClient, availableNode } from './helpers.js';

const NODES = 3_000;
const ALLOCATIONS = 20;

describe('bare-metal allocation whatever the planner statistics say (postgres)', () => {
  test(`among ${NODES} nodes enrolled at once, once the db-statistics worker has looked, an allocation reads a handful of node rows`, async () => {
    const url = await freshDatabaseUrl('postgres');
    const server = await startServer({ db: url, statisticsInterval: 500 });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query('alter table baremetal_nodes set (autovacuum_enabled = false)');
      const api = new IronicClient(`${server.url}/baremetal`);
      const template = await availableNode(api, { name: 'template', resource_class: 'stale' });
      // copies of an available node, as if enrolled by a fast script
      const columns = (
        await admin.query(
          `select column_name from information_schema.columns
           where table_schema = current_schema() and table_name = 'baremetal_nodes' and column_name not in ('id', 'uuid', 'name')`,
        )
      ).rows.map((r) => `"${r.column_name}"`);
      await admin.query(
        `insert into baremetal_nodes (uuid, name, ${columns.join(', ')})
         select gen_random_uuid()::text, 'copy-' || g, ${columns.map((c) => `n.${c}`).join(', ')}
         from baremetal_nodes n cross join generate_series(1, ${NODES}) g where n.uuid = $1`,
        [template.uuid],
      );
      await statisticsCurrent(admin, ['baremetal_nodes']);

      const before = await rowsRead(admin, ['baremetal_nodes']);
      const nodes = new Set<string>();
      for (let i = 0; i < ALLOCATIONS; i++) {
        // wait=0: the allocation as it is when the request ends — active, picked in the request itself
        const res = await api.post('/v1/allocations', { resource_class: 'stale' }, { headers: { prefer: 'wait=0' } });
        assert.equal(res.status, 201, res.text);
        assert.equal(res.body.state, 'active', res.text);
        nodes.add(res.body.node_uuid);
      }
      assert.equal(nodes.size, ALLOCATIONS);
      // a pick that walks the free-node index reads a node or two (measured: ~3 rows per
      // allocation, the answer's reads included); one that reads the class reads all 3 000
      const read = (await rowsRead(admin, ['baremetal_nodes'])) - before;
      assert.ok(read < ALLOCATIONS * 20, `${ALLOCATIONS} allocations read ${read} node rows`);
    } finally {
      await admin.end();
      await server.close();
    }
  });
});
