// PostgreSQL: a new allocation whose node is free now, as ONE statement — insert the allocation
// `active`, pick a free node, reserve it (instance_uuid, allocation_id, the requested traits in
// instance_info) and record the requested traits — in place of five round trips (BEGIN, insert,
// pick, state write, COMMIT), in its own implicit transaction, as Placement's claim is
// (placement/store/one-statement-writes.ts). With the placement backend the statement also holds
// Placement's claim of the node it reserves (an EmbeddedWrite the backend gets from Placement's
// services: its parts and its result are Placement's own): still one round trip, where the claim
// as a statement of its own made four (BEGIN, this statement, the claim, COMMIT).
//
// It does what the general path (services/allocations.ts and allocation-claims.ts:
// insertNewAllocation, reserveFreeNode, finishAllocation) does, and accepts only what that path
// would accept. The pick is the general one (store/candidates.ts): a node of the allocation's name
// first, then the first free node after a random uuid, wrapping around, skipping rows other
// transactions hold. The facts it relies on are read from rows it locks or guarded by unique
// indexes, never from the statement's snapshot alone:
//   - the node is free: FOR UPDATE re-checks the node's own conditions on the row's latest version
//     (READ COMMITTED), and the UPDATE that reserves it re-checks instance_uuid, allocation_id and
//     reservation on the row it locked (the requested traits are read as the general path's pick
//     reads them);
//   - no allocation has this uuid or name, and no node has the uuid as its instance: their unique
//     indexes (a clash fails the statement).
// When no node is free `allot_assert` raises; any failure keeps nothing, and the caller steps
// aside to the general path, which decides again and words the answer.
import { memoBy } from '../../core/memo.js';
import { newUuid } from '../../core/uuid.js';
import type { Tx } from '../../db/database.js';
import { type EmbeddedWrite, writeStatement } from '../../db/statement.js';

import type { NodeWanted, ReservedNode } from './candidates.js';

/** The allocation's columns the statement writes (the rest are known: `active`, no error). */
export interface AllocationValues {
  uuid: string;
  name: string | null;
  resource_class: string;
  conductor_affinity: string;
  /** JSON, as stored */
  candidate_nodes: string;
  /** JSON, as stored */
  extra: string;
  owner: string | null;
  /** the service holding it (held-allocations.ts); null: an API client's */
  held_by: string | null;
  /** created_at and updated_at */
  now: string;
}

/** The statement's row: its own columns, and those of the claim's parts (the claim reads them). */
interface Result extends Record<string, unknown> {
  allocation_id: number;
  node_id: number;
  node_uuid: string;
  node_name: string | null;
  node_resource_class: string | null;
}

/** Which optional conditions the pick has: one statement text per combination (16 at most). */
interface Shape {
  byName: boolean;
  candidates: boolean;
  owner: boolean;
  traits: boolean;
}

