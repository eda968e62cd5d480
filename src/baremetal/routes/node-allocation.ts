import { schemaRef } from '../schemas.js';
import { badRequest } from '../errors.js';
import type { Endpoint } from '../request.js';
import { deleteNodeAllocation } from '../services/allocations.js';
import { lookupAllocation } from '../services/allocation-reads.js';
import { allocationTarget, authorizedNode, scoped } from './scope.js';
import { ALLOCATION_FIELDS, allocationView, parseFields } from '../views.js';
import { nodeIdent, viewContext } from './common.js';
import { showQuery } from './query.js';
import { baremetalDomainError } from '../core/domain-errors.js';

type E = Endpoint;

const noAllocation = (ident: string) => baremetalDomainError('node_allocation_not_found', { ident }, `node ${ident} has no allocation`);

/** Before 1.52 the node has no allocation sub-resource: the framework's bare 404. */
const ALLOCATIONS_SINCE = { since: '1.52' } as const;

export const allocation: E = {
  ...scoped('baremetal:allocation:get'),
  summary: "the node's allocation",
  query: showQuery(),
  ok: [200],
  response: schemaRef('Allocation'),
  ...ALLOCATIONS_SINCE,
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node');
    const args = req.queryArgs();
    const fields = parseFields(args.fields, ALLOCATION_FIELDS, req.mv);
    const node = await authorizedNode(req, ctx, ident);
    if (node.allocation_uuid === null) {
      // an instance_uuid set directly (without an allocation) is the spec's 400
      if (node.instance_uuid !== null && !(await lookupAllocation(ctx, node.instance_uuid))) {
        throw badRequest(`Node ${node.uuid} has instance_uuid ${node.instance_uuid}, which does not correspond to any allocation`);
      }
      throw noAllocation(ident);
    }
    const found = await lookupAllocation(ctx, node.allocation_uuid);
    if (!found) throw noAllocation(ident);
    req.authorizeScoped(allocationTarget(found));
    return { body: allocationView(found, viewContext(req, ctx), fields) };
  },
};

export const removeAllocation: E = {
  ...scoped('baremetal:allocation:delete'),
  summary: "delete the node's allocation",
  ok: [204],
  ...ALLOCATIONS_SINCE,
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node');
    req.queryArgs();
    const node = await authorizedNode(req, ctx, ident);
    const found = node.allocation_uuid === null ? undefined : await lookupAllocation(ctx, node.allocation_uuid);
    if (found) req.authorizeScoped(allocationTarget(found));
    await deleteNodeAllocation(ctx, ident);
    return {};
  },
};
