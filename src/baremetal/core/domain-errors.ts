// Every error the bare-metal stores and services raise: a stable code and the facts it carries,
// nothing of HTTP. src/baremetal/errors.ts is the one table that words each code as Ironic does;
// its type makes a code left out (or a misspelt one raised) a compile error.
import { DomainError } from '../../core/errors.js';

type Ident = { ident: string };
type Node = { node: string };
type NodeState = { node: string; state: string };
/** a node refused an action in its state (`state` null: no power state yet) */
type Action = { action: string; node: string; state: string | null };

export interface BaremetalDomainErrors {
  // nodes
  node_not_found: Ident;
  node_locked: { node: string; host: string | null };
  node_uuid_taken: { uuid: string };
  node_name_taken: { name: string };
  node_changed_concurrently: Record<string, never>;
  instance_associated: { instance: string; node: string };
  node_associated: { node: string; instance: string };
  /** `what`: the fields' kind; `fields` the interface fields (what = interfaces) */
  update_not_allowed: { node: string; what: 'interfaces' | 'resource_class' | 'instance_uuid_removal'; fields: string[]; allowed: readonly string[] };
  owner_change_active: Node;
  owner_change_allocated: { node: string; allocation: string };
  resource_class_allocated: { node: string; allocation: string | null };
  protect_not_allowed: NodeState;
  retire_not_allowed: NodeState;
  reason_without_flag: { flag: 'protected' | 'retired' };
  node_protected: Node;
  delete_not_allowed: { node: string; state: string; allowed: readonly string[] };
  too_many_traits: { node: string; count: number; max: number };
  node_trait_not_found: { node: string; trait: string };
  node_in_maintenance: Node;
  invalid_provision_action: Action;
  invalid_power_action: Action;
  power_target_too_new: { target: string; since: string };
  node_chassis_not_found: Ident;
  // chassis, port groups, ports, VIFs
  chassis_not_found: Ident;
  chassis_uuid_taken: { uuid: string };
  chassis_not_empty: { chassis: string };
  /** the node a port, port group or volume body names */
  parent_node_not_found: Ident;
  portgroup_not_found: Ident;
  portgroup_uuid_taken: { uuid: string };
  portgroup_name_taken: { name: string };
  portgroup_address_taken: { mac: string };
  portgroup_changed_concurrently: Record<string, never>;
  portgroup_not_empty: { portgroup: string };
  port_not_found: Ident;
  port_uuid_taken: { uuid: string };
  port_address_taken: { mac: string };
  port_changed_concurrently: Record<string, never>;
  port_portgroup_not_found: Ident;
  portgroup_of_other_node: Record<string, never>;
  portgroup_no_standalone: { portgroup: string };
  port_physnet_mismatch: { physnet: string | null; portgroup: string; portgroupPhysnet: string | null };
  vif_no_free_port: { vif: string };
  vif_already_attached: { vif: string; kind: 'Port' | 'Portgroup'; uuid: string };
  // volumes
  volume_connector_not_found: Ident;
  volume_target_not_found: Ident;
  volume_connector_uuid_taken: { uuid: string };
  volume_target_uuid_taken: { uuid: string };
  volume_connector_taken: { type: string; connectorId: string };
  volume_target_boot_index_taken: { bootIndex: number };
  invalid_state_requested: Action;
  // deploy templates
  deploy_template_not_found: Ident;
  deploy_template_uuid_taken: { uuid: string };
  deploy_template_name_taken: { name: string };
  deploy_template_changed_concurrently: Record<string, never>;
  // JSON Patch
  patch_failed: { op: unknown; reason: string };
  patch_value_missing: { op: unknown };
  // allocations
  allocation_not_found: Ident;
  allocation_uuid_taken: { uuid: string };
  /** `name` null: a name taken concurrently, not known here */
  allocation_name_taken: { name: string | null };
  allocation_uuid_is_instance: { uuid: string };
  allocation_changed_concurrently: Record<string, never>;
  candidate_nodes_not_found: { idents: string[] };
  node_allocation_not_found: Ident;
  /** allot: a service instance of the identifier API holds it (docs/ids.md) */
  allocation_held: { allocation: string; held_by: string | null };
  deallocation_refused: { allocation: string; node: string; state: string; reason: 'moving' | 'active' };
  backfill_node_allocated: { node: string; allocation: string | null };
  backfill_node_not_active: NodeState;
  backfill_mismatch: { node: string; resourceClass?: [string | null, string]; traits?: [string[], string[]]; candidates?: string[] };
  backfill_no_room: Node;
  backfill_changed_concurrently: Node;
  /** the transaction helper's (src/core/errors.ts): retries after races ran out */
  concurrent_update: { what: string };
}

export type BaremetalErrorCode = keyof BaremetalDomainErrors;

/** A domain error of bare metal, its facts checked against its code. */
export function baremetalDomainError<C extends BaremetalErrorCode>(code: C, params: BaremetalDomainErrors[C], message: string = code): DomainError {
  return new DomainError(code, params, message);
}
