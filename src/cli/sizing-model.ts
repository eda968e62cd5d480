// The sizing model behind `allot sizing` (docs/operations.md "Capacity planning"): measured cost
// per operation and per object, summed over what a deployment asks for. Every number the model
// uses is in COEFFICIENTS, each with the measurement it comes from (bench/results/2026-11-29-sizing/,
// made by its run.sh, unless the row says otherwise); nothing else in this file is a measurement.

export type SizingDialect = 'postgres' | 'sqlite';

interface Coefficient {
  /** the value on each database; null where it does not apply (no PostgreSQL with SQLite) */
  sqlite: number | null;
  postgres: number | null;
  unit: string;
  /** the measurement: file, and where in it */
  source: string;
}

const S = 'bench/results/2026-11-29-sizing/';
const P = `${S}placement.json targets.allot-*.sizes[]`;
/** the reservation rows, measured again after issue 31's change of 2026-11-30 (its run.sh: 8 clients, two rounds) */
const R = 'bench/results/2026-11-30-sizing/reservations-{1,2}.json results[*]';

/**
 * THE table. CPU per operation at 8 clients (identifier allocations 48), the larger of the
 * measured sizes or backends, rounded up; `allot_ms_*` on SQLite includes SQLite's own work (it
 * runs inside the process). Measured on the 2-core machine with nothing else running (load
 * average 0.7–3.9, the benches' own: bench/results/2026-11-29-sizing/load.txt).
 */
export const COEFFICIENTS = {
  allot_ms_per_claim: {
    sqlite: 1.1,
    postgres: 1.6,
    unit: 'CPU ms',
    source: `${S}placement.json targets.allot-*: scheduler_loop[0] less sizes[0].candidates.limit_50[0], cost.server_cpu_ms_per_op (the claim in Nova's loop; the PUT alone, claim_write_path, 0.67 / 0.77, a delete 0.47 / 0.56)`,
  },
  postgres_ms_per_claim: {
    sqlite: null,
    postgres: 1.8,
    unit: 'CPU ms',
    source: `${S}placement.json targets.allot-postgres: scheduler_loop[0] less sizes[0].candidates.limit_50[0], cost.db_cpu_ms_per_op (the PUT alone 1.41, a delete 0.89)`,
  },
  allot_ms_per_candidates: { sqlite: 0.37, postgres: 0.33, unit: 'CPU ms', source: `${P}[10 000 providers] candidates.limit_50[0].cost.server_cpu_ms_per_op` },
  postgres_ms_per_candidates: {
    sqlite: null,
    postgres: 0.01,
    unit: 'CPU ms',
    source: `${P}[10 000 providers] candidates.limit_50[0].cost.db_cpu_ms_per_op (the index is in the process)`,
  },
  allot_ms_per_registration: {
    sqlite: 1.5,
    postgres: 1.1,
    unit: 'CPU ms',
    source: `${P} setup.cost.server_cpu_ms_per_op (per request: POST provider, PUT inventories, PUT traits; the larger: 1 000 providers)`,
  },
  postgres_ms_per_registration: {
    sqlite: null,
    postgres: 0.9,
    unit: 'CPU ms',
    source: `${P}[10 000 providers] setup.cost.db_cpu_ms_per_op (the larger; 1 000: 0.85)`,
  },
  allot_ms_per_baremetal_allocation: {
    sqlite: 2.2,
    postgres: 1.1,
    unit: 'CPU ms',
    source: `${S}baremetal.json results[backend=placement].cpu.server_cpu_ms_per_op (database backend 1.5 / 0.95)`,
  },
  postgres_ms_per_baremetal_allocation: {
    sqlite: null,
    postgres: 1.9,
    unit: 'CPU ms',
    source: `${S}baremetal.json results[postgres, placement].cpu.db_cpu_ms_per_op (database backend 1.0)`,
  },
  allot_ms_per_identifier_allocation: {
    sqlite: 1.7,
    postgres: 1.5,
    unit: 'CPU ms',
    source: `${S}ids.json runs.*.allocation.server_cpu_ms_per_op (48 clients, 3 processes, one pool)`,
  },
  postgres_ms_per_identifier_allocation: { sqlite: null, postgres: 0.5, unit: 'CPU ms', source: `${S}ids.json runs.postgres.allocation.db_cpu_ms_per_op` },
  allot_ms_per_reservation: {
    sqlite: 7,
    postgres: 7,
    unit: 'CPU ms',
    source: `${R}: cpu.server_cpu_ms_per_op, the larger of both backends and rounds (node, capacity, two identifiers; PostgreSQL 6.6; SQLite 5.2–7.8 across the rounds, kept at ${S}reservations.json's 6.4 rounded up)`,
  },
  postgres_ms_per_reservation: {
    sqlite: null,
    postgres: 9,
    unit: 'CPU ms',
    source: `${R}[postgres]: cpu.db_cpu_ms_per_op, the larger of both backends and rounds (8.6)`,
  },
  allot_base_mb: {
    sqlite: 110,
    postgres: 110,
    unit: 'MB RSS',
    source: `${S}storage.json results[*].phases.providers.server_rss_mb_before (serving, nothing stored)`,
  },
  allot_bytes_per_provider: {
    sqlite: 600,
    postgres: 600,
    unit: 'bytes RSS',
    source:
      'bench/results/2026-11-29-index-1m/pg-after-1.json serverRssMb at 1 000 000 providers after the queries (700 MB; SQLite on the quiet machine 693 MB, quiet-sqlite-served.json), less allot_base_mb',
  },

  db_bytes_per_provider: {
    sqlite: 620,
    postgres: 1400,
    unit: 'bytes',
    source: `${S}storage.json phases.providers.database_bytes_per_unit (3 inventories, 1–3 traits)`,
  },
  db_bytes_per_consumer: {
    sqlite: 700,
    postgres: 1300,
    unit: 'bytes',
    source: `${S}storage.json phases.claims.database_bytes_per_unit (3 classes on one provider)`,
  },
  db_bytes_per_node: { sqlite: 420, postgres: 1300, unit: 'bytes', source: `${S}storage.json phases.nodes.database_bytes_per_unit` },
  db_bytes_per_identifier_value: { sqlite: 480, postgres: 710, unit: 'bytes', source: `${S}storage.json phases.identifier_values.database_bytes_per_unit` },
  postgres_mb_per_connection: {
    sqlite: null,
    postgres: 8,
    unit: 'MB private',
    source: `${S}storage.json results[postgres].phases.postgres_private_memory.max_mb (7, rounded up)`,
  },
  durable_commits_per_s: {
    sqlite: null,
    postgres: 2900,
    unit: 'commits/s',
    source:
      'bench/results/2026-11-23-vs-real.json baselines_before.postgres (pgbench -N -M prepared, 8 clients); docs/performance.md "This machine\'s durable commit rate"',
  },
  one_provider_reservations_per_s: {
    sqlite: 180,
    postgres: 75,
    unit: 'reservations/s',
    source:
      'bench/results/2026-11-29-probes/{base,new}-*.json results[*].reservationsPerSecond, the lowest of each database (every reservation on one provider, 16 clients, quiet machine)',
  },
  one_pool_allocations_per_s: {
    sqlite: 1000,
    postgres: 1300,
    unit: 'allocations/s',
    source: 'bench/results/2026-11-27-all-statistics/ids.json runs.*.allocation.per_second (48 clients over 3 processes, one pool, quiet machine)',
  },
} satisfies Record<string, Coefficient>;

