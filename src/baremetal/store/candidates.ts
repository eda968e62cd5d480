// The allocation's candidate search in the nodes table (both backends start from it; the database
// backend ends with it): nodes in a state to take an allocation, then those with every trait.
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { AllocationRecord } from './allocations.js';

export interface Candidate {
  id: number;
  uuid: string;
  name: string | null;
}

export interface CandidateQuery {
  resourceClass: string;
  /** node uuids the allocation is limited to (empty: any) */
  candidates: readonly string[];
  /** an owner the node must have as owner or lessee (null: any) */
  owner: string | null;
}

/** What an allocation asks of its node, as the search reads it. */
export function candidateQuery(a: AllocationRecord): CandidateQuery {
  return { resourceClass: a.resource_class ?? '', candidates: JSON.parse(a.candidate_nodes) as string[], owner: a.owner };
}

/** Nodes in a state to take an allocation now: the spec's filter, without traits. */
export async function eligibleNodes(db: Db, q: CandidateQuery): Promise<Candidate[]> {
  return matching(db, q).where('power_state', 'is not', null).orderBy('id').execute();
}

/**
 * How many nodes would be eligible but for a power state still settling (none yet, a power change
 * under way): they become candidates in a moment, so an allocation waits for them rather than
 * failing (openstacksdk powers a node off and creates its allocation at once).
 */
export async function nodesSettlingPower(db: Db, q: CandidateQuery): Promise<number> {
  const rows = await matching(db, q).where('power_state', 'is', null).where('target_power_state', 'is not', null).execute();
  return rows.length;
}

function matching(db: Db, q: CandidateQuery) {
  let query = db.db
    .selectFrom('baremetal_nodes')
    .select(['id', 'uuid', 'name'])
    .where('provision_state', '=', 'available')
    .where('maintenance', '=', 0)
    .where('retired', '=', 0)
    .where('instance_uuid', 'is', null)
    .where('resource_class', '=', q.resourceClass);
  if (q.candidates.length) query = query.where('uuid', 'in', [...q.candidates]);
  if (q.owner !== null) {
    const owner = q.owner;
    query = query.where((eb) => eb.or([eb('owner', '=', owner), eb('lessee', '=', owner)]));
  }
  return query;
}

/** Of these node ids, those that have every one of the traits. */
export async function nodesWithTraits(db: Db, nodeIds: number[], traits: readonly string[]): Promise<Set<number>> {
  const rows = await db.db
    .selectFrom('baremetal_node_traits')
    .select('node_id')
    .where('trait', 'in', [...traits])
    .where('node_id', 'in', nodeIds)
    .groupBy('node_id')
    .having(sql<number>`count(*)`, '=', new Set(traits).size)
    .execute();
  return new Set(rows.map((r) => r.node_id));
}
