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
  MAX_UNIT,
  USED,
  capacityAt,
  fitsAlone,
  inventoryAt,
  inAllAggregateSets,
  inAnyAggregate,
  traitsMatch,
} from './model.js';
import type { CandidateStrategy } from '../../core/candidate-strategies.js';

/** The order anchors (and the providers within them) are tried in. */
export type Strategy = CandidateStrategy;

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

/** One decision of a walk: which provider serves an unsuffixed class, or a suffixed group. Same for every anchor. */
interface SlotSpec {
  suffix: string;
  /** what choosing a provider here allocates from it */
  resources: ReadonlyArray<readonly [string, number]>;
  /** the classes of `resources`, for ordering options */
  classes: readonly string[];
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
  const rootOk = rootFilter(model, request);
  const unsuffixed = request.groups.find((g) => g.suffix === '');
  const suffixed = request.groups.filter((g) => g.suffix !== '');
  const index = anchorIndex(model);
  const optionsAt = groupOptions(model, index, unsuffixed, suffixed, rootOk);

  // Every root that might anchor a candidate, in strategy order, produced lazily. Whether one can
  // (every group has an option there) is found out when its turn comes, so with a limit of 50 over
  // 1 000 000 roots only about 50 are ever looked at (stable and random orders cost nothing for
  // the others; pack and spread score every root once per request).
  const order = orderer(model, index, request, options.strategy, random);
  const anchors = order.anchors();

  const sameSubtrees = request.sameSubtrees.map((list) => [...new Set(list)]);
  const specs = slotSpecs(request, unsuffixed, suffixed, sameSubtrees);
  const sharedClasses = classesInSeveralSlots(specs);
  const rules = new Rules(model, request.nestedAware, unsuffixed, specs, sameSubtrees);
  const target = options.maxCandidates;
  const seen = new Set<string>();
  const out: Candidate[] = [];

  const startAnchor = (anchor: number) => {
    const found = optionsAt(anchor);
    if (!found) return nothing();
    const lists = [...found.unsuffixed, ...found.suffixed].map((list, i) => order.options(list, specs[i]!.classes));
    if (sharedClasses.length > 0 && !canSupply(specs, lists, sharedClasses)) return nothing();
    if (lists.every((list) => list.length === 1)) return single(rules, lists, budget);
    return walk(rules, lists, budget);
  };

  // Anchors take turns: one candidate (or one turn of work) each per round. The first round starts
  // anchors as it reaches them; later rounds go over the anchors that still have more to give.
  const take = (walk: AnchorWalk): boolean => {
    const step = walk.next();
    if (step.done) return false;
    if (step.value === PAUSE) return true;
    // One anchor never yields the same candidate twice; two anchors can only when every
    // provider in it is a sharing provider (any other provider belongs to one tree).
    if (allSharing(model, step.value)) {
      const key = candidateKey(step.value);
      if (seen.has(key)) return true;
      seen.add(key);
    }
    out.push(step.value);
    return true;
  };
  const full = () => out.length >= target || budget.left <= 0;
  let active: AnchorWalk[] = [];
  let unstarted = false;
  for (let next = anchors.next(); !next.done; next = anchors.next()) {
    if (full()) {
      unstarted = true;
      break;
    }
    const walk = startAnchor(next.value);
    if (take(walk)) active.push(walk);
  }
  while (active.length > 0 && !full()) {
    const next: AnchorWalk[] = [];
    let i = 0;
    for (; i < active.length && !full(); i++) if (take(active[i]!)) next.push(active[i]!);
    for (; i < active.length; i++) next.push(active[i]!);
    active = next;
  }
  return { candidates: out, truncated: unstarted || active.length > 0 || budget.left <= 0, work: budget.spent };
}

interface AnchorIndex {
  /** root id → the providers of its tree, by id; only trees of more than one (a lone root is its own tree) */
  trees: Map<number, ModelProvider[]>;
  /** root id → sharing providers of other trees that share with it */
  sharedInto: Map<number, ModelProvider[]>;
  /** every root that may anchor a candidate, by id */
  anchors: number[];
}

