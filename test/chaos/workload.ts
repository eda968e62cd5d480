// The chaos run's workload: clients of the three APIs, each a loop of operations on a few shared,
// nearly full resources, every one recorded in the history (history.ts) with what it was told.
// A client behaves as a careful real one: after an unknown outcome it reads back (or repeats an
// idempotent request) before going on, it never reuses a name, so the checker can tell every
// object's story apart, and it frees what it holds: a cleanup not yet done is asked again on its
// later turns for as long as it runs (`cleanedUp`).
//
// - Placement: private consumers claimed (PUT), moved to another provider (POST /allocations with
//   the consumer generation) and deleted, on three providers near capacity; racers move a few shared
//   consumers at once from the generation they read (exactly one may win each round).
// - Bare metal: allocations created, followed until they finish, held, and deleted, on fewer nodes
//   than clients (allocations wait for nodes, and are taken over when their conductor pauses).
// - Identifiers: values allocated for new owners from a small pool, some as leases (a TTL) confirmed
//   (then released later like any value) or left to expire, released; the pool is full at times
//   (allocations refused), and a client refused because it is full releases one of its values on
//   its next turn, so allocations keep being answered for a whole run. Service instances created,
//   validated (their value comes from the same pool), promoted and terminated.
// - The cross-engine reservation: service instances of a spec holding a bare-metal node (of the
//   bare-metal clients' class: they compete for the same few nodes), capacity (VCPU on the
//   Placement clients' providers, chosen by allot) and a value from the identifier clients' pool,
//   created with validate (some promoted at once, some later, some validated again, a failed one
//   sometimes validated again) and terminated.
// - Node locks: power changes of nodes of their own (a transition holds the node's lock for
//   --transition-time, which the processes that pauses target run long), so that a pause catches
//   a process holding a lock and another conductor takes it over.
import { randomUUID } from 'node:crypto';
import { type Api, type Op, type Outcome, type ReservationHolds, type ReservationSpec, type State, outcomeOf } from './history.js';
import type { Rng } from './schedule.js';

