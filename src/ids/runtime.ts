// The identifier API's per-process state: the external inventories named in the configuration
// file (`--ids-config`), loaded once and shared by the HTTP handlers and the outbox worker.
//
// Configuration file (JSON):
//   {"inventories": {
//      "routers": {"type": "postgres-table", "url": "postgres://…", "lookup": {"table": "routers", "key_column": "name", "value_column": "mgmt_ip"}},
//      "vlans":   {"type": "http", "url": "http://inventory.example:8080", "timeout_ms": 2000},
//      "custom":  {"module": "./my-inventory.js", "options": {…}}}}
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Logger } from 'pino';
import { idsError } from './errors.js';
import { createHttpInventory } from './inventories/http-inventory.js';
import { createPostgresTableInventory } from './inventories/postgres-table-inventory.js';
import { type ExternalInventory, type InventoryCall, type InventoryFactory, InventoryError } from './inventories/types.js';

export interface InventoryEntry {
  name: string;
  type: string;
  timeoutMs: number;
  inventory: ExternalInventory;
}

export type InventoryOperation = 'lookup' | 'allocateForOwner' | 'hasAllocation' | 'deallocate';

const BUILT_IN: Record<string, InventoryFactory> = {
  http: createHttpInventory,
  'postgres-table': createPostgresTableInventory,
};

export class IdsRuntime {
  constructor(
    readonly inventories: Map<string, InventoryEntry>,
    readonly log: Logger,
  ) {}

  entry(name: string): InventoryEntry {
    const e = this.inventories.get(name);
    if (!e) throw idsError(422, 'ids.unknown_inventory', `No external inventory named ${JSON.stringify(name)} is configured`);
    return e;
  }

  /**
   * Call an inventory with its time limit. A timeout is a 504 `ids.inventory_timeout`, anything
   * else it throws a 502 `ids.inventory_unavailable`; the caller decides what a failure means.
   */
  async call<T>(name: string, op: InventoryOperation, arg: string, call: Omit<InventoryCall, 'signal'>): Promise<T> {
    const e = this.entry(name);
    const fn = e.inventory[op] as ((a: string, c: InventoryCall) => Promise<T>) | undefined;
    if (!fn) throw idsError(422, 'ids.unknown_inventory', `Inventory ${name} does not offer ${op}`);
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(idsError(504, 'ids.inventory_timeout', `Inventory ${name} did not answer ${op} within ${e.timeoutMs} ms`, { inventory: name }));
      }, e.timeoutMs);
    });
    try {
      return await Promise.race([fn.call(e.inventory, arg, { ...call, signal: controller.signal }), timeout]);
    } catch (err) {
      if ((err as { code?: string }).code === 'ids.inventory_timeout') throw err;
      throw idsError(502, 'ids.inventory_unavailable', `Inventory ${name} failed ${op}: ${(err as Error).message}`, { inventory: name });
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.inventories.values()].map((e) => e.inventory.close?.().catch(() => {})));
  }
}

export async function loadRuntime(configFile: string | null, log: Logger): Promise<IdsRuntime> {
  const inventories = new Map<string, InventoryEntry>();
  if (configFile) {
    let parsed: { inventories?: Record<string, Record<string, unknown>> };
    try {
      parsed = JSON.parse(readFileSync(configFile, 'utf8'));
    } catch (err) {
      throw new Error(`cannot read the ids configuration ${configFile}: ${(err as Error).message}`);
    }
    for (const [name, spec] of Object.entries(parsed.inventories ?? {})) {
      if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name)) throw new Error(`inventory name ${JSON.stringify(name)} is not a valid name`);
      let factory: InventoryFactory;
      let type: string;
      if (typeof spec.module === 'string') {
        const file = path.resolve(path.dirname(configFile), spec.module);
        const mod = (await import(pathToFileURL(file).href)) as { default?: InventoryFactory; createInventory?: InventoryFactory };
        const f = mod.createInventory ?? mod.default;
        if (typeof f !== 'function') throw new Error(`inventory module ${file} exports neither createInventory nor a default function`);
        factory = f;
        type = 'module';
      } else {
        type = String(spec.type);
        const f = BUILT_IN[type];
        if (!f) throw new Error(`inventory ${name}: unknown type ${JSON.stringify(spec.type)} (http, postgres-table, or give "module")`);
        factory = f;
      }
      const options = (typeof spec.module === 'string' ? (spec.options ?? {}) : spec) as Record<string, unknown>;
      try {
        const inventory = await factory(options, { name, log: log.child({ inventory: name }) });
        inventories.set(name, { name, type, timeoutMs: Number(spec.timeout_ms ?? 5000), inventory });
      } catch (err) {
        if (err instanceof InventoryError) throw new Error(`inventory ${name}: ${err.message}`);
        throw err;
      }
    }
  }
  return new IdsRuntime(inventories, log);
}
