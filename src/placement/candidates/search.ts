// The allocation-candidates search: pure code over a ProviderModel, no I/O.
//
// Semantics are Placement's (GET /allocation_candidates, 1.10–1.39):
// - A suffixed group is satisfied by ONE provider holding all its resources, traits and aggregates.
// - The unsuffixed group takes each resource class from any provider of one tree, or from a sharing
//   provider (MISC_SHARES_VIA_AGGREGATE) in an aggregate with that tree; its traits are satisfied by
//   the providers it uses together, and none of them may have a forbidden one. Its member_of is met
//   by the provider itself or by the anchoring root.
// - Every candidate is "anchored" at one tree root: all groups must be satisfiable for that anchor,
//   the combined amounts must fit (used + total ≤ capacity, total ≤ max_unit), isolate keeps
//   suffixed groups on different providers, same_subtree keeps listed groups under one of their
//   providers, root_required filters anchors by the root's traits.
//
// Bounded work (where allot departs from Placement, which builds every combination before applying
// `limit`): each anchor's combinations are walked lazily, depth first with pruning (capacity,
// isolation and tree checks cut a branch as soon as it fails), and anchors take turns, one
// candidate each per round. Generation stops at `maxCandidates` distinct candidates or when the
// work budget (option visits) runs out, so 8 children × 6 groups (8⁶ = 262 144 combinations) costs
// no more than the cap. Taking turns means the first N candidates come from N different anchors,
// so a `limit` sample is spread over the roots.
import {
  type CandidateRequest,
  type GroupRequest,
  type ModelProvider,
  type ProviderModel,
  fitsAlone,
  inAllAggregateSets,
  inAnyAggregate,
  traitsMatch,
} from './model.js';
import { capacity } from '../../core/capacity.js';

/** The order anchors (and the providers within them) are tried in. */
export const STRATEGIES = ['stable', 'pack', 'spread', 'random'] as const;
export type Strategy = (typeof STRATEGIES)[number];

export interface SearchOptions {
  /** stop after this many distinct candidates */
  maxCandidates: number;
  /**
   * stable: anchors in provider creation order (Placement without randomisation);
   * pack: fullest anchors first; spread: emptiest anchors first; random: shuffled.
   */
  strategy: Strategy;
  /** source of randomness for `random` (tests may seed it) */
  random?: () => number;
  /** most provider options the search may try in all; defaults from maxCandidates */
  workBudget?: number;
}

export interface Candidate {
  /** provider id → class → amount, providers in the order the groups chose them */
  allocations: Map<number, Map<string, number>>;
  /** group suffix → ids of the providers that satisfied it */
  mappings: Map<string, number[]>;
}

export interface SearchResult {
  candidates: Candidate[];
  /** generation stopped (cap or work budget) before every anchor was exhausted */
  truncated: boolean;
  /** provider options tried */
  work: number;
}

/** Default work budget: generous for real trees, a hard stop for pathological products. */
export function defaultWorkBudget(maxCandidates: number): number {
  return 200_000 + 50 * Math.min(maxCandidates, 1_000_000);
}

/** Options a walk tries before it lets the next anchor have a turn, so one anchor cannot starve the others. */
const TURN = 64;

interface Slot {
  suffix: string;
  /** what choosing a provider here allocates from it */
  resources: ReadonlyArray<readonly [string, number]>;
  options: ModelProvider[];
  /** suffixed group under group_policy=isolate */
  isolated: boolean;
  /** same_subtree lists (indexes) that are complete once this slot is chosen */
  completesSubtrees: number[];
  /** this is the last slot of the unsuffixed group: check its required traits here */
  checksUnsuffixedTraits: boolean;
}

const PAUSE = Symbol('pause');

