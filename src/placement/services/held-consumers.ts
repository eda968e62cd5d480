// Consumers that another service of this process holds (a service instance of the identifier
// API, docs/ids.md "Reservations across the engines"): the capacity it reserves is an ordinary
// Placement consumer with allocations, marked `held_by` the holder. Placement API clients see it
// and its usage like any other, and may not change it (writeAllocations refuses them, 409); a
// reshape moves it and tells the holder (services/reshaper.ts). Everything here runs in the
// holder's transaction, so its capacity is reserved or released with the rest of what it holds.
import type { Db, Tx } from '../../db/database.js';
import type { ClosingWrites } from '../../db/statement.js';
import { fastStep, savepoint } from '../../db/transaction.js';
import type { GroupRequest } from '../candidates/model.js';
import { searchCandidates } from '../candidates/search.js';
import { type PlacementErrorCode, isPlacementError } from '../core/domain-errors.js';
import type { PlacementContext } from '../context.js';
import { type ConsumerAllocations, deleteConsumer, readConsumer, writeAllocations } from '../store/allocations.js';
import { oneStatementWrite, writeInStatement } from '../store/one-statement-writes.js';

/** provider uuid → resource class → amount */
export type ProviderAmounts = Map<string, Map<string, number>>;

/** What a holder asks of Placement: one request group, as `GET /allocation_candidates` takes it. */
export interface CapacityRequest {
  /** class → amount */
  resources: ReadonlyMap<string, number>;
  /** traits the providers used must have (each list: at least one of them) */
  required: ReadonlyArray<readonly string[]>;
  /** traits none of them may have */
  forbidden: readonly string[];
  /** each list: member of at least one of these aggregates */
  memberOf: ReadonlyArray<readonly string[]>;
  /** aggregates none of them may be in */
  forbiddenAggregates: readonly string[];
  /** only in the tree of this provider (`in_tree`); null: anywhere */
  inTree: string | null;
}

/** The consumer a holder writes, and who it is for. */
export interface HeldConsumer {
  uuid: string;
  projectId: string;
  userId: string;
  /** `service-instance/<id>` */
  holder: string;
}

/**
 * Why a reservation found no room. Thrown, never returned: after a refused last try the holder's
 * transaction holds a half-written claim, and only failing it as a whole gives that back.
 */
export class NoCapacity extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** Candidates tried in one reservation before giving up: each refused one was full when written. */
const MAX_TRIES = 10;

/**
 * Before the holder's transaction: the candidates index, with every change committed so far
 * applied (bringing it up to date reads outside any transaction — on SQLite, inside one it would
 * wait for that very transaction). What it holds is a suggestion: every claim re-checks.
 */
export const capacityIndex = (ctx: PlacementContext) => ctx.index.current();
export type CapacityIndex = Awaited<ReturnType<typeof capacityIndex>>;

/**
 * Reserve `request` for the held consumer, on top of what it keeps: the providers are chosen as
 * `GET /allocation_candidates` would choose them (the process's candidate strategy), from the
 * index; each candidate is written (consumer allocations = keep + candidate, capacity checked
 * under the providers' locks, as every claim) in a savepoint, and one the index thought had room
 * but the database found full is taken back and the next one tried. The last try has no
 * savepoint: its refusal fails the holder's transaction anyway, and the savepoint's release would
 * be one more round trip while the providers' rows are locked — the rows every concurrent
 * reservation of them waits for. `fast` (the holder's transaction runs withFastSteps), for a new
 * consumer on PostgreSQL: the first candidate is claimed by the one statement a Placement claim
 * makes (store/one-statement-writes.ts), whose refusal runs the holder's transaction again
 * without it. The chosen allocations; NoCapacity when there are none.
 */
export async function reserveCapacity(
  tx: Tx,
  ctx: PlacementContext,
  model: CapacityIndex,
  consumer: HeldConsumer,
  keep: ProviderAmounts,
  request: CapacityRequest,
  fast: boolean,
): Promise<ProviderAmounts> {
  const { candidates, wanted } = await candidatesFor(tx, ctx, model, request);
  if (fast && keep.size === 0) {
    const chosen = candidates[0]!;
    const write = await oneStatementWrite(tx, ctx.names, [newClaim(consumer, chosen)]);
    if (write) {
      await fastStep(() => write(tx));
      return chosen;
    }
  }
  for (const [i, chosen] of candidates.entries()) {
    const write = () => setHeldAllocations(tx, ctx, consumer, sum(keep, chosen));
    try {
      await (i === candidates.length - 1 ? write() : savepoint(tx, write));
      return chosen;
    } catch (err) {
      // full by now, or gone: the next candidate
      if (!isPlacementError(err, REFUSED)) throw err;
    }
  }
  throw new NoCapacity(`no resource provider has room for ${wanted} now`);
}

/**
 * PostgreSQL, a new held consumer: choose as reserveCapacity does, and hold the first candidate's
 * claim back for the statement that closes the holder's transaction (`closing`: Placement's one
 * statement, as parts of it), which refuses — and the holder's transaction runs again the general
 * way — when the database has no room after all. No lock is taken now. The chosen allocations;
 * null when the claim cannot be one statement (reserveCapacity then claims it in place);
 * NoCapacity when the index has no candidate.
 */
