// What a node's fake hardware answers and records: validation of its interfaces, VIFs (1.28,
// recorded on its ports and port groups), the boot device (fake: always PXE, not persistent; only
// PXE is supported), the console switch and the target RAID configuration (1.12). Nothing reaches
// real hardware: no BMC is called, no console is opened, no disk is configured.
import type * as Wire from '../../client/baremetal-wire.js';
import { validate } from '../../core/json-schema.js';
import { INTERFACES } from '../core/rules.js';
import { badRequest, ironicError } from '../errors.js';
import type { Endpoint, IronicRequest } from '../request.js';
import * as schemas from '../schemas.js';
import { schemaRef } from '../schemas.js';
import { attachVif, detachVif, listVifs } from '../services/node-vifs.js';
import { recordOnNode } from '../services/node-states.js';
import type { NodeRecord } from '../services/node-reads.js';
import { nodeIdent } from './common.js';
import { boolField } from './node-fields.js';
import { authorizedNode, scoped } from './scope.js';

type E = Endpoint;

/** The interfaces Ironic validates, in its order. */
const VALIDATED = ['boot', 'deploy', 'management', 'network', 'power', 'bios', 'console', 'inspect', 'raid', 'rescue', 'storage'];

/** The node's implementation of an interface (its own, or fake-hardware's default). */
function implementation(node: NodeRecord, kind: string): string {
  const own = (JSON.parse(node.interfaces) as Record<string, string>)[`${kind}_interface`];
  return own ?? INTERFACES[`${kind}_interface`]![0]!;
}

const unsupported = (node: NodeRecord, kind: string) => `Driver ${node.driver} does not support ${kind} (disabled or not implemented).`;

export const validateNode: E = {
  ...scoped('baremetal:node:validate'),
  summary: "validate a node's interfaces (fake hardware passes; a no-* interface is not supported)",
  ok: [200],
  response: schemaRef('NodeValidation'),
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node_ident');
    req.queryArgs();
    const node = await authorizedNode(req, ctx, ident, req.endpointRule);
    // fake hardware passes every check; an interface set to no-<kind> is not supported
    const body: Wire.NodeValidation = {};
    for (const kind of VALIDATED) {
      body[kind] = implementation(node, kind).startsWith('no-') ? { result: false, reason: unsupported(node, kind) } : { result: true };
    }
    return { body };
  },
};

// ---- VIFs ------------------------------------------------------------------------------------

const VIFS_SINCE = { since: '1.28' } as const;

export const vifs: E = {
  ...scoped('baremetal:node:vif:list'),
  summary: 'the VIFs attached to a node (1.28)',
  ok: [200],
  response: schemaRef('NodeVifs'),
  ...VIFS_SINCE,
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node_ident');
    req.queryArgs();
    const node = await authorizedNode(req, ctx, ident, req.endpointRule);
    const body: Wire.NodeVifs = { vifs: (await listVifs(ctx, node.id)).map((id) => ({ id })) };
    return { body };
  },
};

export const attach: E = {
  ...scoped('baremetal:node:vif:attach'),
  summary: 'attach a VIF (recorded on a free port or port group)',
  body: schemas.vif,
  ok: [204],
  ...VIFS_SINCE,
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node_ident');
    req.queryArgs();
    await authorizedNode(req, ctx, ident, req.endpointRule);
    const body = req.json<{ id: string; port_uuid?: unknown; portgroup_uuid?: unknown }>('vif');
    const on: { port?: string; portgroup?: string } = {};
    if (req.mv.atLeast('1.67')) {
      if (body.port_uuid !== undefined && body.portgroup_uuid !== undefined) throw badRequest('Cannot specify both port_uuid and portgroup_uuid');
      if (typeof body.port_uuid === 'string') on.port = body.port_uuid;
      if (typeof body.portgroup_uuid === 'string') on.portgroup = body.portgroup_uuid;
    }
    await attachVif(ctx, ident, body.id, on);
    return { status: 204 };
  },
};

export const detach: E = {
  ...scoped('baremetal:node:vif:detach'),
  summary: 'detach a VIF',
  ok: [204],
  ...VIFS_SINCE,
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node_ident');
    req.queryArgs();
    await authorizedNode(req, ctx, ident, req.endpointRule);
    await detachVif(ctx, ident, req.param('vif'));
    return { status: 204 };
  },
};

// ---- boot device -----------------------------------------------------------------------------

/** fake-hardware's management interface: PXE is the one boot device, never persistent, and setting it changes nothing. */
const BOOT_DEVICES = ['pxe'];

