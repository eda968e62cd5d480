// Property tests of the pure allocation-candidates search (src/placement/candidates/search.ts)
// against a brute-force model on small random provider trees: every combination of providers for
// every anchor, kept when it keeps Placement's rules as written below — inventories and usage
// (capacity, min/max unit, step), traits and aggregates, required/forbidden traits (any-of lists
// included), member_of (the provider or its root), in_tree, sharing providers, granular groups,
// group_policy=isolate, same_subtree, root_required, one provider per tree before 1.29. The
// search prunes, takes turns between anchors, orders by strategy and stops at a limit; none of
// that may change WHICH candidates exist: with room for all, it returns exactly the brute force's
// set under every strategy; with a limit, that many of them, each once; with a work budget, some
// of them, and all unless it says it stopped short.
//
// The brute force shares no code with the search (it does its own capacity and trait arithmetic).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  type CandidateRequest,
  type GroupRequest,
  INVENTORY_WIDTH,
  type ModelProvider,
  NO_PROVIDER,
  type ProviderModel,
} from '../../src/placement/candidates/model.js';
import { type Candidate, searchCandidates } from '../../src/placement/candidates/search.js';
import { CANDIDATE_STRATEGIES } from '../../src/core/candidate-strategies.js';
import type { InventoryLimits } from '../../src/core/capacity.js';

const CLASSES = ['VCPU', 'MEMORY_MB', 'DISK_GB'];
const TRAITS = ['HW_A', 'HW_B', 'HW_C'];
const SHARING = 'MISC_SHARES_VIA_AGGREGATE';
const AGGREGATES = ['agg-1', 'agg-2', 'agg-3'];

// ---- the brute force -------------------------------------------------------------------------

/** One inventory as the brute force sees it (the model holds the same numbers packed: model.ts). */
interface Inventory extends InventoryLimits {
  used: number;
}
/** Each generated provider's inventories by class, kept beside the model so the brute force does not read the search's packing. */
const inventoriesOf = new WeakMap<ModelProvider, ReadonlyMap<string, Inventory>>();

const capacityOf = (inv: Inventory) => Math.floor((inv.total - inv.reserved) * inv.allocation_ratio);
/** One amount on its own: its units, and room for it. */
const takesAlone = (inv: Inventory | undefined, amount: number) =>
  inv !== undefined && amount >= inv.min_unit && amount <= inv.max_unit && amount % inv.step_size === 0 && inv.used + amount <= capacityOf(inv);
const hasAll = (have: ReadonlySet<string>, anyOfLists: ReadonlyArray<readonly string[]>) => anyOfLists.every((anyOf) => anyOf.some((x) => have.has(x)));
const hasAny = (have: ReadonlySet<string>, names: ReadonlySet<string>) => [...names].some((x) => have.has(x));

/** A decision of a candidate: one provider for one unsuffixed class, or for one suffixed group. */
interface Slot {
  group: GroupRequest;
  /** what the provider gives for this slot */
  resources: Array<[string, number]>;
}

/** The canonical text of a candidate: the providers' amounts by class, and each group's providers. */
function keyOf(allocations: Map<number, Map<string, number>>, mappings: Map<string, Set<number>>): string {
  const amounts = [...allocations].sort(([a], [b]) => a - b).map(([id, byClass]) => `${id}:${[...byClass].sort(([a], [b]) => a.localeCompare(b)).join(',')}`);
  const groups = [...mappings].sort(([a], [b]) => a.localeCompare(b)).map(([suffix, ids]) => `${suffix}=${[...ids].sort((a, b) => a - b)}`);
  return `${amounts.join(' ')} | ${groups.join(' ')}`;
}

const keyOfCandidate = (c: Candidate) => keyOf(c.allocations, new Map([...c.mappings].map(([suffix, ids]) => [suffix, new Set(ids)])));