type CoefficientName = keyof typeof COEFFICIENTS;

/** What a deployment holds and asks for. */
export interface SizingInput {
  db: SizingDialect;
  providers: number;
  nodes: number;
  values: number;
  consumers: number;
  claimsPerS: number;
  candidatesPerS: number;
  registrationsPerS: number;
  allocationsPerS: number;
  idAllocationsPerS: number;
  reservationsPerS: number;
  /** the share of a core, and of each limit, the model plans to use (0.5: twice the measured CPU) */
  utilization: number;
  /** PostgreSQL connections per allot process (allot's --pool-size) */
  poolSize: number;
  /** the primary's durable commits per second (pgbench -N on it); default: the coefficient */
  commitRate?: number;
  /** providers the reservations' capacity is spread over (1: all on one, the worst case) */
  sharedProviders: number;
  /** pools the identifier allocations and reservations are spread over */
  pools: number;
}

export interface SizingLimit {
  what: string;
  /** asked for, per second, on the one thing the limit is about */
  load: number;
  /** what one of it carries, per second (measured) */
  capacity: number;
  /** load ÷ capacity */
  share: number;
  ok: boolean;
}

export interface SizingResult {
  db: SizingDialect;
  allot_cores: number;
  allot_processes: number;
  postgres_cores: number | null;
  memory_per_allot_process_mb: number;
  database_size_mb: number;
  shared_buffers_mb: number | null;
  postgres_memory_mb: number | null;
  max_connections: number | null;
  limits: SizingLimit[];
  /** true while every limit holds: one PostgreSQL primary (or one SQLite process) is enough */
  one_primary_enough: boolean;
}

