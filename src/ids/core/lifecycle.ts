// Service instance lifecycles as data (after the seed's Inmanta LSM finite state machines): the
// states, and for each API action the states it is allowed in, the state it leads to, which
// attribute set it validates and which it promotes. The two built-in lifecycles are written in
// the same form as the ones an operator loads from `--ids-lifecycles` (checked by
// `checkLifecycles` at start). Pure.
//
// Built in (`simple`; `simple_with_deallocation` waits in `deallocating` for the outbox):
//   start ──validate──> start (candidate validated) ──promote──> up
//   up ──PATCH attributes──> update ──validate──> update ──promote──> up      (rollback ← old active)
//   up ──rollback──> up (active ↔ rollback)
//   any live state ──terminate──> terminated                                   (simple)
//   any live state ──terminate──> deallocating ──outbox delivered──> terminated (simple_with_deallocation)
import { idsDomainError } from './domain-errors.js';

export type InstanceAction = 'update_attributes' | 'validate' | 'promote' | 'rollback' | 'clear_candidate' | 'clear_rollback' | 'terminate';
export const INSTANCE_ACTIONS: readonly InstanceAction[] = [
  'update_attributes',
  'validate',
  'promote',
  'rollback',
  'clear_candidate',
  'clear_rollback',
  'terminate',
];
export type InstanceState = string;

/** States every lifecycle has, with a meaning the engine gives them. */
export const TERMINATED = 'terminated';
export const DEALLOCATING = 'deallocating';

export interface Transition {
  action: InstanceAction;
  from: readonly InstanceState[];
  /** the state afterwards; absent: the state does not change (terminate: decided by the engine) */
  to?: InstanceState;
  /**
   * validate: the set validation allocates into (always `candidate`: allocation results are
   * written to the candidate set). promote: the candidate set must have been validated first.
   */
  validate?: 'candidate';
  /** promote: the candidate set becomes active (the active one the rollback set); rollback: the rollback and active sets swap */
  promote?: 'candidate' | 'rollback';
}

export interface LifecycleDefinition {
  /** the state of a new instance */
  initial: InstanceState;
  states: readonly InstanceState[];
  /** terminate waits in `deallocating` until every external deallocation is delivered */
  wait_for_deallocation: boolean;
  transitions: readonly Transition[];
}

const LIVE_BUILT_IN = ['start', 'up', 'update'] as const;
const builtIn = (waitForDeallocation: boolean): LifecycleDefinition => ({
  initial: 'start',
  states: [...LIVE_BUILT_IN, ...(waitForDeallocation ? [DEALLOCATING] : []), TERMINATED],
  wait_for_deallocation: waitForDeallocation,
  transitions: [
    { action: 'update_attributes', from: ['start', 'update'] },
    { action: 'update_attributes', from: ['up'], to: 'update' },
    { action: 'validate', from: ['start', 'update'], validate: 'candidate' },
    { action: 'promote', from: ['start', 'update'], to: 'up', validate: 'candidate', promote: 'candidate' },
    { action: 'rollback', from: ['up'], promote: 'rollback' },
    { action: 'clear_candidate', from: ['update'], to: 'up' },
    { action: 'clear_rollback', from: [...LIVE_BUILT_IN] },
    { action: 'terminate', from: [...LIVE_BUILT_IN, ...(waitForDeallocation ? [DEALLOCATING] : []), TERMINATED] },
  ],
});

export const BUILT_IN_LIFECYCLES: Readonly<Record<string, LifecycleDefinition>> = {
  simple: builtIn(false),
  simple_with_deallocation: builtIn(true),
};

/** The lifecycles of a process: the built-in ones and those of `--ids-lifecycles`. */
export class Lifecycles {
  constructor(private readonly definitions: ReadonlyMap<string, LifecycleDefinition>) {}

  names(): string[] {
    return [...this.definitions.keys()];
  }

  /** Every state of every lifecycle: what an instance can be in. */
  states(): string[] {
    return [...new Set([...this.definitions.values()].flatMap((d) => d.states))];
  }