export function searchCandidates(model: ProviderModel, request: CandidateRequest, options: SearchOptions): SearchResult {
  const random = options.random ?? Math.random;
  const budget = { left: options.workBudget ?? defaultWorkBudget(options.maxCandidates), spent: 0 };
  const providers = [...model.providers.values()].sort((a, b) => a.id - b.id);
  const rootOk = rootFilter(model, request);
  const unsuffixed = request.groups.find((g) => g.suffix === '');
  const suffixed = request.groups.filter((g) => g.suffix !== '');

  // Per group, per anchor: the providers that can serve it there.
  const unsuffixedByAnchor = unsuffixed ? unsuffixedOptions(model, providers, unsuffixed, rootOk) : null;
  const suffixedByAnchor = suffixed.map((g) => suffixedOptions(model, providers, g, rootOk));

  // Anchors where every group has at least one option.
  let anchors: number[] | null = null;
  const keep = (ids: Iterable<number>) => {
    const set = new Set(ids);
    anchors = anchors === null ? [...set] : anchors.filter((a) => set.has(a));
  };
  if (unsuffixedByAnchor) keep([...unsuffixedByAnchor].filter(([, byClass]) => byClass.size === unsuffixed!.resources.size).map(([a]) => a));
  for (const byAnchor of suffixedByAnchor) keep(byAnchor.keys());
  const viable: number[] = anchors ?? [];

  const order = orderer(model, request, options.strategy, random);
  order.anchors(viable);

  const sameSubtrees = request.sameSubtrees.map((list) => [...new Set(list)]);
  const target = options.maxCandidates;
  const seen = new Set<string>();
  const out: Candidate[] = [];

  const startAnchor = (anchor: number) => {
    const slots: Slot[] = [];
    if (unsuffixed && unsuffixedByAnchor) {
      const byClass = unsuffixedByAnchor.get(anchor)!;
      for (const [cls, amount] of unsuffixed.resources) {
        slots.push({
          suffix: '',
          resources: [[cls, amount]],
          options: order.options(byClass.get(cls)!, [cls]),
          isolated: false,
          completesSubtrees: [],
          checksUnsuffixedTraits: false,
        });
      }
      slots[slots.length - 1]!.checksUnsuffixedTraits = unsuffixed.requiredTraits.length > 0;
    }
    suffixed.forEach((g, i) => {
      slots.push({
        suffix: g.suffix,
        resources: [...g.resources],
        options: order.options(suffixedByAnchor[i]!.get(anchor)!, [...g.resources.keys()]),
        isolated: request.isolate,
        completesSubtrees: [],
        checksUnsuffixedTraits: false,
      });
    });
    sameSubtrees.forEach((list, i) => {
      const last = Math.max(...list.map((suffix) => slots.findLastIndex((s) => s.suffix === suffix)));
      if (last >= 0) slots[last]!.completesSubtrees.push(i);
    });
    if (!canSupply(slots)) return nothing();
    return walk(model, request, unsuffixed, slots, sameSubtrees, budget);
  };

  // Anchors take turns: one candidate (or one turn of work) each per round.
  type Entry = { anchor: number; walk: Generator<Candidate | typeof PAUSE> | null };
  let active: Entry[] = viable.map((anchor) => ({ anchor, walk: null }));
  while (active.length > 0 && out.length < target && budget.left > 0) {
    const next: Entry[] = [];
    for (let i = 0; i < active.length; i++) {
      const entry = active[i]!;
      if (out.length >= target || budget.left <= 0) {
        next.push(...active.slice(i));
        break;
      }
      entry.walk ??= startAnchor(entry.anchor);
      const step = entry.walk.next();
      if (step.done) continue;
      next.push(entry);
      if (step.value === PAUSE) continue;
      const key = candidateKey(step.value);
      if (!seen.has(key)) {
        seen.add(key);
        out.push(step.value);
      }
    }
    active = next;
  }
  return { candidates: out, truncated: active.length > 0 || budget.left <= 0, work: budget.spent };
}

function* nothing(): Generator<Candidate | typeof PAUSE> {}

/**
 * A necessary condition, checked before walking an anchor: for each class, what the slots ask in
 * all fits what their providers can give together. Without it a request for 300 units where 64
 * exist would spend the whole work budget proving there is no combination.
 */
function canSupply(slots: Slot[]): boolean {
  const demand = new Map<string, number>();
  const suppliers = new Map<string, Set<ModelProvider>>();
  for (const slot of slots) {
    for (const [cls, amount] of slot.resources) {
      demand.set(cls, (demand.get(cls) ?? 0) + amount);
      let set = suppliers.get(cls);
      if (!set) suppliers.set(cls, (set = new Set()));
      for (const p of slot.options) set.add(p);
    }
  }
  for (const [cls, wanted] of demand) {
    let supply = 0;
    for (const p of suppliers.get(cls)!) {
      const inv = p.inventories.get(cls)!;
      supply += Math.max(0, Math.min(capacity(inv) - inv.used, inv.max_unit));
    }
    if (supply < wanted) return false;
  }
  return true;
}

