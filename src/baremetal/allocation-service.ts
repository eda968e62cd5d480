// Allocation operations. Creating one writes it in `allocating` with this conductor's affinity and
// hands it to the worker; backfilling (1.58) binds an already deployed node at once. The worker's
// step `attemptAllocation` follows the spec: candidates, shuffle, then per node ONE transaction
// that reserves it with a compare-and-set, re-checks it, and sets the node's instance_uuid and
// allocation_id, the allocation's node and state, and the requested traits in instance_info (plus
// the backend's claim); on failure the next node. Deleting works in any state.
//
// Why the reservation is not Ironic's separate node lock (`reservation`, taken and released in
// their own commits): the lock only guards the binding that follows it, and here both commit
// together, so the lock is the compare-and-set itself. That halves the commits per allocation
// (measured: bench/baremetal.ts, SQLite synchronous=FULL is bound by fsyncs) and leaves no stale
// lock behind a crash.
import { RetryableConflict } from '../core/errors.js';
import { newUuid, normalizeUuid } from '../core/uuid.js';
import { isUniqueViolation } from '../db/sql-helpers.js';
import { type Tx, transaction } from '../db/transaction.js';
import { allocationFailure, candidateOrder, isValidName } from './core.js';
import { CODES, allocationNotFound, badRequest, conflict, ironicError, nodeNotFound } from './errors.js';
import { deallocate, deallocationRefusal } from './node-service.js';
import { type PatchOp, applyPatch, rootField } from './patch.js';
import type { BaremetalRuntime } from './runtime.js';
import {
  type AllocationRecord,
  deleteAllocationRow,
  finishAllocation,
  findAllocation,
  findAllocationById,
  insertAllocation,
  lockAllocation,
} from './store/allocations.js';
import { type NodeRecord, findNode, findNodeById, instanceUuidTaken, lockNode, resolveNodes, updateNode } from './store/nodes.js';
import { checkSchema } from './request.js';

export interface AllocationCreate {
  resource_class?: string | null;
  traits?: string[] | null;
  candidate_nodes?: string[] | null;
  name?: string | null;
  uuid?: string | null;
  extra?: Record<string, unknown> | null;
  node?: string | null;
  owner?: string | null;
}

const duplicateUuid = (uuid: string) => conflict(`An allocation with UUID ${uuid} already exists.`);
const duplicateName = (name: string) => conflict(`An allocation with name ${name} already exists.`);

export async function createAllocation(rt: BaremetalRuntime, body: AllocationCreate): Promise<AllocationRecord> {
  const name = body.name ?? null;
  if (name !== null && !isValidName(name)) throw badRequest(`Cannot create allocation with invalid name '${name}'`);
  if (body.uuid && !/^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(body.uuid)) throw badRequest(`Expected UUID for uuid: ${body.uuid}`);
  const traits = [...new Set(body.traits ?? [])];
  await rt.ensureRegistered();
  if (body.node) return backfill(rt, body, name, traits);
  if (!body.resource_class) throw badRequest('The resource_class field is mandatory when not backfilling');
  const resourceClass = body.resource_class;

  // candidate_nodes may name nodes by uuid or name; they are kept as uuids, in the given order
  const idents = body.candidate_nodes ?? [];
  const resolved = await resolveNodes(rt.database, idents);
  const missing = idents.filter((i) => !resolved.has(i));
  if (missing.length) throw badRequest(`Nodes cannot be found: ${missing.join(', ')}`);
  const candidates = [...new Set(idents.map((i) => resolved.get(i)!.uuid))];

  const uuid = body.uuid ? normalizeUuid(body.uuid) : newUuid();
  const now = rt.database.clock.nowIso();
  // The answer is read inside the transaction: once the allocation is committed, a database fault
  // must not turn the reply into a 503 that says nothing was done (the worker allocates it anyway).
  let created: AllocationRecord | undefined;
  const id = await insertChecked(rt, uuid, name, async (tx) => {
    const inserted = await insertAllocation(
      tx,
      {
        uuid,
        name,
        node_id: null,
        resource_class: resourceClass,
        state: 'allocating',
        last_error: null,
        conductor_affinity: rt.conductorId,
        candidate_nodes: JSON.stringify(candidates),
        extra: JSON.stringify(body.extra ?? {}),
        owner: body.owner ?? null,
        created_at: now,
        updated_at: null,
      },
      traits,
    );
    created = await findAllocationById(tx, inserted);
    return inserted;
  });
  rt.allocations.enqueue(id);
  return created!;
}