  /** The lifecycle of this name; `unknown_lifecycle` when there is none. */
  get(name: string): LifecycleDefinition {
    const d = this.definitions.get(name);
    if (!d) throw idsDomainError('unknown_lifecycle', { lifecycle: name, known: this.names() });
    return d;
  }

  /** The transition `action` takes from `state`; `action_not_allowed` when it has none. */
  transition(name: string, state: InstanceState, action: InstanceAction): Transition {
    const lifecycle = this.get(name);
    const found = lifecycle.transitions.find((t) => t.action === action && t.from.includes(state));
    if (!found) {
      const allowed = lifecycle.transitions.filter((t) => t.action === action).flatMap((t) => t.from);
      throw idsDomainError('action_not_allowed', { action, state, allowed });
    }
    return found;
  }
}

export const builtInLifecycles = () => new Lifecycles(new Map(Object.entries(BUILT_IN_LIFECYCLES)));

export const isLive = (state: InstanceState): boolean => state !== TERMINATED && state !== DEALLOCATING;

const NAME = /^[a-z][a-z0-9_]{0,39}$/;
const ALLOWED_KEYS: Record<string, readonly string[]> = {
  lifecycle: ['initial', 'states', 'wait_for_deallocation', 'transitions'],
  transition: ['action', 'from', 'to', 'validate', 'promote'],
};

/**
 * Check operator lifecycle definitions (the parsed `lifecycles` mapping of the file) and return
 * them with the built-in ones. Every problem is an Error whose message says where
 * (`lifecycles.NAME.transitions[2].to: …`).
 */
