// What a service instance holds in the other two engines: a bare-metal node for each `from: node`
// attribute and Placement capacity for each `from: capacity` attribute (docs/ids.md
// "Reservations across the engines"). They are reserved in the transaction that validates the
// instance, with its pool values, through the engines' own services (bare metal:
// services/held-allocations.ts; Placement: services/held-consumers.ts) — never their stores — and
// released with them in the transaction that changes the instance's sets. All or nothing: an
// attribute that cannot be had fails the transaction, and nothing of it is kept.
//
// The instance is the holder (`service-instance/<id>`, the owner of its pool values too): each
// node is a bare-metal allocation held by it, and its capacity is the allocations of one Placement
// consumer, the instance's id, held by it — the sum of the capacity values its sets refer to.
// What those engines let go of or move by their own rules (a node torn down, a reshape) comes
// back through `engineHolders` in the same transaction, and the instance's sets follow.
import type { AllocationHolder } from '../../baremetal/context.js';
import { type HeldNode, nodesHeldBy, prepareNodeReservations, releaseNode, reserveNode } from '../../baremetal/services/held-allocations.js';
import type { Db, Tx } from '../../db/database.js';
import type { ClosingWrites } from '../../db/statement.js';
import type { CapacitySpecAttribute, Holding, NodeSpecAttribute } from '../../client/ids-wire.js';
import type { ConsumerHolder } from '../../placement/context.js';
import {
  type CapacityIndex,
  type CapacityRequest,
  NoCapacity,
  capacityIndex,
  heldAllocations,
  holdBackCapacity,
  reserveCapacity,
  setHeldAllocations,
} from '../../placement/services/held-consumers.js';
import type { IdsContext } from '../context.js';
import { idsDomainError } from '../core/domain-errors.js';
import {
  type Amounts,
  type CapacityValue,
  type NodeValue,
  aggregateTerms,
  amountsOf,
  capacityValue,
  isCapacityValue,
  isNodeValue,
  sameAmounts,
  splitAmounts,
  sumAmounts,
  traitTerms,
} from '../core/engine-values.js';
import { type ForcedRelease, type SetName, forcedReleasesOf, instanceOfOwner, ownerOfInstance } from '../core/instance-values.js';
import { isLive } from '../core/lifecycle.js';
import * as store from '../store/service-instances.js';
import { type Spec, specById } from '../store/specs.js';

type Attributes = Record<string, unknown>;

/** Placement's stand-in project and user for an instance of no project, or a caller of none. */
const NO_PROJECT = 'allot-ids';

const SET_NAMES: readonly SetName[] = ['candidate', 'active', 'rollback'];

const nodeAttributes = (spec: Spec) => Object.entries(spec.attributes).filter((e): e is [string, NodeSpecAttribute] => e[1].from === 'node');
const capacityAttributes = (spec: Spec) => Object.entries(spec.attributes).filter((e): e is [string, CapacitySpecAttribute] => e[1].from === 'capacity');

export const holdsEngines = (spec: Spec) => nodeAttributes(spec).length > 0 || capacityAttributes(spec).length > 0;

/** What the validating transaction needs made, or read, before it opens. */
export interface EnginePreparation {
  /** Placement's candidates index, for capacity attributes */
  index: CapacityIndex | null;
  /** the transaction runs withFastSteps: its node and capacity may be one statement each (PostgreSQL) */
  fast: boolean;
}

/** Before the validating transaction: what reservations need made or read outside of it. */
export async function prepareEngineReservations(ctx: IdsContext, spec: Spec): Promise<EnginePreparation> {
  if (nodeAttributes(spec).length) await prepareNodeReservations(ctx.baremetal);
  return { index: capacityAttributes(spec).length ? await capacityIndex(ctx.placement) : null, fast: false };
}

/** Who an instance is in the other engines. */
export interface InstanceIdentity {
  id: string;
  project: string | null;
  /** the caller's user, for the Placement consumer */
  user: string | null;
}

/**
 * Reserve, in the validating transaction, every node attribute `next` (the candidate set being
 * validated) has no value for, or whose node the instance no longer holds; each value written into
 * `next`. `released` are its forced releases (a node released by another API is asked for again
 * first). Nodes come first of what a validation reserves (a capacity attribute may be `in_tree_of`
 * one), then pool values, then capacity: the order every change of an instance locks them in. A
 * failure throws the attribute's domain error; the caller's transaction then keeps nothing.
 */
