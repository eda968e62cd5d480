// The allocation's node search, in the nodes table (both backends start from it; the database
// backend ends with it). An allocation never lists its candidates: it picks ONE free node that has
// everything it asks for and reserves it in the same statement, so the work per allocation does
// not grow with the number of matching nodes (bench/baremetal.ts: 10 vs 10 000 free nodes).
import { type ExpressionBuilder, type SelectQueryBuilder, sql } from 'kysely';
import { newUuid } from '../../core/uuid.js';
import type { Db, ReadOnlyKysely, Tx } from '../../db/database.js';
import type { Schema } from '../../db/schema.js';
import { jsonWithKey } from '../../db/sql-helpers.js';
import type { AllocationRecord } from './allocations.js';

/** What an allocation asks of its node. */
export interface NodeWanted {
  resourceClass: string;
  /** node uuids the allocation is limited to (empty: any) */
  candidates: readonly string[];
  /** an owner the node must have as owner or lessee (null: any) */
  owner: string | null;
  /** traits the node must have, every one */
  traits: readonly string[];
  /** the allocation's name: a node of that name is taken first (Ironic 1.79's behaviour, always) */
  name: string | null;
}

export function nodeWanted(a: AllocationRecord): NodeWanted {
  return { resourceClass: a.resource_class ?? '', candidates: JSON.parse(a.candidate_nodes) as string[], owner: a.owner, traits: a.traits, name: a.name };
}

/** What the claim needs of the node it reserved. */
export interface ReservedNode {
  id: number;
  uuid: string;
  resource_class: string | null;
}

type Nodes = SelectQueryBuilder<Schema, 'baremetal_nodes', object>;

/** Nodes in a state to take an allocation (now, or once their power settles), of its class, among its candidates and its owner's. */
function inPool(db: ReadOnlyKysely, w: NodeWanted): Nodes {
  let q = db
    .selectFrom('baremetal_nodes')
    .where('resource_class', '=', w.resourceClass)
    .where('provision_state', '=', 'available')
    .where('instance_uuid', 'is', null)
    .where('maintenance', '=', 0)
    .where('retired', '=', 0)
    // a node with no power state and none coming will not become free by waiting
    .where((eb) => eb.or([eb('power_state', 'is not', null), eb('target_power_state', 'is not', null)]));
  if (w.candidates.length) q = q.where('uuid', 'in', [...w.candidates]);
  if (w.owner !== null) {
    const owner = w.owner;
    q = q.where((eb) => eb.or([eb('owner', '=', owner), eb('lessee', '=', owner)]));
  }
  return q;
}

function withTraits(q: Nodes, traits: readonly string[]): Nodes {
  for (const trait of new Set(traits)) {
    q = q.where((eb: ExpressionBuilder<Schema, 'baremetal_nodes'>) =>
      eb.exists(
        eb.selectFrom('baremetal_node_traits as t').select(sql.lit(1).as('one')).whereRef('t.node_id', '=', 'baremetal_nodes.id').where('t.trait', '=', trait),
      ),
    );
  }
  return q;
}

/** Free now: in the pool, with every trait, not held, powered to a known state. */
function free(db: ReadOnlyKysely, w: NodeWanted): Nodes {
  return withTraits(inPool(db, w), w.traits).where('allocation_id', 'is', null).where('reservation', 'is', null).where('power_state', 'is not', null);
}

/**
 * Reserve a free node for the allocation: ONE statement that picks a node and sets its
 * instance_uuid and allocation_id, and the requested traits in its instance_info (as Ironic
 * records them), re-checking every condition on the row it writes. The pick
 * starts at a random uuid (wrapping around), so concurrent allocations of one class spread over
 * the free nodes; on PostgreSQL it skips rows another transaction holds (FOR UPDATE SKIP LOCKED),
 * so they do not queue on one node either. The node, or undefined when none is free now.
 */
export async function reserveFreeNode(
  tx: Tx,
  w: NodeWanted,
  allocation: { id: number; uuid: string },
): Promise<(ReservedNode & { name: string | null }) | undefined> {
  const start = newUuid();
  const picks: Array<(q: Nodes) => Nodes> = [(q) => q.where('uuid', '>=', start).orderBy('uuid'), (q) => q.where('uuid', '<', start).orderBy('uuid')];
  if (w.name !== null) {
    const name = w.name;
    picks.unshift((q) => q.where('name', '=', name));
  }
  for (const pick of picks) {
    let chosen = pick(free(tx.db, w)).select('id').limit(1);
    if (tx.dialect === 'postgres') chosen = chosen.forUpdate().skipLocked();
    const row = await tx.db
      .updateTable('baremetal_nodes')
      .set({
        instance_uuid: allocation.uuid,
        allocation_id: allocation.id,
        instance_info: jsonWithKey(tx, 'instance_info', 'traits', w.traits),
        updated_at: tx.clock.nowIso(),
      })
      .where('id', '=', chosen)
      .where('instance_uuid', 'is', null)
      .where('allocation_id', 'is', null)
      .where('reservation', 'is', null)
      .returning(['id', 'uuid', 'name', 'resource_class'])
      .executeTakeFirst();
    if (row) return row;
  }
  return undefined;
}

/**
 * Why no node could be reserved: Ironic's failure sentence, or null when one may free up — held
 * by another allocation's transaction, or settling its power state (a power change under way:
 * openstacksdk powers a node off and creates its allocation at once), so the allocation waits.
 */
export async function whyNoNode(db: Db, w: NodeWanted): Promise<string | null> {
  if (!(await exists(inPool(db.db, w)))) {
    return w.candidates.length
      ? `none of the requested nodes are available and match the resource class ${w.resourceClass}`
      : `no available nodes match the resource class ${w.resourceClass}`;
  }
  if (w.traits.length && !(await exists(withTraits(inPool(db.db, w), w.traits)))) return `no suitable nodes have the requested traits ${w.traits.join(', ')}`;
  return null;
}

async function exists(q: Nodes): Promise<boolean> {
  return (await q.select('id').limit(1).executeTakeFirst()) !== undefined;
}
