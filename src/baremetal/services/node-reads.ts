// Reading nodes for the routes: one by uuid or name (or node_not_found), a page of a filtered
// list. What writes a node, and its rules, is in nodes.ts.
import type { BaremetalContext } from '../context.js';
import type { Page } from '../core/paging.js';
import { type NodeFilters, type NodeRecord, findNode, listNodes, requireNode } from '../store/nodes.js';

export { type NodeColumn, type NodeFilters, type NodeRecord, nodeNotFound } from '../store/nodes.js';

/** The node with this uuid or name, or node_not_found. */
export function getNode(ctx: BaremetalContext, ident: string): Promise<NodeRecord> {
  return requireNode(ctx.database, ident);
}

/** The node with this uuid or name, if there is one. */
export function lookupNode(ctx: BaremetalContext, ident: string): Promise<NodeRecord | undefined> {
  return findNode(ctx.database, ident);
}

export function listNodePage(ctx: BaremetalContext, filters: NodeFilters, page: Page): Promise<NodeRecord[]> {
  return listNodes(ctx.database, filters, page);
}