/** root_required: does this anchor's root have every required trait and no forbidden one? */
function rootFilter(model: ProviderModel, request: CandidateRequest): (anchor: number) => boolean {
  if (request.rootRequired.size === 0 && request.rootForbidden.size === 0) return () => true;
  const required = [...request.rootRequired].map((t) => [t]);
  return (anchor) => {
    const root = model.providers.get(anchor);
    return root !== undefined && root.parentId === null && traitsMatch(root.traits, required, request.rootForbidden);
  };
}

/** A suffixed group: providers meeting it alone, under their own root and (if sharing) every anchor they share with. */
function suffixedOptions(model: ProviderModel, providers: ModelProvider[], g: GroupRequest, rootOk: (a: number) => boolean): Map<number, ModelProvider[]> {
  const byAnchor = new Map<number, ModelProvider[]>();
  const add = (anchor: number, p: ModelProvider) => {
    const list = byAnchor.get(anchor);
    if (list) list.push(p);
    else byAnchor.set(anchor, [p]);
  };
  const sharedHits: Array<[number, ModelProvider]> = [];
  for (const p of providers) {
    if (g.inTreeRoot !== null && p.rootId !== g.inTreeRoot) continue;
    if (![...g.resources].every(([cls, amount]) => fitsAlone(p.inventories.get(cls), amount))) continue;
    if (!traitsMatch(p.traits, g.requiredTraits, g.forbiddenTraits)) continue;
    if (!inAllAggregateSets(p.aggregates, g.memberOf) || inAnyAggregate(p.aggregates, g.forbiddenAggregates)) continue;
    if (rootOk(p.rootId)) add(p.rootId, p);
    for (const anchor of model.sharingAnchors.get(p.id) ?? []) {
      if (anchor !== p.rootId && rootOk(anchor)) sharedHits.push([anchor, p]);
    }
  }
  // Within an anchor, its own providers come before the sharing ones.
  for (const [anchor, p] of sharedHits) add(anchor, p);
  return byAnchor;
}

/**
 * The unsuffixed group: for each anchor, for each requested class, the providers that can give that
 * class's amount: providers of the anchor's tree, and sharing providers in an aggregate with it.
 */
function unsuffixedOptions(
  model: ProviderModel,
  providers: ModelProvider[],
  g: GroupRequest,
  rootOk: (a: number) => boolean,
): Map<number, Map<string, ModelProvider[]>> {
  const byAnchor = new Map<number, Map<string, ModelProvider[]>>();
  const inAggs = (id: number) => {
    const p = model.providers.get(id);
    return p !== undefined && inAllAggregateSets(p.aggregates, g.memberOf);
  };
  const inBadAggs = (id: number) => {
    const p = model.providers.get(id);
    return p !== undefined && inAnyAggregate(p.aggregates, g.forbiddenAggregates);
  };
  // Aggregates on a root span its whole tree: the provider or its anchoring root must be a member.
  const aggregatesOk = (p: ModelProvider, anchor: number) =>
    (g.memberOf.length === 0 || inAggs(p.id) || inAggs(anchor)) && (g.forbiddenAggregates.size === 0 || (!inBadAggs(p.id) && !inBadAggs(anchor)));
  const add = (anchor: number, cls: string, p: ModelProvider) => {
    let byClass = byAnchor.get(anchor);
    if (!byClass) byAnchor.set(anchor, (byClass = new Map()));
    const list = byClass.get(cls);
    if (list) list.push(p);
    else byClass.set(cls, [p]);
  };
  const shared: Array<[number, string, ModelProvider]> = [];
  for (const p of providers) {
    // A provider with a forbidden trait can be in no combination of this group.
    if (!traitsMatch(p.traits, [], g.forbiddenTraits)) continue;
    const anchors = model.sharingAnchors.get(p.id);
    // A sharing provider serves other trees only if it is itself in the requested aggregates,
    // and never when the group is held to one tree (in_tree).
    const sharesOut = anchors !== undefined && g.inTreeRoot === null && inAllAggregateSets(p.aggregates, g.memberOf);
    for (const [cls, amount] of g.resources) {
      if (!fitsAlone(p.inventories.get(cls), amount)) continue;
      if ((g.inTreeRoot === null || p.rootId === g.inTreeRoot) && rootOk(p.rootId) && aggregatesOk(p, p.rootId)) add(p.rootId, cls, p);
      if (!sharesOut) continue;
      for (const anchor of anchors!) {
        if (anchor !== p.rootId && rootOk(anchor) && aggregatesOk(p, anchor)) shared.push([anchor, cls, p]);
      }
    }
  }
  for (const [anchor, cls, p] of shared) add(anchor, cls, p);
  return byAnchor;
}