/** Insert after the 409 checks of the spec (uuid unique and not any node's instance_uuid; name unique). */
async function insertChecked(rt: BaremetalRuntime, uuid: string, name: string | null, insert: (tx: Tx) => Promise<number>): Promise<number> {
  try {
    return await transaction(rt.database, async (tx) => {
      if (await findAllocation(tx, uuid)) throw duplicateUuid(uuid);
      if (name !== null && (await findAllocation(tx, name))) throw duplicateName(name);
      // the allocation's uuid becomes a node's instance_uuid: one already in use is a conflict
      if (await instanceUuidTaken(tx, uuid)) throw conflict(`Instance ${uuid} is already associated with a node; an allocation cannot have that UUID.`);
      return insert(tx);
    });
  } catch (err) {
    if (isUniqueViolation(err)) {
      if (await findAllocation(rt.database, uuid)) throw duplicateUuid(uuid);
      if (name !== null && (await findAllocation(rt.database, name))) throw duplicateName(name);
    }
    throw err;
  }
}

/**
 * 1.58: record the allocation of a node that is already deployed. Created `active` at once; a
 * request that does not fit the node is refused (409 for the node's state, 400 for a request that
 * contradicts the node) and leaves nothing behind.
 */
async function backfill(rt: BaremetalRuntime, body: AllocationCreate, name: string | null, traits: string[]): Promise<AllocationRecord> {
  const ident = body.node!;
  if (!(await findNode(rt.database, ident))) throw badRequest(`Node ${ident} could not be found.`);
  if (body.resource_class) await rt.backend.prepare(rt.database, { resourceClass: body.resource_class });
  let allocationUuid = body.uuid ? normalizeUuid(body.uuid) : null;
  const now = rt.database.clock.nowIso();
  // read inside the transaction, as in createAllocation
  let created: AllocationRecord | undefined;
  await transaction(rt.database, async (tx) => {
    const node = await lockNode(tx, ident);
    if (!node) throw badRequest(`Node ${ident} could not be found.`);
    const uuid = allocationUuid ?? node.instance_uuid ?? newUuid();
    const prefix = `Cannot backfill an allocation for node ${node.uuid}`;
    if (node.allocation_id !== null) throw conflict(`${prefix}: it already has allocation ${node.allocation_uuid}.`);
    if (node.instance_uuid !== null && node.instance_uuid !== uuid) throw conflict(`Node ${node.uuid} is associated with instance ${node.instance_uuid}.`, CODES.invalidState);
    if (node.instance_uuid === null && (await instanceUuidTaken(tx, uuid))) throw conflict(`Instance ${uuid} is already associated with a node, it cannot be associated with this other node ${node.uuid}`);
    if (node.provision_state !== 'active') {
      throw conflict(`${prefix}: Node must be in the "active" state, but the current state is "${node.provision_state}"`, CODES.invalidState);
    }
    const mismatches: string[] = [];
    if (body.resource_class && body.resource_class !== node.resource_class) {
      mismatches.push(`Resource class ${node.resource_class} does not match the requested resource class ${body.resource_class}`);
    }
    if (traits.some((t) => !node.traits.includes(t))) mismatches.push(`List of traits ${JSON.stringify(node.traits)} does not match the requested traits ${JSON.stringify(traits)}`);
    const candidates = body.candidate_nodes ?? [];
    if (candidates.length) {
      const resolved = await resolveNodes(tx, candidates);
      if (![...resolved.values()].some((r) => r.id === node.id)) mismatches.push(`Candidate nodes must be empty or contain the target node, but got ${JSON.stringify(candidates)}`);
    }
    if (mismatches.length) throw badRequest(`${prefix}: ${mismatches.join('; ')}`);
    if (await findAllocation(tx, uuid)) throw duplicateUuid(uuid);
    if (name !== null && (await findAllocation(tx, name))) throw duplicateName(name);
    allocationUuid = uuid;
    const allocationId = await insertAllocation(
      tx,
      {
        uuid,
        name,
        node_id: node.id,
        resource_class: body.resource_class || node.resource_class,
        state: 'active',
        last_error: null,
        conductor_affinity: rt.conductorId,
        candidate_nodes: JSON.stringify(candidates.length ? [node.uuid] : []),
        extra: JSON.stringify(body.extra ?? {}),
        owner: body.owner ?? null,
        created_at: now,
        updated_at: now,
      },
      traits,
    );
    const allocation = (await findAllocationById(tx, allocationId))!;
    if (!(await rt.backend.claim(tx, allocation, node))) {
      throw conflict(`${prefix}: its resource provider in Placement has no room (something else holds it).`);
    }
    await updateNode(tx, node.id, { instance_uuid: uuid, allocation_id: allocationId, updated_at: now });
    created = await findAllocationById(tx, allocationId);
  }).catch((err) => {
    if (isUniqueViolation(err)) throw conflict(`Cannot backfill an allocation for node ${ident}: it changed concurrently; retry.`);
    throw err;
  });
  return created!;
}

