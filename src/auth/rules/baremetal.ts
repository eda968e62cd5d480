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

const rule = (name: string, check: string, description: string, operations: string[], deprecated?: string): RuleDefault => ({
  name,
  check,
  description,
  operations,
  scopeTypes: both,
  ...(deprecated !== undefined ? { deprecated } : {}),
});
const NODE = '/v1/nodes/{node_ident}';
const PATCH_NODE = [`PATCH ${NODE}`];

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

  rule('baremetal:node:create', any(SYSTEM_ADMIN, SYSTEM_SERVICE), 'Create Node records', ['POST /v1/nodes'], IS_ADMIN),
  rule(
    'baremetal:node:create:self_owned_node',
    '(role:admin) or (role:service)',
    'Create node records which will be tracked as owned by the associated user project.',
    ['POST /v1/nodes'],
  ),
  rule(
    'baremetal:node:list',
    API_READER,
    'Retrieve multiple Node records, filtered by an explicit owner or the client project_id',
    ['GET /v1/nodes', 'GET /v1/nodes/detail'],
    'rule:baremetal:node:get',
  ),
  rule('baremetal:node:list_all', SYSTEM_READER, 'Retrieve multiple Node records', ['GET /v1/nodes', 'GET /v1/nodes/detail'], 'rule:baremetal:node:get'),
  rule('baremetal:node:get', SYSTEM_OR_PROJECT_READER, 'Retrieve a single Node record', [`GET ${NODE}`], ADMIN_OR_OBSERVER),
  rule(
    'baremetal:node:get:filter_threshold',
    SYSTEM_READER,
    'Above this, node fields are shown unfiltered; below, further policy checks mask fields.',
    [`GET ${NODE}`],
    ADMIN_OR_OBSERVER,
  ),
  rule(
    'baremetal:node:get:last_error',
    SYSTEM_OR_OWNER_READER,
    'Governs if the node last_error field is masked from API clients with insufficient privileges.',
    [`GET ${NODE}`],
    ADMIN_OR_OBSERVER,
  ),
  rule(
    'baremetal:node:get:reservation',
    SYSTEM_OR_OWNER_READER,
    'Governs if the node reservation field is masked from API clients with insufficient privileges.',
    [`GET ${NODE}`],
    ADMIN_OR_OBSERVER,
  ),
  rule(
    'baremetal:node:get:driver_internal_info',
    SYSTEM_OR_OWNER_READER,
    'Governs if the node driver_internal_info field is masked from API clients with insufficient privileges.',
    [`GET ${NODE}`],
    ADMIN_OR_OBSERVER,
  ),
  rule(
    'baremetal:node:get:driver_info',
    SYSTEM_OR_OWNER_READER,
    'Governs if the driver_info field is masked from API clients with insufficient privileges.',
    [`GET ${NODE}`],
    ADMIN_OR_OBSERVER,
  ),
  rule('baremetal:node:update', SYSTEM_OR_PROJECT_MEMBER, 'Generalized update of node records', PATCH_NODE, IS_ADMIN),
  rule(
    'baremetal:node:update:driver_info',
    SYSTEM_MEMBER_OR_OWNER_MEMBER,
    'Governs if node driver_info field can be updated via the API clients.',
    PATCH_NODE,
    IS_ADMIN,
  ),
  rule(
    'baremetal:node:update:properties',
    SYSTEM_MEMBER_OR_OWNER_MEMBER,
    'Governs if node properties field can be updated via the API clients.',
    PATCH_NODE,
    IS_ADMIN,
  ),
  rule('baremetal:node:update:chassis_uuid', SYSTEM_ADMIN, 'Governs if node chassis_uuid field can be updated via the API clients.', PATCH_NODE, IS_ADMIN),
  rule(
    'baremetal:node:update:instance_uuid',
    SYSTEM_MEMBER_OR_OWNER_MEMBER,
    'Governs if node instance_uuid field can be updated via the API clients.',
    PATCH_NODE,
    IS_ADMIN,
  ),
  rule('baremetal:node:update:lessee', SYSTEM_MEMBER_OR_OWNER_MEMBER, 'Governs if node lessee field can be updated via the API clients.', PATCH_NODE, IS_ADMIN),
  rule('baremetal:node:update:owner', SYSTEM_MEMBER, 'Governs if node owner field can be updated via the API clients.', PATCH_NODE, IS_ADMIN),
  rule(
    'baremetal:node:update:driver_interfaces',
    SYSTEM_MEMBER_OR_OWNER_ADMIN,
    'Governs if node driver and driver interfaces field can be updated via the API clients.',
    PATCH_NODE,
    IS_ADMIN,
  ),
  rule(
    'baremetal:node:update:network_data',
    SYSTEM_MEMBER_OR_OWNER_MEMBER,
    'Governs if node network_data field can be updated via the API clients.',
    PATCH_NODE,
    IS_ADMIN,
  ),
  rule(
    'baremetal:node:update:conductor_group',
    SYSTEM_MEMBER,
    'Governs if node conductor_group field can be updated via the API clients.',
    PATCH_NODE,
    IS_ADMIN,
  ),
  rule('baremetal:node:update:name', SYSTEM_MEMBER_OR_OWNER_MEMBER, 'Governs if node name field can be updated via the API clients.', PATCH_NODE, IS_ADMIN),
  rule(
    'baremetal:node:update:retired',
    SYSTEM_MEMBER_OR_OWNER_MEMBER,
    'Governs if node retired and retired reason can be updated by API clients.',
    PATCH_NODE,
    IS_ADMIN,
  ),
  rule('baremetal:node:update:shard', SYSTEM_ADMIN, 'Governs if node shard field can be updated via the API clients.', PATCH_NODE),
  rule('baremetal:node:update:parent_node', SYSTEM_MEMBER, 'Governs if node parent_node field can be updated via the API clients.', PATCH_NODE),
  rule('baremetal:node:update_extra', SYSTEM_OR_PROJECT_MEMBER, 'Update Node extra field', PATCH_NODE, 'rule:baremetal:node:update'),
  rule(
    'baremetal:node:update_instance_info',
    SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN,
    'Update Node instance_info field',
    PATCH_NODE,
    'rule:baremetal:node:update',
  ),
  {
    ...rule('baremetal:node:update_owner_provisioned', SYSTEM_ADMIN, 'Update Node owner even when Node is provisioned', PATCH_NODE, IS_ADMIN),
    scopeTypes: ['system'],
  },
  rule('baremetal:node:disable_cleaning', SYSTEM_ADMIN, 'Disable Node disk cleaning', PATCH_NODE, 'rule:baremetal:node:update'),
  rule('baremetal:node:delete', SYSTEM_ADMIN, 'Delete Node records', [`DELETE ${NODE}`], IS_ADMIN),
  rule('baremetal:node:delete:self_owned_node', PROJECT_ADMIN, 'Delete node records which are associated with the requesting project.', [`DELETE ${NODE}`]),
  rule(
    'baremetal:node:set_maintenance',
    SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN,
    'Set maintenance flag, taking a Node out of service',
    [`PUT ${NODE}/maintenance`],
    IS_ADMIN,
  ),
  rule(
    'baremetal:node:clear_maintenance',
    SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN,
    'Clear maintenance flag, placing the Node into service again',
    [`DELETE ${NODE}/maintenance`],
    IS_ADMIN,
  ),
  rule('baremetal:node:get_states', SYSTEM_OR_PROJECT_READER, 'View Node power and provision state', [`GET ${NODE}/states`], ADMIN_OR_OBSERVER),
  rule('baremetal:node:set_power_state', SYSTEM_OR_PROJECT_MEMBER, 'Change Node power status', [`PUT ${NODE}/states/power`], IS_ADMIN),
  rule(
    'baremetal:node:set_provision_state',
    SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN,
    'Change Node provision status',
    [`PUT ${NODE}/states/provision`],
    IS_ADMIN,
  ),
  rule('baremetal:node:traits:list', SYSTEM_OR_PROJECT_READER, 'List node traits', [`GET ${NODE}/traits`], ADMIN_OR_OBSERVER),
  rule(
    'baremetal:node:traits:set',
    SYSTEM_MEMBER_OR_OWNER_ADMIN,
    'Add a trait to, or replace all traits of, a node',
    [`PUT ${NODE}/traits`, `PUT ${NODE}/traits/{trait}`],
    IS_ADMIN,
  ),
  rule(
    'baremetal:node:traits:delete',
    SYSTEM_MEMBER_OR_OWNER_ADMIN,
    'Remove one or all traits from a node',
    [`DELETE ${NODE}/traits`, `DELETE ${NODE}/traits/{trait}`],
    IS_ADMIN,
  ),

  // what fake hardware answers and records of a node
  rule('baremetal:node:validate', SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN, 'Request active validation of Nodes', [`GET ${NODE}/validate`], IS_ADMIN),
  rule('baremetal:node:vif:list', SYSTEM_OR_PROJECT_READER, 'List VIFs attached to node', [`GET ${NODE}/vifs`], ADMIN_OR_OBSERVER),
  rule('baremetal:node:vif:attach', SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN, 'Attach a VIF to a node', [`POST ${NODE}/vifs`], IS_ADMIN),
  rule('baremetal:node:vif:detach', SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN, 'Detach a VIF from a node', [`DELETE ${NODE}/vifs/{vif_id}`], IS_ADMIN),
  rule(
    'baremetal:node:get_boot_device',
    SYSTEM_MEMBER_OR_OWNER_ADMIN,
    'Retrieve Node boot device metadata',
    [`GET ${NODE}/management/boot_device`, `GET ${NODE}/management/boot_device/supported`],
    IS_ADMIN,
  ),
  rule('baremetal:node:set_boot_device', SYSTEM_MEMBER_OR_OWNER_ADMIN, 'Change Node boot device', [`PUT ${NODE}/management/boot_device`], IS_ADMIN),
  rule('baremetal:node:get_console', SYSTEM_MEMBER_OR_OWNER_MEMBER, 'Get Node console connection information', [`GET ${NODE}/states/console`], IS_ADMIN),
  rule('baremetal:node:set_console_state', SYSTEM_MEMBER_OR_OWNER_MEMBER, 'Change Node console status', [`PUT ${NODE}/states/console`], IS_ADMIN),
  rule('baremetal:node:set_raid_state', SYSTEM_MEMBER_OR_OWNER_MEMBER, 'Change Node RAID status', [`PUT ${NODE}/states/raid`], IS_ADMIN),
  // ports and port groups: their node's owner and lessee are the target
  rule('baremetal:port:get', SYSTEM_OR_PROJECT_READER, 'Retrieve a single Port record', ['GET /v1/ports/{port_id}'], ADMIN_OR_OBSERVER),
  rule('baremetal:port:list', API_READER, 'Retrieve multiple Port records, filtered by owner', ['GET /v1/ports', 'GET /v1/ports/detail'], ADMIN_OR_OBSERVER),
  rule('baremetal:port:list_all', SYSTEM_READER, 'Retrieve multiple Port records', ['GET /v1/ports', 'GET /v1/ports/detail'], ADMIN_OR_OBSERVER),
  rule('baremetal:port:create', SYSTEM_ADMIN_OR_OWNER_ADMIN, 'Create Port records', ['POST /v1/ports'], IS_ADMIN),
  rule('baremetal:port:delete', SYSTEM_ADMIN_OR_OWNER_ADMIN, 'Delete Port records', ['DELETE /v1/ports/{port_id}'], IS_ADMIN),
  rule('baremetal:port:update', SYSTEM_MEMBER_OR_OWNER_ADMIN, 'Update Port records', ['PATCH /v1/ports/{port_id}'], IS_ADMIN),
  rule('baremetal:portgroup:get', SYSTEM_OR_PROJECT_READER, 'Retrieve a single Portgroup record', ['GET /v1/portgroups/{portgroup_ident}'], ADMIN_OR_OBSERVER),
  rule('baremetal:portgroup:create', SYSTEM_ADMIN_OR_OWNER_ADMIN, 'Create Portgroup records', ['POST /v1/portgroups'], IS_ADMIN),
  rule('baremetal:portgroup:delete', SYSTEM_ADMIN_OR_OWNER_ADMIN, 'Delete Portgroup records', ['DELETE /v1/portgroups/{portgroup_ident}'], IS_ADMIN),
  rule('baremetal:portgroup:update', SYSTEM_MEMBER_OR_OWNER_ADMIN, 'Update Portgroup records', ['PATCH /v1/portgroups/{portgroup_ident}'], IS_ADMIN),
  rule(
    'baremetal:portgroup:list',
    API_READER,
    'Retrieve multiple Portgroup records, filtered by owner',
    ['GET /v1/portgroups', 'GET /v1/portgroups/detail'],
    ADMIN_OR_OBSERVER,
  ),
  rule(
    'baremetal:portgroup:list_all',
    SYSTEM_READER,
    'Retrieve multiple Portgroup records',
    ['GET /v1/portgroups', 'GET /v1/portgroups/detail'],
    ADMIN_OR_OBSERVER,
  ),
  // volume connectors and targets: their node's owner and lessee are the target
  rule(
    'baremetal:volume:list_all',
    SYSTEM_READER,
    'Retrieve a list of all Volume connector and target records',
    ['GET /v1/volume/connectors', 'GET /v1/volume/targets'],
    ADMIN_OR_OBSERVER,
  ),
  rule(
    'baremetal:volume:list',
    API_READER,
    'Retrieve a list of Volume connector and target records',
    ['GET /v1/volume/connectors', 'GET /v1/volume/targets'],
    ADMIN_OR_OBSERVER,
  ),
  rule(
    'baremetal:volume:get',
    SYSTEM_OR_PROJECT_READER,
    'Retrieve Volume connector and target records',
    ['GET /v1/volume/connectors/{volume_connector_id}', 'GET /v1/volume/targets/{volume_target_id}'],
    ADMIN_OR_OBSERVER,
  ),
  rule(
    'baremetal:volume:create',
    SYSTEM_MEMBER_OR_OWNER_LESSEE_ADMIN,
    'Create Volume connector and target records',
    ['POST /v1/volume/connectors', 'POST /v1/volume/targets'],
    IS_ADMIN,
  ),
  rule(
    'baremetal:volume:delete',
    SYSTEM_MEMBER_OR_OWNER_LESSEE_ADMIN,
    'Delete Volume connector and target records',
    ['DELETE /v1/volume/connectors/{volume_connector_id}', 'DELETE /v1/volume/targets/{volume_target_id}'],
    IS_ADMIN,
  ),
  rule(
    'baremetal:volume:update',
    SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN,
    'Update Volume connector and target records',
    ['PATCH /v1/volume/connectors/{volume_connector_id}', 'PATCH /v1/volume/targets/{volume_target_id}'],
    IS_ADMIN,
  ),
  // chassis: the system's
  rule('baremetal:chassis:get', SYSTEM_READER, 'Retrieve Chassis records', ['GET /v1/chassis', 'GET /v1/chassis/{chassis_id}'], ADMIN_OR_OBSERVER),
  rule('baremetal:chassis:create', SYSTEM_ADMIN, 'Create Chassis records', ['POST /v1/chassis'], IS_ADMIN),
  rule('baremetal:chassis:delete', SYSTEM_ADMIN, 'Delete Chassis records', ['DELETE /v1/chassis/{chassis_id}'], IS_ADMIN),
  rule('baremetal:chassis:update', SYSTEM_MEMBER, 'Update Chassis records', ['PATCH /v1/chassis/{chassis_id}'], IS_ADMIN),
  rule('baremetal:driver:get', SYSTEM_READER, 'View list of available drivers', ['GET /v1/drivers', 'GET /v1/drivers/{driver_name}'], ADMIN_OR_OBSERVER),
  rule('baremetal:driver:get_properties', SYSTEM_READER, 'View driver-specific properties', ['GET /v1/drivers/{driver_name}/properties'], ADMIN_OR_OBSERVER),
  rule(
    'baremetal:driver:get_raid_logical_disk_properties',
    SYSTEM_READER,
    'View driver-specific RAID metadata',
    ['GET /v1/drivers/{driver_name}/raid/logical_disk_properties'],
    ADMIN_OR_OBSERVER,
  ),
  rule(
    'baremetal:deploy_template:get',
    SYSTEM_READER,
    'Retrieve Deploy Template records',
    ['GET /v1/deploy_templates', 'GET /v1/deploy_templates/{deploy_template_ident}'],
    ADMIN_OR_OBSERVER,
  ),
  rule('baremetal:deploy_template:create', SYSTEM_ADMIN, 'Create Deploy Template records', ['POST /v1/deploy_templates'], IS_ADMIN),
  rule('baremetal:deploy_template:delete', SYSTEM_ADMIN, 'Delete Deploy Template records', ['DELETE /v1/deploy_templates/{deploy_template_ident}'], IS_ADMIN),
  rule('baremetal:deploy_template:update', SYSTEM_ADMIN, 'Update Deploy Template records', ['PATCH /v1/deploy_templates/{deploy_template_ident}'], IS_ADMIN),
  rule('baremetal:conductor:get', SYSTEM_READER, 'Retrieve Conductor records', ['GET /v1/conductors', 'GET /v1/conductors/{hostname}'], ADMIN_OR_OBSERVER),

  rule(
    'baremetal:allocation:get',
    ALLOCATION_READER,
    'Retrieve Allocation records',
    ['GET /v1/allocations/{allocation_id}', `GET ${NODE}/allocation`],
    ADMIN_OR_OBSERVER,
  ),
  rule(
    'baremetal:allocation:list',
    API_READER,
    'Retrieve multiple Allocation records, filtered by owner',
    ['GET /v1/allocations'],
    'rule:baremetal:allocation:get',
  ),
  rule(
    'baremetal:allocation:list_all',
    SYSTEM_READER,
    'Retrieve multiple Allocation records',
    ['GET /v1/allocations'],
    'rule:baremetal:allocation:get and is_admin_project:True',
  ),
  rule('baremetal:allocation:create', ALLOCATION_CREATOR, 'Create Allocation records', ['POST /v1/allocations'], 'rule:is_admin and is_admin_project:True'),
  rule(
    'baremetal:allocation:create_restricted',
    SYSTEM_MEMBER,
    'Create Allocation records with a specific owner.',
    ['POST /v1/allocations'],
    'rule:baremetal:allocation:create',
  ),
  rule(
    'baremetal:allocation:delete',
    ALLOCATION_MEMBER,
    'Delete Allocation records',
    ['DELETE /v1/allocations/{allocation_id}', `DELETE ${NODE}/allocation`],
    IS_ADMIN,
  ),
  rule('baremetal:allocation:update', ALLOCATION_MEMBER, 'Change name and extra fields of an allocation', ['PATCH /v1/allocations/{allocation_id}'], IS_ADMIN),
  {
    name: 'baremetal:allocation:create_pre_rbac',
    check: '(rule:is_member and role:baremetal_admin) or (is_admin_project:True and role:admin)',
    description: 'Logical restrictor to prevent legacy allocation rule misuse - requires blank allocations to originate from the legacy baremetal_admin.',
    operations: ['POST /v1/allocations'],
    scopeTypes: ['project'],
  },
];