/** Every candidate the rules allow, as canonical texts. */
function bruteForce(model: ProviderModel, request: CandidateRequest): Set<string> {
  const providers = [...model.providers.values()];
  const byId = (id: number) => model.providers.get(id)!;
  const unsuffixed = request.groups.find((g) => g.suffix === '');
  const slots: Slot[] = [
    ...[...(unsuffixed?.resources ?? [])].map(([cls, amount]): Slot => ({ group: unsuffixed!, resources: [[cls, amount]] })),
    ...request.groups.filter((g) => g.suffix !== '').map((g): Slot => ({ group: g, resources: [...g.resources] })),
  ];
  const ancestorsOf = (p: ModelProvider) => {
    const line: number[] = [];
    for (let cur: ModelProvider | undefined = p; cur; cur = cur.parentId === null ? undefined : byId(cur.parentId)) line.push(cur.id);
    return line;
  };
  const found = new Set<string>();
  for (const root of providers.filter((p) => p.parentId === null)) {
    if (
      !hasAll(
        root.traits,
        [...request.rootRequired].map((t) => [t]),
      ) ||
      hasAny(root.traits, request.rootForbidden)
    )
      continue;
    const ownTree = (p: ModelProvider) => p.rootId === root.id;
    // a sharing provider of another tree completes this one when they share an aggregate
    const sharesHere = (p: ModelProvider) =>
      !ownTree(p) && p.traits.has(SHARING) && [...p.aggregates].some((a) => providers.some((q) => ownTree(q) && q.aggregates.has(a)));
    const usable = providers.filter((p) => ownTree(p) || sharesHere(p));

    // What one slot allows of one provider on its own.
    const allows = (slot: Slot, p: ModelProvider): boolean => {
      const g = slot.group;
      if (!slot.resources.every(([cls, amount]) => takesAlone(inventoriesOf.get(p)!.get(cls), amount))) return false;
      if (g.suffix === '') {
        // the unsuffixed group: in_tree keeps it to that tree; its member_of is met by the provider or by
        // the root (all lists by one of them), a sharing provider being in them itself; no forbidden trait
        // or aggregate on the provider, nor a forbidden aggregate on the root
        if (g.inTreeRoot !== null && !(ownTree(p) && root.id === g.inTreeRoot)) return false;
        if (!ownTree(p) && !hasAll(p.aggregates, g.memberOf)) return false;
        if (g.memberOf.length > 0 && !hasAll(p.aggregates, g.memberOf) && !hasAll(root.aggregates, g.memberOf)) return false;
        if (hasAny(p.aggregates, g.forbiddenAggregates) || hasAny(root.aggregates, g.forbiddenAggregates)) return false;
        return !hasAny(p.traits, g.forbiddenTraits);
      }
      // a suffixed group: one provider with all of it
      if (g.inTreeRoot !== null && p.rootId !== g.inTreeRoot) return false;
      return (
        hasAll(p.traits, g.requiredTraits) &&
        !hasAny(p.traits, g.forbiddenTraits) &&
        hasAll(p.aggregates, g.memberOf) &&
        !hasAny(p.aggregates, g.forbiddenAggregates)
      );
    };
    const choices = slots.map((slot) => usable.filter((p) => allows(slot, p)));

    // What a whole combination must keep.
    const holds = (chosen: ModelProvider[]): boolean => {
      const onUnsuffixed = chosen.filter((_, i) => slots[i]!.group.suffix === '');
      if (unsuffixed && onUnsuffixed.length > 0) {
        const traits = new Set(onUnsuffixed.flatMap((p) => [...p.traits]));
        if (!hasAll(traits, unsuffixed.requiredTraits)) return false;
      }
      for (let i = 0; i < chosen.length; i++) {
        for (let j = i + 1; j < chosen.length; j++) {
          const [a, b] = [slots[i]!, slots[j]!];
          if (request.isolate && a.group.suffix !== '' && b.group.suffix !== '' && chosen[i] === chosen[j]) return false;
          const bothTake = a.resources.length > 0 && b.resources.length > 0;
          if (!request.nestedAware && bothTake && chosen[i] !== chosen[j] && chosen[i]!.rootId === chosen[j]!.rootId) return false;
        }
      }
      const totals = new Map<ModelProvider, Map<string, number>>();
      chosen.forEach((p, i) => {
        const m = totals.get(p) ?? new Map<string, number>();
        for (const [cls, amount] of slots[i]!.resources) m.set(cls, (m.get(cls) ?? 0) + amount);
        totals.set(p, m);
      });
      for (const [p, byClass] of totals) {
        for (const [cls, amount] of byClass) {
          const inv = inventoriesOf.get(p)!.get(cls)!;
          if (amount > inv.max_unit || inv.used + amount > capacityOf(inv)) return false;
        }
      }
      for (const suffixes of request.sameSubtrees) {
        const members = [...new Set(chosen.filter((_, i) => suffixes.includes(slots[i]!.group.suffix)))];
        if (!members.some((top) => members.every((p) => ancestorsOf(p).includes(top.id)))) return false;
      }
      return true;
    };

    const chosen: ModelProvider[] = [];
    const combine = (level: number) => {
      if (level === slots.length) {
        if (!holds(chosen)) return;
        const allocations = new Map<number, Map<string, number>>();
        const mappings = new Map<string, Set<number>>();
        chosen.forEach((p, i) => {
          const slot = slots[i]!;
          if (slot.resources.length > 0) {
            const m = allocations.get(p.id) ?? new Map<string, number>();
            for (const [cls, amount] of slot.resources) m.set(cls, (m.get(cls) ?? 0) + amount);
            allocations.set(p.id, m);
          }
          mappings.set(slot.group.suffix, (mappings.get(slot.group.suffix) ?? new Set()).add(p.id));
        });
        found.add(keyOf(allocations, mappings));
        return;
      }
      for (const p of choices[level]!) {
        chosen[level] = p;
        combine(level + 1);
      }
    };
    if (slots.length > 0) combine(0);
  }
  return found;
}