const PATCHABLE = ['name', 'extra'];
const PATCHED_SCHEMA = {
  type: 'object',
  properties: { name: { type: ['string', 'null'] }, extra: { type: ['object', 'null'] } },
} as const;

export async function patchAllocation(rt: BaremetalRuntime, ident: string, ops: PatchOp[]): Promise<AllocationRecord> {
  for (const op of ops) {
    if (!PATCHABLE.includes(rootField(op))) throw badRequest(`Cannot patch ${op.path}. Only the following can be updated: ${PATCHABLE.join(', ')}`);
  }
  return transaction(rt.database, async (tx) => {
    const allocation = await lockAllocation(tx, ident);
    if (!allocation) throw allocationNotFound(ident);
    const before = { name: allocation.name, extra: JSON.parse(allocation.extra) as unknown };
    const after = applyPatch(before, ops);
    checkSchema(PATCHED_SCHEMA as never, after, 'allocation');
    const name = after.name as string | null;
    if (name !== allocation.name) {
      if (name !== null && !isValidName(name)) throw badRequest(`Cannot update allocation with invalid name '${name}'`);
      if (name !== null && (await findAllocation(tx, name))) throw duplicateName(name);
    }
    await tx.db
      .updateTable('baremetal_allocations')
      .set({ name, extra: JSON.stringify(after.extra ?? {}), updated_at: tx.clock.nowIso() })
      .where('id', '=', allocation.id)
      .execute();
    return (await findAllocationById(tx, allocation.id))!;
  }).catch((err) => {
    if (isUniqueViolation(err)) throw conflict(`An allocation with that name already exists.`);
    throw err;
  });
}

/**
 * DELETE /v1/allocations/{id} (and /v1/nodes/{node}/allocation): release the node, in one
 * transaction. Locks the node before the allocation, the order every node write uses; an
 * allocation still `allocating` is simply deleted and its worker's final compare-and-set finds
 * nothing to finish.
 */
export async function deleteAllocation(rt: BaremetalRuntime, ident: string): Promise<void> {
  await transaction(rt.database, async (tx) => {
    const seen = await findAllocation(tx, ident);
    if (!seen) throw allocationNotFound(ident);
    const node = seen.node_id === null ? undefined : await lockNode(tx, seen.node_id);
    const allocation = await lockAllocation(tx, seen.id);
    if (!allocation) throw allocationNotFound(ident);
    if (allocation.node_id !== seen.node_id) {
      // the worker bound it to a node between our read and our lock: start over in lock order
      throw new RetryableConflict('allocation changed while deleting', () => conflict('The allocation changed concurrently; retry.'));
    }
    if (node && node.allocation_id === allocation.id) {
      const refusal = deallocationRefusal(node, allocation.uuid);
      if (refusal) throw ironicError(409, refusal, CODES.invalidState);
      await deallocate(tx, rt, node);
    } else {
      await deleteAllocationRow(tx, allocation.id);
    }
  });
}

export async function deleteNodeAllocation(rt: BaremetalRuntime, nodeIdent: string): Promise<void> {
  const node = await findNode(rt.database, nodeIdent);
  if (!node) throw nodeNotFound(nodeIdent);
  if (node.allocation_uuid === null) throw ironicError(404, `Allocation for node ${nodeIdent} was not found`, CODES.notFound);
  await deleteAllocation(rt, node.allocation_uuid);
}

// ---- the worker's step -----------------------------------------------------------------------

export type Attempt =
  | { kind: 'done' }
  | { kind: 'gone' }
  | { kind: 'failed'; reason: string }
  /** every candidate was taken or changed under us before we could reserve it; search again */
  | { kind: 'retry'; suitable: number };

