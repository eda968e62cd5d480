// The allocation's candidate search in the nodes table (both backends start from it; the database
// backend ends with it): nodes in a state to take an allocation, then those with every trait.
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';

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

/** Nodes in a state to take an allocation now: the spec's filter, without traits. */
export async function eligibleNodes(db: Db, q: CandidateQuery): Promise<Candidate[]> {
  let query = db.db
    .selectFrom('baremetal_nodes')
    .select(['id', 'uuid', 'name'])
    .where('provision_state', '=', 'available')
    .where('maintenance', '=', 0)
    .where('retired', '=', 0)
    .where('power_state', 'is not', null)
    .where('instance_uuid', 'is', null)
    .where('resource_class', '=', q.resourceClass);
  if (q.candidates.length) query = query.where('uuid', 'in', [...q.candidates]);
  if (q.owner !== null) {
    const owner = q.owner;
    query = query.where((eb) => eb.or([eb('owner', '=', owner), eb('lessee', '=', owner)]));
  }
  return query.orderBy('id').execute();
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
