// Which values a service instance holds: its pool allocations are owned by
// `service-instance/<id>` with the attribute as purpose, and a value is held while any of its
// attribute sets (candidate, active, rollback) refers to it. Pure.
import type { AttributeSetName, CapacityValue, NodeValue } from '../../client/ids-wire.js';
import type { WireValue } from './pool-space.js';

const OWNER_PREFIX = 'service-instance/';

/** The owner of an instance's pool allocations. */
export const ownerOfInstance = (instanceId: string) => `${OWNER_PREFIX}${instanceId}`;

/** The instance that owns allocations of this owner, or null for any other owner. */
export const instanceOfOwner = (owner: string): string | null => (owner.startsWith(OWNER_PREFIX) ? owner.slice(OWNER_PREFIX.length) : null);

/** An inventory's owner key (an attribute's value) is stored in a varchar(255) column (migration 003). */
export const MAX_OWNER_KEY = 255;

/** The owner key an attribute value gives: a string as is, anything else as JSON. */
export const ownerKeyOf = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

export type SetName = AttributeSetName;

export interface InstanceSets {
  candidate: string | null;
  active: string | null;
  rollback: string | null;
}

export const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The attribute sets (stored as JSON text) whose `attribute` is `value`. */
export function setsReferencing(sets: InstanceSets, attribute: string, value: unknown): SetName[] {
  return (['candidate', 'active', 'rollback'] as const).filter((name) => {
    const text = sets[name];
    if (text === null) return false;
    const set = JSON.parse(text) as Record<string, unknown>;
    return set[attribute] !== undefined && sameJson(set[attribute], value);
  });
}

/**
 * Something released while sets of a live instance referred to it, kept on the instance until
 * its next validation: a pool value released with `force` (the sets still name it; validation
 * takes it again if it is still free and allocates another one if not), or a node or capacity
 * another engine released or moved away (taken out of the sets; validation reserves the attribute
 * again, the same node first).
 */
export type ForcedRelease = PoolRelease | EngineRelease;

export interface PoolRelease {
  /** absent in records from before engine holdings */
  source?: 'pool';
  allocation_id: string;
  pool: string;
  attribute: string;
  value: WireValue;
  sets: SetName[];
  released_at: string;
  /** the value's key in its pool (not shown to clients) */
  key: string;
}

export interface EngineRelease {
  source: 'node' | 'capacity';
  /** a node's bare-metal allocation */
  allocation_id?: string;
  attribute: string;
  value: NodeValue | CapacityValue;
  sets: SetName[];
  reason: string;
  released_at: string;
}

export const isPoolRelease = (f: ForcedRelease): f is PoolRelease => f.source === undefined || f.source === 'pool';

export const forcedReleasesOf = (text: string | null): ForcedRelease[] => (text === null ? [] : (JSON.parse(text) as ForcedRelease[]));
