// Node operations, each one transaction: create, JSON-patch, delete, traits, provision and power
// state changes (started here, finished by the transition timers), maintenance, and the
// deallocation that a node's tear-down, deletion or `instance_uuid` removal triggers.
// Every write locks the node row first (then, if needed, its allocation): one lock order.
import type { Microversion } from '../core/microversion.js';
import { newUuid, normalizeUuid } from '../core/uuid.js';
import type { Tx } from '../db/transaction.js';
import { transaction } from '../db/transaction.js';
import { isUniqueViolation } from '../db/sql-helpers.js';
import {
  DEALLOCATE_ALLOWED_TRANSITIONAL,
  DELETE_ALLOWED_STATES,
  MAX_TRAITS_PER_NODE,
  POWER_TARGETS,
  TEARS_DOWN,
  UPDATE_ALLOWED_STATES,
  isValidName,
  parseBool,
  provisionTransition,
  VERB_SINCE,
} from './core.js';
import { badRequest, conflict, CODES, ironicError, nodeLocked, nodeNotFound, notAcceptable } from './errors.js';
import { checkSchema } from './request.js';
import { type PatchOp, applyPatch, rootField } from './patch.js';
import type { BaremetalRuntime } from './runtime.js';
import { deleteAllocationRow } from './store/allocations.js';
import { type NodeChanges, type NodeRecord, deleteNodeRow, findNode, insertNode, instanceUuidTaken, lockNode, replaceNodeTraits, updateNode } from './store/nodes.js';
import { INTERFACES, nodeFieldSince } from './views.js';
import type { JsonSchema } from '../core/json-schema.js';

export const DRIVER = 'fake-hardware';
const MAX_DESCRIPTION = 4096;

const nullableString = (maxLength?: number): JsonSchema => (maxLength ? { type: ['string', 'null'], maxLength } : { type: ['string', 'null'] });
const boolish: JsonSchema = { type: ['string', 'boolean', 'null'] };

/** The node document a create body or a patched node must satisfy. */
export const NODE_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    uuid: nullableString(),
    name: nullableString(),
    driver: { type: 'string' },
    resource_class: nullableString(80),
    properties: { type: ['object', 'null'] },
    extra: { type: ['object', 'null'] },
    driver_info: { type: ['object', 'null'] },
    instance_info: { type: ['object', 'null'] },
    instance_uuid: nullableString(),
    network_data: { type: ['object', 'null'] },
    owner: nullableString(255),
    lessee: nullableString(255),
    description: nullableString(),
    conductor_group: nullableString(255),
    automated_clean: { type: ['boolean', 'null'] },
    maintenance: boolish,
    protected: boolish,
    protected_reason: nullableString(),
    retired: boolish,
    retired_reason: nullableString(),
    shard: nullableString(255),
    ...Object.fromEntries(Object.keys(INTERFACES).map((name) => [name, nullableString()])),
  },
  required: ['driver'],
  additionalProperties: false,
};

/** Fields a create may set (the rest of NODE_SCHEMA is only reachable through PATCH). */
const CREATE_ONLY_EXCLUDED = ['protected', 'protected_reason'];
export const NODE_CREATE_SCHEMA: JsonSchema = {
  ...NODE_SCHEMA,
  properties: Object.fromEntries(Object.entries(NODE_SCHEMA.properties!).filter(([k]) => !CREATE_ONLY_EXCLUDED.includes(k))),
};