export async function reserveNodeAttributes(
  tx: Tx,
  ctx: IdsContext,
  who: InstanceIdentity,
  spec: Spec,
  next: Attributes,
  released: readonly ForcedRelease[],
  prepared: EnginePreparation,
): Promise<void> {
  const holder = ownerOfInstance(who.id);
  const nodes = nodeAttributes(spec);
  if (!nodes.length) return;
  // what it holds already matters only to values the set names (none, for a new instance)
  const named = nodes.some(([attr]) => isNodeValue(next[attr]));
  const held = new Set(named ? (await nodesHeldBy(tx, holder)).map((n) => n.allocation) : []);
  for (const [attr, s] of nodes) {
    const given = next[attr];
    if (isNodeValue(given) && held.has(given.allocation)) continue;
    // the node it had (in the set, or released by another API since): asked for first
    const lost = isNodeValue(given) ? given : released.find((f) => f.attribute === attr && f.source === 'node')?.value;
    next[attr] = await reserveNodeAttribute(tx, ctx, who, attr, s, isNodeValue(lost) ? lost.node : null, prepared.fast);
  }
}

/**
 * Reserve, in the validating transaction, every capacity attribute `next` has no value for, after
 * its nodes and pool values; `others` are the instance's other sets, whose capacity stays held.
 */
export async function reserveCapacityAttributes(
  tx: Tx,
  ctx: IdsContext,
  who: InstanceIdentity,
  spec: Spec,
  next: Attributes,
  others: Attributes[],
  prepared: EnginePreparation,
): Promise<void> {
  const consumer = heldConsumer(who);
  for (const [attr, s] of capacityAttributes(spec)) {
    if (isCapacityValue(next[attr])) continue;
    const keep = referencedCapacity(spec, [next, ...others]);
    const allocations = await reserveCapacity(tx, ctx.placement, prepared.index!, consumer, keep, capacityRequest(attr, s, next), prepared.fast).catch(
      inCapacityAttribute(attr),
    );
    next[attr] = capacityValue(who.id, allocations);
  }
}

/**
 * PostgreSQL, a transaction that closes with one statement (`closing`): the spec's one capacity
 * attribute of a new instance is chosen now, before the pools are locked, and its claim held back
 * for that statement — so the pools are not held while it is chosen, and the shared provider's
 * row is locked by the closing statement only (after the pools: the order validation keeps).
 * What cannot be held back is left to reserveCapacityAttributes, after the pools.
 */
export async function holdBackCapacityAttribute(
  tx: Tx,
  ctx: IdsContext,
  who: InstanceIdentity,
  spec: Spec,
  next: Attributes,
  prepared: EnginePreparation,
  closing: ClosingWrites,
): Promise<void> {
  const capacities = capacityAttributes(spec);
  // one claim only: a second attribute's would keep the first's amounts
  if (capacities.length !== 1 || !prepared.fast) return;
  const [attr, s] = capacities[0]!;
  if (isCapacityValue(next[attr])) return;
  const request = capacityRequest(attr, s, next);
  const allocations = await holdBackCapacity(tx, ctx.placement, prepared.index!, heldConsumer(who), request, closing).catch(inCapacityAttribute(attr));
  if (allocations) next[attr] = capacityValue(who.id, allocations);
}

const heldConsumer = (who: InstanceIdentity) => ({
  uuid: who.id,
  projectId: who.project ?? NO_PROJECT,
  userId: who.user ?? NO_PROJECT,
  holder: ownerOfInstance(who.id),
});

/** A capacity attribute's request, as Placement's candidates take it (`in_tree_of` read from `next`). */
function capacityRequest(attr: string, s: CapacitySpecAttribute, next: Attributes): CapacityRequest {
  const terms = traitTerms(s.required ?? []);
  const aggregates = aggregateTerms(s.member_of ?? []);
  let inTree: string | null = null;
  if (s.in_tree_of !== undefined) {
    const node = next[s.in_tree_of];
    if (!isNodeValue(node)) throw inAttribute(attr, idsDomainError('capacity_unavailable', { reason: `attribute ${s.in_tree_of} holds no node` }));
    inTree = node.node;
  }
  return {
    resources: new Map(Object.entries(s.resources)),
    required: terms.required,
    forbidden: terms.forbidden,
    memberOf: aggregates.memberOf,
    forbiddenAggregates: aggregates.forbidden,
    inTree,
  };
}