// ---- random trees and requests ---------------------------------------------------------------

/** Mostly `usual`, sometimes something from `rarer`: a rule that always applies leaves few candidates to compare. */
const mostly = <T>(usual: T, rarer: fc.Arbitrary<T>) => fc.oneof({ weight: 6, arbitrary: fc.constant(usual) }, { weight: 1, arbitrary: rarer });

const inventory = fc
  .record({
    total: fc.integer({ min: 1, max: 8 }),
    reserved: mostly(0, fc.integer({ min: 1, max: 2 })),
    min_unit: mostly(1, fc.constant(2)),
    max_unit: mostly(8, fc.integer({ min: 1, max: 8 })),
    step_size: mostly(1, fc.constant(2)),
    allocation_ratio: fc.constantFrom(1, 1.5),
    used: mostly(0, fc.integer({ min: 1, max: 8 })),
  })
  .map((inv): Inventory => ({ ...inv, used: Math.min(inv.used, inv.total) }));

const providerShape = fc.record({
  /** which earlier provider of the tree is the parent (the first is the root) */
  parent: fc.nat(),
  inventories: fc.dictionary(fc.constantFrom(...CLASSES), inventory, { minKeys: 1, maxKeys: 3 }),
  traits: fc.subarray([...TRAITS, SHARING]),
  aggregates: fc.subarray(AGGREGATES),
});

/** One to three trees of one to four providers; ids in creation order, the map filled in any order. */
const model = fc
  .array(fc.array(providerShape, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 3 })
  .map((trees) => {
    const all: ModelProvider[] = [];
    for (const tree of trees) {
      const members: ModelProvider[] = [];
      for (const [i, shape] of tree.entries()) {
        const id = all.length + 1;
        const parent = i === 0 ? null : members[shape.parent % i]!;
        const classes = Object.keys(shape.inventories);
        const inventories = Object.values(shape.inventories);
        const p: ModelProvider = {
          id,
          uuid: `rp-${id}`,
          parentId: parent?.id ?? null,
          rootId: parent?.rootId ?? id,
          classes,
          // as the index keeps them: after other providers' numbers (here -1s) in a shared array
          inventories: [
            ...Array<number>((id % 3) * INVENTORY_WIDTH).fill(-1),
            ...inventories.flatMap((i) => [i.total, i.reserved, i.min_unit, i.max_unit, i.step_size, i.allocation_ratio, i.used]),
          ],
          inventoryStart: (id % 3) * INVENTORY_WIDTH,
          traits: new Set(shape.traits),
          aggregates: new Set(shape.aggregates),
        };
        inventoriesOf.set(p, new Map(Object.entries(shape.inventories)));
        members.push(p);
        all.push(p);
      }
    }
    return all;
  })
  .chain((all) => fc.shuffledSubarray(all, { minLength: all.length, maxLength: all.length }))
  .map((inAnyOrder): ProviderModel => {
    // the sharing anchors as the provider index derives them: each sharing provider → the roots of
    // every tree with a provider in one of its aggregates
    const sharingAnchors = new Map<number, number[]>();
    for (const p of inAnyOrder) {
      if (!p.traits.has(SHARING)) continue;
      sharingAnchors.set(p.id, [...new Set(inAnyOrder.filter((q) => hasAny(q.aggregates, p.aggregates)).map((q) => q.rootId))]);
    }
    return { providers: new Map(inAnyOrder.map((p) => [p.id, p])), sharingAnchors };
  });

const traitLists = mostly([], fc.array(fc.subarray([...TRAITS, SHARING], { minLength: 1, maxLength: 2 }), { minLength: 1, maxLength: 2 }));
const aggregateLists = mostly([], fc.array(fc.subarray(AGGREGATES, { minLength: 1, maxLength: 2 }), { minLength: 1, maxLength: 2 }));
const oneOrNone = (names: string[]) => mostly([], fc.subarray(names, { minLength: 1, maxLength: 1 }));

/** A group as the request parser makes one; `inTree` picks a root of the model later. */
const group = (suffix: string, minClasses: number) =>
  fc.record({
    suffix: fc.constant(suffix),
    resources: fc
      .shuffledSubarray(CLASSES, { minLength: minClasses, maxLength: 2 })
      .chain((classes) => fc.tuple(...classes.map((cls) => fc.tuple(fc.constant(cls), fc.integer({ min: 1, max: 2 }))))),
    requiredTraits: traitLists,
    forbiddenTraits: oneOrNone(TRAITS),
    memberOf: aggregateLists,
    forbiddenAggregates: oneOrNone(AGGREGATES),
    inTree: fc.oneof({ weight: 12, arbitrary: fc.constant(null) }, { weight: 3, arbitrary: fc.nat() }, { weight: 1, arbitrary: fc.constant('none' as const) }),
  });

