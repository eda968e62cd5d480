// `allot ids …`: the identifier API from the command line, through the typed client. Lists
// follow every page. Bulk work (imports, batches beyond one request) shows a progress bar on a
// terminal.
import { Argument, type Command, Option } from 'commander';
import { AllotApiError } from '../client/errors.js';
import { BATCH_MAX_ITEMS, IMPORT_MAX_ITEMS, type IdsClient } from '../client/ids.js';
import type * as I from '../client/ids-types.js';
import { type CliContext, act, addConnectionOptions, collect, integer, keyValues, readJsonFile } from './connection.js';
import { NotFoundError, UsageError } from './exit.js';
import { type TableView, fieldsView } from './output.js';
import { progressBar } from './progress.js';

/** `42` → 42; anything else stays text (an address, a prefix). */
const valueArg = (v: string): number | string => (/^\d+$/.test(v) ? Number(v) : v);

const ALLOCATION_COLUMNS = ['id', 'pool', 'owner', 'purpose', 'value', 'count', 'state', 'expires_at'];
const INSTANCE_COLUMNS = ['id', 'allocation_spec', 'service_type', 'project_id', 'state', 'version', 'last_error'];
const allocationRows = (l: I.Allocation[]): TableView => ({ rows: l, columns: ALLOCATION_COLUMNS });
const poolRows = (l: I.Pool[]): TableView => ({
  rows: l.map((p) => ({
    name: p.name,
    kind: p.kind,
    strategy: p.strategy,
    total: p.utilization?.total,
    used: p.utilization?.used,
    free: p.utilization?.free,
    allocations: p.utilization?.allocations,
  })),
});
const instanceRows = (l: I.Instance[]): TableView => ({ rows: l, columns: INSTANCE_COLUMNS });

/** A holding's value in a cell: the pool value, the node, the capacity per provider. */
function holdingValue(h: I.Holding): unknown {
  if (h.source === 'node') return h.value.name ? `${h.value.name} (${h.value.node})` : h.value.node;
  if (h.source === 'capacity')
    return Object.entries(h.value.allocations)
      .map(
        ([provider, { resources }]) =>
          `${Object.entries(resources)
            .map(([rc, n]) => `${rc}=${n}`)
            .join(', ')} on ${provider}`,
      )
      .join('; ');
  return h.value;
}

/** One instance: its fields, then what it holds in every engine with a link into the API that shows it. */
const instanceTables =
  (ids: IdsClient) =>
  ({ holdings, ...fields }: I.Instance): TableView[] => [
    fieldsView(fields),
    {
      title: 'holdings',
      rows: holdings.map((h) => ({ attribute: h.attribute ?? '(released)', source: h.source, value: holdingValue(h), link: h.href && ids.holdingUrl(h.href) })),
      columns: ['attribute', 'source', 'value', 'link'],
    },
  ];

/** Import items: the file holds a list, or {"items": [...]}. */
async function importItems(file: string): Promise<I.ImportItem[]> {
  const doc = (await readJsonFile(file)) as I.ImportItem[] | { items?: I.ImportItem[] };
  const items = Array.isArray(doc) ? doc : doc?.items;
  if (!Array.isArray(items) || items.length === 0)
    throw new UsageError(`${file} must hold a non-empty list of {"value", "owner", "purpose"?} (or {"items": [...]})`);
  return items;
}

/** The one allocation of `pool` holding `value`; none is "not found" (exit 4), several (a prefix spanning blocks) a usage error. */
async function holderOf(ids: IdsClient, pool: string, value: string): Promise<I.Allocation> {
  const found = await ids.allocationsHolding(pool, value);
  if (found.length === 0) throw new NotFoundError(`no allocation of pool ${pool} holds ${value}`);
  if (found.length > 1) {
    const values = found.map((f) => f.value).join(', ');
    throw new UsageError(
      `${value} spans ${found.length} allocations of pool ${pool} (${values}): list them with \`allot ids allocations list --pool ${pool} --value ${value}\``,
    );
  }
  return found[0]!;
}

