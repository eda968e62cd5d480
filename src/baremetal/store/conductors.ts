// SQL for conductors: every allot process registers itself and writes a heartbeat; a conductor
// that is offline or whose heartbeat is older than the timeout is dead, and its work is taken over.
import type { Db, Tx } from '../../db/database.js';
import type { Page, SortDir } from '../core/paging.js';
import { applyPage } from './paging.js';

export interface ConductorRow {
  id: number;
  hostname: string;
  online: number;
  heartbeat_at: string;
  created_at: string;
  updated_at: string | null;
}

/**
 * Register (or re-register after a restart) as online with a fresh heartbeat. One upsert: two
 * processes with the same --conductor-id registering at one instant both succeed (an insert that
 * lost that race would abort a PostgreSQL transaction).
 */
export async function registerConductor(db: Tx, hostname: string): Promise<void> {
  const now = db.clock.nowIso();
  await db.db
    .insertInto('baremetal_conductors')
    .values({ hostname, online: 1, heartbeat_at: now, created_at: now, updated_at: null })
    .onConflict((oc) => oc.column('hostname').doUpdateSet({ online: 1, heartbeat_at: now, updated_at: now }))
    .execute();
}

export async function heartbeat(db: Tx, hostname: string): Promise<void> {
  const now = db.clock.nowIso();
  const result = await db.db
    .updateTable('baremetal_conductors')
    .set({ online: 1, heartbeat_at: now, updated_at: now })
    .where('hostname', '=', hostname)
    .executeTakeFirst();
  // our row is gone (an operator cleaned the table): register again rather than beat into nothing
  if (Number(result.numUpdatedRows) === 0) await registerConductor(db, hostname);
}

/** A graceful stop: the others may take over at once instead of waiting for the timeout. */
export async function unregisterConductor(db: Tx, hostname: string): Promise<void> {
  await db.db.updateTable('baremetal_conductors').set({ online: 0, updated_at: db.clock.nowIso() }).where('hostname', '=', hostname).execute();
}

/** Hostnames of the conductors alive now: online, with a heartbeat within `timeoutMs`. */
export async function aliveConductors(db: Db, timeoutMs: number): Promise<string[]> {
  const cutoff = new Date(db.clock.nowMs() - timeoutMs).toISOString();
  const rows = await db.db
    .selectFrom('baremetal_conductors')
    .select('hostname')
    .where('online', '=', 1)
    .where('heartbeat_at', '>=', cutoff)
    .orderBy('hostname')
    .execute();
  return rows.map((r) => r.hostname);
}

/**
 * The columns behind the sort keys of GET /v1/conductors (Ironic sorts by any column of its
 * conductors table but `drivers`). Its `updated_at` is what allot shows as `updated_at`: the
 * heartbeat. allot has no conductor groups: every conductor's is '', so that order is the id's.
 */
export const CONDUCTOR_SORT_COLUMNS = {
  id: 'id',
  hostname: 'hostname',
  created_at: 'created_at',
  updated_at: 'heartbeat_at',
  online: 'online',
  conductor_group: 'id',
} as const;

export interface ConductorPage {
  sortKey: keyof typeof CONDUCTOR_SORT_COLUMNS;
  sortDir: SortDir;
  limit: number;
  /** the conductor the previous page ended with */
  after?: ConductorRow;
}

/** Every conductor, alive or not (as Ironic lists them), one page in the requested order. */
export async function listConductors(db: Db, page: ConductorPage): Promise<ConductorRow[]> {
  const column = CONDUCTOR_SORT_COLUMNS[page.sortKey];
  const keyset: Page = { sortKey: column, sortDir: page.sortDir, limit: page.limit };
  if (page.after) keyset.after = { value: page.after[column], id: page.after.id };
  return applyPage(
    db.db.selectFrom('baremetal_conductors as t').select(['t.id', 't.hostname', 't.online', 't.heartbeat_at', 't.created_at', 't.updated_at']),
    keyset,
  ).execute();
}

export async function findConductor(db: Db, hostname: string): Promise<ConductorRow | undefined> {
  return db.db
    .selectFrom('baremetal_conductors')
    .select(['id', 'hostname', 'online', 'heartbeat_at', 'created_at', 'updated_at'])
    .where('hostname', '=', hostname)
    .executeTakeFirst();
}

/** Nodes locked by a conductor that is not alive: their id and the dead holder. */
export async function orphanedReservations(db: Db, alive: string[]): Promise<Array<{ id: number; reservation: string }>> {
  let q = db.db.selectFrom('baremetal_nodes').select(['id', 'reservation']).where('reservation', 'is not', null);
  if (alive.length) q = q.where('reservation', 'not in', alive);
  return (await q.orderBy('id').execute()) as Array<{ id: number; reservation: string }>;
}

/** The node-lock version of the take-over compare-and-set. */
export async function takeOverReservation(db: Tx, nodeId: number, dead: string, me: string): Promise<boolean> {
  const result = await db.db
    .updateTable('baremetal_nodes')
    .set({ reservation: me })
    .where('id', '=', nodeId)
    .where('reservation', '=', dead)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Nodes whose lock this conductor holds (resumed at start: a transition to finish or a stale lock). */
export async function ownReservations(db: Db, me: string): Promise<number[]> {
  const rows = await db.db.selectFrom('baremetal_nodes').select('id').where('reservation', '=', me).orderBy('id').execute();
  return rows.map((r) => r.id);
}