/** What PATCH may change, in the order Ironic lists it. */
export const PATCHABLE = [
  'automated_clean',
  'bios_interface',
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

const DOCUMENTS = ['properties', 'extra', 'driver_info', 'instance_info', 'network_data'] as const;

/** A field newer than the request's version is a 406, as in Ironic. */
function checkFieldVersions(fields: string[], mv: Microversion): void {
  const tooNew = fields.filter((f) => {
    const since = nodeFieldSince(f);
    return since !== undefined && !mv.atLeast(since);
  });
  if (tooNew.length) throw notAcceptable(`The field(s) ${tooNew.join(', ')} need a newer API version.`);
}

function checkDriver(driver: string, group: string): void {
  if (driver !== DRIVER) {
    throw badRequest(`No valid host was found. Reason: No conductor service registered which supports driver ${driver} for conductor group "${group}".`);
  }
}

function checkConductorGroup(group: string): void {
  if (!/^[a-zA-Z0-9_\-.:]*$/.test(group)) throw badRequest(`Invalid conductor group ${group}: use letters, digits, _, -, . and : only.`);
}

function checkInterfaces(doc: Record<string, unknown>): Record<string, string> {
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

function boolField(doc: Record<string, unknown>, name: string): boolean | undefined {
  const value = doc[name];
  if (value === undefined || value === null) return undefined;
  const b = parseBool(value);
  if (b === null) throw badRequest(`Invalid ${name}: Unrecognized value '${value}', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'`);
  return b;
}

const asJson = (v: unknown) => JSON.stringify(v ?? {});

export interface NodeCreate {
  [key: string]: unknown;
  driver: string;
}

export async function createNode(rt: BaremetalRuntime, body: NodeCreate, mv: Microversion): Promise<NodeRecord> {
  checkFieldVersions(Object.keys(body), mv);
  const uuid = body.uuid ? String(body.uuid) : newUuid();
  if (body.uuid && !/^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(uuid)) throw badRequest(`Expected UUID for uuid: ${uuid}`);
  const nodeUuid = normalizeUuid(uuid);
  const name = (body.name as string | null | undefined) ?? null;
  if (name !== null && !isValidName(name)) throw badRequest(`Cannot create node with invalid name '${name}'`);
  const group = ((body.conductor_group as string | null | undefined) ?? '').toLowerCase();
  checkConductorGroup(group);
  checkDriver(body.driver, group);
  const description = (body.description as string | null | undefined) ?? null;
  if (description !== null && [...description].length > MAX_DESCRIPTION) throw badRequest(`Cannot create node with description exceeding ${MAX_DESCRIPTION} characters`);
  const instanceUuid = checkInstanceUuid(body.instance_uuid);
  const interfaces = checkInterfaces(body);
  const maintenance = boolField(body, 'maintenance') ?? false;
  const retired = boolField(body, 'retired') ?? false;
  const resourceClass = (body.resource_class as string | null | undefined) ?? null;
  await rt.backend.prepare(rt.database, { resourceClass });
  const now = rt.database.clock.nowIso();
  try {
    return await transaction(rt.database, async (tx) => {
      if (await findNode(tx, nodeUuid)) throw conflict(`A node with UUID ${nodeUuid} already exists.`);
      if (name !== null && (await findNode(tx, name))) throw conflict(`A node with name ${name} already exists.`);
      if (instanceUuid && (await instanceUuidTaken(tx, instanceUuid))) throw instanceAssociated(instanceUuid, nodeUuid);
      const id = await insertNode(
        tx,
        {
          uuid: nodeUuid,
          name,
          driver: body.driver,
          resource_class: resourceClass,
          // before 1.11 nodes were born available (and, with no power state, still unallocatable)
          provision_state: mv.atLeast('1.11') ? 'enroll' : 'available',
          target_provision_state: null,
          provision_updated_at: null,
          power_state: null,
          target_power_state: null,
          maintenance: maintenance ? 1 : 0,
          maintenance_reason: null,
          fault: null,
          instance_uuid: instanceUuid,
          allocation_id: null,
          reservation: null,
          last_error: null,
          owner: (body.owner as string | null | undefined) ?? null,
          lessee: (body.lessee as string | null | undefined) ?? null,
          description,
          conductor_group: group,
          automated_clean: body.automated_clean === undefined || body.automated_clean === null ? null : body.automated_clean ? 1 : 0,
          protected: 0,
          protected_reason: null,
          retired: retired ? 1 : 0,
          retired_reason: retired ? ((body.retired_reason as string | null | undefined) ?? null) : null,
          shard: (body.shard as string | null | undefined) ?? null,
          instance_info: asJson(body.instance_info),
          properties: asJson(body.properties),
          extra: asJson(body.extra),
          driver_info: asJson(body.driver_info),
          network_data: asJson(body.network_data),
          interfaces: JSON.stringify(interfaces),
          inspection_started_at: null,
          inspection_finished_at: null,
          created_at: now,
          updated_at: null,
        },
        [],
      );
      const node = (await lockNode(tx, id))!;
      await rt.backend.nodeChanged(tx, node);
      return node;
    });
  } catch (err) {
    // two creators raced past the checks: report what the loser collided with
    if (isUniqueViolation(err)) {
      if (await findNode(rt.database, nodeUuid)) throw conflict(`A node with UUID ${nodeUuid} already exists.`);
      if (name !== null && (await findNode(rt.database, name))) throw conflict(`A node with name ${name} already exists.`);
      throw instanceAssociated(instanceUuid ?? '', nodeUuid);
    }
    throw err;
  }
}

function checkInstanceUuid(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  const text = String(value);
  if (!/^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(text)) throw badRequest(`Expected UUID for instance_uuid: ${text}`);
  return normalizeUuid(text);
}

const instanceAssociated = (instance: string, node: string) =>
  conflict(`Instance ${instance} is already associated with a node, it cannot be associated with this other node ${node}`);

/** A node that exists, locked for this transaction; 404 otherwise. */
async function requireLockedNode(tx: Tx, ident: string): Promise<NodeRecord> {
  const node = await lockNode(tx, ident);
  if (!node) throw nodeNotFound(ident);
  return node;
}

/** 409 while another operation (an allocation or a transition) holds the node's lock. */
function requireUnlocked(node: NodeRecord): void {
  if (node.reservation !== null) throw nodeLocked(node.uuid, node.reservation);
}

/** The patchable fields of a node, as JSON Patch sees them. */
function patchDocument(node: NodeRecord): Record<string, unknown> {
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
  };
  for (const d of DOCUMENTS) doc[d] = JSON.parse(node[d]);
  for (const [field, allowed] of Object.entries(INTERFACES)) doc[field] = interfaces[field] ?? allowed[0];
  return doc;
}

export async function patchNode(rt: BaremetalRuntime, ident: string, ops: PatchOp[], mv: Microversion): Promise<NodeRecord> {
  for (const op of ops) {
    const field = rootField(op);
    if (!PATCHABLE.includes(field)) throw badRequest(`Cannot patch ${op.path}. Only the following can be updated: ${PATCHABLE.join(', ')}`);
  }
  checkFieldVersions([...new Set(ops.map(rootField))], mv);
  const touchesClass = ops.some((op) => rootField(op) === 'resource_class');
  if (touchesClass) {
    const value = ops.filter((op) => rootField(op) === 'resource_class').pop()?.value;
    if (typeof value === 'string' && value.length <= 80) await rt.backend.prepare(rt.database, { resourceClass: value });
  }
  return transaction(rt.database, async (tx) => {
    const node = await requireLockedNode(tx, ident);
    const before = patchDocument(node);
    const after = applyPatch(before, ops);
    checkSchema(NODE_SCHEMA, after, 'patch');
    const changed = (k: string) => JSON.stringify(after[k] ?? null) !== JSON.stringify(before[k] ?? null);
    const changes: NodeChanges = {};
    requireUnlocked(node);

    if (changed('name')) {
      const name = after.name as string | null;
      if (name !== null && !isValidName(name)) throw badRequest(`Node ${ident}: Cannot change name to invalid name '${name}'`);
      if (name !== null && (await findNode(tx, name))) throw conflict(`A node with name ${name} already exists.`);
      changes.name = name;
    }
    if (changed('driver')) {
      checkDriver(after.driver as string, node.conductor_group);
      changes.driver = after.driver as string;
    }
    if (changed('conductor_group')) {
      const group = ((after.conductor_group as string | null) ?? '').toLowerCase();
      checkConductorGroup(group);
      changes.conductor_group = group;
    }
    if (changed('description')) {
      const d = after.description as string | null;
      if (d !== null && [...d].length > MAX_DESCRIPTION) throw badRequest(`Cannot update node with description exceeding ${MAX_DESCRIPTION} characters`);
      changes.description = d;
    }
    for (const f of ['owner', 'lessee', 'shard'] as const) if (changed(f)) changes[f] = after[f] as string | null;
    for (const d of DOCUMENTS) if (changed(d)) changes[d] = asJson(after[d]);
    if (changed('automated_clean')) changes.automated_clean = after.automated_clean === null ? null : after.automated_clean ? 1 : 0;

    const interfaceFields = Object.keys(INTERFACES).filter(changed);
    if (interfaceFields.length) {
      if (!UPDATE_ALLOWED_STATES.includes(node.provision_state) && node.maintenance !== 1) {
        throw ironicError(
          409,
          `Node ${node.uuid} can not have ${interfaceFields.join(', ')} updated unless it is in one of allowed (${UPDATE_ALLOWED_STATES.join(', ')}) states or in maintenance mode.`,
          CODES.invalidState,
        );
      }
      changes.interfaces = JSON.stringify(checkInterfaces(after));
    }

    const maintenance = boolField(after, 'maintenance');
    if (after.maintenance === null) throw badRequest(`The maintenance field cannot be removed; set it to false instead.`);
    if (maintenance !== undefined && maintenance !== (node.maintenance === 1)) {
      changes.maintenance = maintenance ? 1 : 0;
      if (!maintenance) Object.assign(changes, { maintenance_reason: null, fault: null });
    }

    const protect = boolField(after, 'protected') ?? false;
    if (changed('protected') || changed('protected_reason')) {
      if (changed('protected') && protect && !['active', 'rescue'].includes(node.provision_state)) {
        throw ironicError(
          409,
          `Node ${node.uuid} can only be made protected in provision states 'active' or 'rescue', the current state is '${node.provision_state}'`,
          CODES.invalidState,
        );
      }
      if (after.protected_reason && !protect) throw badRequest('The protected_reason field can only be set when protected is True');
      changes.protected = protect ? 1 : 0;
      changes.protected_reason = protect ? ((after.protected_reason as string | null) ?? null) : null;
    }
    const retired = boolField(after, 'retired') ?? false;
    if (changed('retired') || changed('retired_reason')) {
      if (changed('retired') && retired && node.provision_state === 'available') {
        throw ironicError(409, `Node ${node.uuid} can not have 'retired' set in provision state 'available', the current state is 'available'`, CODES.invalidState);
      }
      if (after.retired_reason && !retired) throw badRequest('The retired_reason field can only be set when retired is True');
      changes.retired = retired ? 1 : 0;
      changes.retired_reason = retired ? ((after.retired_reason as string | null) ?? null) : null;
    }

    if (changed('resource_class')) {
      if (node.resource_class !== null && !UPDATE_ALLOWED_STATES.includes(node.provision_state)) {
        throw ironicError(
          409,
          `Node ${node.uuid} can not have resource_class updated unless it is in one of allowed (${UPDATE_ALLOWED_STATES.join(', ')}) states.`,
          CODES.invalidState,
        );
      }
      // allot: the class an allocation was made for stays true while it lasts (and in the
      // placement backend the claim is on the old class's inventory)
      if (node.allocation_id !== null) {
        throw ironicError(409, `Node ${node.uuid} can not have resource_class updated while it has an allocation (${node.allocation_uuid}).`, CODES.invalidState);
      }
      changes.resource_class = after.resource_class as string | null;
    }

    if (changed('instance_uuid')) {
      const instance = after.instance_uuid === null ? null : checkInstanceUuid(after.instance_uuid);
      if (instance !== null && node.instance_uuid !== null && instance !== node.instance_uuid) {
        throw conflict(`Node ${node.uuid} is associated with instance ${node.instance_uuid}.`, CODES.invalidState);
      }
      if (instance !== null && (await instanceUuidTaken(tx, instance, node.id))) throw instanceAssociated(instance, node.uuid);
      if (instance === null && node.allocation_id !== null) {
        if (node.maintenance !== 1 && !UPDATE_ALLOWED_STATES.includes(node.provision_state)) {
          throw ironicError(
            409,
            `Node ${node.uuid} with an allocation can not have instance_uuid removed unless it is in one of allowed (${UPDATE_ALLOWED_STATES.join(', ')}) states or in maintenance mode.`,
            CODES.invalidState,
          );
        }
        await deallocate(tx, rt, node);
      }
      if (instance !== node.instance_uuid) changes.instance_uuid = instance;
    }

    changes.updated_at = tx.clock.nowIso();
    await updateNode(tx, node.id, changes);
    const updated = (await lockNode(tx, node.id))!;
    if (changes.resource_class !== undefined) await rt.backend.nodeChanged(tx, updated);
    return updated;
  }).catch((err) => {
    if (isUniqueViolation(err)) throw conflict('The node was changed concurrently (a name or instance_uuid now in use); retry.');
    throw err;
  });
}

/**
 * Release a node's allocation inside the caller's transaction (node already locked): the backend
 * gives the claim back, the node forgets it, the allocation row goes. The spec's deallocation.
 */
export async function deallocate(tx: Tx, rt: BaremetalRuntime, node: NodeRecord): Promise<void> {
  if (node.allocation_id === null) return;
  if (node.allocation_uuid !== null) await rt.backend.release(tx, node.allocation_uuid);
  await updateNode(tx, node.id, {
    allocation_id: null,
    instance_uuid: node.instance_uuid === node.allocation_uuid ? null : node.instance_uuid,
    updated_at: tx.clock.nowIso(),
  });
  await deleteAllocationRow(tx, node.allocation_id);
}

export async function deleteNode(rt: BaremetalRuntime, ident: string): Promise<void> {
  await transaction(rt.database, async (tx) => {
    const node = await requireLockedNode(tx, ident);
    requireUnlocked(node);
    if (node.maintenance !== 1 && node.instance_uuid !== null) {
      throw conflict(`Node ${node.uuid} is associated with instance ${node.instance_uuid}.`, CODES.invalidState);
    }
    if (node.protected === 1) throw ironicError(403, `Node ${node.uuid} is protected and cannot be undeployed, rebuilt or deleted`);
    if (node.maintenance !== 1 && !DELETE_ALLOWED_STATES.includes(node.provision_state)) {
      throw ironicError(
        409,
        `Can not delete node "${node.uuid}" while it is in provision state "${node.provision_state}". Valid provision states to perform deletion are: "${DELETE_ALLOWED_STATES.join(', ')}", or set the node into maintenance mode`,
        CODES.invalidState,
      );
    }
    // "If a node is deleted with allocation (possible only in maintenance mode), the allocation
    // is deleted as well."
    await deallocate(tx, rt, node);
    // allocations still working on it (allocating) or failed ones pointing at it let go
    await tx.db.updateTable('baremetal_allocations').set({ node_id: null }).where('node_id', '=', node.id).execute();
    await rt.backend.nodeDeleted(tx, node.uuid);
    await deleteNodeRow(tx, node.id);
  });
}

// ---- traits ----------------------------------------------------------------------------------

async function changeTraits(rt: BaremetalRuntime, ident: string, added: string[], change: (current: string[], node: NodeRecord) => string[]): Promise<void> {
  await rt.backend.prepare(rt.database, { traits: added });
  await transaction(rt.database, async (tx) => {
    const node = await requireLockedNode(tx, ident);
    requireUnlocked(node);
    const traits = [...new Set(change(node.traits, node))];
    if (traits.length > MAX_TRAITS_PER_NODE) {
      throw badRequest(`Could not modify traits for node ${node.uuid} as it would exceed the maximum number of traits per node (${traits.length} vs. ${MAX_TRAITS_PER_NODE})`);
    }
    await replaceNodeTraits(tx, node.id, traits);
    await updateNode(tx, node.id, { updated_at: tx.clock.nowIso() });
    await rt.backend.nodeChanged(tx, { ...node, traits });
  });
}

export const setNodeTraits = (rt: BaremetalRuntime, ident: string, traits: string[]) => changeTraits(rt, ident, traits, () => traits);
export const addNodeTrait = (rt: BaremetalRuntime, ident: string, trait: string) => changeTraits(rt, ident, [trait], (current) => [...current, trait]);
export const removeAllNodeTraits = (rt: BaremetalRuntime, ident: string) => changeTraits(rt, ident, [], () => []);
export const removeNodeTrait = (rt: BaremetalRuntime, ident: string, trait: string) =>
  changeTraits(rt, ident, [], (current, node) => {
    if (!current.includes(trait)) throw ironicError(404, `Node ${node.uuid} doesn't have a trait '${trait}'`, CODES.notFound);
    return current.filter((t) => t !== trait);
  });

// ---- provision, power, maintenance -----------------------------------------------------------

export interface ProvisionRequest {
  target: string;
  configdrive?: unknown;
  clean_steps?: unknown[];
  deploy_steps?: unknown[];
  rescue_password?: string;
  disable_ramdisk?: boolean;
}

export async function setProvisionState(rt: BaremetalRuntime, ident: string, req: ProvisionRequest, mv: Microversion): Promise<void> {
  const { target } = req;
  const since = VERB_SINCE[target];
  if (since && !mv.atLeast(since)) throw notAcceptable(`The "${target}" verb needs API version ${since} or later.`);
  if (req.clean_steps !== undefined && target !== 'clean') throw badRequest('"clean_steps" is only valid when setting target provision state to clean');
  if (target === 'clean' && !req.clean_steps) throw badRequest('"clean_steps" is required when setting target provision state to clean');
  if (req.deploy_steps !== undefined && !['active', 'deploy', 'rebuild'].includes(target)) {
    throw badRequest(`"deploy_steps" is only valid when setting target provision state to active or rebuild`);
  }
  if (req.configdrive !== undefined && !['active', 'deploy', 'rebuild'].includes(target)) {
    throw badRequest(`Adding a config drive is only supported when setting provision state to active or rebuild`);
  }
  if (req.rescue_password !== undefined && target !== 'rescue') throw badRequest('"rescue_password" is only valid when setting target provision state to rescue');
  if (target === 'rescue' && !req.rescue_password) throw badRequest('A non-empty "rescue_password" is required when setting target provision state to rescue');
  if (req.disable_ramdisk !== undefined && target !== 'clean') throw badRequest('"disable_ramdisk" is only valid when setting target provision state to clean');

  const scheduled = await transaction(rt.database, async (tx) => {
    const node = await requireLockedNode(tx, ident);
    if (['active', 'deploy', 'rebuild'].includes(target) && node.maintenance === 1) {
      throw badRequest(`The provisioning operation can't be performed on node ${node.uuid} because it's in maintenance mode.`);
    }
    const transition = provisionTransition(target, node.provision_state);
    if (!transition) {
      // a node busy in a transition is "locked" (409), as Ironic answers, not a bad request
      if (node.reservation !== null) throw nodeLocked(node.uuid, node.reservation);
      throw badRequest(`The requested action "${target}" can not be performed on node "${node.uuid}" while it is in state "${node.provision_state}".`);
    }
    requireUnlocked(node);
    if (node.protected === 1 && ['rebuild', 'deleted', 'undeploy'].includes(target)) {
      throw ironicError(403, `Node ${node.uuid} is protected and cannot be undeployed, rebuilt or deleted`);
    }
    const now = tx.clock.nowIso();
    if (transition.via === null) {
      await updateNode(tx, node.id, { provision_state: transition.to, target_provision_state: null, provision_updated_at: now, last_error: null, updated_at: now });
      return null;
    }
    const changes: NodeChanges = {
      provision_state: transition.via,
      target_provision_state: transition.to,
      provision_updated_at: now,
      reservation: rt.conductorId,
      last_error: null,
      updated_at: now,
    };
    if (transition.via === 'inspecting') Object.assign(changes, { inspection_started_at: now, inspection_finished_at: null });
    await updateNode(tx, node.id, changes);
    return node.id;
  });
  if (scheduled !== null) rt.transitions.schedule(scheduled);
}

export async function setPowerState(rt: BaremetalRuntime, ident: string, target: string, timeout: number | undefined, mv: Microversion): Promise<void> {
  const spec = POWER_TARGETS[target];
  if (timeout !== undefined && !mv.atLeast('1.27')) throw notAcceptable('The "timeout" parameter needs API version 1.27 or later.');
  if (timeout !== undefined && (!Number.isInteger(timeout) || timeout < 1)) throw badRequest('timeout has to be positive integer');
  const nodeId = await transaction(rt.database, async (tx) => {
    const node = await requireLockedNode(tx, ident);
    if (!spec || !mv.atLeast(spec.since)) {
      if (spec) throw notAcceptable(`The "${target}" power target needs API version ${spec.since} or later.`);
      throw badRequest(`The requested action "${target}" can not be performed on node "${ident}" while it is in state "${node.power_state ?? 'None'}".`);
    }
    requireUnlocked(node);
    const now = tx.clock.nowIso();
    await updateNode(tx, node.id, { target_power_state: spec.result, reservation: rt.conductorId, last_error: null, updated_at: now });
    return node.id;
  });
  rt.transitions.schedule(nodeId);
}

export async function setMaintenance(rt: BaremetalRuntime, ident: string, on: boolean, reason: string | null): Promise<void> {
  // Maintenance is how an operator takes a stuck node out of play, so it does not wait for the
  // node's lock; the allocation worker re-checks it under the row lock before claiming a node.
  await transaction(rt.database, async (tx) => {
    const node = await requireLockedNode(tx, ident);
    const changes: NodeChanges = on ? { maintenance: 1, maintenance_reason: reason } : { maintenance: 0, maintenance_reason: null, fault: null };
    await updateNode(tx, node.id, { ...changes, updated_at: tx.clock.nowIso() });
  });
}

/**
 * The fake hardware finished what the node's lock holder started: a provision transition ends in
 * its target state (a tear-down releases the instance and the allocation on the way), a power
 * change in its power state. Only the conductor holding the node's lock may finish it.
 */
export async function completeTransition(rt: BaremetalRuntime, nodeId: number): Promise<void> {
  await transaction(rt.database, async (tx) => {
    const node = await lockNode(tx, nodeId);
    if (!node || node.reservation !== rt.conductorId) return;
    const now = tx.clock.nowIso();
    const changes: NodeChanges = { reservation: null, updated_at: now };
    if (node.target_provision_state !== null) {
      if (TEARS_DOWN(node.provision_state)) {
        await deallocate(tx, rt, node);
        Object.assign(changes, { instance_uuid: null, instance_info: '{}' });
      }
      if (node.provision_state === 'inspecting') changes.inspection_finished_at = now;
      Object.assign(changes, { provision_state: node.target_provision_state, target_provision_state: null, provision_updated_at: now });
    }
    if (node.target_power_state !== null) Object.assign(changes, { power_state: node.target_power_state, target_power_state: null });
    await updateNode(tx, node.id, changes);
  });
}

/** Is a node in a state where its allocation may be removed? (the spec's DELETE 409 rules) */
export function deallocationRefusal(node: NodeRecord, allocationUuid: string): string | null {
  if (node.maintenance === 1) return null;
  if (node.target_provision_state !== null && !DEALLOCATE_ALLOWED_TRANSITIONAL.includes(node.provision_state)) {
    return `Cannot remove allocation ${allocationUuid} for node ${node.uuid}, because the node is in state ${node.provision_state} where updates are not allowed (and maintenance mode is off)`;
  }
  if (node.provision_state === 'active') {
    return `Cannot remove allocation ${allocationUuid} for node ${node.uuid}, because the node is active (and maintenance mode is off)`;
  }
  return null;
}