// $1 uuid, $2 name, $3 resource class, $4 conductor, $5 candidate_nodes (JSON), $6 extra,
// $7 owner, $8 now, $9 the random start uuid, $10 the traits (text[]), $11 the traits (JSON),
// $12 held_by, $13 the candidate node uuids (text[], only in the shapes that have candidates: a
// parameter the text never names could not be typed), then the claim's values.
function makeStatement(shape: Shape, claim: EmbeddedWrite | undefined) {
  // store/candidates.ts `free`: in the pool, with every trait, not held, with a power state
  const free = [
    'n.resource_class = $3::text',
    "n.provision_state = 'available'",
    'n.instance_uuid is null',
    'n.maintenance = 0',
    'n.retired = 0',
    'n.power_state is not null',
    'n.allocation_id is null',
    'n.reservation is null',
    shape.candidates ? 'n.uuid = any($13::text[])' : '',
    shape.owner ? '(n.owner = $7::text or n.lessee = $7::text)' : '',
    shape.traits
      ? `not exists (select 1 from unnest($10::text[]) w(trait)
           where not exists (select 1 from baremetal_node_traits t where t.node_id = n.id and t.trait = w.trait))`
      : '',
  ]
    .filter(Boolean)
    .join(' and ');
  const pick = (where: string, order: string) => `(select n.id from baremetal_nodes n where ${free} and ${where}${order} limit 1 for update skip locked)`;
  const picks = [
    shape.byName ? pick('n.name = $2::text', '') : '',
    pick('n.uuid >= $9::text', ' order by n.uuid'),
    pick('n.uuid < $9::text', ' order by n.uuid'),
  ].filter(Boolean);
  // The claim on the reserved node's provider (same uuid), after the node in lock order as in the
  // general path: the node, then Placement's consumer, provider and inventory.
  let n = shape.candidates ? 13 : 12;
  const claimed = claim?.parts((type) => `$${++n}::${type}`, '$8::text', '(select uuid from reserved)');
  // COALESCE stops at the first pick that finds a node: the later ones neither run nor lock.
  // MATERIALIZED: evaluated once (inlined, PostgreSQL ran the picks once for the filter and again
  // for the value — twice the index walk, measured 2.1 ms per statement at 16 clients).
  return writeStatement<Result>(
    `with picked as materialized (
       select coalesce(${picks.join(', ')}) as id
     ),
     allocation as (
       insert into baremetal_allocations
         (uuid, name, node_id, resource_class, state, last_error, conductor_affinity, candidate_nodes, extra, owner, held_by, created_at, updated_at)
       select $1::text, $2::text, p.id, $3::text, 'active', null, $4::text, $5::text, $6::text, $7::text, $12::text, $8::text, $8::text
       from picked p where p.id is not null
       returning id, node_id
     ),
     reserved as (
       update baremetal_nodes n
       set instance_uuid = $1::text, allocation_id = a.id, updated_at = $8::text,
           instance_info = (n.instance_info::jsonb || jsonb_build_object('traits', $11::jsonb))::text
       from allocation a
       where n.id = a.node_id and n.instance_uuid is null and n.allocation_id is null and n.reservation is null
       returning n.id, n.uuid, n.name, n.resource_class
     ),
     traits as (
       insert into baremetal_allocation_traits (allocation_id, trait)
       select a.id, w.trait from allocation a cross join unnest($10::text[]) w(trait)
     )${claimed ? `,\n     ${claimed.ctes.join(',\n     ')}` : ''}
     select allot_assert((select count(*) from reserved) = 1${claimed ? ` and ${claimed.check}` : ''}, 'no free node') as ok,
            (select id from allocation) as allocation_id,
            (select id from reserved) as node_id, (select uuid from reserved) as node_uuid, (select name from reserved) as node_name,
            (select resource_class from reserved) as node_resource_class${claimed ? `, ${claimed.columns.join(', ')}` : ''}`,
  );
}

/** One text per pick shape (16) and claim shape (none, or the placement backend's: one class). */
const statementFor = memoBy(
  ({ pick, claim }: { pick: number; claim?: EmbeddedWrite }) => `${pick} ${claim?.shape ?? ''}`,
  ({ pick, claim }) => makeStatement({ byName: !!(pick & 1), candidates: !!(pick & 2), owner: !!(pick & 4), traits: !!(pick & 8) }, claim),
  64,
);

/**
 * Insert the allocation `active` on a free node it reserves, and the backend's `claim` of it if it
 * writes one, in one statement. `traits` sorted and unique (as the allocation keeps them). The
 * allocation's id and its node; raises when no node is free, the claim is refused, or on any
 * clash: nothing is kept, and the general path decides.
 */
export async function allocateOnFreeNode(
  tx: Tx,
  values: AllocationValues,
  wanted: NodeWanted,
  claim?: EmbeddedWrite,
): Promise<{ allocationId: number; node: ReservedNode & { name: string | null } }> {
  const key = (wanted.name !== null ? 1 : 0) | (wanted.candidates.length ? 2 : 0) | (wanted.owner !== null ? 4 : 0) | (wanted.traits.length ? 8 : 0);
  const params: unknown[] = [
    values.uuid,
    values.name,
    values.resource_class,
    values.conductor_affinity,
    values.candidate_nodes,
    values.extra,
    values.owner,
    values.now,
    newUuid(),
    wanted.traits,
    JSON.stringify(wanted.traits),
    values.held_by,
  ];
  if (wanted.candidates.length) params.push(wanted.candidates);
  if (claim) params.push(...claim.params);
  const row = (await statementFor({ pick: key, claim }).one(tx, params))!;
  claim?.written(tx, row);
  return {
    allocationId: row.allocation_id,
    node: { id: row.node_id, uuid: row.node_uuid, name: row.node_name, resource_class: row.node_resource_class },
  };
}
