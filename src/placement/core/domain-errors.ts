// Every error Placement's stores and services raise: a stable code and the facts it carries,
// nothing of HTTP. src/placement/errors.ts is the one table that words each code as Placement
// does; its type makes a code left out (or a misspelt one raised) a compile error.
import { DomainError } from '../../core/errors.js';

/** Why a provider's parent is refused; errors.ts words each as Placement does. */
export type ParentProblem = 'self' | 'missing' | 'unparent' | 'reparent' | 'loop';

/** An amount of one class on one provider that the provider cannot take. */
type AmountRefused = { class: string; provider: string };

export interface PlacementDomainErrors {
  // providers
  provider_not_found: { uuid: string };
  provider_name_taken: { name: string };
  provider_uuid_taken: { uuid: string };
  invalid_parent: { uuid: string; name: string; problem: ParentProblem };
  /** the generation the client sent is not the provider's */
  provider_generation_mismatch: { uuid: string; actual: number; given: number };
  /** the client's generation was right when read, and another writer moved it before the bump */
  provider_changed_concurrently: { uuid: string };
  provider_has_allocations: { uuid: string };
  provider_has_children: { uuid: string };
  // traits
  trait_not_found: { name: string };
  unknown_traits: { names: string[] };
  trait_is_standard: { name: string };
  trait_in_use: { name: string };
  // resource classes
  resource_class_not_found: { name: string };
  resource_class_exists: { name: string };
  resource_class_is_standard: { name: string };
  resource_class_in_use: { name: string };
  // inventories
  inventory_exists: { provider: string; class: string };
  inventory_not_found: { provider: string; class: string };
  unknown_inventory_class: { provider: string; names: string[] };
  /** `classes`: those removed that have allocations, in resource class id order */
  inventory_in_use: { provider: string; classes: string[] };
  inventory_changed_concurrently: { provider: string };
  // allocations
  unknown_resource_class: { consumer: string; name: string };
  allocation_provider_missing: { uuid: string };
  reshape_provider_missing: { uuid: string };
  /** `expected` null: the client expected no consumer; `got` undefined: the client sent none */
  consumer_generation_conflict: { expected: number | null; got: number | null | undefined };
  consumer_not_found: { uuid: string };
  /** a class id remembered was renamed or recreated by another process, more often than retries allow */
  resource_classes_changed: Record<string, never>;
  inventory_constraint_violated: AmountRefused;
  /** the provider has no inventory of the class */
  inventory_invalid: AmountRefused;
  capacity_exceeded: AmountRefused;
  /** the transaction helper's (src/core/errors.ts): retries after races ran out */
  concurrent_update: { what: string };
  // allot: providers another service of this process owns (the bare-metal service's nodes)
  provider_owned: { providers: string[]; owner: string };
  // allot: a consumer a service instance of the identifier API holds (docs/ids.md)
  consumer_held: { consumer: string; held_by: string };
}

export type PlacementErrorCode = keyof PlacementDomainErrors;

/** A domain error of Placement, its facts checked against its code. */
export function placementDomainError<C extends PlacementErrorCode>(code: C, params: PlacementDomainErrors[C], message: string = code): DomainError {
  return new DomainError(code, params, message);
}

/** Is this a domain error of Placement with one of these codes? */
export function isPlacementError(err: unknown, codes: readonly PlacementErrorCode[]): err is DomainError {
  return err instanceof DomainError && (codes as readonly string[]).includes(err.code);
}
