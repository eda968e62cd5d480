// The allocation algorithm's pure parts: the order candidates are tried in, what a node must
// satisfy beyond the columns the claim's compare-and-set checks, and Ironic's failure sentence.

/**
 * The order in which an allocation tries its candidates: shuffled, so that concurrent allocations
 * do not all fight over the first node, and (1.79 behaviour, which allot always applies) a node
 * whose name equals the allocation's name first.
 */
export function candidateOrder<T extends { name: string | null }>(nodes: T[], allocationName: string | null, random: () => number = Math.random): T[] {
  const out = [...nodes];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  if (allocationName !== null) {
    const i = out.findIndex((n) => n.name === allocationName);
    if (i > 0) out.unshift(...out.splice(i, 1));
  }
  return out;
}

/** What the reservation's compare-and-set cannot check in SQL, on the reserved row. */
export function stillSuitable(
  node: { uuid: string; owner: string | null; lessee: string | null; traits: readonly string[] },
  allocation: { candidates: readonly string[]; owner: string | null; traits: readonly string[] },
): boolean {
  return (
    (allocation.candidates.length === 0 || allocation.candidates.includes(node.uuid)) &&
    (allocation.owner === null || node.owner === allocation.owner || node.lessee === allocation.owner) &&
    allocation.traits.every((t) => node.traits.includes(t))
  );
}

/** The sentence of `last_error` for an allocation that failed: Ironic's wording. */
export function allocationFailure(uuid: string, reason: string): string {
  return `Failed to process allocation ${uuid}: ${reason}.`;
}
