// Ironic's project scoping (ironic/api/controllers/v1/utils.py): a project-scoped caller sees the
// nodes its project owns or leases and the allocations its project owns; a system-scoped reader
// sees all. What the caller may not see is not found (404, as if it did not exist); what it sees
// but may not do is a 403 naming the rule. Per-resource rules get the resource as the target
// (`node.owner`, `node.lessee`, `allocation.owner`); the default rules are in auth/rules/baremetal.ts.
import type { IronicRequest } from '../request.js';
import type { BaremetalContext } from '../context.js';
import { type AllocationRecord, allocationNotFound, getAllocation } from '../services/allocation-reads.js';
import { type NodeRecord, getNode, nodeNotFound } from '../services/node-reads.js';

/**
 * An endpoint's rule that the handler checks itself, on what it loads (`req.endpointRule`, with
 * the target below), rather than the pipeline before the handler.
 */
export const scoped = (policy: string) => ({ policy, scoped: true });

/**
 * The node as policy sees it. An empty owner or lessee is left out, as Ironic leaves it out: a
 * check `project_id:%(node.owner)s` would otherwise compare "None" with a system-scoped caller's
 * project, which is None too, and match.
 */
export function nodeTarget(node: Pick<NodeRecord, 'owner' | 'lessee'>): Record<string, unknown> {
  const target: Record<string, unknown> = {};
  if (node.owner) target['node.owner'] = node.owner;
  if (node.lessee) target['node.lessee'] = node.lessee;
  return target;
}

/** The allocation as policy sees it (an allocation without owner: see nodeTarget). */
export function allocationTarget(allocation: Pick<AllocationRecord, 'owner'>): Record<string, unknown> {
  return allocation.owner ? { 'allocation.owner': allocation.owner } : {};
}

/** May the caller see this node at all (`baremetal:node:get` on it)? */
export const canSeeNode = (req: IronicRequest, node: Pick<NodeRecord, 'owner' | 'lessee'>): boolean => req.allows('baremetal:node:get', nodeTarget(node));

/**
 * The node a request names, if the caller may see it (else "Node X could not be found.", as for a
 * node that does not exist) and each of `rules` allows the caller on it (else 403).
 */
export async function authorizedNode(req: IronicRequest, ctx: BaremetalContext, ident: string, ...rules: string[]): Promise<NodeRecord> {
  const node = await getNode(ctx, ident);
  if (!canSeeNode(req, node)) throw nodeNotFound(ident);
  for (const rule of rules) req.authorize(rule, nodeTarget(node));
  return node;
}

/** The allocation a request names, if the caller may see it (else 404) and `rule` allows the caller on it (else 403). */
export async function authorizedAllocation(req: IronicRequest, ctx: BaremetalContext, ident: string, rule: string): Promise<AllocationRecord> {
  const allocation = await getAllocation(ctx, ident);
  if (!req.allows('baremetal:allocation:get', allocationTarget(allocation))) throw allocationNotFound(ident);
  req.authorize(rule, allocationTarget(allocation));
  return allocation;
}

/**
 * Whose resources a list shows (Ironic's check_list_policy): with `baremetal:<kind>:list_all`
 * whatever the request filters by (`requested`); otherwise, with `baremetal:<kind>:list`, the
 * caller's own project — asking for another project's, or having no project, is refused under
 * `list_all`.
 */
export function listScope(
  req: IronicRequest,
  kind: 'node' | 'allocation' | 'port' | 'portgroup' | 'volume',
  requested: string | undefined,
): string | undefined {
  const all = `baremetal:${kind}:list_all`;
  if (req.allows(all)) return requested;
  const project = req.credentials?.projectId ?? null;
  if (project === null || (requested && requested !== project)) req.authorize(all);
  req.authorize(`baremetal:${kind}:list`);
  return project ?? undefined;
}

/** A port, port group or volume resource as policy sees it: its node's owner and lessee. */
export const partTarget = (r: { node_owner: string | null; node_lessee: string | null }) => nodeTarget({ owner: r.node_owner, lessee: r.node_lessee });
