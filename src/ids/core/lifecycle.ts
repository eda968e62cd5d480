// Service instance lifecycles as data: which action is allowed in which state and where it
// leads. Pure; the store applies the attribute-set changes and the allocations.
//
//   start ──validate──> start (candidate validated) ──promote──> up
//   up ──PATCH attributes──> update ──validate──> update ──promote──> up      (rollback ← old active)
//   up ──rollback──> up (active ↔ rollback)
//   any live state ──terminate──> terminated                                   (simple)
//   any live state ──terminate──> deallocating ──outbox delivered──> terminated (simple_with_deallocation)
import { idsDomainError } from './domain-errors.js';

export type Lifecycle = 'simple' | 'simple_with_deallocation';
export type InstanceState = 'start' | 'up' | 'update' | 'deallocating' | 'terminated';
export type InstanceAction = 'update_attributes' | 'validate' | 'promote' | 'rollback' | 'clear_candidate' | 'clear_rollback' | 'terminate';

const ALLOWED: Record<InstanceAction, readonly InstanceState[]> = {
  update_attributes: ['start', 'up', 'update'],
  validate: ['start', 'update'],
  promote: ['start', 'update'],
  rollback: ['up'],
  clear_candidate: ['update'],
  clear_rollback: ['start', 'up', 'update'],
  terminate: ['start', 'up', 'update', 'deallocating', 'terminated'],
};

export function requireAllowed(state: InstanceState, action: InstanceAction): void {
  if (!ALLOWED[action].includes(state)) {
    throw idsDomainError('action_not_allowed', { action, state, allowed: ALLOWED[action] });
  }
}

/** The state after changing the candidate attributes. */
export const afterAttributeUpdate = (state: InstanceState): InstanceState => (state === 'up' ? 'update' : state);

/** The state terminate leads to: deallocating waits for the outbox when the lifecycle says so. */
export function afterTerminate(lifecycle: Lifecycle, pendingDeallocations: number): InstanceState {
  return lifecycle === 'simple_with_deallocation' && pendingDeallocations > 0 ? 'deallocating' : 'terminated';
}

export const isLive = (state: InstanceState): boolean => state !== 'terminated' && state !== 'deallocating';
