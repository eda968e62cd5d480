// /v1/drivers: the one hardware type allot simulates, `fake-hardware`, with its interfaces (the
// ones core/rules.ts enables), its properties and the RAID logical disk properties, as Ironic 21.4
// answers for it. Its hosts are the live conductors (every allot process).
import type * as Wire from '../../client/baremetal-wire.js';
import { DRIVER_INTERFACES, schemaRef } from '../schemas.js';
import { flag, ironicQuery, showQuery, text } from './query.js';
import type { BaremetalContext } from '../context.js';
import { DRIVER, INTERFACES } from '../core/rules.js';
import { badRequest, ironicError, notAcceptable } from '../errors.js';
import { type Endpoint, type IronicRequest, answers } from '../request.js';
import { aliveConductorHosts } from '../services/conductors.js';
import { queryBool } from './common.js';

type E = Endpoint;

/** What fake-hardware's interfaces tell of the driver's properties (Ironic's fake vendor interface). */
const PROPERTIES: Wire.DriverProperties = { B1: 'B1 description. Required.', B2: 'B2 description. Required.' };

/** Ironic's RAID logical disk properties (ironic/common/raid.py), in its order. */
const LOGICAL_DISK_PROPERTIES: Wire.RaidLogicalDiskProperties = {
  raid_level: "RAID level for the logical disk. Valid values are 'JBOD', '0', '1', '2', '5', '6', '1+0', '5+0' and '6+0'. Required.",
  size_gb:
    "Size in GiB (Integer) for the logical disk. Use 'MAX' as size_gb if this logical disk is supposed to use the rest of the space available. Required.",
  volume_name: 'Name of the volume to be created. If this is not specified, it will be auto-generated. Optional.',
  is_root_volume: 'Specifies whether this disk is a root volume. By default, this is False. Optional.',
  share_physical_disks: 'Specifies whether other logical disks can share physical disks with this logical disk. By default, this is False. Optional.',
  disk_type:
    "The type of disk preferred. Valid values are 'hdd' and 'ssd'. If this is not specified, disk type will not be a selection criterion for choosing backing physical disks. Optional.",
  interface_type:
    "The interface type of disk. Valid values are 'sata', 'scsi' and 'sas'. If this is not specified, interface type will not be a selection criterion for choosing backing physical disks. Optional.",
  number_of_physical_disks:
    'Number of physical disks to use for this logical disk. By default, the driver uses the minimum number of disks required for that RAID level. Optional.',
  controller: 'Controller to use for this logical disk. If not specified, the driver will choose a suitable RAID controller on the bare metal node. Optional.',
  physical_disks: 'The physical disks to use for this logical disk. If not specified, the driver will choose suitable physical disks to use. Optional.',
};

const links = (base: string, sub: string) => [
  { href: `${base}/v1/drivers/${DRIVER}${sub}`, rel: 'self' },
  { href: `${base}/drivers/${DRIVER}${sub}`, rel: 'bookmark' },
];

async function hosts(ctx: BaremetalContext): Promise<string[]> {
  const alive = await aliveConductorHosts(ctx);
  return [...new Set([ctx.conductorId, ...alive])].sort();
}

function driverView(req: IronicRequest, hostnames: string[], detail: boolean, fields: string[] | undefined): Wire.DriverSelection {
  const out: Wire.Driver = { name: DRIVER, hosts: hostnames, links: links(req.baseUrl, '') };
  if (req.mv.atLeast('1.14')) out.properties = links(req.baseUrl, '/properties');
  if (req.mv.atLeast('1.30')) {
    out.type = 'dynamic';
    if (detail) {
      // in the order Ironic 21.4 writes them, each from its version (schemas.ts)
      const named = out as Record<string, unknown>;
      for (const [kind, since] of Object.entries(DRIVER_INTERFACES)) {
        if (!req.mv.atLeast(since)) continue;
        const enabled = INTERFACES[`${kind}_interface`]!;
        named[`default_${kind}_interface`] = enabled[0];
        named[`enabled_${kind}_interfaces`] = [...enabled];
      }
    }
  }
  if (!fields) return out;
  const bad = fields.filter((f) => !(f in out));
  if (bad.length) throw badRequest(`Field(s) "${bad.join(', ')}" are not valid`);
  // links always, where they stand, as Ironic's sanitize_dict (and every other resource's `fields`)
  return Object.fromEntries(Object.entries(out).filter(([k]) => k === 'links' || fields.includes(k))) as Wire.DriverSelection;
}

/** `fields` (1.77) */
function fieldsArg(req: IronicRequest, raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  if (!req.mv.atLeast('1.77')) throw notAcceptable();
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

const driverNotFound = (name: string) => ironicError(404, `Could not find the following driver(s) or hardware type(s): ${name}.`);

function requireDriver(req: IronicRequest): void {
  const name = req.param('driver');
  if (name !== DRIVER) throw driverNotFound(name);
}

export const list: E = {
  policy: 'baremetal:driver:get',
  summary: 'the hardware types: fake-hardware',
  query: ironicQuery({ type: text, detail: flag, fields: text }),
  ok: [200],
  ...answers('DriverList', async (req, ctx) => {
    const args = req.queryArgs();
    const detail = queryBool(args, 'detail');
    if (args.fields !== undefined && detail) throw badRequest('Can not specify ?detail=True and fields in the same request.');
    const versionMessage = 'The minimal required API version should be 1.30';
    if ((detail !== undefined || args.type !== undefined) && !req.mv.atLeast('1.30')) throw ironicError(406, `Request not acceptable. ${versionMessage}`);
    const fields = fieldsArg(req, args.fields);
    if (args.type !== undefined && !['classic', 'dynamic'].includes(args.type))
      throw badRequest('"type" filter must be one of "classic" or "dynamic", if specified.');
    // fake-hardware is a hardware type (dynamic); allot has no classic drivers
    if (args.type === 'classic') return { body: { drivers: [] } };
    return { body: { drivers: [driverView(req, await hosts(ctx), detail === true, fields)] } };
  }),
};

export const show: E = {
  policy: 'baremetal:driver:get',
  summary: 'fake-hardware and its interfaces',
  query: showQuery(),
  ok: [200],
  response: schemaRef('Driver'),
  async handle(req, ctx) {
    const args = req.queryArgs();
    const fields = fieldsArg(req, args.fields);
    requireDriver(req);
    return { body: driverView(req, await hosts(ctx), true, fields) };
  },
};

export const properties: E = {
  policy: 'baremetal:driver:get_properties',
  summary: "the driver's properties",
  ok: [200],
  response: schemaRef('DriverProperties'),
  async handle(req) {
    req.queryArgs();
    requireDriver(req);
    return { body: PROPERTIES };
  },
};

export const logicalDiskProperties: E = {
  policy: 'baremetal:driver:get_raid_logical_disk_properties',
  summary: 'the properties of a RAID logical disk (1.12)',
  ok: [200],
  response: schemaRef('RaidLogicalDiskProperties'),
  async handle(req) {
    req.queryArgs();
    if (!req.mv.atLeast('1.12')) throw notAcceptable();
    requireDriver(req);
    return { body: LOGICAL_DISK_PROPERTIES };
  },
};