const request = (m: ProviderModel) => {
  const roots = [...m.providers.values()].filter((p) => p.parentId === null).map((p) => p.id);
  return fc
    .record({
      unsuffixed: fc.option(group('', 1), { nil: undefined }),
      suffixed: fc.subarray(['1', '2', '3'], { maxLength: 3 }).chain((suffixes) => fc.tuple(...suffixes.map((s) => group(s, 0)))),
      isolate: fc.boolean(),
      rootRequired: oneOrNone(TRAITS),
      rootForbidden: oneOrNone(TRAITS),
      sameSubtrees: mostly([], fc.array(fc.subarray(['1', '2', '3'], { minLength: 1 }), { minLength: 1, maxLength: 2 })),
      nestedAware: mostly(true, fc.constant(false)),
    })
    .filter((r) => r.unsuffixed !== undefined || r.suffixed.length > 0)
    .map((r): CandidateRequest => {
      const groups = [...(r.unsuffixed ? [r.unsuffixed] : []), ...r.suffixed].map(
        (g): GroupRequest => ({
          suffix: g.suffix,
          resources: new Map(g.resources),
          requiredTraits: g.requiredTraits,
          forbiddenTraits: new Set(g.forbiddenTraits),
          memberOf: g.memberOf,
          forbiddenAggregates: new Set(g.forbiddenAggregates),
          inTreeRoot: g.inTree === null ? null : g.inTree === 'none' ? NO_PROVIDER : roots[g.inTree % roots.length]!,
        }),
      );
      // same_subtree lists name suffixed groups of the request, as the parser insists
      const suffixes = new Set(r.suffixed.map((g) => g.suffix));
      const sameSubtrees = r.sameSubtrees.map((list) => list.filter((s) => suffixes.has(s))).filter((list) => list.length > 0);
      return {
        groups,
        isolate: r.isolate,
        rootRequired: new Set(r.rootRequired),
        rootForbidden: new Set(r.rootForbidden),
        sameSubtrees,
        nestedAware: r.nestedAware,
      };
    });
};

const strategy = fc.constantFrom(...CANDIDATE_STRATEGIES);

/** A small seeded generator (mulberry32), for the random strategy. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const scenario = model.chain((m) => fc.record({ model: fc.constant(m), request: request(m), strategy, seed: fc.integer() }));

describe('allocation-candidates search against a brute force', () => {
  test('with room for every candidate: exactly the brute force set, each once, under every strategy', () => {
    fc.assert(
      fc.property(scenario, ({ model, request, strategy, seed }) => {
        const expected = bruteForce(model, request);
        const result = searchCandidates(model, request, { maxCandidates: 1_000_000, strategy, random: seeded(seed) });
        const keys = result.candidates.map(keyOfCandidate);
        assert.equal(new Set(keys).size, keys.length, 'no candidate twice');
        assert.deepEqual(new Set(keys), expected);
        assert.equal(result.truncated, false);
      }),
      { numRuns: 2_000 },
    );
  });

  test('with a limit: that many of them (all, when there are fewer), each once', () => {
    fc.assert(
      fc.property(scenario, fc.integer({ min: 1, max: 12 }), ({ model, request, strategy, seed }, limit) => {
        const expected = bruteForce(model, request);
        const result = searchCandidates(model, request, { maxCandidates: limit, strategy, random: seeded(seed) });
        const keys = result.candidates.map(keyOfCandidate);
        assert.equal(new Set(keys).size, keys.length, 'no candidate twice');
        assert.equal(keys.length, Math.min(limit, expected.size));
        for (const key of keys) assert.ok(expected.has(key), `not a candidate: ${key}`);
        if (limit > expected.size) assert.equal(result.truncated, false, 'nothing was left out');
      }),
      { numRuns: 1_000 },
    );
  });

  test('with a small work budget: only candidates, each once; all of them unless it says it stopped short', () => {
    fc.assert(
      fc.property(scenario, fc.integer({ min: 1, max: 300 }), ({ model, request, strategy, seed }, workBudget) => {
        const expected = bruteForce(model, request);
        const result = searchCandidates(model, request, { maxCandidates: 1_000_000, workBudget, strategy, random: seeded(seed) });
        const keys = result.candidates.map(keyOfCandidate);
        assert.equal(new Set(keys).size, keys.length, 'no candidate twice');
        for (const key of keys) assert.ok(expected.has(key), `not a candidate: ${key}`);
        if (!result.truncated) assert.deepEqual(new Set(keys), expected);
      }),
      { numRuns: 1_000 },
    );
  });
});
