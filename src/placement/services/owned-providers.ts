// Resource providers another service of this process owns (the bare-metal service mirrors each
// node as one, with the placement backend: context.ts ProviderOwner), and the claims it writes on
// them. The one surface that service uses, each call inside the owner's transaction, so a node and
// its provider, or a node's allocation and its claim, change together — never Placement's stores
// from outside.
import type { Db, Tx } from '../../db/database.js';
import type { EmbeddedWrite } from '../../db/statement.js';
import { isAssertRefusal } from '../../db/sql-helpers.js';
import { type PlacementErrorCode, isPlacementError } from '../core/domain-errors.js';
import type { PlacementContext } from '../context.js';
import { readConsumer, writeAllocations } from '../store/allocations.js';
import { changeInventories, currentInventories } from '../store/inventories.js';
import { claimInStatement, oneStatementWrite } from '../store/one-statement-writes.js';
import { deleteProvider, findAndLockProvider, insertProvider } from '../store/providers.js';
import { providerTraits, replaceProviderTraits } from '../store/traits.js';

/**
 * Who a claim is for: a new consumer, its project and user, and its holder — the owner's thing
 * that holds it (a bare-metal allocation), written as the consumer's `held_by`: the consumer is
 * then refused to Placement's clients under its row lock, by the check every write takes
 * (store/allocations.ts `consumer_held`), and changes only through its holder.
 */
export interface ClaimConsumer {
  uuid: string;
  projectId: string;
  userId: string;
  holder: string;
}

/**
 * Make the provider `uuid` (named the same) exist with exactly one inventory of `resourceClass`
 * (total 1: a whole machine; none when null) and exactly `traits`. Writes only what differs.
 */
export async function mirrorProvider(tx: Tx, uuid: string, resourceClass: string | null, traits: readonly string[]): Promise<void> {
  let provider = await findAndLockProvider(tx, uuid);
  if (!provider) provider = await insertProvider(tx, { uuid, name: uuid, parentUuid: null });
  const current = await currentInventories(tx, provider.id);
  if (current.size !== (resourceClass ? 1 : 0) || (resourceClass !== null && !current.has(resourceClass))) {
    const inventories = new Map(resourceClass ? [[resourceClass, { total: 1, reserved: 0, min_unit: 1, max_unit: 1, step_size: 1, allocation_ratio: 1 }]] : []);
    await changeInventories(tx, provider, { kind: 'replace-all', inventories });
    provider = (await findAndLockProvider(tx, uuid))!;
  }
  if ((await providerTraits(tx, provider.id)).join(',') !== [...traits].sort().join(',')) await replaceProviderTraits(tx, provider, [...traits]);
}

/** Remove the provider `uuid`, if it exists. */
export async function removeProvider(tx: Tx, uuid: string): Promise<void> {
  if (await findAndLockProvider(tx, uuid)) await deleteProvider(tx, uuid);
}

/** What a claim refuses when the provider cannot take it now. */
const NOT_CLAIMABLE: readonly PlacementErrorCode[] = [
  'capacity_exceeded',
  'inventory_invalid',
  'inventory_constraint_violated',
  'allocation_provider_missing',
  'consumer_generation_conflict',
  // a consumer of that uuid that Placement's clients made
  'consumer_held',
  'unknown_resource_class',
];

/**
 * Claim `resources` of the provider for a new consumer. False when the provider has no room, is
 * gone, or a consumer of that uuid exists: then the caller's transaction must roll back (on
 * PostgreSQL the refused statement has aborted it), as the write's own refusal would have it.
 */
export async function claimOn(tx: Tx, ctx: PlacementContext, consumer: ClaimConsumer, provider: string, resources: Map<string, number>): Promise<boolean> {
  const writes = [
    {
      consumerUuid: consumer.uuid,
      allocations: new Map([[provider, resources]]),
      projectId: consumer.projectId,
      userId: consumer.userId,
      holder: consumer.holder,
      generation: null,
    },
  ];
  // PostgreSQL: Placement's one-statement claim, one round trip instead of six
  const oneStatement = await oneStatementWrite(tx, ctx.names, writes);
  if (oneStatement) {
    try {
      await oneStatement(tx);
      return true;
    } catch (err) {
      if (isAssertRefusal(err)) return false;
      throw err;
    }
  }
  try {
    await writeAllocations(tx, ctx.names, writes);
    return true;
  } catch (err) {
    if (isPlacementError(err, NOT_CLAIMABLE)) return false;
    throw err;
  }
}

/** The claim of `resources` on a provider another statement chooses, as parts of that statement (null: claim with `claimOn`). */
export function claimInAnotherStatement(db: Db, ctx: PlacementContext, consumer: ClaimConsumer, resources: Map<string, number>): Promise<EmbeddedWrite | null> {
  return claimInStatement(db, ctx.names, consumer, resources);
}

/**
 * Release every allocation of the consumer (nothing when it has none), as its holder. A consumer
 * that this holder does not hold is not its to release, with one exception: a claim that an older
 * allot made unmarked (claims are marked from migration 016 on; in a rolling upgrade the older
 * processes still make such claims) is released as it was made.
 */
export async function releaseConsumer(tx: Tx, ctx: PlacementContext, consumerUuid: string, who: Omit<ClaimConsumer, 'uuid'>): Promise<void> {
  const release = (holder: string | undefined) =>
    writeAllocations(tx, ctx.names, [{ consumerUuid, allocations: new Map(), projectId: who.projectId, userId: who.userId, holder }]);
  try {
    await release(who.holder);
  } catch (err) {
    // refused before it wrote anything (under the consumer's row lock): the transaction goes on
    if (!isPlacementError(err, ['consumer_held'])) throw err;
    if (await isUnmarkedClaim(tx, ctx, consumerUuid)) await release(undefined);
  }
}

/**
 * An unheld consumer whose every allocation is on a provider an owner owns: no Placement client can
 * write there, so it is an owner's claim made before claims were marked.
 */
async function isUnmarkedClaim(tx: Tx, ctx: PlacementContext, consumerUuid: string): Promise<boolean> {
  const consumer = await readConsumer(tx, consumerUuid);
  if (consumer?.held_by !== null) return false;
  const providers = [...consumer.allocations.keys()];
  const owned = new Set((await Promise.all(ctx.owners.map((o) => o.owned(tx, providers)))).flat());
  return providers.length > 0 && providers.every((p) => owned.has(p));
}

/** Who holds the consumer: its holder, null for Placement's clients, undefined when there is no such consumer. */
export async function consumerHolder(db: Db, consumerUuid: string): Promise<string | null | undefined> {
  return (await readConsumer(db, consumerUuid))?.held_by;
}
