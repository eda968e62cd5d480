// Placement's default policy (openstack/placement, placement/policies/*.py), rule for rule: every
// operation is for administrators and services (nova's scheduler and compute, neutron, …) in a
// project-scoped token; a project reader may read its own project's total usages. Before the new
// defaults every rule was `role:admin` (`--no-enforce-new-defaults` adds that back to each).
import type { RuleDefault } from '../policy.js';

const LEGACY = 'role:admin';
const ADMIN_OR_SERVICE = 'rule:admin_or_service_api';
const project = ['project'] as const;

const op = (name: string, description: string, operations: string[], check = ADMIN_OR_SERVICE): RuleDefault => ({
  name,
  check,
  description,
  operations,
  scopeTypes: project,
});

export const PLACEMENT_RULES: readonly RuleDefault[] = [
  { name: 'admin_api', check: 'role:admin', description: 'Default rule for most placement APIs.', scopeTypes: project },
  { name: 'service_api', check: 'role:service', description: 'Default rule for service-to-service placement APIs.', scopeTypes: project, deprecated: LEGACY },
  {
    name: 'admin_or_service_api',
    check: 'role:admin or role:service',
    description: 'Default rule for most placement APIs.',
    scopeTypes: project,
    deprecated: LEGACY,
  },
  {
    name: 'project_reader_api',
    check: 'role:reader and project_id:%(project_id)s',
    description: 'Default rule for project level reader APIs.',
    deprecated: LEGACY,
  },
  {
    name: 'admin_or_project_reader_or_service_api',
    check: 'role:admin or rule:project_reader_api or role:service',
    description: 'Default rule for project level reader APIs.',
    scopeTypes: project,
    deprecated: LEGACY,
  },

  op('placement:resource_providers:list', 'List resource providers.', ['GET /resource_providers']),
  op('placement:resource_providers:create', 'Create resource provider.', ['POST /resource_providers']),
  op('placement:resource_providers:show', 'Show resource provider.', ['GET /resource_providers/{uuid}']),
  op('placement:resource_providers:update', 'Update resource provider.', ['PUT /resource_providers/{uuid}']),
  op('placement:resource_providers:delete', 'Delete resource provider.', ['DELETE /resource_providers/{uuid}']),

  op('placement:resource_classes:list', 'List resource classes.', ['GET /resource_classes']),
  op('placement:resource_classes:create', 'Create resource class.', ['POST /resource_classes']),
  op('placement:resource_classes:show', 'Show resource class.', ['GET /resource_classes/{name}']),
  op('placement:resource_classes:update', 'Update resource class.', ['PUT /resource_classes/{name}']),
  op('placement:resource_classes:delete', 'Delete resource class.', ['DELETE /resource_classes/{name}']),

  op('placement:resource_providers:inventories:list', 'List resource provider inventories.', ['GET /resource_providers/{uuid}/inventories']),
  op('placement:resource_providers:inventories:create', 'Create one resource provider inventory.', ['POST /resource_providers/{uuid}/inventories']),
  op('placement:resource_providers:inventories:show', 'Show resource provider inventory.', ['GET /resource_providers/{uuid}/inventories/{resource_class}']),
  op('placement:resource_providers:inventories:update', 'Update resource provider inventory.', [
    'PUT /resource_providers/{uuid}/inventories',
    'PUT /resource_providers/{uuid}/inventories/{resource_class}',
  ]),
  op('placement:resource_providers:inventories:delete', 'Delete resource provider inventory.', [
    'DELETE /resource_providers/{uuid}/inventories',
    'DELETE /resource_providers/{uuid}/inventories/{resource_class}',
  ]),

  op('placement:resource_providers:aggregates:list', 'List resource provider aggregates.', ['GET /resource_providers/{uuid}/aggregates']),
  op('placement:resource_providers:aggregates:update', 'Update resource provider aggregates.', ['PUT /resource_providers/{uuid}/aggregates']),

  op('placement:resource_providers:usages', 'List resource provider usages.', ['GET /resource_providers/{uuid}/usages']),
  // Admins see any project's usages; a project's members and readers only their own (the target's
  // project_id is the one the query names).
  op('placement:usages', 'List total resource usages for a given project.', ['GET /usages'], 'rule:admin_or_project_reader_or_service_api'),

  op('placement:traits:list', 'List traits.', ['GET /traits']),
  op('placement:traits:show', 'Show trait.', ['GET /traits/{name}']),
  op('placement:traits:update', 'Update trait.', ['PUT /traits/{name}']),
  op('placement:traits:delete', 'Delete trait.', ['DELETE /traits/{name}']),
  op('placement:resource_providers:traits:list', 'List resource provider traits.', ['GET /resource_providers/{uuid}/traits']),
  op('placement:resource_providers:traits:update', 'Update resource provider traits.', ['PUT /resource_providers/{uuid}/traits']),
  op('placement:resource_providers:traits:delete', 'Delete resource provider traits.', ['DELETE /resource_providers/{uuid}/traits']),

  op('placement:allocations:manage', 'Manage allocations.', ['POST /allocations']),
  op('placement:allocations:list', 'List allocations.', ['GET /allocations/{consumer_uuid}']),
  op('placement:allocations:update', 'Update allocations.', ['PUT /allocations/{consumer_uuid}']),
  op('placement:allocations:delete', 'Delete allocations.', ['DELETE /allocations/{consumer_uuid}']),
  op('placement:resource_providers:allocations:list', 'List resource provider allocations.', ['GET /resource_providers/{uuid}/allocations']),

  op('placement:allocation_candidates:list', 'List allocation candidates.', ['GET /allocation_candidates']),
  op('placement:reshaper:reshape', 'Reshape Inventory and Allocations.', ['POST /reshaper'], 'rule:service_api'),
];