const inCapacityAttribute = (attr: string) => (err: unknown) => {
  throw err instanceof NoCapacity ? inAttribute(attr, idsDomainError('capacity_unavailable', { reason: err.reason })) : err;
};

async function reserveNodeAttribute(
  tx: Tx,
  ctx: IdsContext,
  who: InstanceIdentity,
  attr: string,
  s: NodeSpecAttribute,
  preferred: string | null,
  fast: boolean,
): Promise<NodeValue> {
  const holding = {
    holder: ownerOfInstance(who.id),
    name: `service-instance.${who.id}.${attr}`,
    owner: who.project,
    extra: { allot_service_instance: who.id, allot_attribute: attr },
  };
  const request = { resourceClass: s.resource_class, traits: s.traits ?? [], candidateNodes: s.candidate_nodes ?? [] };
  const allowed = preferred !== null && (request.candidateNodes.length === 0 || request.candidateNodes.includes(preferred));
  let outcome = allowed ? await reserveNode(tx, ctx.baremetal, { ...request, candidateNodes: [preferred] }, holding, { last: false, fast }) : undefined;
  if (!outcome?.ok) outcome = await reserveNode(tx, ctx.baremetal, request, holding, { last: true, fast });
  if (!outcome.ok) throw inAttribute(attr, idsDomainError('node_unavailable', { reason: outcome.reason }));
  return { node: outcome.held.node, name: outcome.held.nodeName, allocation: outcome.held.allocation };
}

const inAttribute = (attribute: string, error: ReturnType<typeof idsDomainError>) => idsDomainError('in_attribute', { attribute, error });

/** The capacity the sets refer to: each attribute's distinct values, summed. */
function referencedCapacity(spec: Spec, sets: Attributes[]): Amounts {
  const seen = new Map<string, Amounts>();
  for (const [attr] of capacityAttributes(spec)) {
    for (const set of sets) {
      const v = set[attr];
      if (isCapacityValue(v)) seen.set(`${attr}\n${JSON.stringify(v.allocations)}`, amountsOf(v));
    }
  }
  return sumAmounts(seen.values());
}

/**
 * After a change of the instance's sets (terminating: of all of them), in its transaction, first of
 * what it lets go of: the nodes no set refers to are released (refused while deployed: `node_in_use`).
 */
export async function releaseUnreferencedNodes(tx: Tx, ctx: IdsContext, row: store.InstanceRow, spec: Spec, sets: Attributes[]): Promise<void> {
  const nodes = nodeAttributes(spec);
  if (!nodes.length) return;
  const holder = ownerOfInstance(row.id);
  for (const held of await nodesHeldBy(tx, holder)) {
    const attribute = nodes.find(([attr]) => sets.some((set) => isNodeValue(set[attr]) && set[attr].allocation === held.allocation))?.[0];
    if (attribute !== undefined) continue;
    const refusal = await releaseNode(tx, ctx.baremetal, held.allocation, holder);
    if (refusal) throw idsDomainError('node_in_use', { attribute: attributeOf(row, held), node: held.node, allocation: held.allocation, reason: refusal });
  }
}

/** Then, after its pool values: the consumer's allocations become what the sets refer to. */
export async function reconcileCapacity(tx: Tx, ctx: IdsContext, row: store.InstanceRow, spec: Spec, sets: Attributes[]): Promise<void> {
  if (!capacityAttributes(spec).length) return;
  const holder = ownerOfInstance(row.id);
  const live = await heldAllocations(tx, row.id);
  if (live.heldBy !== holder) return; // never reserved (or not this instance's)
  const wanted = referencedCapacity(spec, sets);
  if (sameAmounts(live.allocations, wanted)) return;
  await setHeldAllocations(tx, ctx.placement, { uuid: row.id, projectId: live.projectId, userId: live.userId, holder }, wanted);
}

/** The attribute of the instance's last known sets that named this node, for the error. */
function attributeOf(row: store.InstanceRow, held: HeldNode): string | null {
  for (const text of [row.candidate, row.active, row.rollback]) {
    if (text === null) continue;
    for (const [attr, v] of Object.entries(JSON.parse(text) as Attributes)) if (isNodeValue(v) && v.allocation === held.allocation) return attr;
  }
  return null;
}

