// A node's states (GET …/states) and its state verbs: provision (PUT …/states/provision), power
// (PUT …/states/power) and maintenance (PUT and DELETE …/maintenance). The console and RAID
// states are node-hardware.ts.
import type * as Wire from '../../client/baremetal-wire.js';
import { POWER_TARGETS, VERB_SINCE } from '../core/states.js';
import { badRequest, notAcceptable } from '../errors.js';
import type { Endpoint, IronicRequest } from '../request.js';
import { checkSchema } from '../request.js';
import * as schemas from '../schemas.js';
import { schemaRef } from '../schemas.js';
import { setMaintenance, setPowerState, setProvisionState } from '../services/node-states.js';
import { authorizedNode, scoped } from './scope.js';
import { ironicTime, provisionStateAt } from '../views.js';
import { nodeIdent } from './common.js';

type E = Endpoint;

export const states: E = {
  ...scoped('baremetal:node:get_states'),
  summary: "a node's power and provision states",
  ok: [200],
  response: schemaRef('NodeStates'),
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node_ident');
    req.queryArgs();
    const n = await authorizedNode(req, ctx, ident, req.endpointRule);
    const body: Wire.NodeStates = {
      console_enabled: n.console_enabled === 1,
      last_error: n.last_error,
      power_state: n.power_state,
      provision_state: provisionStateAt(n.provision_state, req.mv),
      target_power_state: n.target_power_state,
      target_provision_state: n.target_provision_state,
      provision_updated_at: ironicTime(n.provision_updated_at),
    };
    if (req.mv.atLeast('1.12')) Object.assign(body, { raid_config: JSON.parse(n.raid_config), target_raid_config: JSON.parse(n.target_raid_config) });
    if (req.mv.atLeast('1.75')) Object.assign(body, { boot_mode: null, secure_boot: null });
    return { body };
  },
};

/** Ironic reads the state verbs' bodies as keyword arguments: unknown ones are "Unexpected arguments". */
function verbArgs(req: IronicRequest, allowed: string[]): Record<string, unknown> {
  req.queryArgs();
  const body = req.jsonBody();
  if (body === undefined) return {};
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('The request body must be a JSON object.');
  const unknown = Object.keys(body).filter((k) => !allowed.includes(k));
  if (unknown.length) throw badRequest(`Unexpected arguments: ${unknown.join(', ')}`);
  return body as Record<string, unknown>;
}

export const provision: E = {
  ...scoped('baremetal:node:set_provision_state'),
  summary: 'move a node through the provision state machine (manage, provide, deploy, …)',
  body: schemas.provision,
  ok: [202],
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node_ident');
    await authorizedNode(req, ctx, ident, req.endpointRule);
    const args = verbArgs(req, Object.keys(schemas.provision.properties!));
    if (args.target === undefined || args.target === null) throw badRequest('Missing mandatory parameter: target');
    checkSchema(schemas.provision, args, 'body');
    const given = (k: string) => args[k] !== undefined && args[k] !== null;
    const target = args.target as string;
    const since = VERB_SINCE[target];
    if (since && !req.mv.atLeast(since)) throw notAcceptable();
    if (given('clean_steps') && target !== 'clean') throw badRequest('"clean_steps" is only valid when setting target provision state to clean');
    if (target === 'clean' && !args.clean_steps) throw badRequest('"clean_steps" is required when setting target provision state to clean');
    if (given('deploy_steps') && !['active', 'deploy', 'rebuild'].includes(target)) {
      throw badRequest(`"deploy_steps" is only valid when setting target provision state to active or rebuild`);
    }
    if (given('configdrive') && !['active', 'deploy', 'rebuild'].includes(target)) {
      throw badRequest(`Adding a config drive is only supported when setting provision state to active or rebuild`);
    }
    if (given('rescue_password') && target !== 'rescue') throw badRequest('"rescue_password" is only valid when setting target provision state to rescue');
    if (target === 'rescue' && !args.rescue_password)
      throw badRequest('A non-empty "rescue_password" is required when setting target provision state to rescue');
    if (given('disable_ramdisk') && target !== 'clean') throw badRequest('"disable_ramdisk" is only valid when setting target provision state to clean');
    await setProvisionState(ctx, ident, target);
    return { status: 202, location: `${req.baseUrl}/v1/nodes/${ident}/states` };
  },
};

export const power: E = {
  ...scoped('baremetal:node:set_power_state'),
  summary: "change a node's power state",
  body: schemas.power,
  ok: [202],
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node_ident');
    await authorizedNode(req, ctx, ident, req.endpointRule);
    const args = verbArgs(req, ['target', 'timeout']);
    if (args.target === undefined || args.target === null) throw badRequest('Missing mandatory parameter: target');
    checkSchema(schemas.power, args, 'body');
    const target = args.target as string;
    const timeout = (args.timeout as number | null | undefined) ?? undefined;
    if (timeout !== undefined && !req.mv.atLeast('1.27')) throw notAcceptable();
    if (timeout !== undefined && (!Number.isInteger(timeout) || timeout < 1)) throw badRequest('timeout has to be positive integer');
    const spec = POWER_TARGETS[target];
    await setPowerState(ctx, ident, target, spec === undefined || req.mv.atLeast(spec.since));
    return { status: 202, location: `${req.baseUrl}/v1/nodes/${ident}/states` };
  },
};

export const maintenanceOn: E = {
  ...scoped('baremetal:node:set_maintenance'),
  summary: 'put a node in maintenance',
  body: schemas.maintenance,
  ok: [202],
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node_ident');
    await authorizedNode(req, ctx, ident, req.endpointRule);
    const args = verbArgs(req, ['reason']);
    checkSchema(schemas.maintenance, args, 'body');
    await setMaintenance(ctx, ident, true, (args.reason as string | null | undefined) ?? null);
    return { status: 202 };
  },
};

export const maintenanceOff: E = {
  ...scoped('baremetal:node:clear_maintenance'),
  summary: 'take a node out of maintenance',
  ok: [202],
  async handle(req, ctx) {
    const ident = nodeIdent(req, 'node_ident');
    await authorizedNode(req, ctx, ident, req.endpointRule);
    req.queryArgs();
    await setMaintenance(ctx, ident, false, null);
    return { status: 202 };
  },
};
