// What a new allocation asks for, and Ironic's wording of an allocation that failed.

/** A new allocation, its values already checked by the route. */
export interface NewAllocation {
  /** normalized; null: a new one (or, backfilling, the node's instance_uuid) */
  uuid: string | null;
  name: string | null;
  resourceClass: string | null;
  traits: string[];
  /** nodes by uuid or name */
  candidateNodes: string[];
  /** set: the candidates must be this project's nodes (owned or leased); others are "not found" */
  candidatesOf?: string | null;
  extra: Record<string, unknown>;
  owner: string | null;
  /** backfill (1.58): the deployed node this allocation records */
  node: string | null;
}

/** The sentence of `last_error` for an allocation that failed: Ironic's wording. */
export function allocationFailure(uuid: string, reason: string): string {
  return `Failed to process allocation ${uuid}: ${reason}.`;
}
