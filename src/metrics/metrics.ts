// The Prometheus metrics of one process (prom-client). One `Metrics` per process, made with its
// context (server/context.ts) and cleared by its close(): two servers in one process count apart.
//
// Hot paths only increment counters and observe histograms (a hash lookup and an addition); what
// needs the database — pool utilization, outbox backlog, allocations by state — is read when
// Prometheus scrapes (server/metrics.ts registers those gauges with `gauge`).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** How a Placement claim (PUT/POST /allocations) ended. */
export type ClaimOutcome = 'claimed' | 'conflict' | 'capacity_refused' | 'refused' | 'failed';

/** Latency buckets for API requests, seconds: 0.5 ms to 10 s (claims take ~1–30 ms, candidates up to seconds). */
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** SQLite group-commit batch sizes: 1 to MAX_BATCH (64, db/transaction.ts). */
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64];
/** Bare-metal POST → active: the allocation delay and the worker's retries make it 10 ms to minutes. */
const ALLOCATION_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** A full load of the candidates index: milliseconds at a few providers, about a minute at a million. */
const LOAD_BUCKETS = [0.01, 0.05, 0.25, 1, 5, 15, 30, 60, 120];

type RequestLabels = 'api' | 'route' | 'method' | 'status_class';

/**
 * prom-client's process and Node.js series (CPU, memory, file descriptors, event-loop lag, heap,
 * GC): one registry for the whole process, made on first use, shown by every server's scrape —
 * they describe the process, and each set made starts its own event-loop monitor.
 */
let processRegistry: Registry | null = null;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export class Metrics {
  readonly registry = new Registry();

  // --- HTTP, every API (http/pipeline.ts) ---
  private readonly httpRequests = this.counter<RequestLabels>(
    'allot_http_requests_total',
    'API requests answered, by API, route template, method and status class',
    ['api', 'route', 'method', 'status_class'],
  );
  private readonly httpDuration = this.histogram<'api' | 'route' | 'method'>(
    'allot_http_request_duration_seconds',
    'time from a request reaching its API to its answer being written',
    ['api', 'route', 'method'],
    REQUEST_BUCKETS,
  );
  /** label children by `api route method status`, so a request costs one Map lookup, not a label hash */
  private readonly requestChildren = new Map<string, { count: Counter.Internal; duration: Histogram.Internal<'api' | 'route' | 'method'> }>();

  // --- writes (db/transaction.ts) ---
  /** reason: conflict (a lost compare-and-set, deadlock, serialization failure, SQLITE_BUSY) or fault (connection lost, read-only server) */
  readonly transactionRetries = this.counter<'reason'>(
    'allot_transaction_retries_total',
    'transactions run again after losing a race or meeting a database fault',
    ['reason'],
  );
  readonly commitBatchSize = this.histogram<never>('allot_sqlite_commit_batch_size', 'writes sharing one SQLite commit (group commit)', [], BATCH_BUCKETS);

  // --- Placement ---
  readonly placementClaims = this.counter<'outcome'>(
    'allot_placement_claims_total',
    'allocation writes (PUT/POST /allocations): claimed, conflict (a generation), capacity_refused, refused (other 4xx), failed',
    ['outcome'],
  );
  readonly placementClaimRetries = this.counter<never>(
    'allot_placement_claim_retries_total',
    'times a claim was tried again inside the server (a lost race, or the one-statement claim stepping aside)',
    [],
  );
  readonly candidateSearches = this.counter<never>('allot_placement_candidate_searches_total', 'GET /allocation_candidates searches run', []);
  readonly candidateOptionsTried = this.counter<never>(
    'allot_placement_candidate_options_tried_total',
    'provider options the candidate searches tried (their work)',
    [],
  );
  readonly candidatesReturned = this.counter<never>('allot_placement_candidates_returned_total', 'allocation candidates the searches returned', []);
  /** kind: wait (searches waited for it: the first load, or after losing track of changes) or background (the periodic safety net, searches go on meanwhile) */
  readonly candidateIndexLoads = this.histogram<'kind'>(
    'allot_placement_candidate_index_load_seconds',
    'full loads of the candidates index (every provider read), by kind: wait or background',
    ['kind'],
    LOAD_BUCKETS,
  );

  // --- bare metal ---
  readonly baremetalAllocationsFinished = this.counter<'state'>(
    'allot_baremetal_allocations_finished_total',
    'bare-metal allocations the conductors finished, by the state they ended in (active, error)',
    ['state'],
  );
  readonly baremetalAllocationSeconds = this.histogram<never>(
    'allot_baremetal_allocation_seconds',
    'time from POST /v1/allocations to the allocation being active',
    [],
    ALLOCATION_BUCKETS,
  );
  readonly baremetalTakeovers = this.counter<'kind'>(
    'allot_baremetal_takeovers_total',
    'work of dead conductors taken over by this one (kind: allocation, node)',
    ['kind'],
  );

  // --- identifiers ---
  readonly outboxDeliveryFailures = this.counter<'inventory'>(
    'allot_ids_outbox_delivery_failures_total',
    'failed deliveries of outbox entries to an external inventory',
    ['inventory'],
  );

  /** Record one answered request. `route` is the route table's template, never the raw path. */
  observeRequest(api: string, route: string, method: string, status: number, seconds: number): void {
    const statusClass = `${Math.floor(status / 100)}xx`;
    const key = `${api} ${route} ${method} ${statusClass}`;
    let child = this.requestChildren.get(key);
    if (!child) {
      child = { count: this.httpRequests.labels(api, route, method, statusClass), duration: this.httpDuration.labels(api, route, method) };
      this.requestChildren.set(key, child);
    }
    child.count.inc();
    child.duration.observe(seconds);
  }

  /** A gauge read at scrape time; `collect` sets its values (a bounded, cheap query). */
  gauge<L extends string>(name: string, help: string, labelNames: L[], collect: (gauge: Gauge<L>) => Promise<void> | void): Gauge<L> {
    return new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        this.reset();
        await collect(this);
      },
    });
  }

  /** The Prometheus text exposition. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    const both = Registry.merge([this.registry, processMetrics()]);
    return { contentType: both.contentType, body: await both.metrics() };
  }

  close(): void {
    this.registry.clear();
    this.requestChildren.clear();
  }

  private counter<L extends string>(name: string, help: string, labelNames: L[]): Counter<L> {
    return new Counter<L>({ name, help, labelNames, registers: [this.registry] });
  }

  private histogram<L extends string>(name: string, help: string, labelNames: L[], buckets: number[]): Histogram<L> {
    return new Histogram<L>({ name, help, labelNames, buckets, registers: [this.registry] });
  }
}

/** Placement's claim outcome from the domain error a write ended with (null: it succeeded). */
export function claimOutcome(err: unknown): ClaimOutcome {
  if (err === null) return 'claimed';
  const code = (err as { code?: unknown } | undefined)?.code;
  if (code === 'capacity_exceeded' || code === 'inventory_constraint_violated') return 'capacity_refused';
  if (typeof code === 'string' && CONFLICT_CODES.has(code)) return 'conflict';
  if (typeof code === 'string' && (err as { name?: string }).name === 'DomainError') return 'refused';
  return 'failed';
}

const CONFLICT_CODES = new Set([
  'consumer_generation_conflict',
  'concurrent_update',
  'provider_changed_concurrently',
  'resource_classes_changed',
  'inventory_changed_concurrently',
]);
