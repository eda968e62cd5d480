// /resource_providers/{uuid}/inventories and /resource_providers/{uuid}/inventories/{resource_class}
import type * as Wire from '../../client/placement-wire.js';
import { INVENTORY_DEFAULTS, type InventoryLimits } from '../../core/capacity.js';
import { jsonWithFloats } from '../../http/json-floats.js';
import type { PlacementContext } from '../context.js';
import { placementError } from '../errors.js';
import type { Endpoint, PlacementRequest } from '../request.js';
import * as schemas from '../schemas.js';
import * as inventories from '../services/inventories.js';
import { providerUrl } from './resource-providers.js';

/** A class's inventory as a request gives it (any microversion's body, schemas.ts) with the defaults filled in. */
function withDefaults(input: Wire.Inventory): inventories.InventoryRecord {
  return {
    total: input.total,
    reserved: input.reserved ?? INVENTORY_DEFAULTS.reserved,
    min_unit: input.min_unit ?? INVENTORY_DEFAULTS.min_unit,
    max_unit: input.max_unit ?? INVENTORY_DEFAULTS.max_unit,
    step_size: input.step_size ?? INVENTORY_DEFAULTS.step_size,
    allocation_ratio: input.allocation_ratio ?? INVENTORY_DEFAULTS.allocation_ratio,
  };
}

/** reserved may not reach total (1.26 allows reserved == total, e.g. a host being drained). */
function checkReserved(req: PlacementRequest, uuid: string, entries: Array<[string, InventoryLimits]>, verb: 'create' | 'update'): void {
  const equalAllowed = req.mv.atLeast('1.26');
  for (const [rc, inv] of entries) {
    if (equalAllowed ? inv.reserved > inv.total : inv.reserved >= inv.total) {
      const what = equalAllowed ? 'greater than total' : 'greater than or equal to total';
      throw placementError(
        400,
        `Unable to ${verb} inventory for resource provider ${uuid}: Invalid inventory for '${rc}' on resource provider '${uuid}'. The reserved value is ${what}.`,
      );
    }
  }
}

const recordBody = (inv: inventories.InventoryRecord): Wire.InventoryRecord => ({
  total: inv.total,
  reserved: inv.reserved,
  min_unit: inv.min_unit,
  max_unit: inv.max_unit,
  step_size: inv.step_size,
  allocation_ratio: inv.allocation_ratio,
});
const oneClass = (generation: number, inv: inventories.InventoryRecord): Wire.InventoryWithGeneration => ({
  resource_provider_generation: generation,
  ...recordBody(inv),
});
const allClasses = (generation: number, records: ReadonlyMap<string, inventories.InventoryRecord>): Wire.Inventories => ({
  resource_provider_generation: generation,
  inventories: Object.fromEntries([...records].map(([rc, r]) => [rc, recordBody(r)])),
});
/** An inventory answer as Placement writes it: allocation_ratio a float (`1.0`, not `1`). */
const inventoryJson = (body: Wire.Inventories | Wire.InventoryWithGeneration) => jsonWithFloats(body, ['allocation_ratio']);

export const list: Endpoint = {
  summary: "a provider's inventories",
  ok: [200],
  response: schemas.schemaRef('Inventories'),
  policy: 'placement:resource_providers:inventories:list',
  async handle(req, ctx) {
    req.requireJsonAccept();
    const inv = await inventories.read(ctx, req.param('uuid'));
    return { body: inventoryJson(allClasses(inv.generation, inv.inventories)), lastModified: inv.lastModified };
  },
};

export const show: Endpoint = {
  summary: 'the inventory of one class',
  ok: [200],
  response: schemas.schemaRef('InventoryWithGeneration'),
  policy: 'placement:resource_providers:inventories:show',
  async handle(req, ctx) {
    req.requireJsonAccept();
    const uuid = req.param('uuid');
    const rc = req.param('resource_class');
    const inv = await inventories.read(ctx, uuid);
    const record = inv.inventories.get(rc);
    if (!record) throw placementError(404, `No inventory of class ${rc} for ${uuid}`);
    return { body: inventoryJson(oneClass(inv.generation, record)), lastModified: inv.lastModified };
  },
};

