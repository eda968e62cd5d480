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
//                allocate them, so Placement usage and node state cannot disagree. The claim's
//                consumer is marked held by its allocation (`baremetal-allocation/<uuid>`), so
//                Placement refuses its clients a change of it under the consumer's row lock.
import type { BaremetalBackendName } from '../../config.js';
import type { Database, Db, Tx } from '../../db/database.js';
import type { EmbeddedWrite } from '../../db/statement.js';
import type { PlacementContext, ProviderOwner } from '../../placement/context.js';
import { claimInAnotherStatement, claimOn, consumerHolder, mirrorProvider, releaseConsumer, removeProvider } from '../../placement/services/owned-providers.js';
import * as classes from '../../placement/services/resource-classes.js';
import * as placementTraits from '../../placement/services/traits.js';
import { STANDARD_TRAITS, placementResourceClass } from '../core/rules.js';
import type { AllocationRecord } from '../store/allocations.js';
import { type NodeRecord, nodeUuidsAmong } from '../store/nodes.js';

/** What a claim needs of the node. */
type ClaimedNode = Pick<NodeRecord, 'uuid' | 'resource_class'>;

export interface AllocationBackend {
  readonly name: BaremetalBackendName;
  /**
   * PostgreSQL, a new allocation whose node is free now (store/one-statement-allocation.ts): what
   * the one statement that reserves the node writes as the claim — nothing (the reservation is
   * the claim), or a claim of its own — or null when the general path must claim.
   */
  claimInStatement(db: Db, allocation: Pick<AllocationRecord, 'uuid' | 'owner' | 'resource_class'>): Promise<{ claim?: EmbeddedWrite } | null>;
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
  /**
   * After a claim was refused: why no node's claim can ever be made for this allocation (its
   * consumer is someone else's), or null when another try may succeed (the node was full).
   */
  whyNoClaim(db: Db, allocationUuid: string): Promise<string | null>;
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
  async whyNoClaim() {
    return null;
  },
};

/** Placement's stand-in project and user for bare-metal claims without an owner. */
const PLACEMENT_USER = 'allot-baremetal';

/** A node's claim in Placement: one unit of its class's inventory. */
const oneNode = (resourceClass: string | null) => new Map([[placementResourceClass(resourceClass ?? ''), 1]]);

/** Who holds a claim's consumer in Placement (`held_by`, named in its 409): the allocation. */
const holderOf = (allocationUuid: string) => `baremetal-allocation/${allocationUuid}`;

/** The claim's consumer: the allocation, in its owner's project (or the stand-in), held by it. */
const consumerOf = (a: Pick<AllocationRecord, 'uuid' | 'owner'>) => ({
  uuid: a.uuid,
  projectId: a.owner ?? PLACEMENT_USER,
  userId: PLACEMENT_USER,
  holder: holderOf(a.uuid),
});

export const placementBackend = (placement: PlacementContext): AllocationBackend => ({
  name: 'placement',
  async claimInStatement(db, a) {
    const claim = await claimInAnotherStatement(db, placement, consumerOf(a), oneNode(a.resource_class));
    return claim ? { claim } : null;
  },
  // A refusal (no room: someone holds the provider; no provider; a consumer of that uuid) is false,
  // and the caller rolls the whole claim back.
  claim: (tx, a, node) => claimOn(tx, placement, consumerOf(a), node.uuid, oneNode(node.resource_class)),
  release: (tx, allocationUuid) =>
    releaseConsumer(tx, placement, allocationUuid, { projectId: PLACEMENT_USER, userId: PLACEMENT_USER, holder: holderOf(allocationUuid) }),
  async prepare(_database, names) {
    if (names.resourceClass) await classes.create(placement, placementResourceClass(names.resourceClass), true);
    for (const trait of names.traits ?? []) if (!STANDARD_TRAITS.includes(trait)) await placementTraits.create(placement, trait);
  },
  nodeChanged: (tx, node) => mirrorProvider(tx, node.uuid, node.resource_class ? placementResourceClass(node.resource_class) : null, node.traits),
  nodeDeleted: (tx, nodeUuid) => removeProvider(tx, nodeUuid),
  holdsClaim: async (db, allocationUuid) => (await consumerHolder(db, allocationUuid)) !== undefined,
  // The claim's consumer is the allocation's uuid: if a Placement client (or another holder) has a
  // consumer of that uuid, every node's claim is refused, and waiting does not change that.
  async whyNoClaim(db, allocationUuid) {
    const holder = await consumerHolder(db, allocationUuid);
    if (holder === undefined || holder === holderOf(allocationUuid)) return null;
    return `Placement already has a consumer ${allocationUuid}, held by ${holder ?? "Placement's clients"}; the allocation's uuid is its claim's consumer and cannot be both`;
  },
});

export function backendNamed(name: BaremetalBackendName, placement: PlacementContext): AllocationBackend {
  return name === 'placement' ? placementBackend(placement) : databaseBackend;
}

/**
 * With the placement backend, the node providers belong to the bare-metal service: a Placement
 * API client may not allocate them (nor change a bare-metal allocation's consumer, which is held:
 * consumerOf), so the node's bare-metal allocation is its only owner. Registered with Placement at
 * start (server/context.ts).
 */
export const nodeProviderOwner: ProviderOwner = {
  name: 'the bare-metal service (allocate the node through POST /v1/allocations)',
  owned: (db, providerUuids) => nodeUuidsAmong(db, providerUuids),
};
