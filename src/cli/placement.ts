// `allot placement …`: the Placement API from the command line, through the typed client.
// Writes that name a generation read it first and retry on a generation conflict (another
// writer got there between the read and the write), as Placement clients do by hand.
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { PlacementClient } from '../client/placement.js';
import type * as P from '../client/placement-types.js';
import { isUuidLike } from '../core/uuid.js';
import { type CliContext, act, addConnectionOptions, collect, integer, readJsonFile } from './connection.js';
import { NotFoundError, UsageError } from './exit.js';
import type { TableView } from './output.js';

/** conflicts a command retries before giving up (each try reads the generation again) */
const ATTEMPTS = 10;
const retry = { attempts: ATTEMPTS };

const PROVIDER_COLUMNS = ['uuid', 'name', 'generation', 'parent_provider_uuid', 'root_provider_uuid'];
const INVENTORY_FIELDS = ['total', 'reserved', 'min_unit', 'max_unit', 'step_size', 'allocation_ratio'] as const;

const inventoryRows = (inv: P.Inventories): TableView => ({
  rows: Object.entries(inv.inventories).map(([rc, i]) => ({ resource_class: rc, ...i })),
  columns: ['resource_class', ...INVENTORY_FIELDS],
});

const resourcesText = (r: P.Resources) =>
  Object.entries(r)
    .map(([rc, n]) => `${rc}=${n}`)
    .join(',');

/** `rp=UUID,VCPU=2,MEMORY_MB=1024` (openstack's syntax; allot also takes a provider name) → {UUID: {resources: {VCPU: 2, …}}} */
export function parseAllocationArg(specs: string[]): Record<string, { resources: P.Resources }> {
  const out: Record<string, { resources: P.Resources }> = {};
  for (const spec of specs) {
    let provider: string | undefined;
    const resources: P.Resources = {};
    for (const part of spec.split(',')) {
      const [k, v] = part.split('=');
      if (!k || v === undefined) throw new UsageError(`--allocation wants rp=<provider uuid or name>,<RESOURCE_CLASS>=<n>,…, got ${JSON.stringify(spec)}`);
      if (k === 'rp') provider = v;
      else {
        const n = Number(v);
        if (!Number.isInteger(n) || n < 1) throw new UsageError(`--allocation: ${k} must be a positive integer, got ${JSON.stringify(v)}`);
        resources[k] = n;
      }
    }
    if (!provider) throw new UsageError(`--allocation names no provider (rp=<provider uuid or name>): ${JSON.stringify(spec)}`);
    if (!Object.keys(resources).length) throw new UsageError(`--allocation names no resources: ${JSON.stringify(spec)}`);
    out[provider] = { resources: { ...out[provider]?.resources, ...resources } };
  }
  return out;
}

/** `key=value` query parameters given with --param (for suffixed request groups and the like). */
function params(pairs: string[] = []): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i < 1) throw new UsageError(`--param wants name=value, got ${JSON.stringify(p)}`);
    (out[p.slice(0, i)] ??= []).push(p.slice(i + 1));
  }
  return out;
}

/**
 * A provider named on the command line by uuid or by name (as `allot baremetal` takes node names):
 * a uuid (anything Placement takes as one) is used as it is, a name is looked up with
 * `GET /resource_providers?name=` (names are unique in Placement). No provider of that name: exit 4.
 */
async function providerUuid(placement: PlacementClient, nameOrUuid: string): Promise<string> {
  if (isUuidLike(nameOrUuid)) return nameOrUuid;
  const found = await placement.listProviders({ name: nameOrUuid });
  if (found.length === 0) throw new NotFoundError(`no resource provider is named ${JSON.stringify(nameOrUuid)}`);
  if (found.length > 1) throw new UsageError(`${found.length} resource providers are named ${JSON.stringify(nameOrUuid)}: give the uuid`);
  return found[0]!.uuid;
}

/** An optional provider option (`--parent`, `--in-tree`): its uuid, by uuid or name. */
const optionalProvider = (placement: PlacementClient, nameOrUuid: string | undefined) =>
  nameOrUuid === undefined ? undefined : providerUuid(placement, nameOrUuid);

const one = <T>(values: T[] | undefined): T | T[] | undefined => (values && values.length === 1 ? values[0] : values);

