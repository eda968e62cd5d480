// The chaos run's fixtures: what its workload (workload.ts) works on, made through the APIs of a
// running allot — providers near capacity, nodes the bare-metal clients and the reservation compete
// for, nodes whose power is switched, a small pool and the specs that draw from it.
import { randomUUID } from 'node:crypto';
import { IronicClient, availableNode } from '../baremetal/helpers.js';
import type { Fixtures } from './workload.js';

export const PROVIDERS = 3;
/** the resource class of the nodes whose power is switched (no allocation takes them) */
export const LOCK_CLASS = 'chaos-power';
export const PROVIDER_VCPU = 8;
/** nodes for the bare-metal clients and the reservation's node attribute (they compete for them) */
const NODES = 4;
/** nodes whose power the node-power clients switch (one each) */
const LOCK_NODES = 2;
export const POOL_SIZE = 12;

/** Makes the fixtures through the APIs of the allot at `url` (its main port). */
export async function makeFixtures(url: string): Promise<Fixtures> {
  const json = async (method: string, p: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}${p}`, {
      method,
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  const placement = { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39' };
  const providers: Record<string, number> = {};
  for (let i = 0; i < PROVIDERS; i++) {
    const uuid = randomUUID();
    await json('POST', '/placement/resource_providers', { name: `chaos-${i}`, uuid }, placement);
    await json(
      'PUT',
      `/placement/resource_providers/${uuid}/inventories`,
      { resource_provider_generation: 0, inventories: { VCPU: { total: PROVIDER_VCPU } } },
      placement,
    );
    providers[uuid] = PROVIDER_VCPU;
  }
  const resourceClass = 'chaos';
  const ironic = new IronicClient(`${url}/baremetal`);
  const nodes: string[] = [];
  for (let i = 0; i < NODES; i++) nodes.push((await availableNode(ironic, { name: `chaos-${i}`, resource_class: resourceClass })).uuid);
  const lockNodes: string[] = [];
  for (let i = 0; i < LOCK_NODES; i++) lockNodes.push((await availableNode(ironic, { name: `chaos-power-${i}`, resource_class: LOCK_CLASS })).uuid);
  const pool = 'chaos';
  await json('POST', '/ids/v1/pools', { name: pool, kind: 'integer', ranges: [`1-${POOL_SIZE}`], strategy: 'random' });
  const spec = 'chaos-spec';
  await json('POST', '/ids/v1/allocation-specs', { name: spec, attributes: { vni: { from: 'pool', pool } } });
  // the cross-engine reservation: a node of the bare-metal clients' class, a VCPU on the Placement
  // clients' providers, a value from the identifier clients' pool
  const reservation = { name: 'chaos-reservation', node: 'server', capacity: 'cpu', value: 'vni' };
  await json('POST', '/ids/v1/allocation-specs', {
    name: reservation.name,
    attributes: {
      [reservation.node]: { from: 'node', resource_class: resourceClass },
      [reservation.capacity]: { from: 'capacity', resources: { VCPU: 1 } },
      [reservation.value]: { from: 'pool', pool },
    },
  });
  return { providers, sharedConsumers: [randomUUID(), randomUUID()], resourceClass, nodes, pool, poolSize: POOL_SIZE, spec, reservation, lockNodes };
}
