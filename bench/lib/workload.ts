// One Placement workload, run the same way against any Placement (allot or the real one):
// set-up of N providers, allocation candidates, the scheduler loop, the write path alone, the
// migration swap, deletes, and a contention round with a read-back check.
import { randomUUID } from 'node:crypto';
import { type HttpResult, type KeepAliveClient, errorCode, json } from './http.js';
import type { Usage } from './procfs.js';
import { Outcomes, type LatencySummary, round, summarize } from './stats.js';

export const STEPS = ['setup', 'candidates', 'scheduler_loop', 'claim_write_path', 'migration_swap', 'deletes', 'contention'] as const;
export type StepName = (typeof STEPS)[number];

export interface WorkloadOptions {
  /** provider counts, ascending: the full workload runs at the first, set-up and candidates at every one */
  sizes: number[];
  /** concurrency levels (clients) of every step at the first size */
  concurrency: number[];
  /** concurrency levels of the candidates step at the larger sizes */
  largeConcurrency: number[];
  /** wall-time budget of one step at one concurrency level, seconds */
  stepSeconds: number;
  /** at most this many operations per step and level */
  maxOps: number;
  /** at least this many samples per step and level, even past the time budget */
  minSamples: number;
  setupConcurrency: number;
  /** `limit` of the scheduler loop's candidates request */
  loopLimit: number;
  /** where the scheduler loop picks from: allocation candidates, GET /resource_providers?resources=, or candidates when the server has them */
  pick: 'auto' | 'candidates' | 'providers';
  /** tries of one claim (a 409 means: ask again, pick again) */
  maxRetries: number;
  contentionProviders: number;
  /** free VCPU units left on each contention provider when the race starts */
  contentionFreeUnits: number;
  steps: Set<StepName>;
  /** prefix of every provider name, so several runs can share a server */
  runId: string;
  /** the request microversion (1.28 or later: consumer generations) */
  microversion: string;
}

export interface WorkloadHooks {
  log(message: string): void;
  /** CPU and memory of the server under test, when the bench started it (null for --url) */
  usage(): Promise<Usage | null>;
}

/** What one claim asks for, as Placement resources. */
const CLAIM = { VCPU: 1, MEMORY_MB: 512, DISK_GB: 10 };
const CLAIM_QUERY = 'resources=VCPU:1,MEMORY_MB:512,DISK_GB:10';
const PROJECT = 'bench-project';
const USER = 'bench-user';

interface Provider {
  uuid: string;
  index: number;
}

/** A consumer the bench holds allocations for, and what it holds. */
interface Held {
  uuid: string;
  allocations: Record<string, { resources: Record<string, number> }>;
}

interface LevelResult {
  concurrency: number;
  elapsed_s: number;
  ops: number;
  ops_per_s: number;
  latency: LatencySummary | null;
  outcomes: ReturnType<Outcomes['toJSON']>;
  cost?: CostDelta;
  [extra: string]: unknown;
}

interface CostDelta {
  /** server CPU milliseconds per operation (user + system, all server processes) */
  server_cpu_ms_per_op: number | null;
  /** PostgreSQL CPU milliseconds per operation, when the database runs under the bench */
  db_cpu_ms_per_op: number | null;
  /** this load generator's CPU milliseconds per operation */
  client_cpu_ms_per_op: number | null;
  /** server + db + client CPU seconds over the wall seconds: 2.0 means both cores busy */
  cores_busy: number | null;
  /** SQL statements the server sent per operation, BEGIN/COMMIT included (--count-queries) */
  sql_statements_per_op?: number;
}

function inventoriesBody(generation: number) {
  return {
    resource_provider_generation: generation,
    inventories: {
      VCPU: { total: 64, allocation_ratio: 16.0 },
      MEMORY_MB: { total: 262144, allocation_ratio: 1.5 },
      DISK_GB: { total: 10000 },
    },
  };
}

/** Traits of provider i: every one SSE4.2, half AVX2, a quarter SSD too. */
function traitsOf(i: number): string[] {
  const traits = ['HW_CPU_X86_SSE42'];
  if (i % 2 === 0) traits.push('HW_CPU_X86_AVX2');
  if (i % 4 === 0) traits.push('STORAGE_DISK_SSD');
  return traits;
}

