// `allot ids …`: the identifier API from the command line, over HTTP to a running server.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';

interface Target {
  url: string;
  /** a Keystone token, for a server with --auth keystone */
  token?: string;
}

async function call(target: Target, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${target.url.replace(/\/+$/, '')}/ids/v1${path}`, {
    method,
    headers: {
      accept: 'application/json',
      ...(target.token ? { 'x-auth-token': target.token } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const parsed = text ? (JSON.parse(text) as Record<string, unknown>) : null;
  if (!res.ok) {
    const p = parsed ?? {};
    console.error(`allot: ${res.status} ${p.code ?? ''}: ${p.detail ?? text}`);
    if (p.conflicts || p.errors) console.error(JSON.stringify(p.conflicts ?? p.errors, null, 2));
    process.exit(1);
  }
  return parsed;
}

async function all(target: Target, path: string): Promise<unknown[]> {
  const out: unknown[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const page = (await call(target, 'GET', cursor ? `${path}${sep}cursor=${encodeURIComponent(cursor)}` : path)) as { items: unknown[]; next_cursor: string | null };
    out.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

const print = (v: unknown) => console.log(JSON.stringify(v, null, 2));
const collect = (v: string, prev: string[] = []) => [...prev, v];
/** `42` → 42; anything else stays text (an address, a prefix). */
const valueArg = (v: string): number | string => (/^\d+$/.test(v) ? Number(v) : v);
/** `k=v`, where v is JSON when it parses as JSON and text otherwise. */
function attributes(pairs: string[] = []): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i < 1) throw new Error(`--attr wants name=value, got ${p}`);
    const raw = p.slice(i + 1);
    try {
      out[p.slice(0, i)] = JSON.parse(raw);
    } catch {
      out[p.slice(0, i)] = raw;
    }
  }
  return out;
}
const query = (params: Record<string, string | undefined>) => {
  const q = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined));
  return q.size ? `?${q}` : '';
};
const enc = encodeURIComponent;

export function registerIdsCommands(program: Command): void {
  const ids = program
    .command('ids')
    .description('identifier pools, allocations and service instances of a running server')
    .option('--url <url>', 'server base URL [env ALLOT_URL]', process.env.ALLOT_URL ?? 'http://127.0.0.1:8778')
    .option('--token <token>', 'Keystone token for a server with --auth keystone (`openstack token issue -f value -c id`) [env ALLOT_TOKEN]', process.env.ALLOT_TOKEN);
  const target = (): Target => ({ url: ids.opts().url as string, token: ids.opts().token as string | undefined });

  const pools = ids.command('pools').description('identifier pools');
  pools.command('list').action(async () => print(await all(target(), '/pools')));
  pools.command('show <name>').action(async (name: string) => print(await call(target(), 'GET', `/pools/${enc(name)}`)));
  pools
    .command('create <name>')
    .requiredOption('--kind <kind>', 'integer, address or prefix')
    .requiredOption('--range <range>', 'e.g. 1-4094, 10.0.0.0/24 (repeatable)', collect)
    .option('--exclude <range>', 'excluded value or range (repeatable)', collect)
    .option('--static <range>', 'static band: explicit requests only (repeatable)', collect)
    .option('--prefix-length <n>', 'prefix pools: length of carved prefixes')
    .option('--strategy <strategy>', 'lowest, random or next_after_last')
    .option('--description <text>')
    .action(async (name: string, o: Record<string, any>) =>
      print(
        await call(target(), 'POST', '/pools', {
          name,
          kind: o.kind,
          ranges: o.range.map(valueArg),
          ...(o.exclude ? { excluded: o.exclude.map(valueArg) } : {}),
          ...(o.static ? { static: o.static.map(valueArg) } : {}),
          ...(o.prefixLength ? { prefix_length: Number(o.prefixLength) } : {}),
          ...(o.strategy ? { strategy: o.strategy } : {}),
          ...(o.description ? { description: o.description } : {}),
        }),
      ),
    );
  pools.command('delete <name>').action(async (name: string) => void (await call(target(), 'DELETE', `/pools/${enc(name)}`)));
  pools
    .command('free <name>')
    .description('free ranges of a pool')
    .action(async (name: string) => print(await all(target(), `/pools/${enc(name)}/free-ranges`)));
  pools
    .command('import <name> <file>')
    .description('import values in use from a JSON file: [{"value", "owner", "purpose"?}, …]')
    .option('--skip-conflicts', 'import what does not conflict (default: any conflict imports nothing)')
    .action(async (name: string, file: string, o: { skipConflicts?: boolean }) =>
      print(await call(target(), 'POST', `/pools/${enc(name)}/imports`, { items: JSON.parse(readFileSync(file === '-' ? 0 : file, 'utf8')), on_conflict: o.skipConflicts ? 'skip' : 'abort' })),
    );

  ids
    .command('allocate <pool>')
    .description('allocate a value for an owner (idempotent per owner and purpose)')
    .requiredOption('--owner <owner>')
    .option('--purpose <purpose>')
    .option('--value <value>', 'a specific value')
    .option('--count <n>', 'a contiguous aligned block of n values (a power of two)')
    .option('--prefix-length <n>', 'prefix pools: another length than the pool default')
    .option('--strategy <strategy>')
    .option('--ttl <seconds>', 'reserve only, for this long, until confirmed')
    .option('--dry-run', 'show what would be allocated; hold nothing')
    .action(async (pool: string, o: Record<string, any>) =>
      print(
        await call(target(), 'POST', `/pools/${enc(pool)}/allocations`, {
          owner: o.owner,
          ...(o.purpose !== undefined ? { purpose: o.purpose } : {}),
          ...(o.value !== undefined ? { value: valueArg(o.value) } : {}),
          ...(o.count ? { count: Number(o.count) } : {}),
          ...(o.prefixLength ? { prefix_length: Number(o.prefixLength) } : {}),
          ...(o.strategy ? { strategy: o.strategy } : {}),
          ...(o.ttl ? { ttl_seconds: Number(o.ttl) } : {}),
          ...(o.dryRun ? { dry_run: true } : {}),
        }),
      ),
    );

  const allocations = ids.command('allocations').description('allocations across pools');
  allocations
    .command('list')
    .option('--pool <pool>')
    .option('--owner <owner>')
    .option('--purpose <purpose>')
    .option('--state <state>', 'allocated or reserved')
    .action(async (o: Record<string, string | undefined>) => print(await all(target(), `/allocations${query(o)}`)));
  allocations.command('show <id>').action(async (id: string) => print(await call(target(), 'GET', `/allocations/${enc(id)}`)));
  allocations.command('release <id>').action(async (id: string) => void (await call(target(), 'DELETE', `/allocations/${enc(id)}`)));
  allocations.command('confirm <id>').description('confirm a reservation').action(async (id: string) => print(await call(target(), 'PATCH', `/allocations/${enc(id)}`, { state: 'allocated' })));

  const specs = ids.command('specs').description('allocation specs');
  specs.command('list').action(async () => print(await all(target(), '/allocation-specs')));
  specs.command('show <name>').action(async (name: string) => print(await call(target(), 'GET', `/allocation-specs/${enc(name)}`)));
  specs
    .command('create <file>')
    .description('create from a JSON file: {"name", "attributes": {…}}')
    .action(async (file: string) => print(await call(target(), 'POST', '/allocation-specs', JSON.parse(readFileSync(file === '-' ? 0 : file, 'utf8')))));
  specs.command('delete <name>').action(async (name: string) => void (await call(target(), 'DELETE', `/allocation-specs/${enc(name)}`)));

  const instances = ids.command('instances').description('service instances');
  instances
    .command('list')
    .option('--state <state>')
    .option('--service-type <type>')
    .action(async (o: { state?: string; serviceType?: string }) => print(await all(target(), `/service-instances${query({ state: o.state, service_type: o.serviceType })}`)));
  instances.command('show <id>').action(async (id: string) => print(await call(target(), 'GET', `/service-instances/${enc(id)}`)));
  instances
    .command('create')
    .requiredOption('--spec <name>', 'allocation spec')
    .option('--attr <name=value>', 'an attribute (repeatable; value is JSON or text)', collect)
    .option('--lifecycle <lifecycle>', 'simple or simple_with_deallocation')
    .option('--service-type <type>')
    .option('--id <uuid>', 'choose the id (creation becomes idempotent)')
    .action(async (o: Record<string, any>) =>
      print(
        await call(target(), 'POST', '/service-instances', {
          allocation_spec: o.spec,
          attributes: attributes(o.attr),
          ...(o.lifecycle ? { lifecycle: o.lifecycle } : {}),
          ...(o.serviceType ? { service_type: o.serviceType } : {}),
          ...(o.id ? { id: o.id } : {}),
        }),
      ),
    );
  instances
    .command('set <id>')
    .description('change candidate attributes (value null removes one)')
    .requiredOption('--attr <name=value>', 'repeatable', collect)
    .action(async (id: string, o: { attr: string[] }) => print(await call(target(), 'PATCH', `/service-instances/${enc(id)}`, { attributes: attributes(o.attr) })));
  for (const action of ['validate', 'promote', 'rollback'] as const) {
    instances.command(`${action} <id>`).action(async (id: string) => print(await call(target(), 'POST', `/service-instances/${enc(id)}/${action}`)));
  }
  instances.command('terminate <id>').action(async (id: string) => print(await call(target(), 'DELETE', `/service-instances/${enc(id)}`)));

  ids
    .command('outbox')
    .description('deallocations owed to external inventories')
    .option('--state <state>', 'pending or done')
    .action(async (o: { state?: string }) => print(await all(target(), `/outbox${query(o)}`)));
}
