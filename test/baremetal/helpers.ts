// Helpers for the bare-metal tests: an Ironic client at a microversion, polling until a node or
// an allocation settles, and building ready-to-allocate nodes through the API.
import assert from 'node:assert/strict';
import { ApiProbe, type HttpResponse, type PlacementClient } from '../helpers/http.js';

export class IronicClient extends ApiProbe {
  constructor(
    /** the API root: http://host:port/baremetal (main port) or http://host:port (dedicated) */
    baseUrl: string,
    readonly version: string | null = '1.82',
  ) {
    super(baseUrl, version ? { 'x-openstack-ironic-api-version': version } : {});
  }

  at(version: string | null): IronicClient {
    return new IronicClient(this.baseUrl, version);
  }
}

/** Placement's usage of a node's provider with the placement backend; null with the database backend (no provider). */
export async function nodeUsage(placement: PlacementClient, backend: 'database' | 'placement', nodeUuid: string): Promise<Record<string, number> | null> {
  if (backend !== 'placement') return null;
  const res = await placement.get(`/resource_providers/${nodeUuid}/usages`);
  assert.equal(res.status, 200, res.text);
  return res.body.usages;
}

/** The inner document of an Ironic error body. */
export function fault(res: HttpResponse): { faultcode?: string; faultstring?: string; code?: number; title?: string; description?: string } {
  assert.ok(res.body && typeof res.body.error_message === 'string', `not an Ironic error body: ${res.text}`);
  return JSON.parse(res.body.error_message);
}

/** Poll until `done` holds (a failure guard, not a timing assertion: the deadline is generous). */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value)) {
    if (Date.now() > deadline) assert.fail(`${what} did not happen in ${timeoutMs} ms; last seen: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 25));
    value = await read();
  }
  return value;
}

export async function nodeSettled(api: IronicClient, ident: string): Promise<any> {
  return eventually(
    async () => (await api.get(`/v1/nodes/${ident}`)).body,
    (n) => n.target_provision_state === null && n.target_power_state === null && n.reservation === null,
    `node ${ident} settling`,
  );
}

export async function allocationSettled(api: IronicClient, ident: string): Promise<any> {
  return eventually(
    async () => (await api.get(`/v1/allocations/${ident}`)).body,
    (a) => a.state !== 'allocating',
    `allocation ${ident} finishing`,
  );
}

/** A node walked through manage → provide → power off: available and allocatable. */
export async function availableNode(api: IronicClient, fields: Record<string, unknown>, traits: string[] = []): Promise<any> {
  const created = await api.post('/v1/nodes', { driver: 'fake-hardware', ...fields });
  assert.equal(created.status, 201, created.text);
  const uuid = created.body.uuid;
  if (traits.length) assert.equal((await api.put(`/v1/nodes/${uuid}/traits`, { traits })).status, 204);
  assert.equal((await api.put(`/v1/nodes/${uuid}/states/provision`, { target: 'manage' })).status, 202);
  await nodeSettled(api, uuid);
  assert.equal((await api.put(`/v1/nodes/${uuid}/states/provision`, { target: 'provide' })).status, 202);
  await nodeSettled(api, uuid);
  assert.equal((await api.put(`/v1/nodes/${uuid}/states/power`, { target: 'power off' })).status, 202);
  const node = await nodeSettled(api, uuid);
  assert.equal(node.provision_state, 'available');
  assert.equal(node.power_state, 'power off');
  return node;
}
