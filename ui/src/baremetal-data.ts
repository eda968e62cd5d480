// Bare-metal nodes, allocations and conductors, read from /baremetal/v1 at microversion 1.82.
// Lists ask only for the fields the view shows (`fields=`) and 1000 items a page, so a refresh of
// a 10 000-node fleet is ~10 small pages; beyond MAX_PAGES the view says it shows a part.
import type { Api } from './api.js';

const MAX_PAGES = 20;

export interface Node {
  uuid: string;
  name: string | null;
  provision_state: string;
  target_provision_state: string | null;
  power_state: string | null;
  resource_class: string | null;
  maintenance: boolean;
  allocation_uuid: string | null;
  conductor: string | null;
  last_error: string | null;
}

export interface BmAllocation {
  uuid: string;
  name: string | null;
  state: 'allocating' | 'active' | 'error';
  node_uuid: string | null;
  resource_class: string | null;
  last_error: string | null;
  owner: string | null;
  extra: Record<string, unknown>;
  created_at: string;
}

export interface Conductor {
  hostname: string;
  conductor_group: string;
  alive: boolean;
  /** the last heartbeat */
  updated_at: string | null;
  created_at: string;
}

export interface BaremetalSnapshot {
  nodes: Node[];
  nodesComplete: boolean;
  allocations: BmAllocation[];
  allocationsComplete: boolean;
  conductors: Conductor[];
  /** the server's clock when it listed the conductors: heartbeat ages are measured against it */
  serverTime: number;
}

const NODE_FIELDS = 'uuid,name,provision_state,target_provision_state,power_state,resource_class,maintenance,allocation_uuid,conductor,last_error';
const ALLOCATION_FIELDS = 'uuid,name,state,node_uuid,resource_class,last_error,owner,extra,created_at';

export async function loadBaremetal(api: Api, signal: AbortSignal): Promise<BaremetalSnapshot> {
  const [nodes, allocations, conductors] = await Promise.all([
    api.ironicList<Node>(`/v1/nodes?fields=${NODE_FIELDS}&limit=1000`, 'nodes', MAX_PAGES, signal),
    api.ironicList<BmAllocation>(`/v1/allocations?fields=${ALLOCATION_FIELDS}&limit=1000`, 'allocations', MAX_PAGES, signal),
    api.get<{ conductors: Conductor[] }>('baremetal', '/v1/conductors?detail=true', signal),
  ]);
  return {
    nodes: nodes.items,
    nodesComplete: nodes.complete,
    allocations: allocations.items,
    allocationsComplete: allocations.complete,
    conductors: conductors.body.conductors,
    serverTime: conductors.serverTime,
  };
}

/**
 * The service instance of the identifier API that holds an allocation (a `from: node` attribute,
 * docs/ids.md): its `extra` names the instance and the attribute.
 */
export function holderOf(a: BmAllocation): { instance: string; attribute: string } | null {
  const instance = a.extra?.allot_service_instance;
  const attribute = a.extra?.allot_attribute;
  return typeof instance === 'string' ? { instance, attribute: typeof attribute === 'string' ? attribute : '' } : null;
}

/** Ironic's provision states, in the order a node lives through them, with their colours. */
export const PROVISION_STATES: Array<{ state: string; color: string; label: string }> = [
  { state: 'enroll', color: '#94a3b8', label: 'enroll' },
  { state: 'verifying', color: '#cbd5e1', label: 'verifying' },
  { state: 'manageable', color: '#a78bfa', label: 'manageable' },
  { state: 'inspecting', color: '#c4b5fd', label: 'inspecting' },
  { state: 'cleaning', color: '#67e8f9', label: 'cleaning' },
  { state: 'clean wait', color: '#a5f3fc', label: 'clean wait' },
  { state: 'available', color: '#22c55e', label: 'available' },
  { state: 'deploying', color: '#93c5fd', label: 'deploying' },
  { state: 'wait call-back', color: '#bfdbfe', label: 'wait call-back' },
  { state: 'active', color: '#2563eb', label: 'active' },
  { state: 'deleting', color: '#fcd34d', label: 'deleting' },
  { state: 'rescuing', color: '#fdba74', label: 'rescuing' },
  { state: 'rescue', color: '#f97316', label: 'rescue' },
  { state: 'unrescuing', color: '#fed7aa', label: 'unrescuing' },
  { state: 'adopting', color: '#bef264', label: 'adopting' },
];
const FAILED_COLOR = '#dc2626';

export function stateColor(state: string): string {
  return PROVISION_STATES.find((s) => s.state === state)?.color ?? (/fail|error/.test(state) ? FAILED_COLOR : '#64748b');
}

export const ALLOCATION_STATES = [
  { state: 'allocating', color: '#93c5fd' },
  { state: 'active', color: '#2563eb' },
  { state: 'error', color: FAILED_COLOR },
] as const;