/** 1.38 made consumer_type a required field of allocation writes. */
function atLeast(mv: string, want: string): boolean {
  const [a, b] = mv.split('.').map(Number);
  const [c, d] = want.split('.').map(Number);
  return a! > c! || (a === c && b! >= d!);
}

const ok = (r: HttpResult) => r.status >= 200 && r.status < 300;
const pickRandom = <T>(xs: T[]): T | undefined => xs[Math.floor(Math.random() * xs.length)];
const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;

/**
 * Run `op` from `concurrency` workers until the time budget or the op budget is spent (and at
 * least minSamples ops were started). `op` returns false when it has nothing more to do.
 */
async function timedLoop(
  concurrency: number,
  budget: { seconds: number; maxOps: number; minSamples: number },
  op: () => Promise<boolean>,
): Promise<{ elapsed_s: number; started: number }> {
  const start = process.hrtime.bigint();
  let started = 0;
  let exhausted = false;
  const worker = async () => {
    while (!exhausted && started < budget.maxOps && (seconds(start) < budget.seconds || started < budget.minSamples)) {
      started++;
      if (!(await op())) exhausted = true;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { elapsed_s: seconds(start), started };
}

export class Workload {
  private readonly providers: Provider[] = [];
  /** consumers holding a claim (from the scheduler loop and the write-path step) */
  private readonly instances: Held[] = [];
  /** consumers that hold a moved allocation (migration records) */
  private readonly migrations: Held[] = [];
  private pickPath: 'candidates' | 'resource_providers' | null = null;
  private candidatesSupported: boolean | null = null;
  private readonly result: Record<string, unknown> = {};

  constructor(
    private readonly client: KeepAliveClient,
    private readonly options: WorkloadOptions,
    private readonly hooks: WorkloadHooks,
  ) {}

  /** project, user, consumer generation and (1.38+) consumer type of an allocation write */
  private consumer(type: 'INSTANCE' | 'MIGRATION', generation: number | null = null) {
    return {
      project_id: PROJECT,
      user_id: USER,
      consumer_generation: generation,
      ...(atLeast(this.options.microversion, '1.38') ? { consumer_type: type } : {}),
    };
  }

  async run(): Promise<Record<string, unknown>> {
    const o = this.options;
    const sizes: Record<string, unknown>[] = [];
    this.result.sizes = sizes;
    const started = Date.now();
    for (const [i, size] of o.sizes.entries()) {
      const at: Record<string, unknown> = { providers: size };
      sizes.push(at);
      if (o.steps.has('setup')) at.setup = await this.setup(size);
      else if (!this.providers.length) await this.adoptProviders();
      at.server_memory = await this.hooks.usage();
      if (o.steps.has('candidates')) at.candidates = await this.candidates(i === 0 ? o.concurrency : o.largeConcurrency);
      if (i !== 0) continue;
      // The claim steps run at the first (smaller) size: that is where the targets are stated.
      if (o.steps.has('scheduler_loop')) this.result.pick_path = await this.choosePickPath();
      if (o.steps.has('scheduler_loop')) this.result.scheduler_loop = await this.perLevel('scheduler_loop', () => this.schedulerLoopOp());
      if (o.steps.has('claim_write_path')) this.result.claim_write_path = await this.perLevel('claim_write_path', () => this.claimWritePathOp());
      // Swaps and deletes use up the consumers the claim steps made: each level gets an equal share.
      if (o.steps.has('migration_swap'))
        this.result.migration_swap = await this.perLevel('migration_swap', (left) => this.swapOp(Math.ceil(this.instances.length / left)));
      if (o.steps.has('deletes')) {
        this.result.deletes = await this.perLevel('deletes', (left) => this.deleteOp(Math.ceil((this.migrations.length + this.instances.length) / left)));
      }
      if (o.steps.has('contention')) {
        const rounds = [];
        for (const c of o.concurrency) rounds.push(await this.contentionRound(c));
        this.result.contention = rounds;
      }
    }
    this.result.total_seconds = round((Date.now() - started) / 1000, 1);
    return this.result;
  }

  // ---------------------------------------------------------------- set-up

  /** Without the set-up step: claim on the providers the server already has (a server set up by an earlier run). */
  private async adoptProviders() {
    const r = await this.client.request('GET', '/resource_providers?resources=VCPU:1');
    const found = json<{ resource_providers: Array<{ uuid: string }> }>(r)?.resource_providers ?? [];
    for (const [index, { uuid }] of found.entries()) this.providers.push({ uuid, index });
    this.hooks.log(`  no set-up step: using the ${found.length} providers with VCPU the server has`);
  }

  private async setup(size: number) {
    const from = this.providers.length;
    const outcomes = new Outcomes();
    const latencies: number[] = [];
    const failures: string[] = [];
    let next = from;
    const usage0 = await this.hooks.usage();
    const cpu0 = process.cpuUsage();
    const start = process.hrtime.bigint();
    const lastLog = { at: Date.now() };
    const one = async (i: number) => {
      const uuid = randomUUID();
      const step = async (what: string, method: string, path: string, body: unknown) => {
        const r = await this.client.request(method, path, body);
        outcomes.add(r, what);
        if (r.status) latencies.push(r.ms);
        if (!ok(r)) {
          if (failures.length < 5) failures.push(`${what} ${r.status || r.error}: ${r.body.slice(0, 200)}`);
          return undefined;
        }
        return r;
      };
      const created = await step('create', 'POST', '/resource_providers', { name: `${this.options.runId}-${i}`, uuid });
      if (!created) return;
      const inv = await step('inventories', 'PUT', `/resource_providers/${uuid}/inventories`, inventoriesBody(0));
      const generation = inv && json<{ resource_provider_generation: number }>(inv)?.resource_provider_generation;
      if (generation === undefined) return;
      const traits = await step('traits', 'PUT', `/resource_providers/${uuid}/traits`, { resource_provider_generation: generation, traits: traitsOf(i) });
      if (!traits) return;
      this.providers.push({ uuid, index: i });
    };
    await Promise.all(
      Array.from({ length: this.options.setupConcurrency }, async () => {
        while (next < size) {
          await one(next++);
          if (Date.now() - lastLog.at > 15_000) {
            lastLog.at = Date.now();
            this.hooks.log(`  set-up: ${this.providers.length}/${size} providers`);
          }
        }
      }),
    );
    const elapsed = seconds(start);
    const added = this.providers.length - from;
    const requests = Object.values(outcomes.statuses).reduce((a, b) => a + b, 0);
    this.hooks.log(`  set-up: ${added} providers in ${elapsed.toFixed(1)} s`);
    return {
      providers_before: from,
      providers_added: added,
      concurrency: this.options.setupConcurrency,
      requests_per_provider: 3,
      elapsed_s: round(elapsed),
      providers_per_s: round(added / elapsed),
      requests_per_s: round(requests / elapsed),
      request_latency: summarize(latencies),
      outcomes: outcomes.toJSON(),
      ...(failures.length ? { failures } : {}),
      cost: await this.cost(usage0, cpu0, requests, elapsed),
    };
  }

  // ------------------------------------------------------------ candidates

  private async probeCandidates(): Promise<HttpResult> {
    const r = await this.client.request('GET', `/allocation_candidates?${CLAIM_QUERY}&limit=1`);
    this.candidatesSupported = ok(r);
    return r;
  }

  private async candidates(levels: number[]) {
    const probe = await this.probeCandidates();
    if (!ok(probe)) {
      this.hooks.log(`  candidates: unsupported (GET /allocation_candidates answered ${probe.status || probe.error})`);
      return { supported: false, probe_status: probe.status, probe_body: probe.body.slice(0, 300) };
    }
    const queries: Record<string, string> = {
      limit_50: `${CLAIM_QUERY}&limit=50`,
      required_traits_limit_50: `${CLAIM_QUERY}&required=HW_CPU_X86_AVX2,STORAGE_DISK_SSD&limit=50`,
      no_limit: CLAIM_QUERY,
    };
    const out: Record<string, unknown> = { supported: true };
    for (const [name, query] of Object.entries(queries)) {
      const rows = [];
      for (const c of levels) {
        let count: number | null = null;
        let bytes = 0;
        const row = await this.measure(`candidates ${name}`, c, async (latencies, outcomes) => {
          const r = await this.client.request('GET', `/allocation_candidates?${query}`);
          outcomes.add(r, `GET candidates ${name}`);
          if (r.status) latencies.push(r.ms);
          if (ok(r)) {
            bytes = r.body.length;
            // Parse one answer per level to report how many candidates it held.
            if (count === null) count = json<{ allocation_requests: unknown[] }>(r)?.allocation_requests?.length ?? null;
          }
          return true;
        });
        rows.push({ ...row, candidates_returned: count, response_bytes: bytes });
      }
      out[name] = rows;
    }
    return out;
  }

  // ---------------------------------------------------------- claim steps

  private async choosePickPath(): Promise<string> {
    const want = this.options.pick;
    if (want === 'providers') this.pickPath = 'resource_providers';
    else if (want === 'candidates') this.pickPath = 'candidates';
    else {
      if (this.candidatesSupported === null) await this.probeCandidates();
      this.pickPath = this.candidatesSupported ? 'candidates' : 'resource_providers';
    }
    this.hooks.log(
      `  scheduler loop picks from ${this.pickPath === 'candidates' ? 'GET /allocation_candidates' : 'GET /resource_providers?resources= (fallback)'}`,
    );
    return this.pickPath === 'candidates'
      ? `GET /allocation_candidates?${CLAIM_QUERY}&limit=${this.options.loopLimit}`
      : `GET /resource_providers?${CLAIM_QUERY} (fallback: no allocation candidates)`;
  }

  /** Stats shared by the claim steps, reset per level. */
  private level = { conflicts: 0, conflictCodes: {} as Record<string, number>, writes: 0, failed: 0, readMs: [] as number[], writeMs: [] as number[] };

  private resetLevel() {
    this.level = { conflicts: 0, conflictCodes: {}, writes: 0, failed: 0, readMs: [], writeMs: [] };
  }

  private async claim(allocations: Held['allocations'], outcomes: Outcomes): Promise<{ done: boolean; uuid?: string; status: number }> {
    const uuid = randomUUID();
    const r = await this.client.request('PUT', `/allocations/${uuid}`, { allocations, ...this.consumer('INSTANCE') });
    outcomes.add(r, 'PUT allocations');
    this.level.writes++;
    if (r.status) this.level.writeMs.push(r.ms);
    if (ok(r)) {
      this.instances.push({ uuid, allocations });
      return { done: true, uuid, status: r.status };
    }
    if (r.status === 409) {
      this.level.conflicts++;
      const code = errorCode(r) ?? 'none';
      this.level.conflictCodes[code] = (this.level.conflictCodes[code] ?? 0) + 1;
    }
    return { done: false, status: r.status };
  }

  /**
   * One claim as an operation: `pick` chooses where (undefined: give up), then PUT; on 409 pick
   * again, up to --max-retries. The latency runs from the first pick to the acknowledged PUT.
   */
  private claimOp(pick: (outcomes: Outcomes) => Promise<Held['allocations'] | undefined>) {
    return async (latencies: number[], outcomes: Outcomes) => {
      const start = process.hrtime.bigint();
      for (let attempt = 0; attempt < this.options.maxRetries; attempt++) {
        const allocations = await pick(outcomes);
        if (!allocations) break;
        const c = await this.claim(allocations, outcomes);
        if (c.done) {
          latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
          return true;
        }
        if (c.status !== 409) break;
      }
      this.level.failed++;
      return true;
    };
  }

  /** GET candidates (or the provider list) → pick one at random → PUT; ask again on 409. */
  private async schedulerLoopOp() {
    return this.claimOp(async (outcomes) => {
      if (this.pickPath === 'candidates') {
        const r = await this.client.request('GET', `/allocation_candidates?${CLAIM_QUERY}&limit=${this.options.loopLimit}`);
        outcomes.add(r, 'GET candidates');
        if (r.status) this.level.readMs.push(r.ms);
        const body = ok(r) ? json<{ allocation_requests: Array<{ allocations: Held['allocations'] }> }>(r) : undefined;
        return body && pickRandom(body.allocation_requests)?.allocations;
      }
      const r = await this.client.request('GET', `/resource_providers?${CLAIM_QUERY}`);
      outcomes.add(r, 'GET resource_providers');
      if (r.status) this.level.readMs.push(r.ms);
      const body = ok(r) ? json<{ resource_providers: Array<{ uuid: string }> }>(r) : undefined;
      const p = body && pickRandom(body.resource_providers);
      return p && { [p.uuid]: { resources: { ...CLAIM } } };
    });
  }

  /** The write path alone: PUT a claim on a provider the client picked itself (no read first). */
  private async claimWritePathOp() {
    return this.claimOp(async () => ({ [pickRandom(this.providers)!.uuid]: { resources: { ...CLAIM } } }));
  }

  /**
   * Nova's move: the instance's allocations go to a new migration consumer and the instance keeps
   * none, in one POST /allocations (read the instance's consumer generation first, as Nova does).
   */
  private async swapOp(quota: number) {
    let taken = 0;
    return async (latencies: number[], outcomes: Outcomes) => {
      const instance = taken++ < quota ? this.instances.shift() : undefined;
      if (!instance) return false;
      const start = process.hrtime.bigint();
      const migration = randomUUID();
      for (let attempt = 0; attempt < this.options.maxRetries; attempt++) {
        const g = await this.client.request('GET', `/allocations/${instance.uuid}`);
        outcomes.add(g, 'GET allocations');
        if (g.status) this.level.readMs.push(g.ms);
        const current = ok(g) ? json<{ allocations: Record<string, { resources: Record<string, number> }>; consumer_generation?: number }>(g) : undefined;
        if (!current) break;
        const allocations = Object.fromEntries(Object.entries(current.allocations).map(([rp, a]) => [rp, { resources: a.resources }]));
        const r = await this.client.request('POST', '/allocations', {
          [migration]: { allocations, ...this.consumer('MIGRATION') },
          [instance.uuid]: { allocations: {}, ...this.consumer('INSTANCE', current.consumer_generation ?? null) },
        });
        outcomes.add(r, 'POST allocations');
        this.level.writes++;
        if (r.status) this.level.writeMs.push(r.ms);
        if (ok(r)) {
          this.migrations.push({ uuid: migration, allocations });
          latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
          return true;
        }
        if (r.status !== 409) break;
        this.level.conflicts++;
        const code = errorCode(r) ?? 'none';
        this.level.conflictCodes[code] = (this.level.conflictCodes[code] ?? 0) + 1;
      }
      this.level.failed++;
      return true;
    };
  }

  /** DELETE /allocations/{consumer}: migration records first, then instances. */
  private async deleteOp(quota: number) {
    let taken = 0;
    return async (latencies: number[], outcomes: Outcomes) => {
      const held = taken++ < quota ? (this.migrations.shift() ?? this.instances.shift()) : undefined;
      if (!held) return false;
      const r = await this.client.request('DELETE', `/allocations/${held.uuid}`);
      outcomes.add(r, 'DELETE allocations');
      this.level.writes++;
      if (ok(r)) latencies.push(r.ms);
      else this.level.failed++;
      return true;
    };
  }

  /** Run a step at every concurrency level; `makeOp` gets how many levels are left, this one included. */
  private async perLevel(name: string, makeOp: (levelsLeft: number) => Promise<(latencies: number[], outcomes: Outcomes) => Promise<boolean>>) {
    const rows = [];
    for (const [i, c] of this.options.concurrency.entries()) {
      this.resetLevel();
      const op = await makeOp(this.options.concurrency.length - i);
      const row = await this.measure(name, c, op);
      const l = this.level;
      const extra: Record<string, unknown> = {
        failed: l.failed,
        write_requests: l.writes,
        write_latency: summarize(l.writeMs),
      };
      if (name !== 'deletes') {
        extra.conflicts_409 = l.conflicts;
        extra.conflict_rate = l.writes ? round(l.conflicts / l.writes, 4) : 0;
        extra.conflict_codes = l.conflictCodes;
      }
      if (l.readMs.length) extra.read_latency = summarize(l.readMs);
      if (name === 'scheduler_loop') extra.pick_path = this.pickPath;
      rows.push({ ...row, ...extra });
    }
    return rows;
  }

  /** One step at one concurrency level: latencies of successful operations, rate, outcomes, CPU cost. */
  private async measure(name: string, concurrency: number, op: (latencies: number[], outcomes: Outcomes) => Promise<boolean>): Promise<LevelResult> {
    const latencies: number[] = [];
    const outcomes = new Outcomes();
    const usage0 = await this.hooks.usage();
    const cpu0 = process.cpuUsage();
    const { elapsed_s } = await timedLoop(
      concurrency,
      { seconds: this.options.stepSeconds, maxOps: this.options.maxOps, minSamples: this.options.minSamples },
      () => op(latencies, outcomes),
    );
    const row: LevelResult = {
      concurrency,
      elapsed_s: round(elapsed_s),
      ops: latencies.length,
      ops_per_s: round(latencies.length / elapsed_s),
      latency: summarize(latencies),
      outcomes: outcomes.toJSON(),
    };
    const cost = await this.cost(usage0, cpu0, latencies.length, elapsed_s);
    if (cost) row.cost = cost;
    const l = row.latency;
    this.hooks.log(
      `  ${name} C=${concurrency}: ${row.ops} ok in ${row.elapsed_s} s = ${row.ops_per_s}/s, p50 ${l?.p50_ms ?? '-'} ms, p99 ${l?.p99_ms ?? '-'} ms` +
        (outcomes.fivexx || outcomes.noAnswer ? `, 5xx ${outcomes.fivexx}, no answer ${outcomes.noAnswer}` : ''),
    );
    return row;
  }

  private async cost(usage0: Usage | null, cpu0: NodeJS.CpuUsage, ops: number, elapsed: number): Promise<CostDelta | undefined> {
    const cpu = process.cpuUsage(cpu0);
    const usage1 = await this.hooks.usage();
    const clientS = (cpu.user + cpu.system) / 1e6;
    if (!usage0 || !usage1) return undefined;
    const server = usage1.server_cpu_s - usage0.server_cpu_s;
    const db = usage1.db_cpu_s - usage0.db_cpu_s;
    const per = (s: number) => (ops ? round((s * 1000) / ops, 3) : null);
    const cost: CostDelta = {
      server_cpu_ms_per_op: per(server),
      db_cpu_ms_per_op: per(db),
      client_cpu_ms_per_op: per(clientS),
      cores_busy: round((server + db + clientS) / elapsed, 2),
    };
    if (usage0.sql_statements !== undefined && usage1.sql_statements !== undefined && ops) {
      cost.sql_statements_per_op = round((usage1.sql_statements - usage0.sql_statements) / ops, 2);
    }
    return cost;
  }

  // ------------------------------------------------------------ contention

  /**
   * Fresh providers with only a few VCPU left; `concurrency` clients race claims of 1 or 2 VCPU on
   * them until the units are gone; then read back usages and allocations: nothing over capacity,
   * usage = the sum of what was acknowledged, and every acknowledged consumer is there.
   */
  private async contentionRound(concurrency: number) {
    const o = this.options;
    const total = 64;
    const free = o.contentionFreeUnits;
    const setup = new Outcomes();
    const racers: string[] = [];
    for (let k = 0; k < o.contentionProviders; k++) {
      const uuid = randomUUID();
      const c = await this.client.request('POST', '/resource_providers', { name: `${o.runId}-race-${concurrency}-${k}`, uuid });
      setup.add(c, 'create');
      const inv = await this.client.request('PUT', `/resource_providers/${uuid}/inventories`, {
        resource_provider_generation: 0,
        inventories: { VCPU: { total }, MEMORY_MB: { total: 4096 } },
      });
      setup.add(inv, 'inventories');
      if (ok(c) && ok(inv)) racers.push(uuid);
    }
    // One consumer takes all but the last `free` units of every racer.
    const filler = randomUUID();
    const fill = await this.client.request('PUT', `/allocations/${filler}`, {
      allocations: Object.fromEntries(racers.map((p) => [p, { resources: { VCPU: total - free } }])),
      ...this.consumer('INSTANCE'),
    });
    setup.add(fill, 'fill');
    if (racers.length !== o.contentionProviders || !ok(fill)) {
      return { concurrency, error: 'set-up failed', setup: setup.toJSON() };
    }

    const acknowledged = new Map<string, { provider: string; amount: number }>();
    const unknown = new Map<string, { provider: string; amount: number }>();
    const outcomes = new Outcomes();
    const latencies: number[] = [];
    let rejected = 0;
    let ackUnits = 0;
    const allUnits = free * racers.length;
    const maxAttempts = Math.max(4 * allUnits, 4 * concurrency);
    let attempts = 0;
    const start = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (ackUnits < allUnits && attempts < maxAttempts) {
          attempts++;
          const provider = pickRandom(racers)!;
          const amount = 1 + Math.floor(Math.random() * 2);
          const consumer = randomUUID();
          const r = await this.client.request('PUT', `/allocations/${consumer}`, {
            allocations: { [provider]: { resources: { VCPU: amount } } },
            ...this.consumer('INSTANCE'),
          });
          outcomes.add(r, 'PUT allocations (race)');
          if (r.status) latencies.push(r.ms);
          if (ok(r)) {
            acknowledged.set(consumer, { provider, amount });
            ackUnits += amount;
          } else if (r.status === 0 || r.status >= 500) unknown.set(consumer, { provider, amount });
          else rejected++;
        }
      }),
    );
    const elapsed = seconds(start);

    // Read back what the server holds.
    const perProvider = [];
    let overCapacity = 0;
    let usageMismatch = 0;
    let missingAcknowledged = 0;
    let unexpectedConsumers = 0;
    for (const p of racers) {
      const u = await this.client.request('GET', `/resource_providers/${p}/usages`);
      const a = await this.client.request('GET', `/resource_providers/${p}/allocations`);
      const usage = json<{ usages: Record<string, number> }>(u)?.usages?.VCPU;
      const allocs = json<{ allocations: Record<string, { resources: Record<string, number> }> }>(a)?.allocations ?? {};
      const held = Object.entries(allocs).filter(([c]) => c !== filler);
      const acked = [...acknowledged].filter(([, v]) => v.provider === p);
      const ackedSum = acked.reduce((s, [, v]) => s + v.amount, 0);
      const heldSum = held.reduce((s, [, v]) => s + (v.resources.VCPU ?? 0), 0);
      const missing = acked.filter(([c]) => !(c in allocs)).length;
      const unexpected = held.filter(([c]) => !acknowledged.has(c) && !unknown.has(c)).length;
      const over = usage === undefined || usage > total;
      const mismatch = usage !== total - free + ackedSum || heldSum !== ackedSum;
      if (over) overCapacity++;
      if (mismatch) usageMismatch++;
      missingAcknowledged += missing;
      unexpectedConsumers += unexpected;
      perProvider.push({
        capacity: total,
        usage: usage ?? null,
        acknowledged_units: ackedSum + total - free,
        units_left: usage === undefined ? null : total - usage,
      });
    }
    const result = {
      concurrency,
      providers: racers.length,
      free_units_at_start: allUnits,
      attempts,
      acknowledged: acknowledged.size,
      acknowledged_units: ackUnits,
      rejected_409_or_4xx: rejected,
      unknown_outcome: unknown.size,
      elapsed_s: round(elapsed),
      latency: summarize(latencies),
      outcomes: outcomes.toJSON(),
      verified: {
        providers_over_capacity: overCapacity,
        providers_usage_not_equal_acknowledged: usageMismatch,
        acknowledged_consumers_missing: missingAcknowledged,
        consumers_never_acknowledged: unexpectedConsumers,
        ok: overCapacity === 0 && usageMismatch === 0 && missingAcknowledged === 0 && unexpectedConsumers === 0 && outcomes.fivexx === 0,
      },
      per_provider: perProvider,
    };
    this.hooks.log(
      `  contention C=${concurrency}: ${acknowledged.size} claims acknowledged of ${attempts} attempts, ${ackUnits}/${allUnits} units, ` +
        `5xx ${outcomes.fivexx}, over capacity ${overCapacity}, usage≠acknowledged ${usageMismatch} → ${result.verified.ok ? 'OK' : 'FAILED'}`,
    );
    return result;
  }
}