/** Apply a change to one class and answer with that class's inventory afterwards. */
async function changeAndShow(req: PlacementRequest, ctx: PlacementContext, change: inventories.InventoryChange, generation: number | undefined, one: string) {
  const uuid = req.param('uuid');
  const inv = await inventories.changeAndRead(ctx, uuid, change, generation);
  return { generation: inv.generation, record: inv.inventories.get(one)!, lastModified: inv.lastModified };
}

export const create: Endpoint = {
  summary: 'add the inventory of one resource class',
  body: schemas.inventoryCreate,
  ok: [201],
  response: schemas.schemaRef('InventoryWithGeneration'),
  policy: 'placement:resource_providers:inventories:create',
  async handle(req, ctx) {
    const uuid = req.param('uuid');
    const data = req.json<Wire.InventoryPost>();
    const inventory = withDefaults(data);
    checkReserved(req, uuid, [[data.resource_class, inventory]], 'create');
    const result = await changeAndShow(req, ctx, { kind: 'add', resourceClass: data.resource_class, inventory }, undefined, data.resource_class);
    return {
      status: 201,
      location: req.absoluteUrl(`${providerUrl(req, uuid)}/inventories/${data.resource_class}`),
      body: inventoryJson(oneClass(result.generation, result.record)),
      lastModified: result.lastModified,
    };
  },
};

export const update: Endpoint = {
  summary: 'update the inventory of one class',
  body: schemas.inventoryUpdate,
  ok: [200],
  response: schemas.schemaRef('InventoryWithGeneration'),
  policy: 'placement:resource_providers:inventories:update',
  async handle(req, ctx) {
    const uuid = req.param('uuid');
    const rc = req.param('resource_class');
    const data = req.json<Wire.InventoryPut>();
    const inventory = withDefaults(data);
    checkReserved(req, uuid, [[rc, inventory]], 'update');
    const result = await changeAndShow(req, ctx, { kind: 'update', resourceClass: rc, inventory }, data.resource_provider_generation, rc);
    return { body: inventoryJson(oneClass(result.generation, result.record)), lastModified: result.lastModified };
  },
};

export const replaceAll: Endpoint = {
  summary: "replace all of a provider's inventories",
  body: schemas.inventoriesReplace,
  ok: [200],
  response: schemas.schemaRef('Inventories'),
  policy: 'placement:resource_providers:inventories:update',
  async handle(req, ctx) {
    const uuid = req.param('uuid');
    const data = req.json<Wire.InventoriesPut>();
    const wanted = new Map(Object.entries(data.inventories).map(([rc, inv]) => [rc, withDefaults(inv)]));
    checkReserved(req, uuid, [...wanted], 'update');
    const result = await inventories.replaceAll(ctx, uuid, wanted, data.resource_provider_generation);
    return { body: inventoryJson(allClasses(result.generation, result.inventories)), lastModified: result.lastModified };
  },
};

export const remove: Endpoint = {
  summary: 'delete the inventory of one class',
  ok: [204],
  policy: 'placement:resource_providers:inventories:delete',
  async handle(req, ctx) {
    await inventories.change(ctx, req.param('uuid'), { kind: 'delete', resourceClass: req.param('resource_class') });
    return {};
  },
};

export const removeAll: Endpoint = {
  summary: "delete all of a provider's inventories",
  ok: [204],
  since: '1.5',
  tooOld: { status: 405 }, // Placement answered "method not allowed" here before 1.5, not 404
  policy: 'placement:resource_providers:inventories:delete',
  async handle(req, ctx) {
    await inventories.change(ctx, req.param('uuid'), { kind: 'delete-all' });
    return {};
  },
};
