// The two allocation backends of the spec, behind one interface the allocation claim and the
// node writes use. Both find the node the same way (store/candidates.ts: one statement picks and
// reserves a free node in the nodes table); they differ in what else the claim writes:
//   database   — nothing: the node row's reservation is the claim.
//   placement  — every node is mirrored into allot's own Placement as a resource provider (uuid
//                and name = the node's uuid) with inventory CUSTOM_<RESOURCE_CLASS>: 1 and the
//                node's traits; the claim is also a Placement allocation whose consumer is the
//                allocation's uuid, written in the same transaction as the node and allocation
//                rows, and refused when the provider has no room. The node providers belong to
//                the bare-metal service (nodeProviderOwner below): no Placement API client can
//                allocate them, so Placement usage and node state cannot disagree.
import type { BaremetalBackendName } from '../../config.js';
import { DomainError } from '../../core/errors.js';
import type { Database, Db, Tx } from '../../db/database.js';

import type { PlacementContext, ProviderOwner } from '../../placement/context.js';
import * as classes from '../../placement/services/resource-classes.js';
import * as placementTraits from '../../placement/services/traits.js';
import { readConsumer, writeAllocations } from '../../placement/store/allocations.js';
import { type ClaimInStatement, claimInStatement, oneStatementWrite } from '../../placement/store/one-statement-writes.js';
import { changeInventories, currentInventories } from '../../placement/store/inventories.js';
import { deleteProvider, findAndLockProvider, insertProvider } from '../../placement/store/providers.js';
import { providerTraits, replaceProviderTraits } from '../../placement/store/traits.js';
import { STANDARD_TRAITS, placementResourceClass } from '../core/rules.js';
import type { AllocationRecord } from '../store/allocations.js';
import { type NodeRecord, nodeUuidsAmong } from '../store/nodes.js';
import { isAssertRefusal } from '../../db/sql-helpers.js';

/** What a claim needs of the node. */
type ClaimedNode = Pick<NodeRecord, 'uuid' | 'resource_class'>;

export interface AllocationBackend {
  readonly name: BaremetalBackendName;
  /**
   * PostgreSQL, a new allocation whose node is free now (store/one-statement-allocation.ts): what
   * the one statement that reserves the node writes as the claim — nothing (the reservation is
   * the claim), or a claim of its own — or null when the general path must claim.
   */
  claimInStatement(db: Db, allocation: Pick<AllocationRecord, 'uuid' | 'owner' | 'resource_class'>): Promise<{ claim?: ClaimInStatement } | null>;
  /** Inside the claim transaction, after the node was reserved: take it. False: it is taken. */
  claim(tx: Tx, allocation: AllocationRecord, node: ClaimedNode): Promise<boolean>;
  /** Inside a deallocation transaction: give the allocation's node back. */
  release(tx: Tx, allocationUuid: string): Promise<void>;
  /** Before a node write: create what the backend needs by name (Placement classes and traits). */
  prepare(database: Database, names: { resourceClass?: string | null; traits?: string[] }): Promise<void>;
  /** Inside a node write (create, resource class or traits changed): mirror the node. */
  nodeChanged(tx: Tx, node: NodeRecord): Promise<void>;
  /** Inside a node delete. */
  nodeDeleted(tx: Tx, nodeUuid: string): Promise<void>;
  /** Does the backend hold the claim of this allocation (checked when reconciling at start)? */
  holdsClaim(db: Db, allocationUuid: string): Promise<boolean>;
}

export const databaseBackend: AllocationBackend = {
  name: 'database',
  async claimInStatement() {
    return {};
  },
  async claim() {
    return true; // the node row's compare-and-set is the claim
  },
  async release() {},
  async prepare() {},
  async nodeChanged() {},
  async nodeDeleted() {},
  async holdsClaim() {
    return true;
  },
};

/** Placement's stand-in project and user for bare-metal claims without an owner. */
const PLACEMENT_USER = 'allot-baremetal';

/** A node's claim in Placement: one unit of its class's inventory. */
const oneNode = (resourceClass: string | null) => new Map([[placementResourceClass(resourceClass ?? ''), 1]]);