/** A node or capacity the instance holds, as its view lists it (with its place in its own API). */
type EngineHolding = Extract<Holding, { source: 'node' | 'capacity' }>;

/** What an instance holds in the other engines, as read (engineSources) or as its transaction reserved it. */
export interface EngineSources {
  /** the nodes held, in the order they were reserved */
  nodes: HeldNode[];
  /** its Placement consumer's allocations, and who holds it (null: no consumer) */
  capacity: { heldBy: string | null; allocations: Amounts };
}

/** What the instance holds now in the other engines, read. */
export async function engineSources(db: Db, row: store.InstanceRow, spec: Spec): Promise<EngineSources> {
  if (!holdsEngines(spec)) return { nodes: [], capacity: { heldBy: null, allocations: new Map() } };
  const nodes = await nodesHeldBy(db, ownerOfInstance(row.id));
  const { heldBy, allocations } = capacityAttributes(spec).length ? await heldAllocations(db, row.id) : { heldBy: null, allocations: new Map() };
  return { nodes, capacity: { heldBy, allocations } };
}

/**
 * What a new instance holds in the other engines once its validating transaction commits: the
 * nodes and capacity its candidate set `next` names — that transaction reserved exactly those.
 */
export function reservedSources(id: string, spec: Spec, next: Attributes): EngineSources {
  const nodes: HeldNode[] = [];
  for (const [attr] of nodeAttributes(spec)) {
    const v = next[attr];
    if (isNodeValue(v)) nodes.push({ allocation: v.allocation, node: v.node, nodeName: v.name });
  }
  const allocations = referencedCapacity(spec, [next]);
  return { nodes, capacity: { heldBy: allocations.size ? ownerOfInstance(id) : null, allocations } };
}

/** The instance's holdings in the other engines, as its view lists them. */
export function engineHoldings(row: store.InstanceRow, spec: Spec, sources: EngineSources): EngineHolding[] {
  if (!holdsEngines(spec)) return [];
  const out: EngineHolding[] = [];
  const holder = ownerOfInstance(row.id);
  for (const held of sources.nodes) {
    out.push({
      attribute: attributeOf(row, held),
      source: 'node',
      value: { node: held.node, name: held.nodeName, allocation: held.allocation },
      href: `/baremetal/v1/allocations/${held.allocation}`,
    });
  }
  const capacity = sources.capacity;
  if (capacity.heldBy !== holder) return out;
  // the consumer's allocations are the sum of the capacity values the sets name: one holding each
  const named = new Map<string, Extract<Holding, { source: 'capacity' }>>();
  for (const text of [row.candidate, row.active, row.rollback]) {
    if (text === null) continue;
    for (const [attr, v] of Object.entries(JSON.parse(text) as Attributes)) {
      if (spec.attributes[attr]?.from !== 'capacity' || !isCapacityValue(v)) continue;
      named.set(`${attr}\n${JSON.stringify(v)}`, { attribute: attr, source: 'capacity', value: v, href: `/placement/allocations/${row.id}` });
    }
  }
  out.push(...named.values());
  // while a change is released in the same transaction, or never named (no set): the rest
  const rest = new Map([...capacity.allocations].map(([p, r]) => [p, new Map(r)]));
  for (const h of named.values()) {
    for (const [p, r] of amountsOf(h.value)) for (const [rc, n] of r) rest.get(p)?.set(rc, (rest.get(p)?.get(rc) ?? 0) - n);
  }
  if (!sameAmounts(rest, new Map()))
    out.push({ attribute: null, source: 'capacity', value: capacityValue(row.id, rest), href: `/placement/allocations/${row.id}` });
  return out;
}

/**
 * What the other engines tell a service instance, in their own transaction: a node released by
 * the bare-metal API's own rules (torn down, instance_uuid removed, deleted in maintenance), or
 * allocations a reshape moved. The instance's sets stop naming what it no longer holds (a forced
 * release records it, and the next validation reserves the attribute again); moved capacity is
 * written where it now is.
 */