class Unsuitable extends Error {}
class Gone extends Error {}

/** One pass over the candidates of an allocation this conductor owns. */
export async function attemptAllocation(rt: BaremetalRuntime, allocationId: number): Promise<Attempt> {
  const allocation = await findAllocationById(rt.database, allocationId);
  if (!allocation || allocation.state !== 'allocating' || allocation.conductor_affinity !== rt.conductorId) return { kind: 'gone' };
  const found = await rt.backend.candidates(rt.database, allocation);
  if ('reason' in found) return { kind: 'failed', reason: found.reason };
  for (const candidate of candidateOrder(found.nodes, allocation.name)) {
    const outcome = await transaction(rt.database, (tx) => claimNode(tx, rt, allocation, candidate.id)).catch((err) => {
      if (err instanceof Unsuitable) return 'unsuitable' as const;
      if (err instanceof Gone) return 'gone' as const;
      // another node got this allocation's uuid as its instance_uuid meanwhile
      if (isUniqueViolation(err)) return 'unsuitable' as const;
      throw err;
    });
    if (outcome !== 'unsuitable') return { kind: outcome };
  }
  return { kind: 'retry', suitable: found.nodes.length };
}

/**
 * The claim, ONE transaction: reserve the node with a compare-and-set that re-checks every
 * column condition of the search (PostgreSQL: a concurrent claimant waits on the row and then
 * finds it taken), re-check what columns cannot say (candidates, owner, traits), claim it in
 * the backend, record the requested traits in instance_info, and make the allocation active —
 * guarded by this conductor's affinity. Any failure rolls all of it back.
 */
async function claimNode(tx: Tx, rt: BaremetalRuntime, allocation: AllocationRecord, nodeId: number): Promise<'done'> {
  if (tx.dialect === 'postgres') {
    // another worker is claiming this node right now: move on rather than queue behind it
    // (bench/baremetal.ts, PostgreSQL, database backend, 64 clients: 50 → 67 allocations/s)
    const free = await tx.db.selectFrom('baremetal_nodes').select('id').where('id', '=', nodeId).forUpdate().skipLocked().executeTakeFirst();
    if (!free) throw new Unsuitable();
  }
  const now = tx.clock.nowIso();
  const reserved = await tx.db
    .updateTable('baremetal_nodes')
    .set({ instance_uuid: allocation.uuid, allocation_id: allocation.id, updated_at: now })
    .where('id', '=', nodeId)
    .where('instance_uuid', 'is', null)
    .where('allocation_id', 'is', null)
    .where('reservation', 'is', null)
    .where('provision_state', '=', 'available')
    .where('maintenance', '=', 0)
    .where('retired', '=', 0)
    .where('power_state', 'is not', null)
    .where('resource_class', '=', allocation.resource_class ?? '')
    .executeTakeFirst();
  if (Number(reserved.numUpdatedRows) !== 1) throw new Unsuitable();
  const node = (await findNodeById(tx, nodeId))!;
  if (!stillSuitable(node, allocation)) throw new Unsuitable();
  if (!(await rt.backend.claim(tx, allocation, node))) throw new Unsuitable();
  const instanceInfo = { ...(JSON.parse(node.instance_info) as Record<string, unknown>), traits: allocation.traits };
  await updateNode(tx, node.id, { instance_info: JSON.stringify(instanceInfo) });
  // the spec's guarded update: only while this conductor still owns the allocation
  if (!(await finishAllocation(tx, allocation.id, rt.conductorId, { state: 'active', nodeId: node.id }))) throw new Gone();
  return 'done';
}

/** What the reservation's compare-and-set cannot check in SQL, on the reserved row. */
function stillSuitable(node: NodeRecord, a: AllocationRecord): boolean {
  const candidates = JSON.parse(a.candidate_nodes) as string[];
  return (
    (candidates.length === 0 || candidates.includes(node.uuid)) &&
    (a.owner === null || node.owner === a.owner || node.lessee === a.owner) &&
    a.traits.every((t) => node.traits.includes(t))
  );
}

/** Mark an allocation this conductor owns as failed (guarded like every worker write). */
export async function failAllocation(rt: BaremetalRuntime, allocation: { id: number; uuid: string }, reason: string): Promise<void> {
  await transaction(rt.database, (tx) => finishAllocation(tx, allocation.id, rt.conductorId, { state: 'error', lastError: allocationFailure(allocation.uuid, reason) }));
}

