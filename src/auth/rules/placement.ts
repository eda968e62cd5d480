// Placement's default policy (openstack/placement, placement/policies/*.py), rule for rule: every
// operation is for administrators and services (nova's scheduler and compute, neutron, …) in a
// project-scoped token; a project reader may read its own project's total usages. Before the new
// defaults every rule was `role:admin` (`--no-enforce-new-defaults` adds that back to each).
import type { RuleDefault } from '../policy.js';

const LEGACY = 'role:admin';
const ADMIN_OR_SERVICE = 'rule:admin_or_service_api';
const project = ['project'] as const;

const op = (name: string, description: string, check = ADMIN_OR_SERVICE): RuleDefault => ({
  name,
  check,
  description,
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

  op('placement:resource_providers:list', 'List resource providers.'),
  op('placement:resource_providers:create', 'Create resource provider.'),
  op('placement:resource_providers:show', 'Show resource provider.'),
  op('placement:resource_providers:update', 'Update resource provider.'),
  op('placement:resource_providers:delete', 'Delete resource provider.'),

  op('placement:resource_classes:list', 'List resource classes.'),
  op('placement:resource_classes:create', 'Create resource class.'),
  op('placement:resource_classes:show', 'Show resource class.'),
  op('placement:resource_classes:update', 'Update resource class.'),
  op('placement:resource_classes:delete', 'Delete resource class.'),

  op('placement:resource_providers:inventories:list', 'List resource provider inventories.'),
  op('placement:resource_providers:inventories:create', 'Create one resource provider inventory.'),
  op('placement:resource_providers:inventories:show', 'Show resource provider inventory.'),
  op('placement:resource_providers:inventories:update', 'Update resource provider inventory.'),
  op('placement:resource_providers:inventories:delete', 'Delete resource provider inventory.'),

  op('placement:resource_providers:aggregates:list', 'List resource provider aggregates.'),
  op('placement:resource_providers:aggregates:update', 'Update resource provider aggregates.'),

  op('placement:resource_providers:usages', 'List resource provider usages.'),
  // Admins see any project's usages; a project's members and readers only their own (the target's
  // project_id is the one the query names).
  op('placement:usages', 'List total resource usages for a given project.', 'rule:admin_or_project_reader_or_service_api'),

  op('placement:traits:list', 'List traits.'),
  op('placement:traits:show', 'Show trait.'),
  op('placement:traits:update', 'Update trait.'),
  op('placement:traits:delete', 'Delete trait.'),
  op('placement:resource_providers:traits:list', 'List resource provider traits.'),
  op('placement:resource_providers:traits:update', 'Update resource provider traits.'),
  op('placement:resource_providers:traits:delete', 'Delete resource provider traits.'),

  op('placement:allocations:manage', 'Manage allocations.'),
  op('placement:allocations:list', 'List allocations.'),
  op('placement:allocations:update', 'Update allocations.'),
  op('placement:allocations:delete', 'Delete allocations.'),
  op('placement:resource_providers:allocations:list', 'List resource provider allocations.'),

  op('placement:allocation_candidates:list', 'List allocation candidates.'),
  op('placement:reshaper:reshape', 'Reshape Inventory and Allocations.', 'rule:service_api'),
];