/** What a Placement claim refuses when the node's provider cannot take this allocation now. */
const NOT_CLAIMABLE: readonly string[] = [
  'capacity_exceeded',
  'inventory_invalid',
  'inventory_constraint_violated',
  'allocation_provider_missing',
  'consumer_generation_conflict',
  'unknown_resource_class',
];

export const placementBackend = (placement: PlacementContext): AllocationBackend => ({
  name: 'placement',
  async claimInStatement(db, a) {
    const consumer = { uuid: a.uuid, projectId: a.owner ?? PLACEMENT_USER, userId: PLACEMENT_USER };
    const claim = await claimInStatement(db, placement.names, consumer, oneNode(a.resource_class));
    return claim ? { claim } : null;
  },
  async claim(tx, a, node) {
    const writes = [
      {
        consumerUuid: a.uuid,
        allocations: new Map([[node.uuid, oneNode(node.resource_class)]]),
        projectId: a.owner ?? PLACEMENT_USER,
        userId: PLACEMENT_USER,
        generation: null,
      },
    ];
    // PostgreSQL: Placement's one-statement claim, one round trip instead of six. A refusal raises
    // and aborts this transaction; the claim is then refused as a whole (the caller rolls back),
    // as the general write's refusal would be.
    const oneStatement = await oneStatementWrite(tx, placement.names, writes);
    if (oneStatement) {
      try {
        await oneStatement(tx);
        return true;
      } catch (err) {
        if (isAssertRefusal(err)) return false;
        throw err;
      }
    }
    try {
      await writeAllocations(tx, placement.names, writes);
      return true;
    } catch (err) {
      // no room (someone holds the provider), no provider, or a consumer of that uuid exists
      if (err instanceof DomainError && NOT_CLAIMABLE.includes(err.code)) return false;
      throw err;
    }
  },
  async release(tx, allocationUuid) {
    await writeAllocations(tx, placement.names, [{ consumerUuid: allocationUuid, allocations: new Map(), projectId: PLACEMENT_USER, userId: PLACEMENT_USER }]);
  },
  async prepare(_database, names) {
    if (names.resourceClass) await classes.create(placement, placementResourceClass(names.resourceClass), true);
    for (const trait of names.traits ?? []) if (!STANDARD_TRAITS.includes(trait)) await placementTraits.create(placement, trait);
  },
  async nodeChanged(tx, node) {
    let provider = await findAndLockProvider(tx, node.uuid);
    if (!provider) provider = await insertProvider(tx, { uuid: node.uuid, name: node.uuid, parentUuid: null });
    const wanted = node.resource_class ? placementResourceClass(node.resource_class) : null;
    const current = await currentInventories(tx, provider.id);
    if (current.size !== (wanted ? 1 : 0) || (wanted !== null && !current.has(wanted))) {
      const inventories = new Map(wanted ? [[wanted, { total: 1, reserved: 0, min_unit: 1, max_unit: 1, step_size: 1, allocation_ratio: 1 }]] : []);
      await changeInventories(tx, provider, { kind: 'replace-all', inventories });
      provider = (await findAndLockProvider(tx, node.uuid))!;
    }
    const traits = await providerTraits(tx, provider.id);
    if (traits.join(',') !== [...node.traits].sort().join(',')) await replaceProviderTraits(tx, provider, node.traits);
  },
  async nodeDeleted(tx, nodeUuid) {
    if (await findAndLockProvider(tx, nodeUuid)) await deleteProvider(tx, nodeUuid);
  },
  async holdsClaim(db, allocationUuid) {
    return (await readConsumer(db, allocationUuid)) !== null;
  },
});

export function backendNamed(name: BaremetalBackendName, placement: PlacementContext): AllocationBackend {
  return name === 'placement' ? placementBackend(placement) : databaseBackend;
}

/**
 * With the placement backend, the node providers belong to the bare-metal service: a Placement
 * API client may not allocate them (nor change a bare-metal allocation's consumer), so the node's
 * bare-metal allocation is its only owner. Registered with Placement at start (server/context.ts).
 */
export const nodeProviderOwner: ProviderOwner = {
  name: 'the bare-metal service (allocate the node through POST /v1/allocations)',
  owned: (db, providerUuids) => nodeUuidsAmong(db, providerUuids),
};