/** The trees and sharing links of a model, derived once per structureVersion (kept on the model). */
function anchorIndex(model: ProviderModel): AnchorIndex {
  const version = model.structureVersion;
  if (version === undefined) return deriveAnchorIndex(model);
  if (model.searchCache?.version === version) return model.searchCache.index as AnchorIndex;
  const index = deriveAnchorIndex(model);
  model.searchCache = { version, index };
  return index;
}

function deriveAnchorIndex(model: ProviderModel): AnchorIndex {
  // At a million flat providers a list per root would cost ~100 MB: only trees with children get one.
  const trees = new Map<number, ModelProvider[]>();
  const roots: number[] = [];
  let sorted = true;
  let last = -Infinity;
  for (const p of model.providers.values()) {
    if (p.id < last) sorted = false;
    last = p.id;
    if (p.id === p.rootId) roots.push(p.id);
    else trees.set(p.rootId, []);
  }
  if (trees.size > 0) {
    const members = [...model.providers.values()].filter((p) => trees.has(p.rootId));
    if (!sorted) members.sort((a, b) => a.id - b.id);
    for (const p of members) trees.get(p.rootId)!.push(p);
  }
  const sharedInto = new Map<number, ModelProvider[]>();
  for (const id of [...model.sharingAnchors.keys()].sort((a, b) => a - b)) {
    const p = model.providers.get(id);
    if (!p) continue;
    for (const anchor of new Set(model.sharingAnchors.get(id))) {
      if (anchor === p.rootId) continue;
      const list = sharedInto.get(anchor);
      if (list) list.push(p);
      else sharedInto.set(anchor, [p]);
    }
  }
  // (at a million roots a Set and a sort of them cost a second; the roots usually come sorted)
  if (!sorted) roots.sort((a, b) => a - b);
  if (sharedInto.size === 0) return { trees, sharedInto, anchors: roots };
  const anchors = new Set(roots);
  for (const id of sharedInto.keys()) anchors.add(id);
  return { trees, sharedInto, anchors: [...anchors].sort((a, b) => a - b) };
}

/** Derive now what a search derives from the trees (done once per structure; at a million providers it takes a second). */
export function prepareSearch(model: ProviderModel): void {
  anchorIndex(model);
}

/** The providers of the tree with this root, by id (from the index derived per structureVersion). */
export function treeOf(model: ProviderModel, rootId: number): readonly ModelProvider[] {
  return treeIn(anchorIndex(model), model, rootId);
}

function treeIn(index: AnchorIndex, model: ProviderModel, rootId: number): readonly ModelProvider[] {
  const tree = index.trees.get(rootId);
  if (tree) return tree;
  const root = model.providers.get(rootId);
  return root ? [root] : [];
}

const memo = (test: (p: ModelProvider) => boolean) => {
  const known = new Map<number, boolean>();
  return (p: ModelProvider) => {
    let ok = known.get(p.id);
    if (ok === undefined) known.set(p.id, (ok = test(p)));
    return ok;
  };
};

/**
 * For one anchor: the providers that can serve each unsuffixed class and each suffixed group
 * there, or null when some group cannot be served at all.
 *
 * Suffixed group: one provider with all its resources, traits and aggregates, from the anchor's
 * tree or a sharing provider that shares with it. Unsuffixed group, per class: a provider of the
 * tree, or (unless in_tree holds the group to one tree) a sharing provider that is itself in the
 * requested aggregates; its member_of is met by the provider or by the anchor (aggregates on a root
 * span the tree), and none of its forbidden traits may be present on the provider.
 */