export async function holdBackCapacity(
  tx: Tx,
  ctx: PlacementContext,
  model: CapacityIndex,
  consumer: HeldConsumer,
  request: CapacityRequest,
  closing: ClosingWrites,
): Promise<ProviderAmounts | null> {
  const { candidates } = await candidatesFor(tx, ctx, model, request);
  const chosen = candidates[0]!;
  const part = await writeInStatement(tx, ctx.names, [newClaim(consumer, chosen)]);
  if (!part) return null;
  closing.embed(part);
  return chosen;
}

/** The candidates for `request`, as provider uuid → class → amount, best first; NoCapacity when there are none. */
async function candidatesFor(tx: Tx, ctx: PlacementContext, model: CapacityIndex, request: CapacityRequest) {
  const { ids: classes } = await ctx.names.forTx(tx, 'resource_classes', [...request.resources.keys()]);
  const missingClass = [...request.resources.keys()].find((c) => !classes.has(c));
  if (missingClass !== undefined) throw new NoCapacity(`no resource class ${missingClass}`);
  const traitNames = [...new Set([...request.required.flat(), ...request.forbidden])];
  const { ids: traits } = await ctx.names.forTx(tx, 'traits', traitNames);
  const missingTraits = traitNames.filter((t) => !traits.has(t));
  if (missingTraits.length) throw new NoCapacity(`no trait ${missingTraits.sort().join(', ')}`);

  let inTreeRoot: number | null = null;
  if (request.inTree !== null) {
    const id = model.idOf(request.inTree);
    if (id === undefined) throw new NoCapacity(`no resource provider ${request.inTree} to search the tree of`);
    inTreeRoot = model.providers.get(id)!.rootId;
  }
  const group: GroupRequest = {
    suffix: '',
    resources: request.resources,
    requiredTraits: request.required,
    forbiddenTraits: new Set(request.forbidden),
    memberOf: request.memberOf,
    forbiddenAggregates: new Set(request.forbiddenAggregates),
    inTreeRoot,
  };
  const { candidates } = searchCandidates(
    model,
    { groups: [group], isolate: false, rootRequired: new Set(), rootForbidden: new Set(), sameSubtrees: [], nestedAware: true },
    { maxCandidates: MAX_TRIES, strategy: ctx.config.candidateStrategy },
  );
  const wanted = describe(request);
  if (!candidates.length) throw new NoCapacity(`no resource provider has room for ${wanted}`);
  const chosen = candidates.map((c): ProviderAmounts => new Map([...c.allocations].map(([id, amounts]) => [model.providers.get(id)!.uuid, new Map(amounts)])));
  return { candidates: chosen, wanted };
}

/** The claim of a new held consumer, as Placement's writes take it. */
const newClaim = (consumer: HeldConsumer, allocations: ProviderAmounts): ConsumerAllocations => ({
  consumerUuid: consumer.uuid,
  projectId: consumer.projectId,
  userId: consumer.userId,
  generation: null,
  allocations,
  holder: consumer.holder,
});

/** What a claim refuses when a candidate cannot take it after all (the index was behind). */
const REFUSED: readonly PlacementErrorCode[] = ['capacity_exceeded', 'inventory_invalid', 'inventory_constraint_violated', 'allocation_provider_missing'];

/**
 * Make the held consumer's allocations exactly `allocations` (none: the consumer goes), as its
 * holder: refused (409) when another holder holds it, checked for capacity like any claim.
 */
export async function setHeldAllocations(tx: Tx, ctx: PlacementContext, consumer: HeldConsumer, allocations: ProviderAmounts): Promise<void> {
  const empty = [...allocations.values()].every((a) => a.size === 0);
  if (empty) {
    if (await readConsumer(tx, consumer.uuid)) await deleteConsumer(tx, consumer.uuid, consumer.holder);
    return;
  }
  await writeAllocations(tx, ctx.names, [
    { consumerUuid: consumer.uuid, projectId: consumer.projectId, userId: consumer.userId, allocations, holder: consumer.holder },
  ]);
}

/** The consumer as its holder sees it: who holds it, whose it is, its allocations now (empty: none). */
export async function heldAllocations(
  db: Db,
  consumerUuid: string,
): Promise<{ heldBy: string | null; projectId: string; userId: string; allocations: ProviderAmounts }> {
  const consumer = await readConsumer(db, consumerUuid);
  if (!consumer) return { heldBy: null, projectId: '', userId: '', allocations: new Map() };
  const allocations: ProviderAmounts = new Map();
  for (const [provider, { resources }] of consumer.allocations) allocations.set(provider, new Map(Object.entries(resources)));
  return { heldBy: consumer.held_by, projectId: consumer.project_id, userId: consumer.user_id, allocations };
}

/** a + b, provider by provider and class by class. */
export function sum(a: ProviderAmounts, b: ProviderAmounts): ProviderAmounts {
  const out: ProviderAmounts = new Map([...a].map(([p, r]) => [p, new Map(r)]));
  for (const [provider, resources] of b) {
    const into = out.get(provider) ?? new Map<string, number>();
    for (const [rc, amount] of resources) into.set(rc, (into.get(rc) ?? 0) + amount);
    out.set(provider, into);
  }
  return out;
}

const describe = (r: CapacityRequest) =>
  `${[...r.resources].map(([rc, n]) => `${rc}=${n}`).join(', ')}${r.inTree === null ? '' : ` in the tree of ${r.inTree}`}`;