export const bootDevice: E = {
  ...scoped('baremetal:node:get_boot_device'),
  summary: "the node's boot device (fake: pxe)",
  ok: [200],
  response: schemaRef('BootDevice'),
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node_ident');
    req.queryArgs();
    await authorizedNode(req, ctx, ident, req.endpointRule);
    const body: Wire.BootDevice = { boot_device: BOOT_DEVICES[0]!, persistent: false };
    return { body };
  },
};

export const supportedBootDevices: E = {
  ...scoped('baremetal:node:get_boot_device'),
  summary: 'the supported boot devices',
  ok: [200],
  response: schemaRef('SupportedBootDevices'),
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node_ident');
    req.queryArgs();
    await authorizedNode(req, ctx, ident, req.endpointRule);
    const body: Wire.SupportedBootDevices = { supported_boot_devices: BOOT_DEVICES };
    return { body };
  },
};

/** Ironic reads these bodies as keyword arguments: unknown ones are "Unexpected arguments", a missing one "Missing mandatory parameter". */
function keywordArgs(req: IronicRequest, allowed: string[], required: string[]): Record<string, unknown> {
  req.queryArgs();
  const body = req.jsonBody() ?? {};
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('The request body must be a JSON object.');
  const unknown = Object.keys(body).filter((k) => !allowed.includes(k));
  if (unknown.length) throw badRequest(`Unexpected arguments: ${unknown.join(', ')}`);
  for (const name of required) if ((body as Record<string, unknown>)[name] === undefined) throw badRequest(`Missing mandatory parameter: ${name}`);
  return body as Record<string, unknown>;
}

export const setBootDevice: E = {
  ...scoped('baremetal:node:set_boot_device'),
  summary: 'set the boot device (fake: pxe only, nothing changes)',
  ok: [204],
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node_ident');
    await authorizedNode(req, ctx, ident, req.endpointRule);
    const args = keywordArgs(req, ['boot_device', 'persistent'], ['boot_device']);
    boolField(args, 'persistent');
    if (!BOOT_DEVICES.includes(String(args.boot_device))) throw badRequest(`Invalid boot device ${args.boot_device} specified.`);
    return { status: 204 };
  },
};

// ---- console ---------------------------------------------------------------------------------

export const getConsole: E = {
  ...scoped('baremetal:node:get_console'),
  summary: "the node's console state",
  ok: [200],
  response: schemaRef('ConsoleState'),
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node_ident');
    req.queryArgs();
    const node = await authorizedNode(req, ctx, ident, req.endpointRule);
    if (implementation(node, 'console') === 'no-console') throw ironicError(400, unsupported(node, 'console'));
    const enabled = node.console_enabled === 1;
    // the fake console has no address to tell
    const body: Wire.ConsoleState = { console_enabled: enabled, console_info: enabled ? {} : null };
    return { body };
  },
};

export const setConsole: E = {
  ...scoped('baremetal:node:set_console_state'),
  summary: 'enable or disable the console (recorded)',
  ok: [202],
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node_ident');
    const node = await authorizedNode(req, ctx, ident, req.endpointRule);
    const args = keywordArgs(req, ['enabled'], ['enabled']);
    const enabled = boolField(args, 'enabled');
    if (enabled === undefined) throw badRequest('Missing mandatory parameter: enabled');
    if (implementation(node, 'console') === 'no-console') throw ironicError(400, unsupported(node, 'console'));
    await recordOnNode(ctx, ident, { console_enabled: enabled ? 1 : 0 });
    return { status: 202, location: `${req.baseUrl}/v1/nodes/${ident}/states/console` };
  },
};

// ---- RAID ------------------------------------------------------------------------------------

export const setRaid: E = {
  ...scoped('baremetal:node:set_raid_state'),
  summary: 'set the target RAID configuration (1.12; recorded)',
  body: schemas.raidConfig,
  ok: [204],
  since: '1.12',
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node_ident');
    const node = await authorizedNode(req, ctx, ident, req.endpointRule);
    req.queryArgs();
    const config = req.jsonBody() ?? {};
    if (config === null || typeof config !== 'object' || Array.isArray(config)) throw badRequest('The request body must be a JSON object.');
    if (implementation(node, 'raid') === 'no-raid') throw ironicError(404, unsupported(node, 'raid'));
    // an empty configuration clears it; any other must be a valid RAID configuration
    if (Object.keys(config).length) {
      const error = validate(schemas.raidConfig, config);
      if (error) throw badRequest(`RAID config validation error: ${error.message}`);
      for (const disk of (config as { logical_disks: Record<string, unknown>[] }).logical_disks) {
        if (disk.physical_disks !== undefined && disk.controller === undefined)
          throw badRequest("RAID config validation error: 'controller' is a dependency of 'physical_disks'");
      }
    }
    await recordOnNode(ctx, ident, { target_raid_config: JSON.stringify(config) });
    return { status: 204 };
  },
};