function groupOptions(
  model: ProviderModel,
  index: AnchorIndex,
  unsuffixed: GroupRequest | undefined,
  suffixed: GroupRequest[],
  rootOk: (anchor: number) => boolean,
) {
  const matches = suffixed.map((g) =>
    memo(
      (p) =>
        (g.inTreeRoot === null || p.rootId === g.inTreeRoot) &&
        [...g.resources].every(([cls, amount]) => fitsAlone(p, cls, amount)) &&
        traitsMatch(p.traits, g.requiredTraits, g.forbiddenTraits) &&
        inAllAggregateSets(p.aggregates, g.memberOf) &&
        !inAnyAggregate(p.aggregates, g.forbiddenAggregates),
    ),
  );
  const u = unsuffixed;
  const always = () => true;
  const allowed = u && u.forbiddenTraits.size > 0 ? memo((p) => traitsMatch(p.traits, [], u.forbiddenTraits)) : always;
  const inAggs = u && u.memberOf.length > 0 ? memo((p) => inAllAggregateSets(p.aggregates, u.memberOf)) : always;
  const inBadAggs = u && u.forbiddenAggregates.size > 0 ? memo((p) => inAnyAggregate(p.aggregates, u.forbiddenAggregates)) : () => false;
  const filtersAggregates = u !== undefined && (u.memberOf.length > 0 || u.forbiddenAggregates.size > 0);
  const aggregatesOk = (p: ModelProvider, anchor: number) => {
    if (!filtersAggregates) return true;
    const root = model.providers.get(anchor);
    if (u.memberOf.length > 0 && !inAggs(p) && !(root && inAggs(root))) return false;
    if (u.forbiddenAggregates.size > 0 && (inBadAggs(p) || (root !== undefined && inBadAggs(root)))) return false;
    return true;
  };
  return (anchor: number): { unsuffixed: ModelProvider[][]; suffixed: ModelProvider[][] } | null => {
    if (!rootOk(anchor)) return null;
    const tree = treeIn(index, model, anchor);
    const shared = index.sharedInto.get(anchor) ?? [];
    const byClass: ModelProvider[][] = [];
    if (u) {
      for (const [cls, amount] of u.resources) {
        const list: ModelProvider[] = [];
        if (u.inTreeRoot === null || anchor === u.inTreeRoot) {
          for (const p of tree) if (allowed(p) && fitsAlone(p, cls, amount) && aggregatesOk(p, anchor)) list.push(p);
        }
        if (u.inTreeRoot === null) {
          for (const p of shared) {
            if (inAggs(p)) {
              if (allowed(p) && fitsAlone(p, cls, amount) && aggregatesOk(p, anchor)) list.push(p);
            }
          }
        }
        if (list.length === 0) return null;
        byClass.push(list);
      }
    }
    const byGroup: ModelProvider[][] = [];
    for (const match of matches) {
      const list = [...tree.filter(match), ...shared.filter(match)];
      if (list.length === 0) return null;
      byGroup.push(list);
    }
    return { unsuffixed: byClass, suffixed: byGroup };
  };
}

function nothing(): AnchorWalk {
  return { next: () => ({ done: true, value: undefined }) };
}

/** The walk's slots: one per unsuffixed class, then one per suffixed group, in request order. */
function slotSpecs(request: CandidateRequest, unsuffixed: GroupRequest | undefined, suffixed: GroupRequest[], sameSubtrees: string[][]): SlotSpec[] {
  const specs: SlotSpec[] = [];
  for (const [cls, amount] of unsuffixed?.resources ?? []) {
    specs.push({ suffix: '', resources: [[cls, amount]], classes: [cls], isolated: false, completesSubtrees: [], checksUnsuffixedTraits: false });
  }
  if (unsuffixed && specs.length > 0) specs[specs.length - 1]!.checksUnsuffixedTraits = unsuffixed.requiredTraits.length > 0;
  for (const g of suffixed) {
    specs.push({
      suffix: g.suffix,
      resources: [...g.resources],
      classes: [...g.resources.keys()],
      isolated: request.isolate,
      completesSubtrees: [],
      checksUnsuffixedTraits: false,
    });
  }
  sameSubtrees.forEach((list, i) => {
    const last = Math.max(...list.map((suffix) => specs.findLastIndex((s) => s.suffix === suffix)));
    if (last >= 0) specs[last]!.completesSubtrees.push(i);
  });
  return specs;
}

function classesInSeveralSlots(specs: SlotSpec[]): string[] {
  const count = new Map<string, number>();
  for (const spec of specs) for (const cls of spec.classes) count.set(cls, (count.get(cls) ?? 0) + 1);
  return [...count].filter(([, n]) => n > 1).map(([cls]) => cls);
}

