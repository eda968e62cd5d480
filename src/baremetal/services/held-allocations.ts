// Bare-metal allocations that another service of this process holds (a service instance of the
// identifier API, docs/ids.md "Reservations across the engines"). Such an allocation is an
// ordinary one — listed at GET /v1/allocations, its node's instance_uuid set, claimed in the
// backend — made by the same pick as POST /v1/allocations, but in the holder's transaction and
// active at once, or not at all: there is no worker to wait for, so no free node now is the
// holder's failure to report. It is marked `held_by` the holder: the API refuses to delete it
// (services/allocations.ts), and what releases it otherwise tells the holder
// (services/nodes.ts `deallocate`).
import { newUuid } from '../../core/uuid.js';
import type { Db, Tx } from '../../db/database.js';
import { fastStep, savepoint } from '../../db/transaction.js';
import type { BaremetalContext } from '../context.js';
import { deallocationRefusal } from '../core/states.js';
import { findAllocation, insertNewAllocation, nodesHeldBy as heldNodes } from '../store/allocations.js';
import { type NodeWanted, reserveFreeNode, whyNoNode } from '../store/candidates.js';
import { lockNode, resolveNodes } from '../store/nodes.js';
import { allocateOnFreeNode } from '../store/one-statement-allocation.js';
import { Unsuitable, noteActive, takeNode } from './allocation-claims.js';
import { ensureRegistered } from './conductors.js';
import { deallocate } from './node-allocation.js';

/** What a holder asks of its node: as the body of POST /v1/allocations. */
export interface NodeRequest {
  resourceClass: string;
  traits: readonly string[];
  /** nodes by uuid or name (empty: any) */
  candidateNodes: readonly string[];
}

/** The allocation a holder makes, and whose it is. */
export interface NodeHolding {
  /** `service-instance/<id>` */
  holder: string;
  /** the allocation's name */
  name: string;
  /** the project the node is allocated to (its owner or lessee must be it); null: any node */
  owner: string | null;
  extra: Record<string, unknown>;
}

export interface HeldNode {
  allocation: string;
  node: string;
  nodeName: string | null;
}

export type NodeOutcome = { ok: true; held: HeldNode } | { ok: false; reason: string };

/** Nodes tried when the backend refuses the one reserved (its Placement provider is full). */
const MAX_TRIES = 5;

/** Before a holder's transaction: what a reservation needs made in transactions of its own. */
export const prepareNodeReservations = (ctx: BaremetalContext) => ensureRegistered(ctx);

/**
 * Allocate a node for the holder in its transaction: insert the allocation, reserve a free node
 * with the one statement POST /v1/allocations uses, claim it in the backend, make it active. The
 * node, or Ironic's reason why none can be had now. `prepareNodeReservations` must have run.
 * `last`: the holder gives up its transaction when this fails (nothing is tried after it).
 * `fast` (withFastSteps): the last try may be the one statement POST /v1/allocations makes on
 * PostgreSQL, whose refusal runs the holder's transaction again without it.
 */
export async function reserveNode(
  tx: Tx,
  ctx: BaremetalContext,
  request: NodeRequest,
  holding: NodeHolding,
  options: { last: boolean; fast: boolean },
): Promise<NodeOutcome> {
  try {
    // A failure must leave no allocation behind in the holder's transaction when the holder goes
    // on (tries another request): a savepoint of its own then. The last try needs none (two
    // round trips fewer while the transaction may hold hot rows): its failure fails the whole.
    const allocate = () => allocateNode(tx, ctx, request, holding, options.last && options.fast);
    return { ok: true, held: await (options.last ? allocate() : savepoint(tx, allocate)) };
  } catch (err) {
    if (err instanceof NoNode) return { ok: false, reason: err.message };
    throw err;
  }
}

class NoNode extends Error {}

async function allocateNode(tx: Tx, ctx: BaremetalContext, request: NodeRequest, holding: NodeHolding, fast: boolean): Promise<HeldNode> {
  const resolved = await resolveNodes(tx, [...request.candidateNodes]);
  const missing = request.candidateNodes.filter((i) => !resolved.has(i));
  if (missing.length) throw new NoNode(`nodes cannot be found: ${missing.join(', ')}`);
  const candidates = [...new Set(request.candidateNodes.map((i) => resolved.get(i)!.uuid))];
  const traits = [...new Set(request.traits)].sort();
  const now = tx.clock.nowIso();
  const values = {
    uuid: newUuid(),
    name: holding.name,
    resource_class: request.resourceClass,
    conductor_affinity: ctx.conductorId,
    candidate_nodes: JSON.stringify(candidates),
    extra: JSON.stringify(holding.extra),
    owner: holding.owner,
    held_by: holding.holder,
  };
  const wanted: NodeWanted = { resourceClass: request.resourceClass, candidates, owner: holding.owner, traits, name: null };
  if (fast && tx.dialect === 'postgres') {
    // the allocation, active on a free node, and the backend's claim of it: one statement
    const inStatement = await ctx.backend.claimInStatement(tx, values);
    if (inStatement) {
      const { allocationId, node } = await fastStep(() => allocateOnFreeNode(tx, { ...values, now }, wanted, inStatement.claim));
      noteActive(tx, ctx, { id: allocationId, created_at: now });
      return { allocation: values.uuid, node: node.uuid, nodeName: node.name };
    }
  }
  const allocation = await insertNewAllocation(
    tx,
    { ...values, node_id: null, state: 'allocating', last_error: null, created_at: now, updated_at: null },
    traits,
  );
  if (!allocation) throw new NoNode('the allocation could not be made: its uuid is a node instance');
  for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
    try {
      const taken = await savepoint(tx, async () => {
        const node = await reserveFreeNode(tx, wanted, allocation);
        if (node) await takeNode(tx, ctx, allocation, node);
        return node;
      });
      if (!taken) break;
      return { allocation: allocation.uuid, node: taken.uuid, nodeName: taken.name };
    } catch (err) {
      if (!(err instanceof Unsuitable)) throw err;
    }
  }
  const reason = await whyNoNode(tx, wanted);
  throw new NoNode(reason ?? `no node of resource class ${request.resourceClass} is free now (others are being allocated or settling)`);
}

/**
 * Release an allocation the holder holds, in its transaction: as DELETE /v1/allocations would,
 * refused (the reason) while the node is deployed or moving — an instance does not give away a
 * node in use. Released or gone: null.
 */
export async function releaseNode(tx: Tx, ctx: BaremetalContext, allocationUuid: string, holder: string): Promise<string | null> {
  const allocation = await findAllocation(tx, allocationUuid);
  if (!allocation || allocation.held_by !== holder) return null;
  const node = allocation.node_id === null ? undefined : await lockNode(tx, allocation.node_id);
  if (!node || node.allocation_id !== allocation.id) return null;
  const refusal = deallocationRefusal(node);
  if (refusal) return `node ${node.uuid} is ${refusal === 'active' ? 'deployed (active)' : `in ${node.provision_state}`}; undeploy it first`;
  await deallocate(tx, ctx, node, 'released by its holder', holder);
  return null;
}

/** The allocations a holder holds now. */
export const nodesHeldBy = (db: Db, holder: string): Promise<HeldNode[]> => heldNodes(db, holder);