export function engineHolders(): { allocations: AllocationHolder; consumers: ConsumerHolder } {
  return {
    allocations: {
      async allocationReleased(tx, release) {
        await changeSets(tx, release.heldBy, (spec, sets) =>
          forget(
            sets,
            (attr, v) => spec.attributes[attr]?.from === 'node' && isNodeValue(v) && v.allocation === release.allocationUuid,
            (attribute, value, inSets) => ({
              source: 'node',
              allocation_id: release.allocationUuid,
              attribute,
              value: value as NodeValue,
              sets: inSets,
              reason: release.reason,
              released_at: tx.clock.nowIso(),
            }),
          ),
        );
      },
    },
    consumers: {
      holds: (heldBy) => instanceOfOwner(heldBy) !== null,
      async consumerChanged(tx, change) {
        await changeSets(tx, change.heldBy, (spec, sets, row) => {
          const isCapacity = (attr: string, v: unknown) => spec.attributes[attr]?.from === 'capacity' && isCapacityValue(v);
          // the distinct capacity values the sets name, each given its amounts again from where they are now
          const named = new Map<string, Amounts>();
          for (const set of Object.values(sets))
            for (const [attr, v] of Object.entries(set)) if (isCapacity(attr, v)) named.set(JSON.stringify(v), amountsOf(v as CapacityValue));
          const split = splitAmounts(change.allocations, [...named.values()]);
          const moved = new Map([...named.keys()].map((k, i) => [k, split[i]!]));
          for (const set of Object.values(sets)) {
            for (const [attr, v] of Object.entries(set)) {
              const now = isCapacity(attr, v) ? moved.get(JSON.stringify(v)) : undefined;
              if (now) set[attr] = capacityValue(row.id, now);
            }
          }
          // capacity the reshape took away: no set names it any more
          return forget(
            sets,
            (attr, v) => isCapacity(attr, v) && moved.get(JSON.stringify(v)) === null,
            (attribute, value, inSets) => ({
              source: 'capacity',
              attribute,
              value: value as CapacityValue,
              sets: inSets,
              reason: 'a reshape took these allocations away',
              released_at: tx.clock.nowIso(),
            }),
          );
        });
      },
    },
  };
}

type Sets = Partial<Record<SetName, Attributes>>;

/**
 * Change the sets of the live instance `heldBy` names, locked: `edit` changes them in place and
 * returns the releases to record. Saved (its version moves) when anything changed.
 */
async function changeSets(tx: Tx, heldBy: string, edit: (spec: Spec, sets: Sets, row: store.InstanceRow) => ForcedRelease[]): Promise<void> {
  const id = instanceOfOwner(heldBy);
  const row = id === null ? undefined : await store.lockInstanceIfPresent(tx, id);
  if (!row || !isLive(row.state)) return;
  const sets: Sets = {};
  for (const name of SET_NAMES) if (row[name] !== null) sets[name] = JSON.parse(row[name]!) as Attributes;
  const released = edit(await specById(tx, row.spec_id), sets, row);
  const changes: Partial<store.InstanceRow> = {};
  for (const name of SET_NAMES) if (sets[name] && JSON.stringify(sets[name]) !== row[name]) changes[name] = JSON.stringify(sets[name]);
  if (released.length) {
    changes.forced_releases = JSON.stringify([...forcedReleasesOf(row.forced_releases), ...released]);
    // a validated candidate set that lost a value is no longer validated
    if (released.some((r) => r.sets.includes('candidate'))) changes.candidate_validated = 0;
  }
  if (Object.keys(changes).length) await store.saveInstance(tx, row, changes);
}

/** Take the values `gone` matches out of the sets; a release record for each (attribute, value). */
function forget(
  sets: Sets,
  gone: (attribute: string, value: unknown) => boolean,
  record: (attribute: string, value: unknown, sets: SetName[]) => ForcedRelease,
): ForcedRelease[] {
  const found = new Map<string, { attribute: string; value: unknown; sets: SetName[] }>();
  for (const name of SET_NAMES) {
    const set = sets[name];
    if (!set) continue;
    for (const [attr, v] of Object.entries(set)) {
      if (!gone(attr, v)) continue;
      const key = `${attr}\n${JSON.stringify(v)}`;
      found.set(key, { attribute: attr, value: v, sets: [...(found.get(key)?.sets ?? []), name] });
      delete set[attr];
    }
  }
  return [...found.values()].map((f) => record(f.attribute, f.value, f.sets));
}
