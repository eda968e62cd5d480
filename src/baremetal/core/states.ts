// The fake-hardware driver's states, pure: the provision state machine (Ironic's, restricted to
// what hardware that never fails and never waits for a ramdisk can do) and the power targets.

// ---- provision states ------------------------------------------------------------------------

/** Every provision state Ironic has (the `provision_state` filter accepts exactly these). */
export const PROVISION_STATES = [
  'active',
  'adopt failed',
  'adopting',
  'available',
  'clean failed',
  'clean wait',
  'cleaning',
  'deleting',
  'deploy failed',
  'deploying',
  'enroll',
  'error',
  'inspect failed',
  'inspect wait',
  'inspecting',
  'manageable',
  'rescue',
  'rescue failed',
  'rescue wait',
  'rescuing',
  'unrescue failed',
  'unrescuing',
  'verifying',
  'wait call-back',
] as const;
export type ProvisionState = (typeof PROVISION_STATES)[number];

/** States in which fields that matter to scheduling (resource_class, instance_uuid with an allocation, interfaces) may change. */
export const UPDATE_ALLOWED_STATES: readonly string[] = ['enroll', 'inspecting', 'inspect wait', 'manageable', 'available'];
/** Transitional states in which an allocation may still be removed (Ironic's UPDATE_ALLOWED_STATES of the state machine). */
export const DEALLOCATE_ALLOWED_TRANSITIONAL: readonly string[] = [
  'deploy failed',
  'inspecting',
  'inspect failed',
  'inspect wait',
  'clean failed',
  'error',
  'verifying',
  'adopt failed',
  'rescue failed',
  'unrescue failed',
];
/** A node may be deleted in these states (or in maintenance). */
export const DELETE_ALLOWED_STATES: readonly string[] = ['manageable', 'enroll', 'adopt failed', 'available'];

/** API verbs (the `target` of PUT …/states/provision) → the state machine event. */
export const PROVISION_VERBS: Record<string, string> = {
  active: 'deploy',
  deploy: 'deploy',
  rebuild: 'rebuild',
  deleted: 'delete',
  undeploy: 'delete',
  manage: 'manage',
  provide: 'provide',
  inspect: 'inspect',
  clean: 'clean',
  adopt: 'adopt',
  rescue: 'rescue',
  unrescue: 'unrescue',
  abort: 'abort',
};

/** The microversion that introduced a verb (earlier requests get 406). */
export const VERB_SINCE: Record<string, string> = {
  manage: '1.4',
  provide: '1.4',
  inspect: '1.6',
  abort: '1.13',
  clean: '1.15',
  adopt: '1.17',
  rescue: '1.38',
  unrescue: '1.38',
  deploy: '1.73',
  undeploy: '1.73',
};

export interface Transition {
  /** the transitional state the node is in while the (simulated) hardware works; null: immediate */
  via: ProvisionState | null;
  /** the state it ends in */
  to: ProvisionState;
}

/**
 * event → from-state → transition. The fake hardware never fails and never waits for a ramdisk,
 * so the *wait and *failed states are reachable only as sources, never as results.
 */
const MACHINE: Record<string, Partial<Record<ProvisionState, Transition>>> = {
  manage: {
    enroll: { via: 'verifying', to: 'manageable' },
    available: { via: null, to: 'manageable' },
    'clean failed': { via: null, to: 'manageable' },
    'inspect failed': { via: null, to: 'manageable' },
    'adopt failed': { via: null, to: 'manageable' },
  },
  provide: { manageable: { via: 'cleaning', to: 'available' } },
  clean: { manageable: { via: 'cleaning', to: 'manageable' } },
  inspect: {
    manageable: { via: 'inspecting', to: 'manageable' },
    'inspect failed': { via: 'inspecting', to: 'manageable' },
  },
  deploy: {
    available: { via: 'deploying', to: 'active' },
    'deploy failed': { via: 'deploying', to: 'active' },
  },
  rebuild: {
    active: { via: 'deploying', to: 'active' },
    'deploy failed': { via: 'deploying', to: 'active' },
    error: { via: 'deploying', to: 'active' },
  },
  delete: {
    active: { via: 'deleting', to: 'available' },
    'wait call-back': { via: 'deleting', to: 'available' },
    'deploy failed': { via: 'deleting', to: 'available' },
    error: { via: 'deleting', to: 'available' },
    rescue: { via: 'deleting', to: 'available' },
    'rescue wait': { via: 'deleting', to: 'available' },
    'rescue failed': { via: 'deleting', to: 'available' },
    'unrescue failed': { via: 'deleting', to: 'available' },
  },
  adopt: {
    manageable: { via: 'adopting', to: 'active' },
    'adopt failed': { via: 'adopting', to: 'active' },
  },
  rescue: {
    active: { via: 'rescuing', to: 'rescue' },
    rescue: { via: 'rescuing', to: 'rescue' },
    'rescue failed': { via: 'rescuing', to: 'rescue' },
    'unrescue failed': { via: 'rescuing', to: 'rescue' },
  },
  unrescue: {
    rescue: { via: 'unrescuing', to: 'active' },
    'rescue failed': { via: 'unrescuing', to: 'active' },
    'unrescue failed': { via: 'unrescuing', to: 'active' },
  },
  // abort interrupts a *wait state, which the fake hardware never enters.
  abort: {},
};

/** The transition an API verb makes from a state, or null when the verb is not actionable there. */
export function provisionTransition(verb: string, from: string): Transition | null {
  const event = PROVISION_VERBS[verb];
  if (!event) return null;
  return MACHINE[event]?.[from as ProvisionState] ?? null;
}

/** A transitional state ends by tearing the instance down (instance_uuid, instance_info, allocation). */
export const TEARS_DOWN = (via: string | null): boolean => via === 'deleting';

// ---- power -----------------------------------------------------------------------------------

/** Power targets → the power state the node ends in; `since` is when the target was added. */
export const POWER_TARGETS: Record<string, { result: 'power on' | 'power off'; since: string }> = {
  'power on': { result: 'power on', since: '1.1' },
  'power off': { result: 'power off', since: '1.1' },
  rebooting: { result: 'power on', since: '1.1' },
  'soft power off': { result: 'power off', since: '1.27' },
  'soft rebooting': { result: 'power on', since: '1.27' },
};

// ---- deallocation ----------------------------------------------------------------------------

/**
 * Why a node's allocation may not be removed now (the spec's DELETE 409 rules), or null when it
 * may: a node in maintenance always may; one moving (outside the states where updates are allowed)
 * or deployed may not.
 */
export function deallocationRefusal(node: { maintenance: number; provision_state: string; target_provision_state: string | null }): 'moving' | 'active' | null {
  if (node.maintenance === 1) return null;
  if (node.target_provision_state !== null && !DEALLOCATE_ALLOWED_TRANSITIONAL.includes(node.provision_state)) return 'moving';
  if (node.provision_state === 'active') return 'active';
  return null;
}
