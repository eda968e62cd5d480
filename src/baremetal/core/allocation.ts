// Ironic's wording of an allocation that failed.

/** The sentence of `last_error` for an allocation that failed: Ironic's wording. */
export function allocationFailure(uuid: string, reason: string): string {
  return `Failed to process allocation ${uuid}: ${reason}.`;
}
