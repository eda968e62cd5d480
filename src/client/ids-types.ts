// Types of allot's identifier API (`/ids/v1`) for the typed client. The request and response
// bodies are the API's JSON schemas written as TypeScript (ids-wire.ts, generated from
// src/ids/schemas.ts by scripts/wire-types.ts) — the types the server's views are checked against
// too, so a body's shape is written once. What is written here is the client's side of a call:
// query parameters (numbers and values, sent as text), paging and If-Match.
import type { Utilization, Value, WireTypes } from './ids-wire.js';

export type * from './ids-wire.js';

/** A list's page (`PoolPage`, `AllocationPage`, …: each list's response schema). */
export type Page = WireTypes[Extract<keyof WireTypes, `${string}Page`>];

export interface PageQuery {
  /** 1–1000 (default 100) */
  limit?: number;
  cursor?: string;
}

/**
 * A count of a pool's utilization: a number while the pool's total is at most 2^53 − 1, a decimal
 * string for a larger pool (an IPv6 address pool of a /75 or more); every count of one pool has
 * the same type.
 */
export type Count = Utilization['total'];

export interface AllocationListQuery extends PageQuery {
  pool?: string;
  owner?: string;
  purpose?: string;
  state?: 'allocated' | 'reserved';
}

/** A pool's allocations: besides the filters of every list, `value` (the allocation holding it; a prefix: those holding part of it). */
export interface PoolAllocationListQuery extends Omit<AllocationListQuery, 'pool'> {
  value?: Value;
}

/** A release: `force` releases even a value that attribute sets of a live service instance refer to. */
export interface ReleaseOptions extends Guard {
  force?: boolean;
}

/** The built-in lifecycles' states; a lifecycle loaded from --ids-lifecycles has its own. */
export type InstanceState = 'start' | 'up' | 'update' | 'deallocating' | 'terminated' | (string & {});

export interface InstanceListQuery extends PageQuery {
  state?: InstanceState;
  service_type?: string;
}

/** If-Match: the version (ETag) the change was based on */
export interface Guard {
  ifMatch?: number;
}
