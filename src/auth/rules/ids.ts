// allot's identifier API, in the same roles OpenStack services use: readers read, members
// allocate, change and release values (and run service instances, which allocate), admins define
// pools and specs and look after the external inventories. The `service` role acts as a member,
// as services (a network service allocating VNIs) call this API for their users. A pool belongs
// to a project or is shared (no project): a reader or member sees and uses only its own
// project's pools and the shared ones; `ids:all_projects` (admins, the system scope, services)
// reaches every project's. Another project's pool, and its values, are "not found" (404).
import type { RuleDefault } from '../policy.js';

const both = ['system', 'project'] as const;
const op = (name: string, check: string, description: string, operations: string[]): RuleDefault => ({
  name,
  check,
  description,
  operations,
  scopeTypes: both,
});
const READER = 'rule:ids:reader';
const MEMBER = 'rule:ids:member';
const ADMIN = 'rule:ids:admin';

export const IDS_RULES: readonly RuleDefault[] = [
  { name: 'ids:reader', check: 'role:reader or role:service', description: 'Who may read pools, allocations, specs and service instances.' },
  { name: 'ids:member', check: 'role:member or role:service', description: 'Who may allocate, change and release values.' },
  { name: 'ids:admin', check: 'role:admin', description: 'Who may define pools and allocation specs and manage external deliveries.' },
  {
    name: 'ids:all_projects',
    check: 'role:admin or system_scope:all or role:service',
    description: "Who sees and uses every project's pools; others only their own project's and the shared ones.",
  },

  op('ids:pools:list', READER, 'List pools.', ['GET /v1/pools']),
  op('ids:pools:show', READER, 'Show a pool, its utilization and free ranges.', ['GET /v1/pools/{pool}', 'GET /v1/pools/{pool}/free-ranges']),
  op('ids:pools:create', ADMIN, 'Create a pool.', ['POST /v1/pools']),
  op('ids:pools:update', ADMIN, 'Change a pool.', ['PATCH /v1/pools/{pool}']),
  op('ids:pools:delete', ADMIN, 'Delete an empty pool.', ['DELETE /v1/pools/{pool}']),
  op('ids:pools:import', ADMIN, 'Import existing holdings into a pool.', ['POST /v1/pools/{pool}/imports']),

  op('ids:allocations:list', READER, 'List allocations.', ['GET /v1/allocations', 'GET /v1/pools/{pool}/allocations']),
  op('ids:allocations:show', READER, 'Show an allocation.', ['GET /v1/allocations/{id}']),
  op('ids:allocations:create', MEMBER, 'Allocate values (one pool, or several all or nothing).', ['POST /v1/pools/{pool}/allocations', 'POST /v1/allocations']),
  op('ids:allocations:update', MEMBER, 'Confirm, extend or change an allocation.', ['PATCH /v1/allocations/{id}']),
  op('ids:allocations:delete', MEMBER, 'Release an allocation (by id, or by pool and value).', [
    'DELETE /v1/allocations/{id}',
    'DELETE /v1/pools/{pool}/allocations',
  ]),

  op('ids:allocation_specs:list', READER, 'List allocation specs.', ['GET /v1/allocation-specs']),
  op('ids:allocation_specs:show', READER, 'Show an allocation spec.', ['GET /v1/allocation-specs/{name}']),
  op('ids:allocation_specs:create', ADMIN, 'Create an allocation spec.', ['POST /v1/allocation-specs']),
  op('ids:allocation_specs:delete', ADMIN, 'Delete an allocation spec.', ['DELETE /v1/allocation-specs/{name}']),

  op('ids:service_instances:list', READER, 'List service instances.', ['GET /v1/service-instances']),
  op('ids:service_instances:show', READER, 'Show a service instance.', ['GET /v1/service-instances/{id}']),
  op('ids:service_instances:create', MEMBER, 'Create a service instance.', ['POST /v1/service-instances']),
  op('ids:service_instances:update', MEMBER, "Change a service instance's attributes, validate, promote or roll it back, clear an attribute set.", [
    'PATCH /v1/service-instances/{id}',
    'POST /v1/service-instances/{id}/validate',
    'POST /v1/service-instances/{id}/promote',
    'POST /v1/service-instances/{id}/rollback',
    'DELETE /v1/service-instances/{id}/attribute-sets/{set}',
  ]),
  op('ids:service_instances:delete', MEMBER, 'Terminate a service instance (releasing what it holds).', ['DELETE /v1/service-instances/{id}']),

  op('ids:inventories:list', READER, 'List the configured external inventories.', ['GET /v1/inventories']),
  op('ids:outbox:list', ADMIN, 'List deliveries owed to external inventories.', ['GET /v1/outbox', 'GET /v1/outbox/{id}']),
  op('ids:outbox:retry', ADMIN, 'Retry a delivery to an external inventory now.', ['POST /v1/outbox/{id}/retry']),
];
