// The in-memory picture of the providers one allocation-candidates search can use, and the request
// it answers. Pure data: store/provider-index.ts keeps one per process, coherent with the database.
// A model may hold more than a request needs (every trait, every aggregate, every inventory): the
// search reads only what the request names.
import type { ProviderSummary } from '../../client/placement-wire.js';
import { capacityOf, unitViolationOf } from '../../core/capacity.js';
import type { Json } from '../../core/json-text.js';

/**
 * A provider's inventories are numbers, INVENTORY_WIDTH per resource class (in the order of
 * `classes`), from `inventoryStart` in an array that may hold other providers' too (the index keeps
 * a chunk of providers in one Float64Array, off the garbage-collected heap): at a million providers
 * a Map of objects per provider was half of the index's memory, and an array per provider a third
 * of its load in garbage collection (bench/candidates.ts, docs/performance.md).
 */
export const INVENTORY_WIDTH = 7;
/** offsets within one inventory's numbers */
export const TOTAL = 0;
export const RESERVED = 1;
export const MIN_UNIT = 2;
export const MAX_UNIT = 3;
export const STEP_SIZE = 4;
export const ALLOCATION_RATIO = 5;
export const USED = 6;

export interface ModelProvider {
  id: number;
  uuid: string;
  parentId: number | null;
  rootId: number;
  /** the classes of its inventories (one array shared by every provider with the same classes); at least those the request asks for */
  classes: readonly string[];
  /** from `inventoryStart`, INVENTORY_WIDTH numbers per class of `classes`: total, reserved, min_unit, max_unit, step_size, allocation_ratio, used */
  inventories: ArrayLike<number>;
  /** where its numbers begin in `inventories` */
  inventoryStart: number;
  /** trait names; at least those the request names */
  traits: ReadonlySet<string>;
  /** aggregate uuids; at least those the request names */
  aggregates: ReadonlySet<string>;
  /**
   * Moves whenever anything above changes in place (usage included), so what was derived from this
   * provider (its rendered summary) can be kept while it stays. Absent: keep nothing.
   */
  revision?: number;
  /** its summary as the candidates answer writes it, kept while `revision` and the shape stay */
  renderedSummary?: { revision: number; shape: number; text: Json<ProviderSummary> };
}

/** Where the inventory of `cls` starts in `p.inventories`, or -1 when it has none. */
export function inventoryAt(p: ModelProvider, cls: string): number {
  const i = p.classes.indexOf(cls);
  return i < 0 ? -1 : p.inventoryStart + i * INVENTORY_WIDTH;
}

/** The capacity of the inventory at `at`. */
export function capacityAt(p: ModelProvider, at: number): number {
  const v = p.inventories;
  return capacityOf(v[at + TOTAL]!, v[at + RESERVED]!, v[at + ALLOCATION_RATIO]!);
}

export interface ProviderModel {
  /** every provider of every tree that can anchor a candidate, and every sharing provider in play */
  providers: ReadonlyMap<number, ModelProvider>;
  /**
   * Sharing providers (trait MISC_SHARES_VIA_AGGREGATE) → ids of the roots of every tree with a
   * provider in one of the sharing provider's aggregates (its own root too, when it has any
   * aggregate). These are the trees whose candidates it may complete.
   */
  sharingAnchors: ReadonlyMap<number, readonly number[]>;
  /**
   * Changes whenever providers come or go, move within their trees, or the sharing anchors
   * change (not when inventories, usage or traits change in place). While it stays the same a
   * search may reuse what it derived from the trees. Absent: derive afresh every time.
   */
  structureVersion?: number;
  /** what the search derived from the trees, kept by the search while structureVersion stays */
  searchCache?: { version: number; index: unknown };
}

/** One request group: `resources<S>`, `required<S>`, `member_of<S>`, `in_tree<S>`. */
export interface GroupRequest {
  /** '' for the unsuffixed group (its resources may come from several providers of one tree) */
  suffix: string;
  /** class name → amount, in request order; empty for a resourceless group (1.36) */
  resources: ReadonlyMap<string, number>;
  /** each inner list: at least one of these traits (a plain required trait is a list of one) */
  requiredTraits: ReadonlyArray<readonly string[]>;
  forbiddenTraits: ReadonlySet<string>;
  /** each inner list: member of at least one of these aggregates */
  memberOf: ReadonlyArray<readonly string[]>;
  forbiddenAggregates: ReadonlySet<string>;
  /** `in_tree<S>` resolved to the id of that tree's root; null: anywhere; NO_PROVIDER: no such provider */
  inTreeRoot: number | null;
}

/** An in_tree that names no provider: nothing can match it. */
export const NO_PROVIDER = -1;

export interface CandidateRequest {
  groups: readonly GroupRequest[];
  /** group_policy=isolate: suffixed groups are satisfied by different providers */
  isolate: boolean;
  /** root_required (1.35): traits the anchoring tree's root must have / must not have */
  rootRequired: ReadonlySet<string>;
  rootForbidden: ReadonlySet<string>;
  /** same_subtree (1.36): each list of suffixes must be satisfied within one provider's subtree */
  sameSubtrees: ReadonlyArray<readonly string[]>;
  /**
   * 1.29+: a candidate may take resources from several providers of one tree. Before, every
   * provider in a candidate must be in a different tree (Placement drops the others).
   */
  nestedAware: boolean;
}

/** Does one allocation of `amount` of `cls` fit the provider on its own (units and free capacity)? */
export function fitsAlone(p: ModelProvider, cls: string, amount: number): boolean {
  const at = inventoryAt(p, cls);
  if (at < 0) return false;
  const v = p.inventories;
  return unitViolationOf(v[at + MIN_UNIT]!, v[at + MAX_UNIT]!, v[at + STEP_SIZE]!, amount) === null && v[at + USED]! + amount <= capacityAt(p, at);
}

/** Every trait group satisfied (each any-of list meets `traits`), none of the forbidden ones present. */
export function traitsMatch(traits: ReadonlySet<string>, required: ReadonlyArray<readonly string[]>, forbidden: ReadonlySet<string>): boolean {
  for (const name of forbidden) if (traits.has(name)) return false;
  return required.every((anyOf) => anyOf.some((name) => traits.has(name)));
}

/** Member of at least one aggregate of each list (all lists), as Placement's member_of. */
export function inAllAggregateSets(aggregates: ReadonlySet<string>, memberOf: ReadonlyArray<readonly string[]>): boolean {
  return memberOf.every((anyOf) => anyOf.some((uuid) => aggregates.has(uuid)));
}

export function inAnyAggregate(aggregates: ReadonlySet<string>, uuids: ReadonlySet<string>): boolean {
  for (const uuid of uuids) if (aggregates.has(uuid)) return true;
  return false;
}
