// Service instances of the identifier API and what each holds across the three engines (pool
// values, bare-metal nodes, Placement capacity), read from /ids/v1 as any client reads them. The
// wire types are the typed client's (src/client/ids-types.ts), written once for both.
import type * as I from '../../src/client/ids-types.js';
import type { Api } from './api.js';
import { amount, classLabel, count, shortId } from './format.js';

/** 1000 instances a page; beyond this many pages the view says it shows a part */
const MAX_PAGES = 10;

export type Instance = I.Instance;
export type Holding = I.Holding;
export type Spec = I.Spec;

export interface InstancesSnapshot {
  instances: Instance[];
  /** false when there were more than MAX_PAGES pages */
  complete: boolean;
}

/** Every instance (each with its holdings: the server reads them per instance). */
export async function loadInstances(api: Api, signal: AbortSignal): Promise<InstancesSnapshot> {
  const { items, complete } = await api.idsList<Instance>('/v1/service-instances?limit=1000', MAX_PAGES, signal);
  return { instances: items, complete };
}

export interface InstanceDetail {
  instance: Instance;
  /** where each attribute comes from (which pool, inventory, resource class) */
  spec: Spec;
}

/** One instance and its spec: two requests a refresh. */
export async function loadInstance(api: Api, id: string, signal: AbortSignal): Promise<InstanceDetail> {
  const { body: instance } = await api.get<Instance>('ids', `/v1/service-instances/${encodeURIComponent(id)}`, signal);
  const { body: spec } = await api.get<Spec>('ids', `/v1/allocation-specs/${encodeURIComponent(instance.allocation_spec)}`, signal);
  return { instance, spec };
}

/** The built-in lifecycles' states, in the order an instance lives through them; a loaded lifecycle's others are grey. */
export const INSTANCE_STATES: Array<{ state: string; color: string }> = [
  { state: 'start', color: '#a78bfa' },
  { state: 'up', color: '#22c55e' },
  { state: 'update', color: '#f59e0b' },
  { state: 'deallocating', color: '#fcd34d' },
  { state: 'terminated', color: '#94a3b8' },
];

export function instanceStateColor(state: string): string {
  return INSTANCE_STATES.find((s) => s.state === state)?.color ?? '#64748b';
}

/** Each engine's colour, wherever a holding is shown. */
export const SOURCE_COLORS: Record<Holding['source'], string> = {
  node: '#2563eb',
  capacity: '#0891b2',
  pool: '#7c3aed',
  inventory: '#64748b',
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNodeValue = (v: unknown): v is I.NodeValue => isObject(v) && typeof v.node === 'string' && typeof v.allocation === 'string';
const isCapacityValue = (v: unknown): v is I.CapacityValue => isObject(v) && typeof v.consumer === 'string' && isObject(v.allocations);

/** Resource class → amount, summed over a capacity value's providers. */
export function capacityTotals(v: I.CapacityValue): Map<string, number> {
  const out = new Map<string, number>();
  for (const { resources } of Object.values(v.allocations)) for (const [rc, n] of Object.entries(resources)) out.set(rc, (out.get(rc) ?? 0) + n);
  return out;
}

/** `10 Gbit/s egress bandwidth`, `2 vCPU`, `4 CUSTOM_PORT`: amounts with their unit, and what they are when the unit does not say. */
export function amountsText(totals: Map<string, number>): string {
  return [...totals]
    .map(([rc, n]) => {
      const shown = amount(rc, n);
      if (shown === count(n)) return `${shown} ${rc}`;
      return /CPU/.test(rc) ? shown : `${shown} ${classLabel(rc).toLowerCase()}`;
    })
    .join(', ');
}

/** An attribute's value as a table shows it: a node by name, capacity by its amounts, the rest as written. */
export function valueText(v: unknown): string {
  if (isNodeValue(v)) return v.name ?? shortId(v.node);
  if (isCapacityValue(v)) return amountsText(capacityTotals(v));
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}
