// allot's identifier API, in the same roles OpenStack services use: readers read, members
// allocate, change and release values (and run service instances, which allocate), admins define
// pools and specs and look after the external inventories. The `service` role acts as a member,
// as services (a network service allocating VNIs) call this API for their users. A pool belongs
// to a project or is shared (no project): a reader or member sees and uses only its own
// project's pools and the shared ones; `ids:all_projects` (admins, the system scope, services)
// reaches every project's. Another project's pool, and its values, are "not found" (404).
import type { RuleDefault } from '../policy.js';

const both = ['system', 'project'] as const;
const op = (name: string, check: string, description: string): RuleDefault => ({
  name,
  check,
  description,
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

  op('ids:pools:list', READER, 'List pools.'),
  op('ids:pools:show', READER, 'Show a pool, its utilization and free ranges.'),
  op('ids:pools:create', ADMIN, 'Create a pool.'),
  op('ids:pools:update', ADMIN, 'Change a pool.'),
  op('ids:pools:delete', ADMIN, 'Delete an empty pool.'),
  op('ids:pools:import', ADMIN, 'Import existing holdings into a pool.'),

  op('ids:allocations:list', READER, 'List allocations.'),
  op('ids:allocations:show', READER, 'Show an allocation.'),
  op('ids:allocations:create', MEMBER, 'Allocate values (one pool, or several all or nothing).'),
  op('ids:allocations:update', MEMBER, 'Confirm, extend or change an allocation.'),
  op('ids:allocations:delete', MEMBER, 'Release an allocation (by id, or by pool and value).'),

  op('ids:allocation_specs:list', READER, 'List allocation specs.'),
  op('ids:allocation_specs:show', READER, 'Show an allocation spec.'),
  op('ids:allocation_specs:create', ADMIN, 'Create an allocation spec.'),
  op('ids:allocation_specs:delete', ADMIN, 'Delete an allocation spec.'),

  op('ids:service_instances:list', READER, 'List service instances.'),
  op('ids:service_instances:show', READER, 'Show a service instance.'),
  op('ids:service_instances:create', MEMBER, 'Create a service instance.'),
  op('ids:service_instances:update', MEMBER, "Change a service instance's attributes, validate, promote or roll it back, clear an attribute set."),
  op('ids:service_instances:delete', MEMBER, 'Terminate a service instance (releasing what it holds).'),

  op('ids:inventories:list', READER, 'List the configured external inventories.'),
  op('ids:outbox:list', ADMIN, 'List deliveries owed to external inventories.'),
  op('ids:outbox:retry', ADMIN, 'Retry a delivery to an external inventory now.'),
];
