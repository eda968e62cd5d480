// Built-in inventory in a PostgreSQL table of its own database (the seed's example):
//   allocation: table (attribute, owner, allocated_value); allocating runs in a SERIALIZABLE
//   transaction that first returns what the owner already holds, else takes max + 1 (from
//   `first`, up to `last`), retried on serialization failures;
//   lookup (optional): SELECT value_column FROM table WHERE key_column = key.
import pg from 'pg';
import type { ExternalInventory, InventoryEnvironment, JsonValue } from './types.js';
import { InventoryError, InventoryExhausted } from './types.js';

const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
function ident(value: unknown, what: string, fallback?: string): string {
  const v = value ?? fallback;
  if (typeof v !== 'string' || !IDENT.test(v)) throw new InventoryError(`${what} must be an SQL identifier, got ${JSON.stringify(v)}`);
  return `"${v}"`;
}

export function createPostgresTableInventory(options: Record<string, unknown>, env: InventoryEnvironment): ExternalInventory {
  if (typeof options.url !== 'string' || !/^postgres(ql)?:\/\//.test(options.url))
    throw new InventoryError('a postgres-table inventory needs "url": "postgres://…"');
  const table = ident(options.table, 'table', 'allocation');
  const attributeColumn = ident(options.attribute_column, 'attribute_column', 'attribute');
  const ownerColumn = ident(options.owner_column, 'owner_column', 'owner');
  const valueColumn = ident(options.value_column, 'value_column', 'allocated_value');
  const first = Number(options.first ?? 1);
  const last = options.last === undefined ? null : Number(options.last);
  const lookup = options.lookup as { table?: string; key_column?: string; value_column?: string } | undefined;
  const lookupSql = lookup
    ? `SELECT ${ident(lookup.value_column, 'lookup.value_column')} AS value FROM ${ident(lookup.table, 'lookup.table')} WHERE ${ident(lookup.key_column, 'lookup.key_column')} = $1`
    : null;
  const pool = new pg.Pool({ connectionString: options.url, max: Number(options.pool_size ?? 4) });
  pool.on('error', (err) => env.log.warn({ err, inventory: env.name }, 'inventory connection lost'));

  const withClient = async <T>(signal: AbortSignal, work: (c: pg.PoolClient) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    // A timed-out call must not leave a statement running: cancel it by closing the connection.
    let broken = false;
    const onAbort = () => {
      broken = true;
      client.release(new Error('inventory call timed out'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await work(client);
    } finally {
      signal.removeEventListener('abort', onAbort);
      if (!broken) client.release();
    }
  };

  return {
    async lookup(key, call) {
      if (!lookupSql) throw new InventoryError(`inventory ${env.name} has no lookup table configured`);
      return withClient(call.signal, async (c) => {
        const res = await c.query<{ value: JsonValue }>(lookupSql, [key]);
        return res.rows[0]?.value ?? null;
      });
    },
    async allocateForOwner(owner, call) {
      return withClient(call.signal, async (c) => {
        for (let attempt = 1; ; attempt++) {
          try {
            await c.query('BEGIN ISOLATION LEVEL SERIALIZABLE');
            const held = await c.query(`SELECT ${valueColumn} AS v FROM ${table} WHERE ${attributeColumn} = $1 AND ${ownerColumn} = $2`, [
              call.attribute,
              owner,
            ]);
            if (held.rows[0]) {
              await c.query('COMMIT');
              return Number(held.rows[0].v);
            }
            const max = await c.query(`SELECT max(${valueColumn}) AS m FROM ${table} WHERE ${attributeColumn} = $1`, [call.attribute]);
            const next = max.rows[0]?.m === null || max.rows[0]?.m === undefined ? first : Number(max.rows[0].m) + 1;
            if (last !== null && next > last) throw new InventoryExhausted(`no ${call.attribute} left (the last, ${last}, is taken)`);
            await c.query(`INSERT INTO ${table} (${attributeColumn}, ${ownerColumn}, ${valueColumn}) VALUES ($1, $2, $3)`, [call.attribute, owner, next]);
            await c.query('COMMIT');
            return next;
          } catch (err) {
            await c.query('ROLLBACK').catch(() => {});
            const code = (err as { code?: string }).code;
            if ((code === '40001' || code === '40P01' || code === '23505') && attempt < 20 && !call.signal.aborted) {
              await new Promise((r) => setTimeout(r, Math.random() * 10 * attempt));
              continue;
            }
            throw err;
          }
        }
      });
    },
    async hasAllocation(owner, call) {
      return withClient(call.signal, async (c) => {
        const res = await c.query(`SELECT 1 FROM ${table} WHERE ${attributeColumn} = $1 AND ${ownerColumn} = $2`, [call.attribute, owner]);
        return res.rows.length > 0;
      });
    },
    async deallocate(owner, call) {
      await withClient(call.signal, (c) => c.query(`DELETE FROM ${table} WHERE ${attributeColumn} = $1 AND ${ownerColumn} = $2`, [call.attribute, owner]));
    },
    close: () => pool.end(),
  };
}