/** A client gives an answer up after this (longer than allot's own bounds: a missing answer is a finding, recorded as unknown). */
const CLIENT_TIMEOUT_MS = 20_000;
const PLACEMENT_HEADERS = { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39' };
const IRONIC_HEADERS = { 'x-openstack-ironic-api-version': '1.82' };
const PREFIX: Record<Api, string> = { placement: '/placement', baremetal: '/baremetal', ids: '/ids/v1' };
const HEADERS: Record<Api, Record<string, string>> = { placement: PLACEMENT_HEADERS, baremetal: IRONIC_HEADERS, ids: {} };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface Fixtures {
  /** provider uuid → VCPU capacity */
  providers: Record<string, number>;
  sharedConsumers: string[];
  resourceClass: string;
  nodes: string[];
  pool: string;
  poolSize: number;
  spec: string;
  /** the cross-engine reservation's spec */
  reservation: ReservationSpec;
  /** nodes whose power the workload switches (one per power client) */
  lockNodes: string[];
}

interface Answer {
  status: number;
  body: any;
  outcome: Outcome;
  op: Op;
}

export class Workload {
  readonly ops: Op[] = [];
  private stopped = false;
  private readonly running: Array<Promise<void>> = [];

  constructor(
    /** the allot processes' URLs for a request about to be sent (`request`: what it is) */
    private readonly urls: (request: Pick<Op, 'client' | 'kind' | 'key'>) => string[],
    private readonly fixtures: Fixtures,
    private readonly now: () => number,
  ) {}

  get isStopped(): boolean {
    return this.stopped;
  }

  /**
   * Start every client (or, with `only`, that many clients of each kind it names); each draws from
   * its own stream of `rng`.
   */
  start(rng: Rng, only?: Partial<Record<ClientKindName, number>>): void {
    let n = 0;
    for (const kind of clientKinds) {
      const count = only ? (only[kind.name] ?? 0) : kind.count;
      for (let i = 0; i < count; i++) {
        const name = `${kind.name}-${i}`;
        const clientRng = rng.fork(n++);
        this.running.push(kind.run(this, name, clientRng).catch((err) => console.error(`# client ${name} ended: ${(err as Error).stack}`)));
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.running);
  }

  get fixture(): Fixtures {
    return this.fixtures;
  }

  /** One request, recorded. `shape` turns an answer into what the op wrote or saw. */
  async call(
    rng: Rng,
    o: Pick<Op, 'client' | 'api' | 'kind' | 'key' | 'write' | 'ttlS' | 'reservation'>,
    method: string,
    path: string,
    body?: unknown,
    seen?: (status: number, body: any) => State | null | undefined,
  ): Promise<Answer> {
    const urls = this.urls(o);
    const proc = rng.int(urls.length);
    const headers: Record<string, string> = { accept: 'application/json', ...HEADERS[o.api] };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const invoke = this.now();
    let status = 0;
    let parsed: unknown;
    let text = '';
    let error: string | undefined;
    try {
      const res = await fetch(`${urls[proc]}${PREFIX[o.api]}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
      });
      text = await res.text();
      status = res.status;
      if (text && (res.headers.get('content-type') ?? '').includes('json')) parsed = JSON.parse(text);
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause;
      error = `${(err as Error).name}${cause?.code ? ` ${cause.code}` : ''}`;
      status = 0;
    }
    const { outcome, told } = outcomeOf(o.api, status, parsed, text, error);
    const op: Op = { id: this.ops.length, proc, invoke, complete: this.now(), outcome, status, told, ...o };
    if (outcome === 'ok' && seen) {
      const s = seen(status, parsed);
      if (s !== undefined) op.seen = s;
    }
    this.ops.push(op);
    return { status, body: parsed, outcome, op };
  }
}

interface ClientKind {
  name: ClientKindName;
  count: number;
  run(w: Workload, name: string, rng: Rng): Promise<void>;
}

type ClientKindName = 'placement' | 'placement-racer' | 'baremetal' | 'ids' | 'ids-instance' | 'reservation' | 'node-power';

/**
 * Is what a cleanup asked for (a DELETE) done: acknowledged, or the object already gone? Anything
 * else — a refusal, a 503, no answer at all (a refused connection included) — leaves the object as
 * it was, holding what it holds, and the client asks again on a later turn, for as long as it runs:
 * a client that gave up after a few tries left nodes and values held for the rest of a long run
 * (a 45-minute run: two reservation instances whose terminate met a refused connection and two
 * bare-metal allocations whose ten deletes fell in a failover held all four nodes from its second
 * minute on, and every later reservation was refused ids.node_unavailable).
 */
const cleanedUp = (r: Answer | null): boolean => r !== null && (r.outcome === 'ok' || r.status === 404);

/** An answer allot gave (not a 503, which says nothing was done or that it may have been): its outcome is known. */
const answered = (r: Answer): boolean => r.outcome !== 'unknown' && r.status !== 0 && r.status !== 503;

/** Every kind of client and how many of each run at once (about 20 in all: the machine is shared). */
const clientKinds: ClientKind[] = [
  { name: 'placement', count: 5, run: placementClient },
  { name: 'placement-racer', count: 3, run: racerClient },
  { name: 'baremetal', count: 4, run: baremetalClient },
  { name: 'ids', count: 4, run: idsClient },
  { name: 'ids-instance', count: 2, run: instanceClient },
  { name: 'reservation', count: 3, run: reservationClient },
  { name: 'node-power', count: 2, run: powerClient },
];

// ---- Placement -------------------------------------------------------------------------------

interface Held {
  generation: number;
  rp: string;
  vcpu: number;
}

/** The state of a consumer as GET /allocations/{consumer} shows it (null: no allocations). */
function consumerState(body: any): State | null {
  const allocations = Object.entries((body?.allocations ?? {}) as Record<string, { resources: Record<string, number> }>);
  if (allocations.length === 0) return null;
  const [rp, a] = allocations[0]!;
  return { version: Number(body.consumer_generation), value: { rp, vcpu: a.resources.VCPU ?? 0 } };
}

/** Read a consumer back until an answer comes (bounded); null when it has no allocations, undefined when no read got through. */
async function readConsumer(w: Workload, rng: Rng, client: string, consumer: string): Promise<Held | null | undefined> {
  for (let i = 0; i < 30 && !w.isStopped; i++) {
    const r = await w.call(rng, { client, api: 'placement', kind: 'read', key: consumer }, 'GET', `/allocations/${consumer}`, undefined, (_, b) =>
      consumerState(b),
    );
    if (r.outcome === 'ok') {
      const s = r.op.seen;
      return s ? { generation: s.version, rp: String(s.value.rp), vcpu: Number(s.value.vcpu) } : null;
    }
    await sleep(500 + rng.int(1_000));
  }
  return undefined;
}

const placementBody = (rp: string, vcpu: number, generation: number | null) => ({
  allocations: { [rp]: { resources: { VCPU: vcpu } } },
  project_id: 'chaos',
  user_id: 'chaos',
  consumer_generation: generation,
  consumer_type: 'INSTANCE',
});

async function placementClient(w: Workload, client: string, rng: Rng): Promise<void> {
  const providers = Object.keys(w.fixture.providers);
  const held = new Map<string, Held>();
  /** after an unknown outcome or a refusal: learn the consumer's state before going on */
  const settle = async (consumer: string) => {
    const state = await readConsumer(w, rng, client, consumer);
    if (state === undefined)
      held.delete(consumer); // never learnt: leave it to the final state
    else if (state === null) held.delete(consumer);
    else held.set(consumer, state);
  };
  while (!w.isStopped) {
    const mine = [...held.keys()];
    const choice = rng.next();
    if (mine.length === 0 || (mine.length < 3 && choice < 0.4)) {
      const consumer = randomUUID();
      const rp = rng.pick(providers);
      const vcpu = 1 + rng.int(3);
      const to = { version: 1, value: { rp, vcpu } };
      const r = await w.call(
        rng,
        { client, api: 'placement', kind: 'claim', key: consumer, write: { from: 0, to } },
        'PUT',
        `/allocations/${consumer}`,
        placementBody(rp, vcpu, null),
      );
      if (r.outcome === 'ok') held.set(consumer, { generation: 1, rp, vcpu });
      else if (r.outcome === 'unknown') await settle(consumer);
    } else if (choice < 0.7) {
      const consumer = rng.pick(mine);
      const h = held.get(consumer)!;
      const rp = rng.pick(providers.filter((p) => p !== h.rp));
      const vcpu = 1 + rng.int(3);
      const to = { version: h.generation + 1, value: { rp, vcpu } };
      const r = await w.call(rng, { client, api: 'placement', kind: 'move', key: consumer, write: { from: h.generation, to } }, 'POST', '/allocations', {
        [consumer]: placementBody(rp, vcpu, h.generation),
      });
      if (r.outcome === 'ok') held.set(consumer, { generation: h.generation + 1, rp, vcpu });
      else await settle(consumer);
    } else if (choice < 0.9) {
      const consumer = rng.pick(mine);
      const r = await w.call(rng, { client, api: 'placement', kind: 'delete', key: consumer, write: { to: null } }, 'DELETE', `/allocations/${consumer}`);
      if (r.outcome === 'ok') held.delete(consumer);
      else await settle(consumer);
    } else {
      const rp = rng.pick(providers);
      await w.call(rng, { client, api: 'placement', kind: 'read-provider', key: rp }, 'GET', `/resource_providers/${rp}`, undefined, (_, b) => ({
        version: Number(b.generation),
        value: {},
      }));
    }
    await sleep(20 + rng.int(200));
  }
}

/** Racers move the shared consumers from the generation they read: each round at most one wins. */
async function racerClient(w: Workload, client: string, rng: Rng): Promise<void> {
  const providers = Object.keys(w.fixture.providers);
  while (!w.isStopped) {
    const consumer = rng.pick(w.fixture.sharedConsumers);
    const h = await readConsumer(w, rng, client, consumer);
    if (h) {
      const rp = rng.pick(providers.filter((p) => p !== h.rp));
      const to = { version: h.generation + 1, value: { rp, vcpu: 1 } };
      await w.call(rng, { client, api: 'placement', kind: 'move', key: consumer, write: { from: h.generation, to } }, 'POST', '/allocations', {
        [consumer]: placementBody(rp, 1, h.generation),
      });
    }
    await sleep(50 + rng.int(400));
  }
}

// ---- Bare metal ------------------------------------------------------------------------------

/** An allocation's state: version 1 while allocating, 2 once finished (active on a node, or error). */
function allocationState(body: any): State {
  return body.state === 'allocating'
    ? { version: 1, value: { state: 'allocating' } }
    : { version: 2, value: { state: body.state, node: body.node_uuid ?? null } };
}

async function readAllocation(w: Workload, rng: Rng, client: string, name: string): Promise<State | null | undefined> {
  const r = await w.call(rng, { client, api: 'baremetal', kind: 'read', key: name }, 'GET', `/v1/allocations/${name}`, undefined, (_, b) => allocationState(b));
  if (r.outcome === 'ok') return r.op.seen ?? null;
  if (r.status === 404) {
    r.op.seen = null; // a read that found nothing saw the allocation absent
    r.op.outcome = 'ok';
    return null;
  }
  return undefined;
}

async function baremetalClient(w: Workload, client: string, rng: Rng): Promise<void> {
  /** delete an allocation (finished or not), repeating while it is not done (a few tries a turn) */
  const remove = async (name: string) => {
    for (let attempt = 0; attempt < 10 && !w.isStopped; attempt++) {
      const del = await w.call(rng, { client, api: 'baremetal', kind: 'delete', key: name, write: { to: null } }, 'DELETE', `/v1/allocations/${name}`);
      if (cleanedUp(del)) return true;
      await sleep(300 + rng.int(700));
    }
    return false;
  };
  // allocations whose deletion is not done yet: deleted again on later turns, before any new one
  const undeleted: string[] = [];
  for (let n = 0; !w.isStopped; n++) {
    const left = undeleted.shift();
    if (left !== undefined) {
      if (!(await remove(left)) && !w.isStopped) undeleted.push(left);
      continue;
    }
    const name = `${client}-${n}`;
    const created = await w.call(
      rng,
      { client, api: 'baremetal', kind: 'create', key: name, write: { from: 0, to: { version: 1, value: { state: 'allocating' } } } },
      'POST',
      '/v1/allocations',
      { resource_class: w.fixture.resourceClass, name },
      (_, b) => allocationState(b),
    );
    let state: State | null | undefined = created.outcome === 'ok' ? created.op.seen : undefined;
    if (created.outcome === 'fail') {
      await sleep(200 + rng.int(500));
      continue;
    }
    // follow it until it finishes (an unknown create: until it shows up or is known absent)
    const until = Date.now() + 90_000;
    while (!w.isStopped && Date.now() < until && (state === undefined || state?.version === 1)) {
      await sleep(200 + rng.int(300));
      const s = await readAllocation(w, rng, client, name);
      if (s === null && created.outcome === 'unknown') break; // not created (as far as anyone can tell now)
      if (s !== undefined) state = s;
    }
    // known absent: nothing to delete (an allocation never read back may exist: it is deleted)
    if (state === null || w.isStopped) continue;
    if (state?.version === 2 && state.value.state === 'active') await sleep(300 + rng.int(2_000));
    if (!(await remove(name)) && !w.isStopped) undeleted.push(name);
  }
}

// ---- Identifiers -----------------------------------------------------------------------------

function idsState(body: any): State {
  return { version: Number(body.version), value: { value: Number(body.value), state: body.state } };
}

async function idsClient(w: Workload, client: string, rng: Rng): Promise<void> {
  const pool = w.fixture.pool;
  const held: Array<{ owner: string; id: string; leaseUntil: number | null }> = [];
  // owners whose allocation was never answered (it may exist): asked again later — the request is
  // idempotent by owner — so that what a fault left behind is released, not held for the rest of
  // a long run (an hour-long run filled the pool with such values)
  const unsettled: Array<{ owner: string; ttl: number | undefined }> = [];
  // Refused because the pool was full: this client's next turn releases one of its values (when
  // it holds one), so that the pool — whose twelve values the clients, instances and reservations
  // can fill — keeps being allocated and released for a whole run instead of staying full.
  let refusedFull = false;
  for (let n = 0; !w.isStopped; n++) {
    const releasing = refusedFull && held.length > 0;
    refusedFull = false;
    const choice = releasing ? 0.7 : rng.next();
    if (held.length < 3 && choice < 0.5) {
      const fresh = rng.chance(0.4) ? 3 + rng.int(6) : undefined;
      // asked again exactly as before (another ttl would be an idempotency mismatch)
      const { owner, ttl } = unsettled.shift() ?? { owner: `${client}-${n}`, ttl: fresh };
      let answered = false;
      const body = { owner, ...(ttl ? { ttl_seconds: ttl } : {}) };
      // allocate-for-owner is idempotent: an unknown outcome is repeated as it was, until answered
      for (let attempt = 0; attempt < 20 && !w.isStopped; attempt++) {
        const r = await w.call(
          rng,
          {
            client,
            api: 'ids',
            kind: 'allocate',
            key: `${owner}|`,
            write: { from: 0, to: { version: 1, value: { state: ttl ? 'reserved' : 'allocated' } } },
            ttlS: ttl,
          },
          'POST',
          `/pools/${pool}/allocations`,
          body,
          (_, b) => idsState(b),
        );
        if (r.outcome === 'ok') {
          held.push({ owner, id: r.body.id, leaseUntil: ttl ? Date.now() + ttl * 1000 : null });
          answered = true;
          break;
        }
        if (r.outcome === 'fail' && r.status !== 503) {
          answered = true;
          refusedFull = r.body?.code === 'ids.pool_exhausted';
          break;
        }
        await sleep(300 + rng.int(700));
      }
      if (!answered && !w.isStopped) unsettled.push({ owner, ttl });
    } else if (held.length > 0 && choice < 0.8) {
      const h = held.splice(rng.int(held.length), 1)[0]!;
      const key = `${h.owner}|`;
      if (h.leaseUntil !== null && !releasing && rng.chance(0.5)) {
        // confirm the lease while it runs (one try), or let it run out
        if (Date.now() < h.leaseUntil - 500) {
          await w.call(
            rng,
            { client, api: 'ids', kind: 'confirm', key, write: { to: { version: 0, value: { state: 'allocated' } } } },
            'PATCH',
            `/allocations/${h.id}`,
            { state: 'allocated' },
            (_, b) => idsState(b),
          );
          // confirmed (or perhaps, or run out meanwhile): released on a later turn like any value
          // (before, a confirmed value was never released: an hour-long run's pool filled with them)
          held.push({ ...h, leaseUntil: null });
        }
        continue;
      }
      let released = false;
      for (let attempt = 0; attempt < 10 && !w.isStopped; attempt++) {
        const r = await w.call(rng, { client, api: 'ids', kind: 'release', key, write: { to: null } }, 'DELETE', `/allocations/${h.id}`);
        if (r.outcome === 'ok' || r.status === 404) {
          released = true;
          break;
        }
        await sleep(300 + rng.int(700));
      }
      // not released yet: kept, released on a later turn
      if (!released && !w.isStopped) held.push(h);
    } else {
      const owner = held.length ? rng.pick(held).owner : `${client}-${rng.int(n + 1)}`;
      await w.call(
        rng,
        { client, api: 'ids', kind: 'read', key: `${owner}|` },
        'GET',
        `/allocations?pool=${pool}&owner=${encodeURIComponent(owner)}`,
        undefined,
        (_, b) => (b.items.length ? idsState(b.items[0]) : null),
      );
    }
    await sleep(30 + rng.int(250));
  }
}

/** Service instances whose `vni` attribute is allocated from the workload's pool when validated (key: the allocation's owner and purpose). */
async function instanceClient(w: Workload, client: string, rng: Rng): Promise<void> {
  /** repeat a request whose outcome is unknown (each of these is idempotent) until it is answered */
  const repeat = async (kind: string, key: string, method: string, path: string, body?: unknown, write?: Op['write']) => {
    for (let attempt = 0; attempt < 20 && !w.isStopped; attempt++) {
      // the instance's value is observed in the snapshots (its allocation's version is not in this answer)
      const r = await w.call(rng, { client, api: 'ids', kind, key, ...(write ? { write } : {}) }, method, path, body);
      if (answered(r)) return r;
      await sleep(300 + rng.int(700));
    }
    return null;
  };
  // instances whose termination was never answered: terminated again on a later turn (a value
  // they hold would otherwise stay taken for the rest of a long run)
  const unterminated: string[] = [];
  while (!w.isStopped) {
    const left = unterminated.shift();
    if (left !== undefined) {
      const r = await repeat('terminate', `service-instance/${left}|vni`, 'DELETE', `/service-instances/${left}`, undefined, { to: null });
      if (!cleanedUp(r) && !w.isStopped) {
        unterminated.push(left);
        await sleep(300 + rng.int(700));
      }
      continue;
    }
    const id = randomUUID();
    const key = `service-instance/${id}|vni`;
    const created = await repeat('instance-create', key, 'POST', '/service-instances', { id, allocation_spec: w.fixture.spec, attributes: {} });
    if (created?.outcome !== 'ok') continue;
    const validated = await repeat('validate', key, 'POST', `/service-instances/${id}/validate`, undefined, { from: 0, to: { version: 0, value: {} } });
    if (validated?.outcome === 'ok' && rng.chance(0.7)) await repeat('promote', key, 'POST', `/service-instances/${id}/promote`);
    await sleep(500 + rng.int(3_000));
    if (!cleanedUp(await repeat('terminate', key, 'DELETE', `/service-instances/${id}`, undefined, { to: null })) && !w.isStopped) unterminated.push(id);
  }
}

// ---- The cross-engine reservation --------------------------------------------------------------

/** What an instance's answer shows it holding (its `holdings`, in every engine): all of it, or null when it holds nothing. */
function holdsOf(spec: ReservationSpec, body: any): ReservationHolds | null {
  const holdings = (body?.holdings ?? []) as Array<{ attribute: string | null; source: string; value: any }>;
  const of = (attribute: string) => holdings.find((h) => h.attribute === attribute)?.value;
  const node = of(spec.node);
  const capacity = of(spec.capacity);
  const value = of(spec.value);
  if (node === undefined && capacity === undefined && value === undefined) return null;
  const [rp, a] = Object.entries((capacity?.allocations ?? {}) as Record<string, { resources: Record<string, number> }>)[0] ?? [];
  // a partial answer is recorded as it is: the checker then finds the parts it lacks absent
  return { node: String(node?.node), rp: String(rp), vcpu: Number(a?.resources.VCPU ?? 0), value: Number(value) };
}

/**
 * Service instances reserving across the three engines: created with validate (half promoted in
 * the same request), each operation repeated while its outcome is unknown (every one of them is
 * idempotent by the instance id); a validated one promoted later or validated again, a failed one
 * (no node, capacity or value free) sometimes validated again; held a moment, then terminated.
 */
async function reservationClient(w: Workload, client: string, rng: Rng): Promise<void> {
  const spec = w.fixture.reservation;
  const repeat = async (kind: string, id: string, method: string, path: string, body?: unknown) => {
    for (let attempt = 0; attempt < 20 && !w.isStopped; attempt++) {
      const r = await w.call(rng, { client, api: 'ids', kind, key: id, reservation: {} }, method, path, body);
      if (r.outcome === 'ok' && kind !== 'terminate') r.op.reservation = { holds: holdsOf(spec, r.body) };
      if (answered(r)) return r;
      await sleep(300 + rng.int(700));
    }
    return null;
  };
  // reservations whose termination was never answered: terminated again on a later turn
  const unterminated: string[] = [];
  while (!w.isStopped) {
    const left = unterminated.shift();
    if (left !== undefined) {
      if (!cleanedUp(await repeat('terminate', left, 'DELETE', `/service-instances/${left}`)) && !w.isStopped) {
        unterminated.push(left);
        await sleep(300 + rng.int(700));
      }
      continue;
    }
    const id = randomUUID();
    const promote = rng.chance(0.5);
    const reserved = await repeat('reserve', id, 'POST', '/service-instances', { id, allocation_spec: spec.name, attributes: {}, validate: true, promote });
    if (reserved?.outcome === 'fail' && reserved.status === 409 && rng.chance(0.5)) {
      await sleep(200 + rng.int(800));
      await repeat('validate', id, 'POST', `/service-instances/${id}/validate`);
    } else if (reserved?.outcome === 'ok' && !promote) {
      const choice = rng.next();
      if (choice < 0.3) await repeat('validate', id, 'POST', `/service-instances/${id}/validate`);
      if (choice < 0.8) await repeat('promote', id, 'POST', `/service-instances/${id}/promote`);
    }
    await sleep(300 + rng.int(2_500));
    if (!cleanedUp(await repeat('terminate', id, 'DELETE', `/service-instances/${id}`)) && !w.isStopped) unterminated.push(id);
    await sleep(50 + rng.int(300));
  }
}

// ---- Node locks --------------------------------------------------------------------------------

/**
 * Switches its node's power on and off: each change starts a transition that holds the node's lock
 * until the transition ends (--transition-time of the process that started it, or of the conductor
 * that took the lock over); the client waits for it to end (bounded) before the next change.
 */
async function powerClient(w: Workload, client: string, rng: Rng): Promise<void> {
  const node = w.fixture.lockNodes[Number(client.split('-').at(-1))]!;
  let on = false;
  while (!w.isStopped) {
    const target = on ? 'power off' : 'power on';
    const r = await w.call(rng, { client, api: 'baremetal', kind: 'power', key: node }, 'PUT', `/v1/nodes/${node}/states/power`, { target });
    // wait for the transition to end (whoever ends it), then switch again
    for (const until = Date.now() + 60_000; !w.isStopped && Date.now() < until; ) {
      await sleep(300 + rng.int(500));
      const read = await w.call(rng, { client, api: 'baremetal', kind: 'read-node', key: node }, 'GET', `/v1/nodes/${node}`);
      if (read.outcome === 'ok' && read.body.target_power_state === null) {
        on = read.body.power_state === 'power on';
        break;
      }
    }
    if (r.outcome === 'fail') await sleep(200 + rng.int(500));
  }
}