export function registerPlacementCommands(program: Command): void {
  const placement = addConnectionOptions(
    program.command('placement').description('resource providers, inventories, traits, aggregates, allocations, candidates and usages (the Placement API)'),
    {
      microversion: 'Placement',
    },
  );
  const a = <A extends any[]>(fn: (ctx: CliContext, opts: Record<string, any>, ...args: A) => Promise<void>) => act<A>('placement', fn);
  /** `a` for a command whose first argument is a provider, by uuid or by name: the action gets the uuid */
  const onProvider = <A extends any[]>(fn: (ctx: CliContext, opts: Record<string, any>, rp: string, ...args: A) => Promise<void>) =>
    a<[string, ...A]>(async (ctx, opts, provider, ...args) => fn(ctx, opts, await providerUuid(ctx.client.placement, provider), ...args));

  placement
    .command('version')
    .description('the microversion range of the server and the one this client uses')
    .action(
      a(async ({ client, out }) => {
        const doc = await client.placement.versions();
        out.print({ ...doc.versions[0], negotiated: await client.placement.microversion() });
      }),
    );

  // ---- providers ----
  const provider = placement.command('provider').description('resource providers');
  provider
    .command('list')
    .description('list resource providers, optionally filtered')
    .option('--name <name>', 'exact name')
    .option('--uuid <uuid>', 'exact uuid')
    .option('--in-tree <provider>', 'providers in the tree of this provider (uuid or name)')
    .option('--member-of <aggregates>', 'member of one of these aggregates (`in:A,B`); repeat for AND', collect)
    .option('--resources <list>', 'with capacity for these amounts, e.g. VCPU:2,MEMORY_MB:1024')
    .option('--required <traits>', 'with these traits (comma-separated; !T forbids, in:A,B any of); repeatable', collect)
    .action(
      a(async ({ client, out }, o) => {
        const list = await client.placement.listProviders({
          name: o.name,
          uuid: o.uuid,
          in_tree: await optionalProvider(client.placement, o.inTree),
          member_of: one(o.memberOf),
          resources: o.resources,
          required: one(o.required),
        });
        out.print(list, (l) => ({ rows: l, columns: PROVIDER_COLUMNS }));
      }),
    );
  provider
    .command('show')
    .description('one resource provider')
    .argument('<uuid>', 'provider uuid or name')
    .action(onProvider(async ({ client, out }, _o, uuid: string) => out.print(await client.placement.getProvider(uuid))));
  provider
    .command('create')
    .description('create a resource provider')
    .argument('<name>', 'provider name (unique)')
    .option('--uuid <uuid>', 'choose the uuid (default: generated)')
    .option('--parent <provider>', 'parent provider, uuid or name (nested trees)')
    .action(
      a(async ({ client, out }, o, name: string) =>
        out.print(await client.placement.createProvider({ name, uuid: o.uuid, parent_provider_uuid: await optionalProvider(client.placement, o.parent) })),
      ),
    );
  provider
    .command('set')
    .description('rename a resource provider or change its parent')
    .argument('<uuid>', 'provider uuid or name')
    .option('--name <name>', 'new name')
    .option('--parent <provider>', 'new parent provider, uuid or name')
    .action(
      onProvider(async ({ client, out }, o, uuid: string) => {
        if (o.name === undefined && o.parent === undefined) throw new UsageError('nothing to change: give --name and/or --parent');
        const current = await client.placement.getProvider(uuid);
        out.print(
          await client.placement.updateProvider(uuid, {
            name: o.name ?? current.name,
            parent_provider_uuid: (await optionalProvider(client.placement, o.parent)) ?? current.parent_provider_uuid ?? null,
          }),
        );
      }),
    );
  provider
    .command('delete')
    .description('delete a resource provider (refused while it has allocations or children)')
    .argument('<uuid>', 'provider uuid or name')
    .action(
      onProvider(async ({ client, out }, _o, uuid: string) => {
        await client.placement.deleteProvider(uuid);
        out.note(`deleted provider ${uuid}`);
      }),
    );

  // ---- inventories ----
  const inventory = placement.command('inventory').description("a provider's inventories (what it offers of each resource class)");
  inventory
    .command('list')
    .description("a provider's inventories and its generation")
    .argument('<provider>', 'provider uuid or name')
    .action(onProvider(async ({ client, out }, _o, rp: string) => out.print(await client.placement.getInventories(rp), inventoryRows)));
  inventory
    .command('show')
    .description('one inventory of a provider')
    .argument('<provider>', 'provider uuid or name')
    .argument('<resource-class>', 'e.g. VCPU')
    .action(onProvider(async ({ client, out }, _o, rp: string, rc: string) => out.print(await client.placement.getInventory(rp, rc))));
  const inventoryOptions = (cmd: Command) =>
    cmd
      .option('--total <n>', 'amount the provider has', integer(1))
      .option('--reserved <n>', 'amount kept back', integer(0))
      .option('--min-unit <n>', 'smallest amount one allocation may take', integer(1))
      .option('--max-unit <n>', 'largest amount one allocation may take', integer(1))
      .option('--step-size <n>', 'allocations are multiples of this', integer(1))
      .option('--allocation-ratio <ratio>', 'overcommit factor', (v) => {
        const n = Number(v);
        if (!(n > 0)) throw new InvalidArgumentError('expected a number greater than 0');
        return n;
      });
  inventoryOptions(
    inventory
      .command('set')
      .description('create or change one inventory of a provider, keeping the others (read, change, write; again on a generation conflict)')
      .argument('<provider>', 'provider uuid or name')
      .argument('<resource-class>', 'e.g. VCPU'),
  ).action(
    onProvider(async ({ client, out }, o, rp: string, rc: string) => {
      const given: Partial<P.Inventory> = {};
      for (const [flag, field] of [
        ['total', 'total'],
        ['reserved', 'reserved'],
        ['minUnit', 'min_unit'],
        ['maxUnit', 'max_unit'],
        ['stepSize', 'step_size'],
        ['allocationRatio', 'allocation_ratio'],
      ] as const) {
        if (o[flag] !== undefined) given[field] = o[flag];
      }
      const result = await client.placement.updateInventories(
        rp,
        (current) => {
          const merged = { ...current[rc], ...given } as P.Inventory;
          if (merged.total === undefined) throw new UsageError(`${rc} has no inventory yet: give --total`);
          return { ...current, [rc]: merged };
        },
        retry,
      );
      out.print(result, inventoryRows);
    }),
  );
  inventory
    .command('replace')
    .description('replace every inventory of a provider from a JSON file: {"VCPU": {"total": 8}, …} (- for stdin)')
    .argument('<provider>', 'provider uuid or name')
    .argument('<file>', 'JSON file, or - for stdin')
    .action(
      onProvider(async ({ client, out }, _o, rp: string, file: string) => {
        const inventories = (await readJsonFile(file)) as Record<string, P.Inventory>;
        out.print(await client.placement.updateInventories(rp, () => inventories, retry), inventoryRows);
      }),
    );
  inventory
    .command('delete')
    .description('delete one inventory of a provider, or all of them with --all (refused while allocated)')
    .argument('<provider>', 'provider uuid or name')
    .argument('[resource-class]', 'e.g. VCPU')
    .option('--all', 'delete every inventory of the provider')
    .action(
      onProvider(async ({ client, out }, o, rp: string, rc: string | undefined) => {
        if (rc && o.all) throw new UsageError('give a resource class or --all, not both');
        if (!rc && !o.all) throw new UsageError('give a resource class, or --all to delete every inventory');
        if (rc) await client.placement.deleteInventory(rp, rc);
        else await client.placement.deleteInventories(rp);
        out.note(`deleted ${rc ?? 'every inventory'} of ${rp}`);
      }),
    );

  // ---- usages ----
  const usage = placement.command('usage').description('what is used, per provider or per project');
  usage
    .command('show')
    .description("a provider's usages and its generation")
    .argument('<provider>', 'provider uuid or name')
    .action(
      onProvider(async ({ client, out }, _o, rp: string) =>
        out.print(await client.placement.getProviderUsages(rp), (u: P.ProviderUsages) => ({
          rows: Object.entries(u.usages).map(([resource_class, used]) => ({ resource_class, used })),
        })),
      ),
    );
  usage
    .command('total')
    .description('what a project (and user) holds across providers')
    .requiredOption('--project <id>', 'project id')
    .option('--user <id>', 'user id')
    .option('--consumer-type <type>', 'only consumers of this type (1.38+)')
    .action(
      a(async ({ client, out }, o) => {
        const usages = await client.placement.getUsages({ project_id: o.project, user_id: o.user, consumer_type: o.consumerType });
        out.print(usages, (u: P.TotalUsages) => ({
          rows: Object.entries(u.usages).map(([k, v]) => (typeof v === 'number' ? { resource_class: k, used: v } : { consumer_type: k, ...v })),
        }));
      }),
    );

  // ---- traits ----
  const trait = placement.command('trait').description('the trait catalogue (standard and CUSTOM_ traits)');
  trait
    .command('list')
    .description('list traits')
    .option('--name <filter>', '`startswith:CUSTOM_` or `in:A,B`')
    .option('--associated', 'only traits some provider has')
    .option('--not-associated', 'only traits no provider has')
    .action(
      a(async ({ client, out }, o) => {
        const traits = await client.placement.listTraits({ name: o.name, associated: o.associated ? true : o.notAssociated ? false : undefined });
        out.print(traits, (t: string[]) => ({ rows: t.map((name) => ({ name })) }));
      }),
    );
  trait
    .command('create')
    .description('create custom traits (CUSTOM_…); existing ones are left as they are')
    .argument('<name...>', 'trait names')
    .action(
      a(async ({ client, out }, _o, names: string[]) => {
        const results = [];
        for (const name of names) results.push({ name, created: (await client.placement.createTrait(name)).created });
        out.print(results);
      }),
    );
  trait
    .command('delete')
    .description('delete a custom trait (refused while a provider has it)')
    .argument('<name>', 'trait name')
    .action(
      a(async ({ client, out }, _o, name: string) => {
        await client.placement.deleteTrait(name);
        out.note(`deleted trait ${name}`);
      }),
    );

  const providerTrait = placement.command('provider-trait').description("a provider's traits (changes read the generation and retry on conflict)");
  const showTraits = (t: P.ProviderTraits): TableView => ({ rows: t.traits.map((name) => ({ trait: name })) });
  providerTrait
    .command('list')
    .description("a provider's traits and its generation")
    .argument('<provider>', 'provider uuid or name')
    .action(onProvider(async ({ client, out }, _o, rp: string) => out.print(await client.placement.getProviderTraits(rp), showTraits)));
  providerTrait
    .command('set')
    .description("replace a provider's traits")
    .argument('<provider>', 'provider uuid or name')
    .argument('<trait...>', 'traits')
    .action(
      onProvider(async ({ client, out }, _o, rp: string, traits: string[]) =>
        out.print(await client.placement.updateProviderTraits(rp, () => traits, retry), showTraits),
      ),
    );
  providerTrait
    .command('add')
    .description('add traits to a provider, keeping the others')
    .argument('<provider>', 'provider uuid or name')
    .argument('<trait...>', 'traits')
    .action(
      onProvider(async ({ client, out }, _o, rp: string, traits: string[]) =>
        out.print(await client.placement.updateProviderTraits(rp, (t) => [...new Set([...t, ...traits])], retry), showTraits),
      ),
    );
  providerTrait
    .command('remove')
    .description('remove traits from a provider, keeping the others')
    .argument('<provider>', 'provider uuid or name')
    .argument('<trait...>', 'traits')
    .action(
      onProvider(async ({ client, out }, _o, rp: string, traits: string[]) =>
        out.print(await client.placement.updateProviderTraits(rp, (t) => t.filter((x) => !traits.includes(x)), retry), showTraits),
      ),
    );
  providerTrait
    .command('clear')
    .description('remove every trait of a provider')
    .argument('<provider>', 'provider uuid or name')
    .action(
      onProvider(async ({ client, out }, _o, rp: string) => {
        await client.placement.deleteProviderTraits(rp);
        out.note(`removed every trait of ${rp}`);
      }),
    );

  // ---- aggregates ----
  const aggregate = placement.command('aggregate').description("a provider's aggregates (changes read the generation and retry on conflict)");
  const showAggregates = (g: P.ProviderAggregates): TableView => ({ rows: g.aggregates.map((uuid) => ({ aggregate: uuid })) });
  aggregate
    .command('list')
    .description("a provider's aggregates and its generation")
    .argument('<provider>', 'provider uuid or name')
    .action(onProvider(async ({ client, out }, _o, rp: string) => out.print(await client.placement.getAggregates(rp), showAggregates)));
  aggregate
    .command('set')
    .description("replace a provider's aggregates (none given: no aggregates)")
    .argument('<provider>', 'provider uuid or name')
    .argument('[aggregate...]', 'aggregate uuids')
    .action(
      onProvider(async ({ client, out }, _o, rp: string, aggs: string[]) =>
        out.print(await client.placement.updateAggregates(rp, () => aggs, retry), showAggregates),
      ),
    );
  aggregate
    .command('add')
    .description('add a provider to aggregates')
    .argument('<provider>', 'provider uuid or name')
    .argument('<aggregate...>', 'aggregate uuids')
    .action(
      onProvider(async ({ client, out }, _o, rp: string, aggs: string[]) =>
        out.print(await client.placement.updateAggregates(rp, (g) => [...new Set([...g, ...aggs])], retry), showAggregates),
      ),
    );
  aggregate
    .command('remove')
    .description('remove a provider from aggregates')
    .argument('<provider>', 'provider uuid or name')
    .argument('<aggregate...>', 'aggregate uuids')
    .action(
      onProvider(async ({ client, out }, _o, rp: string, aggs: string[]) =>
        out.print(await client.placement.updateAggregates(rp, (g) => g.filter((x) => !aggs.includes(x)), retry), showAggregates),
      ),
    );

  // ---- resource classes ----
  const rc = placement.command('resource-class').description('resource classes (standard and CUSTOM_)');
  rc.command('list')
    .description('list resource classes')
    .action(a(async ({ client, out }) => out.print(await client.placement.listResourceClasses(), (l: P.ResourceClass[]) => ({ rows: l, columns: ['name'] }))));
  rc.command('show')
    .description('one resource class')
    .argument('<name>', 'resource class')
    .action(a(async ({ client, out }, _o, name: string) => out.print(await client.placement.getResourceClass(name))));
  rc.command('create')
    .description('create a custom resource class (CUSTOM_…); an existing one is left as it is')
    .argument('<name>', 'resource class')
    .action(a(async ({ client, out }, _o, name: string) => out.print({ name, ...(await client.placement.createResourceClass(name)) })));
  rc.command('delete')
    .description('delete a custom resource class (refused while inventories use it)')
    .argument('<name>', 'resource class')
    .action(
      a(async ({ client, out }, _o, name: string) => {
        await client.placement.deleteResourceClass(name);
        out.note(`deleted resource class ${name}`);
      }),
    );

  // ---- allocations ----
  const allocation = placement.command('allocation').description("consumers' allocations");
  const consumerView = (c: P.ConsumerAllocations): TableView => ({
    rows: Object.entries(c.allocations).map(([rp, x]) => ({ resource_provider: rp, generation: x.generation, resources: resourcesText(x.resources) })),
  });
  allocation
    .command('show')
    .description("a consumer's allocations, project, user and consumer generation")
    .argument('<consumer>', 'consumer uuid')
    .action(a(async ({ client, out }, _o, consumer: string) => out.print(await client.placement.getAllocations(consumer), consumerView)));
  allocation
    .command('list')
    .description('the allocations against one provider, per consumer')
    .argument('<provider>', 'provider uuid or name')
    .action(
      onProvider(async ({ client, out }, _o, rp: string) =>
        out.print(await client.placement.getProviderAllocations(rp), (p: P.ProviderAllocations) => ({
          rows: Object.entries(p.allocations).map(([consumer, x]) => ({ consumer, resources: resourcesText(x.resources) })),
        })),
      ),
    );
  allocation
    .command('set')
    .description("replace a consumer's allocations (reads the consumer generation; retries on conflict)")
    .argument('<consumer>', 'consumer uuid')
    .requiredOption('--allocation <spec>', 'rp=<provider uuid or name>,<RESOURCE_CLASS>=<n>,… (repeatable, one per provider)', collect)
    .requiredOption('--project <id>', 'project id of the consumer')
    .requiredOption('--user <id>', 'user id of the consumer')
    .option('--consumer-type <type>', 'consumer type (1.38+), e.g. INSTANCE', 'INSTANCE')
    .action(
      a(async ({ client, out }, o, consumer: string) => {
        const wanted: Record<string, { resources: P.Resources }> = {};
        for (const [rp, { resources }] of Object.entries(parseAllocationArg(o.allocation))) {
          const uuid = await providerUuid(client.placement, rp);
          wanted[uuid] = { resources: { ...wanted[uuid]?.resources, ...resources } }; // a name and its uuid are one provider
        }
        await client.placement.updateAllocations(consumer, { project_id: o.project, user_id: o.user, consumer_type: o.consumerType }, () => wanted, retry);
        out.print(await client.placement.getAllocations(consumer), consumerView);
      }),
    );
  allocation
    .command('delete')
    .description("delete a consumer's allocations")
    .argument('<consumer>', 'consumer uuid')
    .action(
      a(async ({ client, out }, _o, consumer: string) => {
        await client.placement.deleteAllocations(consumer);
        out.note(`deleted the allocations of ${consumer}`);
      }),
    );
  allocation
    .command('post')
    .description('set the allocations of several consumers at once, all or nothing, from a JSON file (POST /allocations body; - for stdin)')
    .argument('<file>', 'JSON file: {"<consumer>": {"allocations": …, "project_id", "user_id", "consumer_generation", "consumer_type"}}')
    .action(
      a(async ({ client, out }, _o, file: string) => {
        const body = (await readJsonFile(file)) as P.AllocationsPost;
        await client.placement.postAllocations(body);
        out.note(`set the allocations of ${Object.keys(body).length} consumer(s)`);
      }),
    );

  // ---- candidates ----
  placement
    .command('candidates')
    .description('where a request fits: allocation candidates (GET /allocation_candidates)')
    .option('--resources <list>', 'amounts of the unnumbered group, e.g. VCPU:2,MEMORY_MB:1024')
    .option('--required <traits>', 'traits (!T forbids, in:A,B any of); repeatable', collect)
    .option('--member-of <aggregates>', '`in:A,B`; repeatable', collect)
    .option('--in-tree <provider>', 'only in the tree of this provider (uuid or name)')
    .option('--limit <n>', 'at most this many candidates', integer(1))
    .addOption(new Option('--group-policy <policy>', 'with suffixed groups: none or isolate').choices(['none', 'isolate']))
    .option('--root-required <traits>', 'traits the root provider must (not) have')
    .option('--same-subtree <suffixes>', 'group suffixes that must be in one subtree; repeatable', collect)
    .addOption(new Option('--strategy <strategy>', "allot's order of candidates").choices(['stable', 'pack', 'spread', 'random']))
    .option('--param <name=value>', 'any other query parameter, e.g. resources_NIC=SRIOV_NET_VF:1 (repeatable)', collect)
    .action(
      a(async ({ client, out }, o) => {
        const extra = params(o.param);
        const query: P.CandidatesQuery = {
          resources: o.resources,
          required: one(o.required),
          member_of: one(o.memberOf),
          in_tree: await optionalProvider(client.placement, o.inTree),
          limit: o.limit,
          group_policy: o.groupPolicy,
          root_required: o.rootRequired,
          same_subtree: one(o.sameSubtree),
          allot_strategy: o.strategy,
        };
        const res = await client.placement.call<P.AllocationCandidates>('GET', '/allocation_candidates', { query: { ...query, ...extra } as never });
        out.print(res.body, (c: P.AllocationCandidates) => ({
          rows: c.allocation_requests.map((r, i) => ({
            '#': i + 1,
            allocations: Object.entries(r.allocations)
              .map(([rp, x]) => `${rp}: ${resourcesText(x.resources)}`)
              .join('; '),
          })),
        }));
      }),
    );

  placement
    .command('reshape')
    .description('move inventories and allocations in one step (POST /reshaper) from a JSON file (- for stdin)')
    .argument('<file>', 'JSON file: {"inventories": {…}, "allocations": {…}}')
    .action(
      a(async ({ client, out }, _o, file: string) => {
        await client.placement.reshape((await readJsonFile(file)) as P.ReshapeRequest);
        out.note('reshaped');
      }),
    );
}
