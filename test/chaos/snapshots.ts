// Snapshots of the whole database during a chaos run, read directly from PostgreSQL in one
// REPEATABLE READ transaction (one moment for every table), over the clients' own link, which no
// fault touches. White-box on purpose: they see what no API read shows at once — a provider's
// `used` counter beside its allocations, a node beside its allocation, a pool's counters beside
// its rows — and they observe every object at that moment, for the checker.
import pg from 'pg';
import type { InstanceReading, Snapshot } from './history.js';
import type { Fixtures } from './workload.js';

export interface SnapshotScope {
  providers: string[];
  /** the identifier pool of the workload */
  pool: string;
  /** the bare-metal resource class of the workload */
  resourceClass: string;
  /** the class of the nodes whose power the workload switches (their locks are watched) */
  lockClass: string;
  /** the allocation spec of the cross-engine reservation */
  reservationSpec: string;
}

const INSTANCE = 'service-instance/';

const fromKey = (k: string) => Number(BigInt(`0x${k}`));

/** Read a snapshot; `now` gives the test's clock (ms since the load started). */
export async function takeSnapshot(url: string, scope: SnapshotScope, now: () => number, timeoutMs = 5_000): Promise<Snapshot> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs, statement_timeout: timeoutMs });
  client.on('error', () => {});
  const invoke = now();
  try {
    await client.connect();
    await client.query('begin isolation level repeatable read read only');
    const clock = await client.query('select now() as now');
    const providers = await client.query(
      `select rp.uuid, rp.generation, i.total, i.reserved, i.allocation_ratio, i.used
         from resource_providers rp
         join inventories i on i.resource_provider_id = rp.id
         join resource_classes rc on rc.id = i.resource_class_id and rc.name = 'VCPU'
        where rp.uuid = any($1)`,
      [scope.providers],
    );
    const consumers = await client.query(
      `select c.uuid, c.generation, rp.uuid as rp, a.used
         from consumers c
         left join allocations a on a.consumer_id = c.id
         left join resource_providers rp on rp.id = a.resource_provider_id`,
    );
    const allocations = await client.query(
      `select a.name, a.uuid, a.state, n.uuid as node, a.conductor_affinity
         from baremetal_allocations a left join baremetal_nodes n on n.id = a.node_id
        where a.resource_class = $1`,
      [scope.resourceClass],
    );
    const nodes = await client.query(
      `select n.uuid, n.allocation_id, a.uuid as allocation, n.instance_uuid, n.reservation
         from baremetal_nodes n left join baremetal_allocations a on a.id = n.allocation_id
        where n.resource_class = any($1)`,
      [[scope.resourceClass, scope.lockClass]],
    );
    const held = await client.query(
      `select a.owner, a.purpose, a.first_key, a.last_key, a.state, a.version, a.expires_at
         from ids_allocations a join ids_pools p on p.id = a.pool_id where p.name = $1`,
      [scope.pool],
    );
    const pool = await client.query(
      `select p.total_count, p.used_count, p.allocation_count,
              (select coalesce(json_agg(f.size_key), '[]') from ids_free_ranges f where f.pool_id = p.id) as free
         from ids_pools p where p.name = $1`,
      [scope.pool],
    );
    // the reservation: every instance of its spec, and every holder any engine names (by its own column)
    const instances = await client.query(
      `select i.id, s.name as spec, i.state
         from ids_service_instances i join ids_allocation_specs s on s.id = i.spec_id
        where s.name = $1
           or i.id in (select substr(held_by, $2) from baremetal_allocations where held_by like 'service-instance/%'
                       union select substr(held_by, $2) from consumers where held_by like 'service-instance/%'
                       union select substr(owner, $2) from ids_allocations where owner like 'service-instance/%')`,
      [scope.reservationSpec, INSTANCE.length + 1],
    );
    const heldNodes = await client.query(
      `select a.held_by, n.uuid as node from baremetal_allocations a left join baremetal_nodes n on n.id = a.node_id where a.held_by like 'service-instance/%'`,
    );
    const heldCapacity = await client.query(
      `select c.held_by, rp.uuid as rp, a.used
         from consumers c join allocations a on a.consumer_id = c.id join resource_providers rp on rp.id = a.resource_provider_id
        where c.held_by like 'service-instance/%'`,
    );
    await client.query('commit');
    const complete = now();
    const snapshot: Snapshot = {
      invoke,
      complete,
      wallClock: new Date(clock.rows[0].now).toISOString(),
      placement: { providers: {}, consumers: {} },
      baremetal: { allocations: {}, nodes: {} },
      ids: { allocations: {}, pool: { total: 0, used: 0, allocationCount: 0, free: 0 } },
    };
    for (const r of providers.rows)
      snapshot.placement.providers[r.uuid] = {
        capacity: Math.floor((Number(r.total) - Number(r.reserved)) * Number(r.allocation_ratio)),
        used: Number(r.used),
        generation: Number(r.generation),
      };
    for (const r of consumers.rows) {
      const c = (snapshot.placement.consumers[r.uuid] ??= { generation: Number(r.generation), allocations: {} });
      if (r.rp) c.allocations[r.rp] = (c.allocations[r.rp] ?? 0) + Number(r.used);
    }
    for (const r of allocations.rows)
      snapshot.baremetal.allocations[r.name ?? r.uuid] = { uuid: r.uuid, state: r.state, node: r.node, conductor: r.conductor_affinity };
    for (const r of nodes.rows)
      snapshot.baremetal.nodes[r.uuid] = {
        allocation: r.allocation_id === null ? null : (r.allocation ?? `missing allocation #${r.allocation_id}`),
        instance: r.instance_uuid,
        reservation: r.reservation,
      };
    for (const r of held.rows) {
      const first = fromKey(r.first_key);
      snapshot.ids.allocations[`${r.owner}|${r.purpose}`] = {
        value: first,
        size: fromKey(r.last_key) - first + 1,
        state: r.state,
        version: Number(r.version),
        expiresAt: r.expires_at,
      };
    }
    const reservations: Record<string, InstanceReading> = {};
    const reading = (id: string) => (reservations[id] ??= { spec: null, state: null, node: null, capacity: {}, values: [] });
    for (const r of instances.rows) Object.assign(reading(r.id), { spec: r.spec, state: r.state });
    for (const r of heldNodes.rows) reading(r.held_by.slice(INSTANCE.length)).node = r.node ?? `no node (allocation held by ${r.held_by})`;
    for (const r of heldCapacity.rows) {
      const c = reading(r.held_by.slice(INSTANCE.length)).capacity;
      c[r.rp] = (c[r.rp] ?? 0) + Number(r.used);
    }
    for (const r of held.rows) if (r.owner.startsWith(INSTANCE)) reading(r.owner.slice(INSTANCE.length)).values.push(fromKey(r.first_key));
    snapshot.reservations = reservations;
    const p = pool.rows[0];
    if (p)
      snapshot.ids.pool = {
        total: Number(p.total_count),
        used: Number(p.used_count),
        allocationCount: Number(p.allocation_count),
        free: (p.free as string[]).reduce((sum, k) => sum + fromKey(k), 0),
      };
    return snapshot;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * The reservation's instances once everything settled, each engine read through its own API: the
 * instance (`GET /ids/v1/service-instances/{id}`), its node (`GET
 * /baremetal/v1/allocations/service-instance.<id>.<attribute>`), its capacity (`GET
 * /placement/allocations/{id}`) and its values (`GET /ids/v1/allocations?owner=…`). A read that
 * gets no answer after a few tries fails the run (the faults are healed by now).
 */
export async function readReservations(url: string, fixtures: Fixtures, instances: string[]): Promise<Record<string, InstanceReading>> {
  const get = async (path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> => {
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await fetch(`${url}${path}`, { headers: { accept: 'application/json', ...headers }, signal: AbortSignal.timeout(10_000) });
        const text = await res.text();
        if (res.status < 500) return { status: res.status, body: text ? JSON.parse(text) : null };
        if (attempt >= 5) throw new Error(`${path}: ${res.status} ${text}`);
      } catch (err) {
        if (attempt >= 5) throw err;
      }
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  };
  const spec = fixtures.reservation;
  const readings: Record<string, InstanceReading> = {};
  for (const id of new Set(instances)) {
    const instance = await get(`/ids/v1/service-instances/${id}`);
    const allocation = await get(`/baremetal/v1/allocations/service-instance.${id}.${spec.node}`, { 'x-openstack-ironic-api-version': '1.82' });
    const consumer = await get(`/placement/allocations/${id}`, { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39' });
    const values = await get(`/ids/v1/allocations?pool=${fixtures.pool}&owner=${encodeURIComponent(`service-instance/${id}`)}`);
    const capacity: Record<string, number> = {};
    for (const [rp, a] of Object.entries((consumer.body?.allocations ?? {}) as Record<string, { resources: Record<string, number> }>))
      capacity[rp] = a.resources.VCPU ?? 0;
    readings[id] = {
      spec: instance.status === 200 ? instance.body.allocation_spec : null,
      state: instance.status === 200 ? instance.body.state : null,
      node: allocation.status === 200 ? allocation.body.node_uuid : null,
      capacity,
      values: ((values.body?.items ?? []) as Array<{ value: number }>).map((v) => Number(v.value)),
    };
  }
  return readings;
}
