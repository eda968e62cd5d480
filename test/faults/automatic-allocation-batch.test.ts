// Automatic allocations of a `random` pool that make up one batch (services/automatic-allocations.ts)
// each take their own draw, in parallel. When one draw's read fails on a database fault, the others
// may already be writing: each request must be answered by its own draw. Seen reading a chaos run
// (npm run test:chaos, seed 34): one failed draw answered the whole batch "the locked path decides"
// (null) while a sibling's write went on and committed, so that request went on to the locked path
// as if nothing had been taken for it. Here the failing read is a real refusal:
// the role may hold one connection, so the draw that needs a second one is refused (53300). On the
// old code both requests came back null and one of them had a value in the database.
// (PostgreSQL only: SQLite takes the locked path.)
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { BatchesByKey } from '../../src/core/serial.js';
import type { Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';
import type { IdsContext } from '../../src/ids/context.js';
import { EVERY_POOL } from '../../src/ids/core/scope.js';
import { allocateWithoutLock } from '../../src/ids/services/automatic-allocations.js';
import { createPool } from '../../src/ids/services/pools.js';
import { freshDatabaseUrl } from '../helpers/databases.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const POOL = 'vni';

describe('a batch of random automatic allocations, one of whose draws the database refuses', () => {
  const role = `allot_batch_${randomBytes(4).toString('hex')}`;
  let adminUrl: string;
  let database: Database | undefined;
  const admin = async <T>(text: string) => {
    const db = await openDatabase(adminUrl, { poolSize: 1 });
    try {
      return (await sql.raw(text).execute(db.db as never)).rows as T[];
    } finally {
      await db.close();
    }
  };

  before(async () => {
    adminUrl = await freshDatabaseUrl('postgres');
    const name = new URL(adminUrl).pathname.slice(1);
    await admin(`create role ${role} login password 'batch'`);
    await admin(`alter database "${name}" owner to ${role}`);
  });
  after(async () => {
    await database?.close();
    await admin(`drop owned by ${role} cascade`).catch(() => {});
    await admin(`drop role if exists ${role}`).catch(() => {});
  });

  test('answers each request by its own draw: null only when nothing was taken for it', async () => {
    const url = new URL(adminUrl);
    url.username = role;
    url.password = 'batch';
    database = await openDatabase(url.toString(), { poolSize: 2 });
    await database.measureClock?.();
    await migrate(database);
    const ctx = { database, log: pino({ level: 'silent' }), poolClaims: new BatchesByKey() } as unknown as IdsContext;
    await createPool(ctx, { name: POOL, kind: 'integer', ranges: ['1-100000'], strategy: 'random' });
    const holding = await allocateWithoutLock(ctx, { pool: POOL, owner: 'first' }, EVERY_POOL);
    assert.ok(holding?.created);
    // the process now holds one connection; a second one is refused
    await database.close();
    database = await openDatabase(url.toString(), { poolSize: 2 });
    ctx.database = database;
    await database.measureClock?.();
    await sql`select 1`.execute(database.db as never);
    await admin(`alter role ${role} connection limit 1`);
    // and a write, which locks the pool's row first, waits until a draw has been answered
    let answers: Array<Awaited<ReturnType<typeof allocateWithoutLock>> | Error> = [];
    const locker = new pg.Client({ connectionString: adminUrl });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('select 1 from ids_pools where name = $1 for update', [POOL]);

      // the first request's batch (a repeat: reads only) is under way when the other two arrive:
      // they make up the next batch together, whose two draws run in parallel on two connections
      const asks = ['first', 'a', 'b'].map((owner) => allocateWithoutLock(ctx, { pool: POOL, owner }, EVERY_POOL).catch((err: Error) => err));
      await Promise.race(asks.slice(1));
      await locker.query('commit');
      answers = await Promise.all(asks);
    } finally {
      await locker.end();
    }
    await admin(`alter role ${role} connection limit -1`);
    // let a write still under way (the old code) land before the database is read
    let quiet = 0;
    for (let polls = 0; quiet < 3 && polls < 100; polls++) {
      const [row] = await admin<{ n: number }>(`select count(*)::int as n from pg_stat_activity where usename = '${role}' and state = 'active'`);
      quiet = row?.n === 0 ? quiet + 1 : 0;
      await sleep(50);
    }

    const held = new Map((await admin<{ owner: string; id: string }>('select owner, id from ids_allocations')).map((r) => [r.owner, r.id]));
    const [first, a, b] = answers;
    assert.ok(first && !(first instanceof Error) && !first.created, `the first request got what it holds: ${String(first)}`);
    const pair = { a, b };
    const refused = Object.values(pair).filter((x) => x === null).length;
    assert.equal(refused, 1, `exactly one draw of the batch was refused: ${JSON.stringify(pair, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`);
    for (const [owner, answer] of Object.entries(pair)) {
      assert.ok(answer !== undefined && !(answer instanceof Error), `${owner}: ${String(answer)}`);
      if (answer === null) assert.equal(held.get(owner), undefined, `${owner} was answered "not taken" (the locked path decides), yet its value was taken`);
      else assert.equal(answer.row.id, held.get(owner), `${owner} was told the allocation the database holds for it`);
    }
  });
});
