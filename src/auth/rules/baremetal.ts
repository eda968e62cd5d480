// Ironic's default policy (openstack/ironic, ironic/common/policy.py) for what allot's bare-metal
// API serves: nodes (and their states, maintenance, traits, allocation), allocations, conductors,
// chassis, ports and port groups, volume connectors and targets, drivers, deploy templates. System-scoped readers/members/admins see and manage every node; project-scoped
// callers act on nodes whose `owner` (or `lessee`) is their project, and on their own allocations.
// The pre-RBAC rules (`rule:is_admin`, `rule:is_observer`) come back with --no-enforce-new-defaults.
import type { RuleDefault } from '../policy.js';

const SYSTEM_ADMIN = 'role:admin and system_scope:all';
const SYSTEM_MEMBER = '(role:member and system_scope:all) or rule:service_role';
const SYSTEM_READER = '(role:reader and system_scope:all) or (role:service and system_scope:all) or rule:service_role';
const PROJECT_ADMIN = 'role:admin and project_id:%(node.owner)s';
const PROJECT_MEMBER = 'role:member and (project_id:%(node.owner)s or project_id:%(node.lessee)s)';
const PROJECT_READER = 'role:reader and (project_id:%(node.owner)s or project_id:%(node.lessee)s)';
const SYSTEM_SERVICE = 'role:service and system_scope:all';
const PROJECT_SERVICE = 'role:service and project_id:%(node.owner)s';
const PROJECT_OWNER_ADMIN = 'role:admin and project_id:%(node.owner)s';
const PROJECT_OWNER_MANAGER = 'role:manager and project_id:%(node.owner)s';
const PROJECT_OWNER_MEMBER = 'role:member and project_id:%(node.owner)s';
const PROJECT_OWNER_READER = 'role:reader and project_id:%(node.owner)s';
const PROJECT_LESSEE_ADMIN = 'role:admin and project_id:%(node.lessee)s';
const PROJECT_LESSEE_MANAGER = 'role:manager and project_id:%(node.lessee)s';
const ALLOCATION_OWNER_MEMBER = 'role:member and project_id:%(allocation.owner)s';
const ALLOCATION_OWNER_READER = 'role:reader and project_id:%(allocation.owner)s';

const any = (...checks: string[]) => checks.map((c) => `(${c})`).join(' or ');
const SYSTEM_OR_PROJECT_MEMBER = any(SYSTEM_MEMBER, PROJECT_MEMBER, SYSTEM_SERVICE);
const SYSTEM_OR_PROJECT_READER = any(SYSTEM_READER, PROJECT_READER, PROJECT_SERVICE);
const SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN = any(
  SYSTEM_MEMBER,
  SYSTEM_SERVICE,
  PROJECT_OWNER_MEMBER,
  PROJECT_LESSEE_ADMIN,
  PROJECT_LESSEE_MANAGER,
  PROJECT_SERVICE,
);
const SYSTEM_MEMBER_OR_OWNER_ADMIN = any(SYSTEM_MEMBER, SYSTEM_SERVICE, PROJECT_OWNER_ADMIN, PROJECT_OWNER_MANAGER, PROJECT_SERVICE);
const SYSTEM_ADMIN_OR_OWNER_ADMIN = any(SYSTEM_ADMIN, SYSTEM_SERVICE, PROJECT_OWNER_ADMIN, PROJECT_OWNER_MANAGER, PROJECT_SERVICE);
const SYSTEM_MEMBER_OR_OWNER_LESSEE_ADMIN = any(
  SYSTEM_MEMBER,
  SYSTEM_SERVICE,
  PROJECT_OWNER_ADMIN,
  PROJECT_OWNER_MANAGER,
  PROJECT_LESSEE_ADMIN,
  PROJECT_LESSEE_MANAGER,
  PROJECT_SERVICE,
);
const SYSTEM_MEMBER_OR_OWNER_MEMBER = any(SYSTEM_MEMBER, SYSTEM_SERVICE, PROJECT_OWNER_MEMBER, PROJECT_SERVICE);
const SYSTEM_OR_OWNER_READER = any(SYSTEM_READER, SYSTEM_SERVICE, PROJECT_OWNER_READER, PROJECT_SERVICE);
const ALLOCATION_MEMBER = any(SYSTEM_MEMBER, ALLOCATION_OWNER_MEMBER);
const ALLOCATION_READER = any(SYSTEM_READER, ALLOCATION_OWNER_READER);
const ALLOCATION_CREATOR = any(SYSTEM_MEMBER, 'role:member');
const API_READER = '(role:reader) or (role:service)';