export function registerIdsCommands(program: Command): void {
  const ids = addConnectionOptions(program.command('ids').description('identifier pools, allocations, specs and service instances (the identifier API)'));
  const a = <A extends any[]>(fn: (ctx: CliContext, opts: Record<string, any>, ...args: A) => Promise<void>) => act<A>('ids', fn);

  // ---- pools ----
  const pools = ids.command('pools').description('identifier pools');
  pools
    .command('list')
    .description('list pools with their utilization')
    .addOption(new Option('--kind <kind>', 'only pools of this kind').choices(['integer', 'address', 'prefix']))
    .action(a(async ({ client, out }, o) => out.print(await client.ids.listAllPools({ kind: o.kind }), poolRows)));
  pools
    .command('show')
    .description('one pool with its utilization')
    .argument('<name>', 'pool name')
    .action(a(async ({ client, out }, _o, name: string) => out.print(await client.ids.getPool(name))));
  pools
    .command('create')
    .description('create a pool (the same definition again answers the existing pool)')
    .argument('<name>', 'pool name')
    .addOption(new Option('--kind <kind>', 'integer, address or prefix').choices(['integer', 'address', 'prefix']).makeOptionMandatory())
    .requiredOption('--range <range>', 'e.g. 1-4094, 10.0.0.0/24 (repeatable)', collect)
    .option('--exclude <range>', 'excluded value or range (repeatable)', collect)
    .option('--static <range>', 'static band: explicit requests only (repeatable)', collect)
    .option('--prefix-length <n>', 'prefix pools: length of carved prefixes', integer(0, 128))
    .addOption(new Option('--strategy <strategy>', 'default strategy of automatic allocation').choices(['lowest', 'highest', 'random', 'next_after_last']))
    .option('--description <text>', 'free text')
    .option('--metadata <key=value>', 'a label (repeatable)', collect)
    .option('--project-id <id>', 'the Keystone project owning the pool: its readers and members use it (default: shared by every project)')
    .action(
      a(async ({ client, out }, o, name: string) =>
        out.print(
          await client.ids.createPool({
            name,
            kind: o.kind,
            ranges: o.range.map(valueArg),
            ...(o.exclude ? { excluded: o.exclude.map(valueArg) } : {}),
            ...(o.static ? { static: o.static.map(valueArg) } : {}),
            ...(o.prefixLength !== undefined ? { prefix_length: o.prefixLength } : {}),
            ...(o.strategy ? { strategy: o.strategy } : {}),
            ...(o.description ? { description: o.description } : {}),
            ...(o.metadata ? { metadata: keyValues(o.metadata, '--metadata') } : {}),
            ...(o.projectId ? { project_id: o.projectId } : {}),
          }),
        ),
      ),
    );
  pools
    .command('set')
    .description("change a pool's strategy, description, metadata, ranges, exclusions or static band (lists replace the pool's)")
    .argument('<name>', 'pool name')
    .option('--range <range>', 'the ranges (repeatable; replaces them all)', collect)
    .option('--exclude <range>', 'the excluded values (repeatable; replaces them all)', collect)
    .option('--static <range>', 'the static band (repeatable; replaces it)', collect)
    .addOption(new Option('--strategy <strategy>', 'default strategy').choices(['lowest', 'highest', 'random', 'next_after_last']))
    .option('--description <text>', 'free text')
    .option('--metadata <key=value>', 'a label (repeatable; replaces the metadata)', collect)
    .option('--if-match <version>', 'only if the pool is still at this generation', integer(0))
    .action(
      a(async ({ client, out }, o, name: string) => {
        const update: I.PoolUpdate = {
          ...(o.range ? { ranges: o.range.map(valueArg) } : {}),
          ...(o.exclude ? { excluded: o.exclude.map(valueArg) } : {}),
          ...(o.static ? { static: o.static.map(valueArg) } : {}),
          ...(o.strategy ? { strategy: o.strategy } : {}),
          ...(o.description !== undefined ? { description: o.description } : {}),
          ...(o.metadata ? { metadata: keyValues(o.metadata, '--metadata') } : {}),
        };
        if (!Object.keys(update).length) throw new UsageError('nothing to change: give at least one option');
        out.print(await client.ids.updatePool(name, update, { ifMatch: o.ifMatch }));
      }),
    );
  pools
    .command('delete')
    .description('delete an empty pool')
    .argument('<name>', 'pool name')
    .action(
      a(async ({ client, out }, _o, name: string) => {
        await client.ids.deletePool(name);
        out.note(`deleted pool ${name}`);
      }),
    );
  pools
    .command('free')
    .description('free ranges of a pool')
    .argument('<name>', 'pool name')
    .addOption(new Option('--band <band>', 'only this band').choices(['auto', 'static']))
    .action(a(async ({ client, out }, o, name: string) => out.print(await client.ids.listAllFreeRanges(name, { band: o.band }))));
  pools
    .command('import')
    .description(
      `import values already in use from a JSON file: [{"value", "owner", "purpose"?}, …] (- for stdin). ` +
        `Default: all or nothing, in one request (at most ${IMPORT_MAX_ITEMS} items). With --skip-conflicts, in requests of --batch-size items with a progress bar; conflicts are listed`,
    )
    .argument('<name>', 'pool name')
    .argument('<file>', 'JSON file, or - for stdin')
    .option('--skip-conflicts', 'import what does not conflict (default: any conflict imports nothing)')
    .option('--batch-size <n>', 'items per request with --skip-conflicts', integer(1, IMPORT_MAX_ITEMS), 1000)
    .action(
      a(async ({ client, out }, o, name: string, file: string) => {
        const items = await importItems(file);
        const progress = progressBar(`importing into ${name}`, items.length);
        try {
          if (!o.skipConflicts) {
            if (items.length > IMPORT_MAX_ITEMS)
              throw new UsageError(`${items.length} items cannot be imported all or nothing (at most ${IMPORT_MAX_ITEMS}); use --skip-conflicts`);
            const outcome = await client.ids.importValues(name, items, 'abort');
            progress.advance(items.length);
            return out.print(outcome);
          }
          const total: I.ImportOutcome = { imported: 0, unchanged: 0, conflicts: [] };
          for (let start = 0; start < items.length; start += o.batchSize) {
            const chunk = items.slice(start, start + o.batchSize);
            const outcome = await client.ids.importValues(name, chunk, 'skip');
            total.imported += outcome.imported;
            total.unchanged += outcome.unchanged;
            total.conflicts.push(...outcome.conflicts.map((c) => ({ ...c, index: c.index + start })));
            progress.advance(chunk.length);
          }
          out.print(total);
        } finally {
          progress.finish();
        }
      }),
    );

  ids
    .command('allocate')
    .description('allocate a value for an owner (idempotent per owner and purpose)')
    .argument('<pool>', 'pool name')
    .requiredOption('--owner <owner>', 'who holds the value')
    .option('--purpose <purpose>', 'what for (owner + purpose is the idempotency key)')
    .option('--value <value>', 'a specific value')
    .option('--count <n>', 'a contiguous aligned block of n values (a power of two)', integer(1))
    .option('--prefix-length <n>', 'prefix pools: another length than the pool default', integer(0, 128))
    .addOption(new Option('--strategy <strategy>', 'how to pick').choices(['lowest', 'highest', 'random', 'next_after_last']))
    .option('--ttl <seconds>', 'reserve only, for this long, until confirmed', integer(1))
    .option('--metadata <key=value>', 'a label (repeatable)', collect)
    .option('--dry-run', 'show what would be allocated; hold nothing')
    .action(
      a(async ({ client, out }, o, pool: string) => {
        const { created: _, ...allocation } = await client.ids.allocate(pool, {
          owner: o.owner,
          ...(o.purpose !== undefined ? { purpose: o.purpose } : {}),
          ...(o.value !== undefined ? { value: valueArg(o.value) } : {}),
          ...(o.count ? { count: o.count } : {}),
          ...(o.prefixLength !== undefined ? { prefix_length: o.prefixLength } : {}),
          ...(o.strategy ? { strategy: o.strategy } : {}),
          ...(o.ttl ? { ttl_seconds: o.ttl } : {}),
          ...(o.metadata ? { metadata: keyValues(o.metadata, '--metadata') } : {}),
          ...(o.dryRun ? { dry_run: true } : {}),
        });
        out.print(allocation);
      }),
    );

  // ---- allocations ----
  const allocations = ids.command('allocations').description('allocations across pools');
  allocations
    .command('list')
    .description('list allocations')
    .option('--pool <pool>', 'only from this pool')
    .option('--owner <owner>', 'only of this owner')
    .option('--purpose <purpose>', 'only for this purpose')
    .addOption(new Option('--state <state>', 'only in this state').choices(['allocated', 'reserved']))
    .option('--value <value>', 'with --pool: only the allocation holding this value (a prefix: those holding part of it)')
    .action(
      a(async ({ client, out }, o) => {
        const filter = { owner: o.owner, purpose: o.purpose, state: o.state };
        if (o.value === undefined) return out.print(await client.ids.listAllAllocations({ pool: o.pool, ...filter }), allocationRows);
        if (o.pool === undefined) throw new UsageError('--value looks a value up in one pool: give --pool too');
        out.print(await client.ids.listAllPoolAllocations(o.pool, { ...filter, value: o.value }), allocationRows);
      }),
    );
  allocations
    .command('show')
    .description('one allocation, by id, or with --pool the one holding a value ("who holds VLAN 105?": --pool vlan 105)')
    .argument('<id>', 'allocation id, or with --pool a value (105, 10.0.0.5, 10.0.1.0/24)')
    .option('--pool <pool>', 'the argument is a value of this pool')
    .action(a(async ({ client, out }, o, id: string) => out.print(o.pool ? await holderOf(client.ids, o.pool, id) : await client.ids.getAllocation(id))));
  allocations
    .command('release')
    .description('release an allocation, by id or with --pool by its value: the value is free again at once')
    .argument('<id>', "allocation id, or with --pool the allocation's value as it is written (105, 10.0.0.4, 10.0.1.0/24)")
    .option('--pool <pool>', 'the argument is a value of this pool')
    .option('--force', 'release even a value that attribute sets of a live service instance refer to (recorded on the instance)')
    .option('--if-match <version>', 'only if the allocation is still at this version', integer(0))
    .action(
      a(async ({ client, out }, o, id: string) => {
        const options = { ifMatch: o.ifMatch, force: o.force === true };
        if (o.pool) await client.ids.releaseAllocationByValue(o.pool, id, options);
        else await client.ids.releaseAllocation(id, options);
        out.note(o.pool ? `released ${id} in pool ${o.pool}` : `released ${id}`);
      }),
    );
  allocations
    .command('confirm')
    .description('confirm a reservation')
    .argument('<id>', 'allocation id')
    .action(a(async ({ client, out }, _o, id: string) => out.print(await client.ids.updateAllocation(id, { state: 'allocated' }))));
  allocations
    .command('set')
    .description("extend a reservation's lease or replace an allocation's metadata")
    .argument('<id>', 'allocation id')
    .option('--ttl <seconds>', 'a reservation now ends this many seconds from now', integer(1))
    .option('--metadata <key=value>', 'a label (repeatable; replaces the metadata)', collect)
    .option('--if-match <version>', 'only if the allocation is still at this version', integer(0))
    .action(
      a(async ({ client, out }, o, id: string) => {
        if (o.ttl === undefined && !o.metadata) throw new UsageError('nothing to change: give --ttl or --metadata');
        out.print(
          await client.ids.updateAllocation(
            id,
            { ...(o.ttl ? { ttl_seconds: o.ttl } : {}), ...(o.metadata ? { metadata: keyValues(o.metadata, '--metadata') } : {}) },
            { ifMatch: o.ifMatch },
          ),
        );
      }),
    );
  allocations
    .command('batch')
    .description(
      `allocate several values from several pools from a JSON file: [{"pool", "owner", …}, …] (- for stdin). ` +
        `Up to ${BATCH_MAX_ITEMS} items: one request, all or nothing. More: requests of ${BATCH_MAX_ITEMS}, each all or nothing, with a progress bar; ` +
        'the first failing request stops the run (what earlier requests allocated is printed and stays allocated)',
    )
    .argument('<file>', 'JSON file, or - for stdin')
    .option('--dry-run', 'show what would be allocated; hold nothing')
    .action(
      a(async ({ client, out }, o, file: string) => {
        const doc = (await readJsonFile(file)) as I.BatchItem[] | { allocations?: I.BatchItem[] };
        const items = Array.isArray(doc) ? doc : doc?.allocations;
        if (!Array.isArray(items) || items.length === 0)
          throw new UsageError(`${file} must hold a non-empty list of {"pool", "owner", …} (or {"allocations": [...]})`);
        const progress = progressBar('allocating', items.length);
        const done: I.Allocation[] = [];
        try {
          for (let start = 0; start < items.length; start += BATCH_MAX_ITEMS) {
            const chunk = items.slice(start, start + BATCH_MAX_ITEMS);
            const result = await client.ids.allocateBatch(chunk, { dryRun: o.dryRun }).catch((err: unknown) => {
              if (done.length) out.print(done, allocationRows);
              if (!(err instanceof AllotApiError) || start === 0) throw err;
              // say where in the file it failed, and that earlier requests' allocations stay
              const body = (err.body ?? {}) as { detail?: string; index?: number };
              const where =
                typeof body.index === 'number' ? `item ${start + body.index} of the file` : `items ${start}–${start + chunk.length - 1} of the file`;
              const detail = (body.detail ?? err.message).replace(/^allocations\[\d+\]: /, '');
              throw new AllotApiError(
                err.status,
                err.code,
                `${detail} (${where}; the ${done.length} allocated before stay allocated)`,
                err.requestId,
                err.api,
                err.request,
                err.body,
              );
            });
            done.push(...result.allocations);
            progress.advance(chunk.length);
          }
        } finally {
          progress.finish();
        }
        out.print(done, allocationRows);
      }),
    );

  // ---- specs ----
  const specs = ids.command('specs').description('allocation specs (how a service instance gets each attribute)');
  specs
    .command('list')
    .description('list allocation specs')
    .action(
      a(async ({ client, out }) => out.print(await client.ids.listAllSpecs(), (l: I.Spec[]) => ({ rows: l, columns: ['name', 'description', 'version'] }))),
    );
  specs
    .command('show')
    .description('one allocation spec')
    .argument('<name>', 'spec name')
    .action(a(async ({ client, out }, _o, name: string) => out.print(await client.ids.getSpec(name))));
  specs
    .command('create')
    .description(
      'create from a JSON file: {"name", "attributes": {…}, "project_id"?} (- for stdin); an attribute comes from a pool, a lookup, an inventory, ' +
        'a bare-metal node ({"from": "node", "resource_class", …}) or Placement capacity ({"from": "capacity", "resources", …})',
    )
    .argument('<file>', 'JSON file, or - for stdin')
    .action(a(async ({ client, out }, _o, file: string) => out.print(await client.ids.createSpec((await readJsonFile(file)) as I.SpecCreate))));
  specs
    .command('delete')
    .description('delete an allocation spec no instance uses')
    .argument('<name>', 'spec name')
    .action(
      a(async ({ client, out }, _o, name: string) => {
        await client.ids.deleteSpec(name);
        out.note(`deleted spec ${name}`);
      }),
    );

  // ---- service instances ----
  const instances = ids.command('instances').description('service instances');
  instances
    .command('list')
    .description('list service instances')
    .option('--state <state>', 'only in this state (built in: start, up, update, deallocating, terminated; or a state of a loaded lifecycle)')
    .option('--service-type <type>', 'only of this service type')
    .action(a(async ({ client, out }, o) => out.print(await client.ids.listAllInstances({ state: o.state, service_type: o.serviceType }), instanceRows)));
  instances
    .command('show')
    .description('one service instance with its attribute sets')
    .argument('<id>', 'instance id')
    .action(a(async ({ client, out }, _o, id: string) => out.print(await client.ids.getInstance(id), instanceTables(client.ids))));
  instances
    .command('create')
    .description('create a service instance (state start; with --validate it reserves every attribute at once, all or nothing)')
    .requiredOption('--spec <name>', 'allocation spec')
    .option('--attr <name=value>', 'an attribute (repeatable; value is JSON or text)', collect)
    .option('--lifecycle <lifecycle>', 'simple (default), simple_with_deallocation, or one the server loaded from --ids-lifecycles')
    .option('--service-type <type>', 'service type')
    .option('--id <uuid>', 'choose the id (creation becomes idempotent)')
    .option('--project-id <id>', "the Keystone project the instance belongs to (default: the caller's; another one needs ids:all_projects)")
    .option('--validate', 'validate at once: reserve every attribute (pool values, nodes, capacity) in one transaction, all or nothing')
    .option('--promote', 'then promote the validated set to active (needs --validate)')
    .action(
      a(async ({ client, out }, o) => {
        if (o.promote && !o.validate) throw new UsageError('--promote needs --validate');
        out.print(
          await client.ids.createInstance({
            allocation_spec: o.spec,
            attributes: keyValues(o.attr, '--attr'),
            ...(o.lifecycle ? { lifecycle: o.lifecycle } : {}),
            ...(o.serviceType ? { service_type: o.serviceType } : {}),
            ...(o.id ? { id: o.id } : {}),
            ...(o.projectId ? { project_id: o.projectId } : {}),
            ...(o.validate ? { validate: true } : {}),
            ...(o.promote ? { promote: true } : {}),
          }),
          instanceTables(client.ids),
        );
      }),
    );
  instances
    .command('set')
    .description('change candidate attributes (value null removes one)')
    .argument('<id>', 'instance id')
    .requiredOption('--attr <name=value>', 'an attribute (repeatable; value is JSON or text)', collect)
    .action(
      a(async ({ client, out }, o, id: string) => out.print(await client.ids.updateInstance(id, keyValues(o.attr, '--attr')), instanceTables(client.ids))),
    );
  const verbs: Array<[string, string, (c: CliContext, id: string) => Promise<I.Instance>]> = [
    ['validate', 'allocate, reserve and look up into the candidate set, all or nothing', (c, id) => c.client.ids.validateInstance(id)],
    ['promote', 'candidate → active, active → rollback', (c, id) => c.client.ids.promoteInstance(id)],
    ['rollback', 'swap active and rollback', (c, id) => c.client.ids.rollbackInstance(id)],
    ['terminate', 'release every value, node and capacity (external values through the outbox)', (c, id) => c.client.ids.terminateInstance(id)],
  ];
  for (const [verb, description, run] of verbs) {
    instances
      .command(verb)
      .description(description)
      .argument('<id>', 'instance id')
      .action(a(async (ctx, _o, id: string) => ctx.out.print(await run(ctx, id), instanceTables(ctx.client.ids))));
  }
  instances
    .command('clear-set')
    .description('clear the candidate or rollback attribute set (frees what only it held)')
    .argument('<id>', 'instance id')
    .addArgument(new Argument('<set>', 'candidate or rollback').choices(['candidate', 'rollback']))
    .action(
      a(async ({ client, out }, _o, id: string, set: 'candidate' | 'rollback') =>
        out.print(await client.ids.clearAttributeSet(id, set), instanceTables(client.ids)),
      ),
    );

  // ---- inventories and outbox ----
  ids
    .command('inventories')
    .description('configured external inventories and their outbox counts')
    .action(
      a(async ({ client, out }) =>
        out.print(await client.ids.listInventories(), (l: I.Inventory[]) => ({
          rows: l.map((i) => ({ ...i, pending: i.outbox.pending, done: i.outbox.done, outbox: undefined })),
          columns: ['name', 'type', 'timeout_ms', 'pending', 'done'],
        })),
      ),
    );
  const outbox = ids
    .command('outbox')
    .description('deallocations owed to external inventories (list them; `outbox show|retry <id>`)')
    .addOption(new Option('--state <state>', 'only entries in this state').choices(['pending', 'done']))
    .option('--instance <id>', 'only entries of this service instance')
    .action(a(async ({ client, out }, o) => out.print(await client.ids.listAllOutbox({ state: o.state, instance: o.instance }))));
  outbox
    .command('show')
    .description('one outbox entry')
    .argument('<id>', 'entry id', integer(1))
    .action(a(async ({ client, out }, _o, id: number) => out.print(await client.ids.getOutboxEntry(id))));
  outbox
    .command('retry')
    .description('make a pending entry due now')
    .argument('<id>', 'entry id', integer(1))
    .action(a(async ({ client, out }, _o, id: number) => out.print(await client.ids.retryOutboxEntry(id))));
}
