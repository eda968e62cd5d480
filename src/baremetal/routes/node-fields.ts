// The values of a node's fields as a request gives them (a create body, or a node's document
// after a JSON Patch), checked as Ironic's API checks them and turned into the service's
// NodeFields. Everything here is about the request: a bad value is the request's 400 (or 406 for
// a field newer than the request's version).
import type { Microversion } from '../../core/microversion.js';
import { isUuidLike, normalizeUuid } from '../../core/uuid.js';
import { DRIVER, INTERFACES, MAX_DESCRIPTION, isValidConductorGroup, isValidName, parseBool } from '../core/rules.js';
import { badRequest, notAcceptable } from '../errors.js';
import { DOCUMENTS, type NodeEdit, type NodeFields } from '../services/node-fields.js';
import { nodeFieldSince } from '../views.js';

/** What PATCH may change, in the order Ironic lists it. */
export const PATCHABLE = [
  'automated_clean',
  'bios_interface',
  'chassis_uuid',
  'boot_interface',
  'conductor_group',
  'console_interface',
  'deploy_interface',
  'description',
  'driver',
  'driver_info',
  'extra',
  'inspect_interface',
  'instance_info',
  'instance_uuid',
  'lessee',
  'maintenance',
  'management_interface',
  'name',
  'network_data',
  'network_interface',
  'owner',
  'power_interface',
  'properties',
  'protected',
  'protected_reason',
  'raid_interface',
  'rescue_interface',
  'resource_class',
  'retired',
  'retired_reason',
  'shard',
  'storage_interface',
  'vendor_interface',
];

/** A field newer than the request's version is a 406, as in Ironic. */
export function checkFieldVersions(fields: string[], mv: Microversion): void {
  const tooNew = fields.filter((f) => {
    const since = nodeFieldSince(f);
    return since !== undefined && !mv.atLeast(since);
  });
  if (tooNew.length) throw notAcceptable();
}

export function checkDriver(driver: string, group: string): void {
  if (driver !== DRIVER) {
    throw badRequest(`No valid host was found. Reason: No conductor service registered which supports driver ${driver} for conductor group "${group}".`);
  }
}

/** The conductor group, lower case, as Ironic stores it. */
export function conductorGroup(value: unknown): string {
  const group = ((value as string | null | undefined) ?? '').toLowerCase();
  if (!isValidConductorGroup(group)) throw badRequest(`Invalid conductor group ${group}: use letters, digits, _, -, . and : only.`);
  return group;
}

/** The hardware interfaces a document names that are not the default (each checked against what fake-hardware enables). */
export function interfaces(doc: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, allowed] of Object.entries(INTERFACES)) {
    const value = doc[field];
    if (value === undefined || value === null) continue;
    if (!allowed.includes(value as string)) {
      throw badRequest(`Interface ${JSON.stringify(value)} is not enabled for ${field} of hardware type ${DRIVER}; enabled: ${allowed.join(', ')}.`);
    }
    if (value !== allowed[0]) out[field] = value as string;
  }
  return out;
}

export function boolField(doc: Record<string, unknown>, name: string): boolean | undefined {
  const value = doc[name];
  if (value === undefined || value === null) return undefined;
  const b = parseBool(value);
  if (b === null)
    throw badRequest(
      `Invalid ${name}: Unrecognized value '${value}', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'`,
    );
  return b;
}

/** A uuid the client gave for `field`, normalized; null when none. */
export function uuidField(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null;
  const text = String(value);
  if (!isUuidLike(text)) throw badRequest(`Expected UUID for ${field}: ${text}`);
  return normalizeUuid(text);
}

const nullableString = (value: unknown): string | null => (value as string | null | undefined) ?? null;