export function checkLifecycles(raw: unknown): Lifecycles {
  const out = new Map<string, LifecycleDefinition>(Object.entries(BUILT_IN_LIFECYCLES));
  if (raw === undefined || raw === null) return new Lifecycles(out);
  const fail = (where: string, why: string): never => {
    throw new Error(`${where}: ${why}`);
  };
  const isMapping = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isMapping(raw)) fail('lifecycles', 'must be a mapping of lifecycle names to definitions');
  for (const [name, def] of Object.entries(raw as Record<string, unknown>)) {
    const at = `lifecycles.${name}`;
    if (!NAME.test(name)) fail(at, 'a lifecycle name is 1 to 40 lower-case letters, digits and "_", starting with a letter');
    if (name in BUILT_IN_LIFECYCLES) fail(at, `"${name}" is built in and cannot be redefined`);
    if (!isMapping(def)) fail(at, 'must be a mapping with initial, states, transitions');
    const d = def as Record<string, unknown>;
    for (const k of Object.keys(d)) if (!ALLOWED_KEYS.lifecycle!.includes(k)) fail(`${at}.${k}`, `unknown key (known: ${ALLOWED_KEYS.lifecycle!.join(', ')})`);

    const wait = d.wait_for_deallocation ?? false;
    if (typeof wait !== 'boolean') fail(`${at}.wait_for_deallocation`, 'must be true or false');
    if (!Array.isArray(d.states) || d.states.length === 0) fail(`${at}.states`, 'must be a non-empty list of state names');
    const states = d.states as unknown[];
    states.forEach((s, i) => {
      if (typeof s !== 'string' || !NAME.test(s))
        fail(`${at}.states[${i}]`, 'a state name is 1 to 40 lower-case letters, digits and "_", starting with a letter');
      if (states.indexOf(s) !== i) fail(`${at}.states[${i}]`, `"${s}" is listed twice`);
    });
    const known = new Set(states as string[]);
    if (!known.has(TERMINATED)) fail(`${at}.states`, `must include "${TERMINATED}" (where terminate leads)`);
    if (wait && !known.has(DEALLOCATING)) fail(`${at}.states`, `must include "${DEALLOCATING}" when wait_for_deallocation is true`);
    if (!wait && known.has(DEALLOCATING)) fail(`${at}.states`, `"${DEALLOCATING}" is only for wait_for_deallocation: true`);
    if (typeof d.initial !== 'string' || !known.has(d.initial)) fail(`${at}.initial`, `must be one of the states (${[...known].join(', ')})`);
    if (!isLive(d.initial as string)) fail(`${at}.initial`, `a new instance cannot start in "${d.initial}"`);

    if (!Array.isArray(d.transitions) || d.transitions.length === 0) fail(`${at}.transitions`, 'must be a non-empty list');
    const transitions: Transition[] = [];
    const taken = new Map<string, number>();
    (d.transitions as unknown[]).forEach((entry, i) => {
      const tat = `${at}.transitions[${i}]`;
      if (!isMapping(entry)) fail(tat, 'must be a mapping with action, from and optionally to, validate, promote');
      const t = entry as Record<string, unknown>;
      for (const k of Object.keys(t))
        if (!ALLOWED_KEYS.transition!.includes(k)) fail(`${tat}.${k}`, `unknown key (known: ${ALLOWED_KEYS.transition!.join(', ')})`);
      const action = t.action as InstanceAction;
      if (!INSTANCE_ACTIONS.includes(action)) fail(`${tat}.action`, `must be one of ${INSTANCE_ACTIONS.join(', ')}`);
      const from = typeof t.from === 'string' ? [t.from] : t.from;
      if (!Array.isArray(from) || from.length === 0) fail(`${tat}.from`, 'must be a state or a non-empty list of states');
      for (const s of from as unknown[]) {
        if (typeof s !== 'string' || !known.has(s)) fail(`${tat}.from`, `${JSON.stringify(s)} is not one of the states`);
        if (!isLive(s as string) && action !== 'terminate') fail(`${tat}.from`, `only terminate is possible in "${s}"`);
        const key = `${s}/${action}`;
        if (taken.has(key)) fail(`${tat}.from`, `${action} from "${s}" is already transitions[${taken.get(key)}]`);
        taken.set(key, i);
      }
      if (t.to !== undefined) {
        if (action === 'terminate')
          fail(`${tat}.to`, `terminate leads to "${TERMINATED}" (or "${DEALLOCATING}" while deallocations are owed); it takes no "to"`);
        if (typeof t.to !== 'string' || !known.has(t.to)) fail(`${tat}.to`, `${JSON.stringify(t.to)} is not one of the states`);
        if (!isLive(t.to as string)) fail(`${tat}.to`, `only terminate leads to "${t.to}"`);
      }
      if (t.validate !== undefined) {
        if (t.validate !== 'candidate') fail(`${tat}.validate`, 'only the candidate set is validated (allocation writes into it)');
        if (action !== 'validate' && action !== 'promote')
          fail(`${tat}.validate`, 'applies to validate (the set validated) and promote (the set must be validated first)');
      }
      if (action === 'validate' && t.validate !== 'candidate') fail(`${tat}.validate`, 'a validate transition must say validate: candidate');
      const promotes = { promote: 'candidate', rollback: 'rollback' } as Partial<Record<InstanceAction, string>>;
      if (promotes[action] !== undefined && t.promote !== promotes[action])
        fail(`${tat}.promote`, `a ${action} transition promotes the ${promotes[action]} set: write promote: ${promotes[action]}`);
      if (promotes[action] === undefined && t.promote !== undefined) fail(`${tat}.promote`, `${action} promotes no set`);
      transitions.push({
        action,
        from: from as string[],
        ...(t.to !== undefined ? { to: t.to as string } : {}),
        ...(t.validate !== undefined ? { validate: 'candidate' as const } : {}),
        ...(t.promote !== undefined ? { promote: t.promote as 'candidate' | 'rollback' } : {}),
      });
    });
    // Every instance can always be terminated, and every state can be reached.
    for (const s of known) if (!taken.has(`${s}/terminate`)) fail(`${at}.transitions`, `terminate must be allowed from every state; "${s}" has none`);
    const reached = new Set([d.initial as string, TERMINATED, ...(wait ? [DEALLOCATING] : [])]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const t of transitions) {
        const to = t.to;
        if (to && !reached.has(to) && t.from.some((s) => reached.has(s))) {
          reached.add(to);
          grew = true;
        }
      }
    }
    for (const s of known) if (!reached.has(s)) fail(`${at}.states`, `"${s}" cannot be reached from "${d.initial}"`);
    out.set(name, { initial: d.initial as string, states: states as string[], wait_for_deallocation: wait as boolean, transitions });
  }
  return new Lifecycles(out);
}