const MB = 1024 * 1024;
/** a process's JavaScript runs on one thread: one core each */
const CORES_PER_PROCESS = 1;
/** beyond allot's connections: superuser_reserved_connections, replication, monitoring, psql */
const SPARE_CONNECTIONS = 10;

function coefficient(name: CoefficientName, db: SizingDialect): number {
  const v = COEFFICIENTS[name][db];
  return v ?? 0;
}

const up = (n: number, step = 1) => Math.ceil(n / step - 1e-9) * step;
const round2 = (n: number) => Math.round(n * 100) / 100;

/** The deployment `input` asks for, from COEFFICIENTS. */
export function sizeDeployment(input: SizingInput): SizingResult {
  const { db } = input;
  const c = (name: CoefficientName) => coefficient(name, db);
  const rates: Array<[number, CoefficientName, CoefficientName]> = [
    [input.claimsPerS, 'allot_ms_per_claim', 'postgres_ms_per_claim'],
    [input.candidatesPerS, 'allot_ms_per_candidates', 'postgres_ms_per_candidates'],
    [input.registrationsPerS, 'allot_ms_per_registration', 'postgres_ms_per_registration'],
    [input.allocationsPerS, 'allot_ms_per_baremetal_allocation', 'postgres_ms_per_baremetal_allocation'],
    [input.idAllocationsPerS, 'allot_ms_per_identifier_allocation', 'postgres_ms_per_identifier_allocation'],
    [input.reservationsPerS, 'allot_ms_per_reservation', 'postgres_ms_per_reservation'],
  ];
  const allotCpu = rates.reduce((sum, [rate, allot]) => sum + (rate * c(allot)) / 1000, 0) / input.utilization;
  const postgresCpu = rates.reduce((sum, [rate, , pg]) => sum + (rate * c(pg)) / 1000, 0) / input.utilization;
  // PostgreSQL: two at least, so that one can stop; SQLite: one process owns the file
  const processes = db === 'sqlite' ? 1 : Math.max(2, up(allotCpu / CORES_PER_PROCESS));
  // every process holds the whole provider index
  const perProcessMb = up(c('allot_base_mb') + (input.providers * c('allot_bytes_per_provider')) / MB);
  const databaseMb = up(
    (input.providers * c('db_bytes_per_provider') +
      input.consumers * c('db_bytes_per_consumer') +
      input.nodes * c('db_bytes_per_node') +
      input.values * c('db_bytes_per_identifier_value')) /
      MB,
  );
  const connections = db === 'postgres' ? processes * input.poolSize + SPARE_CONNECTIONS : null;
  // the whole database is the working set: the index loads every provider, pools probe anywhere
  const sharedBuffers = db === 'postgres' ? Math.max(128, up(databaseMb * 1.25, 128)) : null;
  const commits = input.claimsPerS + input.registrationsPerS + input.allocationsPerS + input.idAllocationsPerS + input.reservationsPerS;
  const commitRate = input.commitRate ?? c('durable_commits_per_s');
  const limit = (what: string, load: number, capacity: number): SizingLimit => ({
    what,
    load: round2(load),
    capacity,
    share: round2(load / capacity),
    ok: load / capacity <= input.utilization,
  });
  const limits = [
    // SQLite commits in groups (one fsync for all the writes waiting): its process's CPU is its limit
    ...(db === 'postgres' ? [limit('commits/s on the primary', commits, commitRate)] : []),
    limit('reservations/s on one provider', input.reservationsPerS / input.sharedProviders, c('one_provider_reservations_per_s')),
    limit('identifier allocations/s from one pool', (input.idAllocationsPerS + input.reservationsPerS) / input.pools, c('one_pool_allocations_per_s')),
  ];
  if (db === 'sqlite') limits.push(limit('CPU of the one SQLite process, cores', allotCpu * input.utilization, CORES_PER_PROCESS));
  return {
    db,
    allot_cores: round2(allotCpu),
    allot_processes: processes,
    postgres_cores: db === 'postgres' ? round2(postgresCpu) : null,
    memory_per_allot_process_mb: perProcessMb,
    database_size_mb: databaseMb,
    shared_buffers_mb: sharedBuffers,
    postgres_memory_mb: db === 'postgres' ? sharedBuffers! + connections! * c('postgres_mb_per_connection') : null,
    max_connections: connections,
    limits,
    one_primary_enough: limits.every((l) => l.ok),
  };
}
