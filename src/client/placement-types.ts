// Types of the Placement API for the typed client. The request and response bodies are
// Placement's JSON schemas written as TypeScript (placement-wire.ts, generated from
// src/placement/schemas.ts by scripts/wire-types.ts) — the types the server's views are checked
// against too, so a body's shape is written once. A request body's type is what some microversion
// accepts; a member of an answer that only some microversions write is optional. What is written
// here is the client's side of a call: query parameters (repeatable ones as lists, request groups
// by suffix).

export type * from './placement-wire.js';

export type Uuid = string;

export interface ProviderListQuery {
  name?: string;
  uuid?: Uuid;
  /** `in:agg1,agg2`; repeat for AND (1.24+) */
  member_of?: string | string[];
  /** `VCPU:2,MEMORY_MB:512` (1.4+) */
  resources?: string;
  /** 1.14+ */
  in_tree?: Uuid;
  /** traits, `!FORBIDDEN`, `in:A,B` (1.18+) */
  required?: string | string[];
}

export interface TraitListQuery {
  /** `in:A,B` or `startswith:CUSTOM_` */
  name?: string;
  associated?: boolean;
}

export interface UsagesQuery {
  project_id: string;
  user_id?: string;
  /** 1.38+ */
  consumer_type?: string;
}

/** A request group of GET /allocation_candidates: the unsuffixed one, or a numbered/named one (1.25+/1.33+). */
export interface CandidateGroup {
  resources?: string;
  required?: string | string[];
  member_of?: string | string[];
  /** 1.31+ */
  in_tree?: Uuid;
}

export interface CandidatesQuery extends CandidateGroup {
  /** 1.16+ */
  limit?: number;
  /** 1.25+: with several groups, `none` or `isolate` */
  group_policy?: 'none' | 'isolate';
  /** 1.35+ */
  root_required?: string;
  /** 1.36+: group suffixes that must be in one subtree, e.g. `_COMPUTE,_NIC` */
  same_subtree?: string | string[];
  /** allot's own: the order of candidates (stable, pack, spread, random) */
  allot_strategy?: 'stable' | 'pack' | 'spread' | 'random';
  /** suffix (`1`, `_NIC`) → group */
  groups?: Record<string, CandidateGroup>;
}