/**
 * A necessary condition, checked before walking an anchor, for classes several slots ask for
 * (one slot alone only has options it fits): what they ask in all fits what their providers can
 * give together. Without it, 300 units asked where 64 exist would spend the whole work budget
 * proving that no combination exists.
 */
function canSupply(specs: SlotSpec[], lists: ModelProvider[][], classes: string[]): boolean {
  for (const cls of classes) {
    let wanted = 0;
    const suppliers = new Set<ModelProvider>();
    specs.forEach((spec, i) => {
      for (const [c, amount] of spec.resources) {
        if (c !== cls) continue;
        wanted += amount;
        for (const p of lists[i]!) suppliers.add(p);
      }
    });
    let supply = 0;
    for (const p of suppliers) {
      const at = inventoryAt(p, cls);
      supply += Math.max(0, Math.min(capacityAt(p, at) - p.inventories[at + USED]!, p.inventories[at + MAX_UNIT]!));
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

/** Orders anchors and, within one anchor, the providers tried for a slot. */
function orderer(model: ProviderModel, index: AnchorIndex, request: CandidateRequest, strategy: Strategy, random: () => number) {
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
        const at = inventoryAt(p, c);
        if (at < 0) continue;
        const total = capacityAt(p, at);
        cap += total;
        free += Math.max(0, total - p.inventories[at + USED]!);
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
    anchors(): Iterator<number> {
      const ids = index.anchors;
      if (strategy === 'stable') return ids[Symbol.iterator]();
      if (strategy === 'random') return randomOrder(ids, random);
      return byScore([...ids], (id) => freeFraction(treeIn(index, model, id), classes), strategy === 'spread')[Symbol.iterator]();
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

type AnchorWalk = Iterator<Candidate | typeof PAUSE>;

/**
 * The items of `list` in a uniformly random order, drawn one at a time: a Fisher–Yates shuffle
 * that records only the swaps it made, so taking k of n items costs O(k), not O(n).
 */
function* randomOrder(list: readonly number[], random: () => number): Iterator<number> {
  const swapped = new Map<number, number>();
  const at = (i: number) => swapped.get(i) ?? list[i]!;
  for (let i = 0; i < list.length; i++) {
    const j = i + Math.floor(random() * (list.length - i));
    const chosen = at(j);
    swapped.set(j, at(i));
    yield chosen;
  }
}

/**
 * The rules a combination must keep, checked slot by slot against the slots chosen before it.
 * One per request; a walk only owns its array of chosen providers. (Keeping maps per anchor
 * instead had the garbage collector take half the time at 10 000 anchors.)
 */
class Rules {
  constructor(
    readonly model: ProviderModel,
    readonly nestedAware: boolean,
    readonly unsuffixed: GroupRequest | undefined,
    readonly specs: SlotSpec[],
    readonly sameSubtrees: string[][],
  ) {}

  /** May slot `level` take provider p, given the providers chosen before it? */
  fits(chosen: ModelProvider[], level: number, p: ModelProvider): boolean {
    const spec = this.specs[level]!;
    let again = false;
    for (let j = 0; j < level; j++) {
      const q = chosen[j]!;
      if (q === p) {
        if (spec.isolated && this.specs[j]!.isolated) return false;
        again = true;
      } else if (!this.nestedAware && q.rootId === p.rootId && spec.resources.length > 0 && this.specs[j]!.resources.length > 0) {
        // before 1.29: one provider per tree
        return false;
      }
    }
    if (!again) return true; // every option already fits its own slot alone
    for (const [cls, amount] of spec.resources) {
      let total = amount;
      for (let j = 0; j < level; j++) {
        if (chosen[j] !== p) continue;
        for (const [c, a] of this.specs[j]!.resources) if (c === cls) total += a;
      }
      const at = inventoryAt(p, cls);
      if (total > p.inventories[at + MAX_UNIT]! || p.inventories[at + USED]! + total > capacityAt(p, at)) return false;
    }
    return true;
  }

  /** Rules that become decidable once slot `level` is chosen: unsuffixed traits, same_subtree. */
  hold(chosen: ModelProvider[], level: number): boolean {
    const spec = this.specs[level]!;
    if (spec.checksUnsuffixedTraits) {
      for (const anyOf of this.unsuffixed!.requiredTraits) {
        let met = false;
        for (let j = 0; j <= level && !met; j++) {
          if (this.specs[j]!.suffix === '') met = anyOf.some((t) => chosen[j]!.traits.has(t));
        }
        if (!met) return false;
      }
    }
    for (const i of spec.completesSubtrees) {
      const suffixes = this.sameSubtrees[i]!;
      const members = new Set<ModelProvider>();
      for (let j = 0; j <= level; j++) if (suffixes.includes(this.specs[j]!.suffix)) members.add(chosen[j]!);
      if (!oneIsAncestorOfAll(this.model, [...members])) return false;
    }
    return true;
  }
}

/** An anchor where every slot has one option (a flat compute node): one candidate or none. */
function single(rules: Rules, lists: ModelProvider[][], budget: { left: number; spent: number }): AnchorWalk {
  let done = false;
  return {
    next: () => {
      if (done || budget.left <= 0) return { done: true, value: undefined };
      done = true;
      const chosen = lists.map((list) => list[0]!);
      budget.left -= chosen.length;
      budget.spent += chosen.length;
      for (let level = 0; level < chosen.length; level++) {
        if (!rules.fits(chosen, level, chosen[level]!) || !rules.hold(chosen, level)) return { done: true, value: undefined };
      }
      return { done: false, value: assemble(rules.specs, chosen) };
    },
  };
}

/**
 * Walk one anchor's combinations depth first, pruning a branch at the first slot that breaks a
 * rule. Yields each complete candidate, or PAUSE after a turn's worth of options without one.
 */
function* walk(rules: Rules, lists: ModelProvider[][], budget: { left: number; spent: number }): Generator<Candidate | typeof PAUSE> {
  const n = lists.length;
  const chosen: ModelProvider[] = new Array(n);
  const next: number[] = new Array(n).fill(0);
  let turn = TURN;
  let level = 0;
  while (level >= 0) {
    const list = lists[level]!;
    const i = next[level]!;
    if (i >= list.length) {
      next[level] = 0;
      level--;
      continue;
    }
    next[level] = i + 1;
    if (budget.left <= 0) return;
    budget.left--;
    budget.spent++;
    if (--turn <= 0) {
      turn = TURN;
      yield PAUSE;
      if (budget.left <= 0) return;
    }
    const p = list[i]!;
    if (!rules.fits(chosen, level, p)) continue;
    chosen[level] = p;
    if (!rules.hold(chosen, level)) continue;
    if (level === n - 1) {
      turn = TURN;
      yield assemble(rules.specs, chosen);
    } else {
      level++;
    }
  }
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

function assemble(specs: SlotSpec[], chosen: ModelProvider[]): Candidate {
  const allocations = new Map<number, Map<string, number>>();
  const mappings = new Map<string, number[]>();
  specs.forEach((slot, i) => {
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

function allSharing(model: ProviderModel, c: Candidate): boolean {
  for (const id of c.allocations.keys()) if (!model.sharingAnchors.has(id)) return false;
  for (const ids of c.mappings.values()) for (const id of ids) if (!model.sharingAnchors.has(id)) return false;
  return true;
}

/** Two candidates are the same when they take the same amounts from the same providers for the same groups. */
function candidateKey(c: Candidate): string {
  const parts: string[] = [];
  for (const id of [...c.allocations.keys()].sort((a, b) => a - b)) {
    const m = c.allocations.get(id)!;
    parts.push(
      `${id}:${[...m]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([cls, n]) => `${cls}=${n}`)
        .join(',')}`,
    );
  }
  parts.push('|');
  for (const suffix of [...c.mappings.keys()].sort()) parts.push(`${suffix}=${[...c.mappings.get(suffix)!].sort((a, b) => a - b).join(',')}`);
  return parts.join(';');
}
