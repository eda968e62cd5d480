// The external inventories named in the configuration file (`--ids-config`): loaded once at start
// into the identifier context, used by the services (lookups, allocate-for-owner) and the outbox
// worker (deallocate), closed with the context.
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
import { idsDomainError, isIdsError } from '../core/domain-errors.js';
import { createHttpInventory } from './http-inventory.js';
import { createPostgresTableInventory } from './postgres-table-inventory.js';
import { type ExternalInventory, type InventoryCall, type InventoryFactory, InventoryError } from './types.js';

export interface InventoryEntry {
  name: string;
  type: string;
  timeoutMs: number;
  inventory: ExternalInventory;
}

export type InventoryOperation = 'lookup' | 'allocateForOwner' | 'hasAllocation' | 'deallocate';
export const INVENTORY_OPERATIONS: readonly InventoryOperation[] = ['lookup', 'allocateForOwner', 'hasAllocation', 'deallocate'];

export class Inventories {
  constructor(private readonly entries: ReadonlyMap<string, InventoryEntry>) {}

  list(): InventoryEntry[] {
    return [...this.entries.values()];
  }

  /** The inventory of this name; `unknown_inventory` when none is configured. */
  entry(name: string): InventoryEntry {
    const e = this.entries.get(name);
    if (!e) throw idsDomainError('unknown_inventory', { inventory: name });
    return e;
  }

  offers(name: string, op: InventoryOperation): boolean {
    return typeof this.entry(name).inventory[op] === 'function';
  }

  /**
   * Call an inventory within its time limit: `inventory_timeout` when it does not answer in time,
   * `inventory_failed` when it throws; the caller decides what a failure means.
   */
  async call<T>(name: string, op: InventoryOperation, arg: string, call: Omit<InventoryCall, 'signal'>): Promise<T> {
    const e = this.entry(name);
    const fn = e.inventory[op] as ((a: string, c: InventoryCall) => Promise<T>) | undefined;
    if (!fn) throw idsDomainError('inventory_lacks_operation', { inventory: name, operation: op });
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(idsDomainError('inventory_timeout', { inventory: name, operation: op, timeout_ms: e.timeoutMs }));
      }, e.timeoutMs);
    });
    try {
      return await Promise.race([fn.call(e.inventory, arg, { ...call, signal: controller.signal }), timeout]);
    } catch (err) {
      if (isIdsError(err, 'inventory_timeout')) throw err;
      throw idsDomainError('inventory_failed', { inventory: name, operation: op, reason: (err as Error).message });
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.list().map((e) => e.inventory.close?.().catch(() => {})));
  }
}

function builtIn(type: string): InventoryFactory | null {
  if (type === 'http') return createHttpInventory;
  if (type === 'postgres-table') return createPostgresTableInventory;
  return null;
}

/** Build every inventory the file names; on a failure, close the ones already built and throw. */
export async function loadInventories(configFile: string | null, log: Logger): Promise<Inventories> {
  const entries = new Map<string, InventoryEntry>();
  if (!configFile) return new Inventories(entries);
  let parsed: { inventories?: Record<string, Record<string, unknown>> };
  try {
    parsed = JSON.parse(readFileSync(configFile, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read the ids configuration ${configFile}: ${(err as Error).message}`);
  }
  try {
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
        const f = builtIn(type);
        if (!f) throw new Error(`inventory ${name}: unknown type ${JSON.stringify(spec.type)} (http, postgres-table, or give "module")`);
        factory = f;
      }
      const options = (typeof spec.module === 'string' ? (spec.options ?? {}) : spec) as Record<string, unknown>;
      try {
        const inventory = await factory(options, { name, log: log.child({ inventory: name }) });
        entries.set(name, { name, type, timeoutMs: Number(spec.timeout_ms ?? 5000), inventory });
      } catch (err) {
        if (err instanceof InventoryError) throw new Error(`inventory ${name}: ${err.message}`);
        throw err;
      }
    }
  } catch (err) {
    await new Inventories(entries).close();
    throw err;
  }
  return new Inventories(entries);
}
