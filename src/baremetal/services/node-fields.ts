// The fields of a node a client sets, as the service takes them (NodeFields, checked by the
// route's node-fields.ts), and the node's patchable document a JSON Patch is applied to.
import { INTERFACES } from '../core/rules.js';
import type { NodeRecord } from '../store/nodes.js';

/** The fields of a node a client sets (on create, or by PATCH), their values already checked. */
export interface NodeFields {
  name: string | null;
  driver: string;
  resource_class: string | null;
  /** lower case */
  conductor_group: string;
  description: string | null;
  owner: string | null;
  lessee: string | null;
  shard: string | null;
  automated_clean: boolean | null;
  maintenance: boolean;
  protected: boolean;
  protected_reason: string | null;
  retired: boolean;
  retired_reason: string | null;
  /** normalized */
  instance_uuid: string | null;
  /** the hardware interfaces that are not fake-hardware's default */
  interfaces: Record<string, string>;
  properties: unknown;
  extra: unknown;
  driver_info: unknown;
  instance_info: unknown;
  network_data: unknown;
  /** normalized; the chassis must exist */
  chassis_uuid: string | null;
}

/** The node's JSON documents (null when removed means {}). */
export const DOCUMENTS = ['properties', 'extra', 'driver_info', 'instance_info', 'network_data'] as const;

/** The patchable fields of a node, as JSON Patch sees them (every one present, null when unset). */
export function nodeDocument(node: NodeRecord): Record<string, unknown> {
  const interfaces = JSON.parse(node.interfaces) as Record<string, string>;
  const doc: Record<string, unknown> = {
    automated_clean: node.automated_clean === null ? null : node.automated_clean === 1,
    conductor_group: node.conductor_group,
    description: node.description,
    driver: node.driver,
    instance_uuid: node.instance_uuid,
    lessee: node.lessee,
    maintenance: node.maintenance === 1,
    name: node.name,
    owner: node.owner,
    protected: node.protected === 1,
    protected_reason: node.protected_reason,
    resource_class: node.resource_class,
    retired: node.retired === 1,
    retired_reason: node.retired_reason,
    shard: node.shard,
    chassis_uuid: node.chassis_uuid,
  };
  for (const d of DOCUMENTS) doc[d] = JSON.parse(node[d]);
  for (const [field, allowed] of Object.entries(INTERFACES)) doc[field] = interfaces[field] ?? allowed[0];
  return doc;
}

/** What the route makes of the node's document: the checked values after the patch, and which fields it changed. */
export interface NodeEdit {
  fields: NodeFields;
  changed(field: keyof NodeFields | string): boolean;
}