/** The fields of a create body (already schema-checked), with Ironic's defaults. */
export function createFields(body: Record<string, unknown>, mv: Microversion): { uuid: string | null; fields: NodeFields } {
  checkFieldVersions(Object.keys(body), mv);
  const uuid = body.uuid ? uuidField(body.uuid, 'uuid') : null;
  const name = nullableString(body.name);
  if (name !== null && !isValidName(name)) throw badRequest(`Cannot create node with invalid name '${name}'`);
  const group = conductorGroup(body.conductor_group);
  checkDriver(body.driver as string, group);
  const description = nullableString(body.description);
  if (description !== null && [...description].length > MAX_DESCRIPTION)
    throw badRequest(`Cannot create node with description exceeding ${MAX_DESCRIPTION} characters`);
  const instanceUuid = uuidField(body.instance_uuid, 'instance_uuid');
  const ifaces = interfaces(body);
  const maintenance = boolField(body, 'maintenance') ?? false;
  const retired = boolField(body, 'retired') ?? false;
  return {
    uuid,
    fields: {
      name,
      driver: body.driver as string,
      resource_class: nullableString(body.resource_class),
      conductor_group: group,
      description,
      owner: nullableString(body.owner),
      lessee: nullableString(body.lessee),
      shard: nullableString(body.shard),
      automated_clean: body.automated_clean === undefined || body.automated_clean === null ? null : Boolean(body.automated_clean),
      maintenance,
      protected: false,
      protected_reason: null,
      retired,
      retired_reason: nullableString(body.retired_reason),
      instance_uuid: instanceUuid,
      chassis_uuid: uuidField(body.chassis_uuid || null, 'chassis_uuid'),
      interfaces: ifaces,
      ...Object.fromEntries(DOCUMENTS.map((d) => [d, body[d] ?? {}])),
    } as NodeFields,
  };
}

/**
 * A node's document after a patch (already schema-checked) as NodeFields, with the values the
 * patch changed checked. `ident` is how the request named the node.
 */
export function patchedFields(before: Record<string, unknown>, after: Record<string, unknown>, ident: string): NodeEdit {
  const changed = (k: string) => JSON.stringify(after[k] ?? null) !== JSON.stringify(before[k] ?? null);
  const name = nullableString(after.name);
  if (changed('name') && name !== null && !isValidName(name)) throw badRequest(`Node ${ident}: Cannot change name to invalid name '${name}'`);
  if (changed('driver')) checkDriver(after.driver as string, before.conductor_group as string);
  const group = changed('conductor_group') ? conductorGroup(after.conductor_group) : (before.conductor_group as string);
  const description = nullableString(after.description);
  if (changed('description') && description !== null && [...description].length > MAX_DESCRIPTION) {
    throw badRequest(`Cannot update node with description exceeding ${MAX_DESCRIPTION} characters`);
  }
  const ifaces = interfaces(after);
  const maintenance = boolField(after, 'maintenance');
  if (after.maintenance === null) throw badRequest('The maintenance field cannot be removed; set it to false instead.');
  const fields = {
    name,
    driver: after.driver as string,
    resource_class: nullableString(after.resource_class),
    conductor_group: group,
    description,
    owner: nullableString(after.owner),
    lessee: nullableString(after.lessee),
    shard: nullableString(after.shard),
    automated_clean: after.automated_clean === null || after.automated_clean === undefined ? null : Boolean(after.automated_clean),
    maintenance: maintenance ?? false,
    protected: boolField(after, 'protected') ?? false,
    protected_reason: nullableString(after.protected_reason),
    retired: boolField(after, 'retired') ?? false,
    retired_reason: nullableString(after.retired_reason),
    instance_uuid: changed('instance_uuid') ? uuidField(after.instance_uuid, 'instance_uuid') : nullableString(before.instance_uuid),
    chassis_uuid: changed('chassis_uuid') ? uuidField(after.chassis_uuid || null, 'chassis_uuid') : nullableString(before.chassis_uuid),
    interfaces: ifaces,
    ...Object.fromEntries(DOCUMENTS.map((d) => [d, after[d]])),
  } as NodeFields;
  return { fields, changed };
}
