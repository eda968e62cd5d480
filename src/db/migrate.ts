// Schema migrations, run at start-up and by `allot migrate`. Several processes may start at once:
// on PostgreSQL Kysely's migrator holds an advisory lock while it migrates; on SQLite the write
// lock does the same job, and a starter that loses the race simply tries again and finds the work
// done.
import { type Kysely, type Migration, Migrator } from 'kysely';
import { backoffDelay, sleep } from '../core/backoff.js';
import { type Database, kyselyOf } from './database.js';
import { classifyFault } from './faults.js';
import type { MigrationDialect } from './migrations/helpers.js';
import * as placement from './migrations/001-placement.js';
import * as baremetal from './migrations/002-baremetal.js';
import * as ids from './migrations/003-ids.js';
import * as claimCheck from './migrations/004-claim-check.js';
import * as health from './migrations/005-health.js';
import * as idsSafety from './migrations/006-ids-safety.js';
import * as idsProjects from './migrations/007-ids-projects.js';
import * as baremetalInventory from './migrations/008-baremetal-inventory.js';
import * as idsSpeed from './migrations/009-ids-speed.js';
import * as baremetalFreeNodes from './migrations/010-baremetal-free-nodes.js';
import * as idsBulk from './migrations/011-ids-bulk.js';
import * as idsInstanceRequest from './migrations/012-ids-instance-request.js';
import * as reservations from './migrations/013-reservations.js';
import * as leaseCommitCheck from './migrations/014-lease-commit-check.js';
import * as idsTakeAuto from './migrations/015-ids-take-auto.js';
import * as baremetalHeldConsumers from './migrations/016-baremetal-held-consumers.js';
import * as idsLeaseCheckPlan from './migrations/017-ids-lease-check-plan.js';

type DialectMigration = { up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> };

/** In order. Names never change once released; new migrations go at the end. */
const MIGRATIONS: Array<[string, DialectMigration]> = [
  ['001-placement', placement],
  ['002-baremetal', baremetal],
  ['003-ids', ids],
  ['004-claim-check', claimCheck],
  ['005-health', health],
  ['006-ids-safety', idsSafety],
  ['007-ids-projects', idsProjects],
  ['008-baremetal-inventory', baremetalInventory],
  ['009-ids-speed', idsSpeed],
  ['010-baremetal-free-nodes', baremetalFreeNodes],
  ['011-ids-bulk', idsBulk],
  ['012-ids-instance-request', idsInstanceRequest],
  ['013-reservations', reservations],
  ['014-lease-commit-check', leaseCommitCheck],
  ['015-ids-take-auto', idsTakeAuto],
  ['016-baremetal-held-consumers', baremetalHeldConsumers],
  ['017-ids-lease-check-plan', idsLeaseCheckPlan],
];

export async function migrate(database: Database): Promise<string[]> {
  const migrations: Record<string, Migration> = {};
  for (const [name, m] of MIGRATIONS) migrations[name] = { up: (db) => m.up(db, database.dialect) };
  const migrator = new Migrator({
    db: kyselyOf(database),
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'allot_migrations',
    migrationLockTableName: 'allot_migrations_lock',
  });
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest();
    if (!error) return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    // A database that is down is the caller's to wait for (server/start.ts); a lost race against
    // another starter is ours to retry.
    if (classifyFault(error) || attempt >= 10) throw error;
    await sleep(backoffDelay(attempt, { baseMs: 50, maxMs: 1_000 }));
  }
}