/** Orders anchors and, within one anchor, the providers tried for a slot. */
function orderer(model: ProviderModel, request: CandidateRequest, strategy: Strategy, random: () => number) {
  const classes = [...new Set(request.groups.flatMap((g) => [...g.resources.keys()]))];
  const shuffle = <T>(list: T[]) => {
    for (let i = list.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [list[i], list[j]] = [list[j]!, list[i]!];
    }
    return list;
  };
  // Free fraction of the requested classes: 1 = untouched, 0 = full.
  const freeFraction = (ps: Iterable<ModelProvider>, cls: readonly string[]) => {
    let sum = 0;
    let n = 0;
    for (const c of cls) {
      let cap = 0;
      let free = 0;
      for (const p of ps) {
        const inv = p.inventories.get(c);
        if (!inv) continue;
        const total = capacity(inv);
        cap += total;
        free += Math.max(0, total - inv.used);
      }
      if (cap > 0) {
        sum += free / cap;
        n++;
      }
    }
    return n === 0 ? 1 : sum / n;
  };
  const byScore = (ids: number[], score: (id: number) => number, emptiestFirst: boolean) => {
    const scores = new Map(ids.map((id) => [id, score(id)]));
    return ids.sort((a, b) => (emptiestFirst ? scores.get(b)! - scores.get(a)! : scores.get(a)! - scores.get(b)!) || a - b);
  };
  return {
    anchors(ids: number[]): void {
      if (strategy === 'random') shuffle(ids);
      else if (strategy === 'stable') ids.sort((a, b) => a - b);
      else {
        const trees = new Map<number, ModelProvider[]>();
        for (const p of model.providers.values()) {
          const list = trees.get(p.rootId);
          if (list) list.push(p);
          else trees.set(p.rootId, [p]);
        }
        byScore(ids, (id) => freeFraction(trees.get(id) ?? [], classes), strategy === 'spread');
      }
    },
    options(list: ModelProvider[], cls: readonly string[]): ModelProvider[] {
      if (strategy === 'stable' || list.length < 2) return list;
      if (strategy === 'random') return shuffle([...list]);
      const byId = new Map(list.map((p) => [p.id, p]));
      const ids = byScore(
        list.map((p) => p.id),
        (id) => freeFraction([byId.get(id)!], cls),
        strategy === 'spread',
      );
      return ids.map((id) => byId.get(id)!);
    },
  };
}

/**
 * Walk one anchor's combinations depth first, pruning a branch at the first slot that breaks a
 * rule. Yields each complete candidate, or PAUSE after a turn's worth of options without one.
 */
