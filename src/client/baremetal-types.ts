// Types of the bare-metal (Ironic) API for the typed client. The request and response bodies are
// bare metal's JSON schemas written as TypeScript (baremetal-wire.ts, generated from
// src/baremetal/schemas.ts by scripts/wire-types.ts) — the types the server's views are checked
// against too, so a body's shape is written once. A member of an answer that only some
// microversions write is optional; a `…Selection` is what `fields=` or a list without detail
// answers. What is written here is the client's side of a call: query parameters and the words
// the state verbs take.

import type { JsonPatch } from './baremetal-wire.js';

export type * from './baremetal-wire.js';

export type ProvisionState =
  | 'enroll'
  | 'verifying'
  | 'manageable'
  | 'inspecting'
  | 'inspect wait'
  | 'inspect failed'
  | 'cleaning'
  | 'clean wait'
  | 'clean failed'
  | 'available'
  | 'deploying'
  | 'wait call-back'
  | 'deploy failed'
  | 'active'
  | 'deleting'
  | 'error'
  | 'adopting'
  | 'adopt failed'
  | 'rescuing'
  | 'rescue wait'
  | 'rescue failed'
  | 'rescue'
  | 'unrescuing'
  | 'unrescue failed'
  | 'servicing'
  | 'service wait'
  | 'service failed'
  | (string & {});

/** targets of PUT /v1/nodes/{node}/states/provision */
export type ProvisionTarget =
  | 'manage'
  | 'provide'
  | 'inspect'
  | 'active'
  | 'deploy'
  | 'rebuild'
  | 'deleted'
  | 'undeploy'
  | 'clean'
  | 'abort'
  | 'adopt'
  | 'rescue'
  | 'unrescue'
  | 'service'
  | 'unhold';

export type PowerTarget = 'power on' | 'power off' | 'rebooting' | 'soft power off' | 'soft rebooting';

export interface NodeListQuery {
  maintenance?: boolean;
  associated?: boolean;
  provision_state?: string;
  driver?: string;
  resource_class?: string;
  fault?: string;
  conductor_group?: string;
  conductor?: string;
  owner?: string;
  lessee?: string;
  description_contains?: string;
  shard?: string | string[];
  /** every field instead of the short list */
  detail?: boolean;
  fields?: string | string[];
  limit?: number;
  marker?: string;
  sort_key?: string;
  sort_dir?: 'asc' | 'desc';
}

/** One operation of an RFC 6902 JSON patch, as Ironic takes it (paths like `/extra/foo`, `/name`) */
export type PatchOperation = JsonPatch[number];

export type AllocationState = 'allocating' | 'active' | 'error';

export interface AllocationListQuery {
  node?: string;
  resource_class?: string;
  state?: AllocationState;
  owner?: string;
  fields?: string | string[];
  limit?: number;
  marker?: string;
  sort_key?: string;
  sort_dir?: 'asc' | 'desc';
}