const IS_ADMIN = 'rule:is_admin';
const ADMIN_OR_OBSERVER = 'rule:is_admin or rule:is_observer';
const both = ['system', 'project'] as const;

const rule = (name: string, check: string, description: string, deprecated?: string): RuleDefault => ({
  name,
  check,
  description,
  scopeTypes: both,
  ...(deprecated !== undefined ? { deprecated } : {}),
});

export const BAREMETAL_RULES: readonly RuleDefault[] = [
  // Base rules (the pre-RBAC ones are what the deprecated defaults are made of).
  { name: 'admin_api', check: 'role:admin or role:administrator', description: 'Legacy rule for cloud admin access' },
  { name: 'public_api', check: 'is_public_api:True', description: 'Internal flag for public API routes' },
  { name: 'show_password', check: '!', description: 'Show or mask secrets within node driver information in API responses.' },
  { name: 'show_instance_secrets', check: '!', description: 'Show or mask secrets within instance information in API responses.' },
  // `config.service_project_name` is in the target only when the operator grants the service
  // project elevated access (Ironic's rbac_service_role_elevated_access, off by default).
  {
    name: 'service_role',
    check: 'role:service and project_name:%(config.service_project_name)s',
    description: 'Rule to match service role usage with a service project.',
  },
  {
    name: 'is_member',
    check: '(project_domain_id:default or project_domain_id:None) and (project_name:demo or project_name:baremetal)',
    description: 'May be used to restrict access to specific projects',
  },
  { name: 'is_observer', check: 'rule:is_member and (role:observer or role:baremetal_observer)', description: 'Read-only API access' },
  { name: 'is_admin', check: 'rule:admin_api or (rule:is_member and role:baremetal_admin)', description: 'Full read/write API access' },
  { name: 'is_node_owner', check: 'project_id:%(node.owner)s', description: 'Owner of node' },
  { name: 'is_node_lessee', check: 'project_id:%(node.lessee)s', description: 'Lessee of node' },
  { name: 'is_allocation_owner', check: 'project_id:%(allocation.owner)s', description: 'Owner of allocation' },

  rule('baremetal:node:create', any(SYSTEM_ADMIN, SYSTEM_SERVICE), 'Create Node records', IS_ADMIN),
  rule(
    'baremetal:node:create:self_owned_node',
    '(role:admin) or (role:service)',
    'Create node records which will be tracked as owned by the associated user project.',
  ),
  rule('baremetal:node:list', API_READER, 'Retrieve multiple Node records, filtered by an explicit owner or the client project_id', 'rule:baremetal:node:get'),
  rule('baremetal:node:list_all', SYSTEM_READER, 'Retrieve multiple Node records', 'rule:baremetal:node:get'),
  rule('baremetal:node:get', SYSTEM_OR_PROJECT_READER, 'Retrieve a single Node record', ADMIN_OR_OBSERVER),
  rule(
    'baremetal:node:get:filter_threshold',
    SYSTEM_READER,
    'Above this, node fields are shown unfiltered; below, further policy checks mask fields.',
    ADMIN_OR_OBSERVER,
  ),
  rule(
    'baremetal:node:get:last_error',
    SYSTEM_OR_OWNER_READER,
    'Governs if the node last_error field is masked from API clients with insufficient privileges.',
    ADMIN_OR_OBSERVER,
  ),
  rule(
    'baremetal:node:get:reservation',
    SYSTEM_OR_OWNER_READER,
    'Governs if the node reservation field is masked from API clients with insufficient privileges.',
    ADMIN_OR_OBSERVER,
  ),
  rule(
    'baremetal:node:get:driver_internal_info',
    SYSTEM_OR_OWNER_READER,
    'Governs if the node driver_internal_info field is masked from API clients with insufficient privileges.',
    ADMIN_OR_OBSERVER,
  ),
  rule(
    'baremetal:node:get:driver_info',
    SYSTEM_OR_OWNER_READER,
    'Governs if the driver_info field is masked from API clients with insufficient privileges.',
    ADMIN_OR_OBSERVER,
  ),
  rule('baremetal:node:update', SYSTEM_OR_PROJECT_MEMBER, 'Generalized update of node records', IS_ADMIN),
  rule('baremetal:node:update:driver_info', SYSTEM_MEMBER_OR_OWNER_MEMBER, 'Governs if node driver_info field can be updated via the API clients.', IS_ADMIN),
  rule('baremetal:node:update:properties', SYSTEM_MEMBER_OR_OWNER_MEMBER, 'Governs if node properties field can be updated via the API clients.', IS_ADMIN),
  rule('baremetal:node:update:chassis_uuid', SYSTEM_ADMIN, 'Governs if node chassis_uuid field can be updated via the API clients.', IS_ADMIN),
  rule(
    'baremetal:node:update:instance_uuid',
    SYSTEM_MEMBER_OR_OWNER_MEMBER,
    'Governs if node instance_uuid field can be updated via the API clients.',
    IS_ADMIN,
  ),
  rule('baremetal:node:update:lessee', SYSTEM_MEMBER_OR_OWNER_MEMBER, 'Governs if node lessee field can be updated via the API clients.', IS_ADMIN),
  rule('baremetal:node:update:owner', SYSTEM_MEMBER, 'Governs if node owner field can be updated via the API clients.', IS_ADMIN),
  rule(
    'baremetal:node:update:driver_interfaces',
    SYSTEM_MEMBER_OR_OWNER_ADMIN,
    'Governs if node driver and driver interfaces field can be updated via the API clients.',
    IS_ADMIN,
  ),
  rule('baremetal:node:update:network_data', SYSTEM_MEMBER_OR_OWNER_MEMBER, 'Governs if node network_data field can be updated via the API clients.', IS_ADMIN),
  rule('baremetal:node:update:conductor_group', SYSTEM_MEMBER, 'Governs if node conductor_group field can be updated via the API clients.', IS_ADMIN),
  rule('baremetal:node:update:name', SYSTEM_MEMBER_OR_OWNER_MEMBER, 'Governs if node name field can be updated via the API clients.', IS_ADMIN),
  rule('baremetal:node:update:retired', SYSTEM_MEMBER_OR_OWNER_MEMBER, 'Governs if node retired and retired reason can be updated by API clients.', IS_ADMIN),
  rule('baremetal:node:update:shard', SYSTEM_ADMIN, 'Governs if node shard field can be updated via the API clients.'),
  rule('baremetal:node:update:parent_node', SYSTEM_MEMBER, 'Governs if node parent_node field can be updated via the API clients.'),
  rule('baremetal:node:update_extra', SYSTEM_OR_PROJECT_MEMBER, 'Update Node extra field', 'rule:baremetal:node:update'),
  rule('baremetal:node:update_instance_info', SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN, 'Update Node instance_info field', 'rule:baremetal:node:update'),
  {
    ...rule('baremetal:node:update_owner_provisioned', SYSTEM_ADMIN, 'Update Node owner even when Node is provisioned', IS_ADMIN),
    scopeTypes: ['system'],
  },
  rule('baremetal:node:disable_cleaning', SYSTEM_ADMIN, 'Disable Node disk cleaning', 'rule:baremetal:node:update'),
  rule('baremetal:node:delete', SYSTEM_ADMIN, 'Delete Node records', IS_ADMIN),
  rule('baremetal:node:delete:self_owned_node', PROJECT_ADMIN, 'Delete node records which are associated with the requesting project.'),
  rule('baremetal:node:set_maintenance', SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN, 'Set maintenance flag, taking a Node out of service', IS_ADMIN),
  rule('baremetal:node:clear_maintenance', SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN, 'Clear maintenance flag, placing the Node into service again', IS_ADMIN),
  rule('baremetal:node:get_states', SYSTEM_OR_PROJECT_READER, 'View Node power and provision state', ADMIN_OR_OBSERVER),
  rule('baremetal:node:set_power_state', SYSTEM_OR_PROJECT_MEMBER, 'Change Node power status', IS_ADMIN),
  rule('baremetal:node:set_provision_state', SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN, 'Change Node provision status', IS_ADMIN),
  rule('baremetal:node:traits:list', SYSTEM_OR_PROJECT_READER, 'List node traits', ADMIN_OR_OBSERVER),
  rule('baremetal:node:traits:set', SYSTEM_MEMBER_OR_OWNER_ADMIN, 'Add a trait to, or replace all traits of, a node', IS_ADMIN),
  rule('baremetal:node:traits:delete', SYSTEM_MEMBER_OR_OWNER_ADMIN, 'Remove one or all traits from a node', IS_ADMIN),

  // what fake hardware answers and records of a node
  rule('baremetal:node:validate', SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN, 'Request active validation of Nodes', IS_ADMIN),
  rule('baremetal:node:vif:list', SYSTEM_OR_PROJECT_READER, 'List VIFs attached to node', ADMIN_OR_OBSERVER),
  rule('baremetal:node:vif:attach', SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN, 'Attach a VIF to a node', IS_ADMIN),
  rule('baremetal:node:vif:detach', SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN, 'Detach a VIF from a node', IS_ADMIN),
  rule('baremetal:node:get_boot_device', SYSTEM_MEMBER_OR_OWNER_ADMIN, 'Retrieve Node boot device metadata', IS_ADMIN),
  rule('baremetal:node:set_boot_device', SYSTEM_MEMBER_OR_OWNER_ADMIN, 'Change Node boot device', IS_ADMIN),
  rule('baremetal:node:get_console', SYSTEM_MEMBER_OR_OWNER_MEMBER, 'Get Node console connection information', IS_ADMIN),
  rule('baremetal:node:set_console_state', SYSTEM_MEMBER_OR_OWNER_MEMBER, 'Change Node console status', IS_ADMIN),
  rule('baremetal:node:set_raid_state', SYSTEM_MEMBER_OR_OWNER_MEMBER, 'Change Node RAID status', IS_ADMIN),
  // ports and port groups: their node's owner and lessee are the target
  rule('baremetal:port:get', SYSTEM_OR_PROJECT_READER, 'Retrieve a single Port record', ADMIN_OR_OBSERVER),
  rule('baremetal:port:list', API_READER, 'Retrieve multiple Port records, filtered by owner', ADMIN_OR_OBSERVER),
  rule('baremetal:port:list_all', SYSTEM_READER, 'Retrieve multiple Port records', ADMIN_OR_OBSERVER),
  rule('baremetal:port:create', SYSTEM_ADMIN_OR_OWNER_ADMIN, 'Create Port records', IS_ADMIN),
  rule('baremetal:port:delete', SYSTEM_ADMIN_OR_OWNER_ADMIN, 'Delete Port records', IS_ADMIN),
  rule('baremetal:port:update', SYSTEM_MEMBER_OR_OWNER_ADMIN, 'Update Port records', IS_ADMIN),
  rule('baremetal:portgroup:get', SYSTEM_OR_PROJECT_READER, 'Retrieve a single Portgroup record', ADMIN_OR_OBSERVER),
  rule('baremetal:portgroup:create', SYSTEM_ADMIN_OR_OWNER_ADMIN, 'Create Portgroup records', IS_ADMIN),
  rule('baremetal:portgroup:delete', SYSTEM_ADMIN_OR_OWNER_ADMIN, 'Delete Portgroup records', IS_ADMIN),
  rule('baremetal:portgroup:update', SYSTEM_MEMBER_OR_OWNER_ADMIN, 'Update Portgroup records', IS_ADMIN),
  rule('baremetal:portgroup:list', API_READER, 'Retrieve multiple Portgroup records, filtered by owner', ADMIN_OR_OBSERVER),
  rule('baremetal:portgroup:list_all', SYSTEM_READER, 'Retrieve multiple Portgroup records', ADMIN_OR_OBSERVER),
  // volume connectors and targets: their node's owner and lessee are the target
  rule('baremetal:volume:list_all', SYSTEM_READER, 'Retrieve a list of all Volume connector and target records', ADMIN_OR_OBSERVER),
  rule('baremetal:volume:list', API_READER, 'Retrieve a list of Volume connector and target records', ADMIN_OR_OBSERVER),
  rule('baremetal:volume:get', SYSTEM_OR_PROJECT_READER, 'Retrieve Volume connector and target records', ADMIN_OR_OBSERVER),
  rule('baremetal:volume:create', SYSTEM_MEMBER_OR_OWNER_LESSEE_ADMIN, 'Create Volume connector and target records', IS_ADMIN),
  rule('baremetal:volume:delete', SYSTEM_MEMBER_OR_OWNER_LESSEE_ADMIN, 'Delete Volume connector and target records', IS_ADMIN),
  rule('baremetal:volume:update', SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN, 'Update Volume connector and target records', IS_ADMIN),
  // chassis: the system's
  rule('baremetal:chassis:get', SYSTEM_READER, 'Retrieve Chassis records', ADMIN_OR_OBSERVER),
  rule('baremetal:chassis:create', SYSTEM_ADMIN, 'Create Chassis records', IS_ADMIN),
  rule('baremetal:chassis:delete', SYSTEM_ADMIN, 'Delete Chassis records', IS_ADMIN),
  rule('baremetal:chassis:update', SYSTEM_MEMBER, 'Update Chassis records', IS_ADMIN),
  rule('baremetal:driver:get', SYSTEM_READER, 'View list of available drivers', ADMIN_OR_OBSERVER),
  rule('baremetal:driver:get_properties', SYSTEM_READER, 'View driver-specific properties', ADMIN_OR_OBSERVER),
  rule('baremetal:driver:get_raid_logical_disk_properties', SYSTEM_READER, 'View driver-specific RAID metadata', ADMIN_OR_OBSERVER),
  rule('baremetal:deploy_template:get', SYSTEM_READER, 'Retrieve Deploy Template records', ADMIN_OR_OBSERVER),
  rule('baremetal:deploy_template:create', SYSTEM_ADMIN, 'Create Deploy Template records', IS_ADMIN),
  rule('baremetal:deploy_template:delete', SYSTEM_ADMIN, 'Delete Deploy Template records', IS_ADMIN),
  rule('baremetal:deploy_template:update', SYSTEM_ADMIN, 'Update Deploy Template records', IS_ADMIN),
  rule('baremetal:conductor:get', SYSTEM_READER, 'Retrieve Conductor records', ADMIN_OR_OBSERVER),

  rule('baremetal:allocation:get', ALLOCATION_READER, 'Retrieve Allocation records', ADMIN_OR_OBSERVER),
  rule('baremetal:allocation:list', API_READER, 'Retrieve multiple Allocation records, filtered by owner', 'rule:baremetal:allocation:get'),
  rule('baremetal:allocation:list_all', SYSTEM_READER, 'Retrieve multiple Allocation records', 'rule:baremetal:allocation:get and is_admin_project:True'),
  rule('baremetal:allocation:create', ALLOCATION_CREATOR, 'Create Allocation records', 'rule:is_admin and is_admin_project:True'),
  rule('baremetal:allocation:create_restricted', SYSTEM_MEMBER, 'Create Allocation records with a specific owner.', 'rule:baremetal:allocation:create'),
  rule('baremetal:allocation:delete', ALLOCATION_MEMBER, 'Delete Allocation records', IS_ADMIN),
  rule('baremetal:allocation:update', ALLOCATION_MEMBER, 'Change name and extra fields of an allocation', IS_ADMIN),
  {
    name: 'baremetal:allocation:create_pre_rbac',
    check: '(rule:is_member and role:baremetal_admin) or (is_admin_project:True and role:admin)',
    description: 'Logical restrictor to prevent legacy allocation rule misuse - requires blank allocations to originate from the legacy baremetal_admin.',
    scopeTypes: ['project'],
  },
];
