// The allocation's node search, in the nodes table (both backends start from it; the database
// backend ends with it). An allocation never lists its candidates: it picks ONE free node that has
// everything it asks for and reserves it in the same statement, so the work per allocation does
// not grow with the number of matching nodes (bench/baremetal.ts: 10 vs 10 000 free nodes).
import { newUuid } from '../../core/uuid.js';
import type { Db, Tx } from '../../db/database.js';
import { readStatement, type Statement, writeStatement } from '../../db/statement.js';
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

/**
 * What varies between the pool's conditions: each list is ONE parameter (an array on PostgreSQL, a
 * JSON array on SQLite), so a statement's text does not grow with the lists' lengths and the
 * statements kept per shape stay a handful whatever clients send.
 */
interface PoolShape {
  dialect: Db['dialect'];
  candidates: boolean;
  owner: boolean;
  traits: boolean;
}

/**
 * Nodes in a state to take an allocation (now, or once their power settles), of its class, among
 * its candidates and its owner's, with every one of `traits`, as SQL conditions on
 * baremetal_nodes; their placeholders take poolValues(), in order.
 */
function inPool(shape: PoolShape): string[] {
  const list = shape.dialect === 'postgres' ? 'unnest(cast(? as text[])) as w(value)' : 'json_each(?) as w';
  return [
    "resource_class = ? and provision_state = 'available' and instance_uuid is null and maintenance = 0 and retired = 0",
    // a node with no power state and none coming will not become free by waiting
    '(power_state is not null or target_power_state is not null)',
    ...(shape.candidates ? [`uuid in (select w.value from ${list})`] : []),
    ...(shape.owner ? ['(owner = ? or lessee = ?)'] : []),
    ...(shape.traits
      ? [
          `not exists (select 1 from ${list} where not exists (select 1 from baremetal_node_traits as t where t.node_id = baremetal_nodes.id and t.trait = w.value))`,
        ]
      : []),
  ];
}

function poolValues(w: NodeWanted, shape: PoolShape, traits: readonly string[]): unknown[] {
  const list = (values: readonly string[]) => (shape.dialect === 'postgres' ? values : JSON.stringify(values));
  return [
    w.resourceClass,
    ...(shape.candidates ? [list(w.candidates)] : []),
    ...(shape.owner ? [w.owner, w.owner] : []),
    ...(shape.traits ? [list(traits)] : []),
  ];
}

const poolShape = (db: Db, w: NodeWanted, traits: readonly string[]): PoolShape => ({
  dialect: db.dialect,
  candidates: w.candidates.length > 0,
  owner: w.owner !== null,
  traits: traits.length > 0,
});

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
  const traits = [...new Set(w.traits)];
  const set = [allocation.uuid, allocation.id, tx.dialect === 'postgres' ? 'traits' : '$.traits', JSON.stringify(w.traits), tx.clock.nowIso()];
  const shape = poolShape(tx, w, traits);
  const pool = poolValues(w, shape, traits);
  const picks: Array<[Pick, unknown]> = [
    ['from', start],
    ['before', start],
  ];
  if (w.name !== null) picks.unshift(['name', w.name]);
  for (const [pick, value] of picks) {
    const row = await reserving({ ...shape, pick }).one(tx, [...set, ...pool, value]);
    if (row) return row;
  }
  return undefined;
}

/** Which free node the pick takes: the one of the allocation's name, or the first by uuid from (or before) a random one. */
type Pick = 'name' | 'from' | 'before';

/**
 * The reserving statement's text per shape (dialect, candidates or not, owner or not, traits or
 * not, pick: at most 48): made once instead of built and compiled by the query builder per
 * allocation — bare metal's SQLite path, and every reservation's (issue 31: 0.55 ms of CPU per
 * allocation). The placeholders: the set's, the pool's, the pick's.
 */
const reservingByShape = new Map<string, Statement<ReservedNode & { name: string | null }, Tx>>();
function reserving(shape: PoolShape & { pick: Pick }): Statement<ReservedNode & { name: string | null }, Tx> {
  const pg = shape.dialect === 'postgres';
  const key = `${shape.dialect} ${shape.candidates} ${shape.owner} ${shape.traits} ${shape.pick}`;
  let statement = reservingByShape.get(key);
  if (!statement) {
    const conditions = [
      ...inPool(shape),
      // free now: not held, powered to a known state
      'allocation_id is null and reservation is null and power_state is not null',
      { name: 'name = ?', from: 'uuid >= ?', before: 'uuid < ?' }[shape.pick],
    ];
    const order = shape.pick === 'name' ? '' : ' order by uuid';
    // the traits set in instance_info inside the write, no read before (PostgreSQL writes the
    // document back in jsonb's spelling: sorted keys, spaces; readers parse it)
    const instanceInfo = pg ? '(instance_info::jsonb || jsonb_build_object(?::text, ?::jsonb))::text' : 'json_set(instance_info, ?, json(?))';
    statement = writeStatement(
      `update baremetal_nodes set instance_uuid = ?, allocation_id = ?, instance_info = ${instanceInfo}, updated_at = ?
       where id = (select id from baremetal_nodes where ${conditions.join(' and ')}${order} limit 1${pg ? ' for update skip locked' : ''})
         and instance_uuid is null and allocation_id is null and reservation is null
       returning id, uuid, name, resource_class`,
    );
    reservingByShape.set(key, statement);
  }
  return statement;
}

/**
 * Why no node could be reserved: Ironic's failure sentence, or null when one may free up — held
 * by another allocation's transaction, or settling its power state (a power change under way:
 * openstacksdk powers a node off and creates its allocation at once), so the allocation waits.
 */
export async function whyNoNode(db: Db, w: NodeWanted): Promise<string | null> {
  const anyTraits = poolShape(db, w, []);
  if (!(await exists(db, anyTraits, poolValues(w, anyTraits, [])))) {
    return w.candidates.length
      ? `none of the requested nodes are available and match the resource class ${w.resourceClass}`
      : `no available nodes match the resource class ${w.resourceClass}`;
  }
  const traits = [...new Set(w.traits)];
  const withTraits = poolShape(db, w, traits);
  if (traits.length && !(await exists(db, withTraits, poolValues(w, withTraits, traits))))
    return `no suitable nodes have the requested traits ${w.traits.join(', ')}`;
  return null;
}

async function exists(db: Db, shape: PoolShape, values: unknown[]): Promise<boolean> {
  return (await readStatement(`select id from baremetal_nodes where ${inPool(shape).join(' and ')} limit 1`).one(db, values)) !== undefined;
}