function* walk(
  model: ProviderModel,
  request: CandidateRequest,
  unsuffixed: GroupRequest | undefined,
  slots: Slot[],
  sameSubtrees: string[][],
  budget: { left: number; spent: number },
): Generator<Candidate | typeof PAUSE> {
  const chosen: ModelProvider[] = new Array(slots.length);
  /** provider id → class → amount taken so far */
  const taken = new Map<number, Map<string, number>>();
  const isolatedUsed = new Set<number>();
  /** before 1.29: root id → [provider id using that tree, slots using it] */
  const treeUser = new Map<number, [number, number]>();
  let turn = TURN;

  const take = (slot: Slot, p: ModelProvider): boolean => {
    if (slot.isolated && isolatedUsed.has(p.id)) return false;
    if (!request.nestedAware && slot.resources.length > 0) {
      const user = treeUser.get(p.rootId);
      if (user && user[0] !== p.id) return false;
    }
    const mine = taken.get(p.id);
    for (const [cls, amount] of slot.resources) {
      const inv = p.inventories.get(cls)!;
      const total = (mine?.get(cls) ?? 0) + amount;
      if (total > inv.max_unit || inv.used + total > capacity(inv)) return false;
    }
    if (slot.isolated) isolatedUsed.add(p.id);
    if (!request.nestedAware && slot.resources.length > 0) {
      const user = treeUser.get(p.rootId);
      if (user) user[1]++;
      else treeUser.set(p.rootId, [p.id, 1]);
    }
    if (slot.resources.length > 0) {
      let m = mine;
      if (!m) taken.set(p.id, (m = new Map()));
      for (const [cls, amount] of slot.resources) m.set(cls, (m.get(cls) ?? 0) + amount);
    }
    return true;
  };

  const release = (slot: Slot, p: ModelProvider): void => {
    if (slot.isolated) isolatedUsed.delete(p.id);
    if (!request.nestedAware && slot.resources.length > 0) {
      const user = treeUser.get(p.rootId)!;
      if (--user[1] === 0) treeUser.delete(p.rootId);
    }
    if (slot.resources.length > 0) {
      const m = taken.get(p.id)!;
      for (const [cls, amount] of slot.resources) {
        const left = m.get(cls)! - amount;
        if (left === 0) m.delete(cls);
        else m.set(cls, left);
      }
      if (m.size === 0) taken.delete(p.id);
    }
  };

  const rulesHold = (level: number): boolean => {
    const slot = slots[level]!;
    if (slot.checksUnsuffixedTraits) {
      const used = chosen.slice(0, level + 1).filter((_, i) => slots[i]!.suffix === '');
      const ok = unsuffixed!.requiredTraits.every((anyOf) => anyOf.some((t) => used.some((p) => p.traits.has(t))));
      if (!ok) return false;
    }
    for (const i of slot.completesSubtrees) {
      const suffixes = new Set(sameSubtrees[i]);
      const members = [...new Set(chosen.slice(0, level + 1).filter((_, j) => suffixes.has(slots[j]!.suffix)))];
      if (!oneIsAncestorOfAll(model, members)) return false;
    }
    return true;
  };

  function* explore(level: number): Generator<Candidate | typeof PAUSE> {
    if (level === slots.length) {
      turn = TURN;
      yield assemble(slots, chosen);
      return;
    }
    const slot = slots[level]!;
    for (const p of slot.options) {
      if (budget.left <= 0) return;
      budget.left--;
      budget.spent++;
      if (--turn <= 0) {
        turn = TURN;
        yield PAUSE;
        if (budget.left <= 0) return;
      }
      if (!take(slot, p)) continue;
      chosen[level] = p;
      if (rulesHold(level)) yield* explore(level + 1);
      release(slot, p);
    }
  }
  yield* explore(0);
}

/** same_subtree: one of these providers is an ancestor (or itself) of all the others. */
function oneIsAncestorOfAll(model: ProviderModel, members: ModelProvider[]): boolean {
  if (members.length <= 1) return true;
  const ids = new Set(members.map((p) => p.id));
  const lineage = (p: ModelProvider) => {
    const line = new Set<number>();
    for (let cur: ModelProvider | undefined = p; cur; cur = cur.parentId === null ? undefined : model.providers.get(cur.parentId)) line.add(cur.id);
    return line;
  };
  let common = lineage(members[0]!);
  for (const p of members.slice(1)) {
    const line = lineage(p);
    common = new Set([...common].filter((id) => line.has(id)));
  }
  return [...common].some((id) => ids.has(id));
}

function assemble(slots: Slot[], chosen: ModelProvider[]): Candidate {
  const allocations = new Map<number, Map<string, number>>();
  const mappings = new Map<string, number[]>();
  slots.forEach((slot, i) => {
    const p = chosen[i]!;
    if (slot.resources.length > 0) {
      let m = allocations.get(p.id);
      if (!m) allocations.set(p.id, (m = new Map()));
      for (const [cls, amount] of slot.resources) m.set(cls, (m.get(cls) ?? 0) + amount);
    }
    const list = mappings.get(slot.suffix);
    if (!list) mappings.set(slot.suffix, [p.id]);
    else if (!list.includes(p.id)) list.push(p.id);
  });
  return { allocations, mappings };
}

/** Two candidates are the same when they take the same amounts from the same providers for the same groups. */
function candidateKey(c: Candidate): string {
  const parts: string[] = [];
  for (const id of [...c.allocations.keys()].sort((a, b) => a - b)) {
    const m = c.allocations.get(id)!;
    parts.push(`${id}:${[...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([cls, n]) => `${cls}=${n}`).join(',')}`);
  }
  parts.push('|');
  for (const suffix of [...c.mappings.keys()].sort()) parts.push(`${suffix}=${[...c.mappings.get(suffix)!].sort((a, b) => a - b).join(',')}`);
  return parts.join(';');
}
