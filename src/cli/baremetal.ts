// `allot baremetal …`: nodes and allocations of the bare-metal (Ironic) API, through the typed
// client. Asynchronous operations (provision and power changes, allocations) return at once, or
// with --wait poll until done, bounded by the seconds given.
import { type Command, Option } from 'commander';
import { WaitTimeoutError } from '../client/baremetal.js';
import type * as B from '../client/baremetal-types.js';
import { type CliContext, act, addConnectionOptions, collect, integer, keyValues, positiveSeconds } from './connection.js';
import { UsageError, WaitFailedError } from './exit.js';
import type { TableView } from './output.js';

const NODE_COLUMNS = ['uuid', 'name', 'provision_state', 'power_state', 'maintenance', 'resource_class', 'allocation_uuid'];
const ALLOCATION_COLUMNS = ['uuid', 'name', 'state', 'resource_class', 'node_uuid', 'last_error'];
const DEFAULT_WAIT_SECONDS = 120;

/** `--wait [seconds]`: absent → no wait; bare → the default; a number → that long. */
const waitOption = () => new Option('--wait [seconds]', `wait until done, at most this long (default ${DEFAULT_WAIT_SECONDS} s)`).argParser(positiveSeconds);
const waitMs = (wait: true | number | undefined): number | null =>
  wait === undefined ? null : Math.round((wait === true ? DEFAULT_WAIT_SECONDS : wait) * 1000);

/** Provision verbs: command → API target, the state a successful change ends in, what it does. */
const PROVISION_VERBS: Array<[verb: string, target: B.ProvisionTarget, settlesIn: string | null, description: string]> = [
  ['manage', 'manage', 'manageable', 'enroll → manageable (verifies the driver)'],
  ['provide', 'provide', 'available', 'manageable → available (cleans; allocatable once powered off)'],
  ['inspect', 'inspect', 'manageable', 'inspect the hardware (manageable → manageable)'],
  ['clean', 'clean', 'manageable', 'manual cleaning (manageable → manageable)'],
  ['deploy', 'active', 'active', 'available → active'],
  ['rebuild', 'rebuild', 'active', 'redeploy an active node'],
  ['undeploy', 'deleted', 'available', 'tear down an active node (releases its allocation)'],
  ['adopt', 'adopt', 'active', 'take over a node already running (manageable → active)'],
  ['abort', 'abort', null, 'abort a running operation (cleaning, inspection, …)'],
];

const POWER: Record<string, B.PowerTarget> = { on: 'power on', off: 'power off', reboot: 'rebooting' };

/** node set/unset → JSON patch operations */
function patchOps(o: Record<string, any>, remove: boolean): B.PatchOperation[] {
  const ops: B.PatchOperation[] = [];
  const simple: Array<[string, string]> = [
    ['name', '/name'],
    ['resourceClass', '/resource_class'],
    ['description', '/description'],
    ['owner', '/owner'],
    ['lessee', '/lessee'],
    ['driver', '/driver'],
  ];
  for (const [opt, path] of simple) {
    if (o[opt] === undefined) continue;
    ops.push(remove ? { op: 'remove', path } : { op: 'add', path, value: o[opt] });
  }
  const nested: Array<[string, string]> = [
    ['property', '/properties'],
    ['extra', '/extra'],
    ['driverInfo', '/driver_info'],
    ['instanceInfo', '/instance_info'],
  ];
  for (const [opt, path] of nested) {
    if (!o[opt]) continue;
    if (remove) for (const key of o[opt] as string[]) ops.push({ op: 'remove', path: `${path}/${key}` });
    else for (const [key, value] of Object.entries(keyValues(o[opt], `--${opt}`))) ops.push({ op: 'add', path: `${path}/${key}`, value });
  }
  return ops;
}

export function registerBaremetalCommands(program: Command): void {
  const baremetal = addConnectionOptions(program.command('baremetal').description('bare-metal nodes and their allocations (the Ironic-compatible API)'), {
    microversion: 'Ironic',
  });
  const a = <A extends any[]>(fn: (ctx: CliContext, opts: Record<string, any>, ...args: A) => Promise<void>) => act<A>('baremetal', fn);

  const node = baremetal.command('node').description('bare-metal nodes');
  node
    .command('list')
    .description('list nodes (every page unless --limit)')
    .option('--provision-state <state>', 'e.g. available, active, manageable')
    .option('--resource-class <class>', 'only this resource class')
    .option('--maintenance', 'only nodes in maintenance')
    .option('--associated', 'only nodes with an instance')
    .option('--owner <owner>', 'only nodes of this owner')
    .option('--driver <driver>', 'only nodes of this driver')
    .option('--limit <n>', 'one page of at most n nodes', integer(1))
    .option('--marker <uuid>', 'the page after this node')
    .option('--sort-key <field>', 'sort by this field')
    .addOption(new Option('--sort-dir <dir>', 'sort direction').choices(['asc', 'desc']))
    .action(
      a(async ({ client, out }, o) => {
        const query: B.NodeListQuery = {
          provision_state: o.provisionState,
          resource_class: o.resourceClass,
          maintenance: o.maintenance,
          associated: o.associated,
          owner: o.owner,
          driver: o.driver,
          sort_key: o.sortKey,
          sort_dir: o.sortDir,
          fields: NODE_COLUMNS,
        };
        const nodes =
          o.limit !== undefined || o.marker
            ? (await client.baremetal.listNodes({ ...query, limit: o.limit, marker: o.marker })).nodes
            : await client.baremetal.listAllNodes(query);
        out.print(nodes, (l: B.NodeSelection[]) => ({ rows: l, columns: NODE_COLUMNS }));
      }),
    );
  node
    .command('show')
    .description('one node')
    .argument('<node>', 'node uuid or name')
    .option('--fields <fields>', 'only these fields (comma-separated)')
    .action(a(async ({ client, out }, o, ident: string) => out.print(await client.baremetal.getNode(ident, o.fields?.split(',')))));
  node
    .command('create')
    .description('enroll a node')
    .option('--driver <driver>', 'hardware type', 'fake-hardware')
    .option('--name <name>', 'unique name')
    .option('--uuid <uuid>', 'choose the uuid')
    .option('--resource-class <class>', 'what allocations ask for, e.g. bm-large')
    .option('--description <text>', 'free text')
    .option('--owner <owner>', 'owning project')
    .option('--property <key=value>', 'a property (value is JSON or text; repeatable)', collect)
    .option('--extra <key=value>', 'an extra field (repeatable)', collect)
    .option('--driver-info <key=value>', 'a driver_info field (repeatable)', collect)
    .action(
      a(async ({ client, out }, o) => {
        const body: B.NodeCreate = {
          driver: o.driver,
          ...(o.name ? { name: o.name } : {}),
          ...(o.uuid ? { uuid: o.uuid } : {}),
          ...(o.resourceClass ? { resource_class: o.resourceClass } : {}),
          ...(o.description ? { description: o.description } : {}),
          ...(o.owner ? { owner: o.owner } : {}),
          ...(o.property ? { properties: keyValues(o.property) } : {}),
          ...(o.extra ? { extra: keyValues(o.extra, '--extra') } : {}),
          ...(o.driverInfo ? { driver_info: keyValues(o.driverInfo, '--driver-info') } : {}),
        };
        out.print(await client.baremetal.createNode(body));
      }),
    );
  node
    .command('set')
    .description('change fields of a node (a JSON patch of "add" operations)')
    .argument('<node>', 'node uuid or name')
    .option('--name <name>', 'new name')
    .option('--resource-class <class>', 'new resource class')
    .option('--description <text>', 'new description')
    .option('--owner <owner>', 'new owner')
    .option('--lessee <lessee>', 'new lessee')
    .option('--driver <driver>', 'new hardware type')
    .option('--property <key=value>', 'set a property (repeatable)', collect)
    .option('--extra <key=value>', 'set an extra field (repeatable)', collect)
    .option('--driver-info <key=value>', 'set a driver_info field (repeatable)', collect)
    .option('--instance-info <key=value>', 'set an instance_info field (repeatable)', collect)
    .action(
      a(async ({ client, out }, o, ident: string) => {
        const ops = patchOps(o, false);
        if (!ops.length) throw new UsageError('nothing to change: give at least one option');
        out.print(await client.baremetal.updateNode(ident, ops));
      }),
    );
  node
    .command('unset')
    .description('remove fields of a node (a JSON patch of "remove" operations)')
    .argument('<node>', 'node uuid or name')
    .option('--name', 'remove the name')
    .option('--resource-class', 'remove the resource class')
    .option('--description', 'remove the description')
    .option('--owner', 'remove the owner')
    .option('--lessee', 'remove the lessee')
    .option('--property <key>', 'remove a property (repeatable)', collect)
    .option('--extra <key>', 'remove an extra field (repeatable)', collect)
    .option('--driver-info <key>', 'remove a driver_info field (repeatable)', collect)
    .option('--instance-info <key>', 'remove an instance_info field (repeatable)', collect)
    .action(
      a(async ({ client, out }, o, ident: string) => {
        const ops = patchOps(o, true);
        if (!ops.length) throw new UsageError('nothing to remove: give at least one option');
        out.print(await client.baremetal.updateNode(ident, ops));
      }),
    );
  node
    .command('delete')
    .description('delete a node')
    .argument('<node>', 'node uuid or name')
    .action(
      a(async ({ client, out }, _o, ident: string) => {
        await client.baremetal.deleteNode(ident);
        out.note(`deleted node ${ident}`);
      }),
    );
  node
    .command('states')
    .description("a node's provision and power states")
    .argument('<node>', 'node uuid or name')
    .action(a(async ({ client, out }, _o, ident: string) => out.print(await client.baremetal.getNodeStates(ident))));

  for (const [verb, target, settlesIn, description] of PROVISION_VERBS) {
    const cmd = node
      .command(verb)
      .description(`${description}${settlesIn ? '; --wait until it is done' : ''}`)
      .argument('<node>', 'node uuid or name');
    if (settlesIn) cmd.addOption(waitOption());
    cmd.action(
      a(async ({ client, out }, o, ident: string) => {
        await client.baremetal.setProvisionState(ident, target);
        const ms = settlesIn ? waitMs(o.wait) : null;
        if (ms === null) return out.note(`${verb}: requested for ${ident}`);
        try {
          out.print(await client.baremetal.waitForProvisionState(ident, settlesIn!, { timeoutMs: ms }), (n: B.Node) => ({ rows: [n], columns: NODE_COLUMNS }));
        } catch (err) {
          if (err instanceof WaitTimeoutError) throw err;
          if ((err as { code?: string }).code === 'client.provision_failed') throw new WaitFailedError((err as Error).message);
          throw err;
        }
      }),
    );
  }

  const power = node.command('power').description("a node's power");
  for (const [word, target] of Object.entries(POWER)) {
    power
      .command(word)
      .description(`${target}${word === 'reboot' ? '' : '; --wait until it is done'}`)
      .argument('<node>', 'node uuid or name')
      .addOption(waitOption())
      .action(
        a(async ({ client, out }, o, ident: string) => {
          await client.baremetal.setPowerState(ident, target);
          const ms = waitMs(o.wait);
          if (ms === null) return out.note(`${target}: requested for ${ident}`);
          const settled = await client.baremetal.waitForPowerState(ident, word === 'off' ? 'power off' : 'power on', { timeoutMs: ms });
          out.print(settled, (n: B.Node) => ({ rows: [n], columns: NODE_COLUMNS }));
        }),
      );
  }

  const maintenance = node.command('maintenance').description('maintenance mode (a node in maintenance is never allocated)');
  maintenance
    .command('set')
    .description('put a node in maintenance')
    .argument('<node>', 'node uuid or name')
    .option('--reason <text>', 'why')
    .action(
      a(async ({ client, out }, o, ident: string) => {
        await client.baremetal.setMaintenance(ident, o.reason);
        out.note(`${ident} is in maintenance`);
      }),
    );
  maintenance
    .command('unset')
    .description('take a node out of maintenance')
    .argument('<node>', 'node uuid or name')
    .action(
      a(async ({ client, out }, _o, ident: string) => {
        await client.baremetal.clearMaintenance(ident);
        out.note(`${ident} is out of maintenance`);
      }),
    );

  const trait = node.command('trait').description("a node's traits");
  const traitRows = (t: string[]): TableView => ({ rows: t.map((x) => ({ trait: x })) });
  trait
    .command('list')
    .description("a node's traits")
    .argument('<node>', 'node uuid or name')
    .action(a(async ({ client, out }, _o, ident: string) => out.print(await client.baremetal.listNodeTraits(ident), traitRows)));
  trait
    .command('add')
    .description('add traits to a node')
    .argument('<node>', 'node uuid or name')
    .argument('<trait...>', 'traits')
    .action(
      a(async ({ client, out }, _o, ident: string, traits: string[]) => {
        for (const t of traits) await client.baremetal.addNodeTrait(ident, t);
        out.print(await client.baremetal.listNodeTraits(ident), traitRows);
      }),
    );
  trait
    .command('remove')
    .description('remove traits from a node')
    .argument('<node>', 'node uuid or name')
    .argument('<trait...>', 'traits')
    .action(
      a(async ({ client, out }, _o, ident: string, traits: string[]) => {
        for (const t of traits) await client.baremetal.removeNodeTrait(ident, t);
        out.print(await client.baremetal.listNodeTraits(ident), traitRows);
      }),
    );
  trait
    .command('set')
    .description("replace a node's traits")
    .argument('<node>', 'node uuid or name')
    .argument('<trait...>', 'traits')
    .action(
      a(async ({ client, out }, _o, ident: string, traits: string[]) => {
        await client.baremetal.setNodeTraits(ident, traits);
        out.print(await client.baremetal.listNodeTraits(ident), traitRows);
      }),
    );
  trait
    .command('clear')
    .description('remove every trait of a node')
    .argument('<node>', 'node uuid or name')
    .action(
      a(async ({ client, out }, _o, ident: string) => {
        await client.baremetal.removeNodeTraits(ident);
        out.note(`removed every trait of ${ident}`);
      }),
    );

  // ---- allocations ----
  const allocation = baremetal.command('allocation').description('allocations: a node picked for a resource class and traits');
  const allocationRow = (x: B.Allocation): TableView => ({ rows: [x], columns: ALLOCATION_COLUMNS });
  allocation
    .command('list')
    .description('list allocations (every page unless --limit)')
    .addOption(new Option('--state <state>', 'only in this state').choices(['allocating', 'active', 'error']))
    .option('--resource-class <class>', 'only for this resource class')
    .option('--node <node>', 'only of this node')
    .option('--owner <owner>', 'only of this owner')
    .option('--limit <n>', 'one page of at most n allocations', integer(1))
    .option('--marker <uuid>', 'the page after this allocation')
    .action(
      a(async ({ client, out }, o) => {
        const query: B.AllocationListQuery = { state: o.state, resource_class: o.resourceClass, node: o.node, owner: o.owner };
        const list =
          o.limit !== undefined || o.marker
            ? (await client.baremetal.listAllocations({ ...query, limit: o.limit, marker: o.marker })).allocations
            : await client.baremetal.listAllAllocations(query);
        out.print(list, (l: B.AllocationSelection[]) => ({ rows: l, columns: ALLOCATION_COLUMNS }));
      }),
    );
  allocation
    .command('show')
    .description('one allocation')
    .argument('<allocation>', 'allocation uuid or name')
    .action(a(async ({ client, out }, _o, ident: string) => out.print(await client.baremetal.getAllocation(ident))));
  allocation
    .command('create')
    .description('ask for a node; --wait until one is picked (exit 6 if the allocation fails or time runs out)')
    .option('--resource-class <class>', 'the resource class the node must have')
    .option('--trait <trait>', 'a trait the node must have (repeatable)', collect)
    .option('--candidate-node <node>', 'pick only among these nodes (repeatable)', collect)
    .option('--name <name>', 'unique name')
    .option('--uuid <uuid>', 'choose the uuid')
    .option('--owner <owner>', 'owning project (1.60+)')
    .option('--node <node>', 'backfill: record an allocation for this already deployed node (1.58+)')
    .option('--extra <key=value>', 'an extra field (repeatable)', collect)
    .addOption(waitOption())
    .action(
      a(async ({ client, out }, o) => {
        if (!o.resourceClass && !o.node) throw new UsageError('give --resource-class (or --node to backfill)');
        // --wait: the server is asked to answer with the outcome (Prefer: wait); what it did not
        // finish within its own bound (or a server that ignores the preference) is polled for
        const ms = waitMs(o.wait);
        const started = Date.now();
        const created = await client.baremetal.createAllocation(
          {
            ...(o.resourceClass ? { resource_class: o.resourceClass } : {}),
            ...(o.trait ? { traits: o.trait } : {}),
            ...(o.candidateNode ? { candidate_nodes: o.candidateNode } : {}),
            ...(o.name ? { name: o.name } : {}),
            ...(o.uuid ? { uuid: o.uuid } : {}),
            ...(o.owner ? { owner: o.owner } : {}),
            ...(o.node ? { node: o.node } : {}),
            ...(o.extra ? { extra: keyValues(o.extra, '--extra') } : {}),
          },
          ms === null ? {} : { waitSeconds: ms / 1000 },
        );
        if (ms === null) return out.print(created, allocationRow);
        const done =
          created.state === 'allocating'
            ? await client.baremetal.waitForAllocation(created.uuid, { timeoutMs: Math.max(0, ms - (Date.now() - started)) })
            : created;
        out.print(done, allocationRow);
        if (done.state === 'error') throw new WaitFailedError(`allocation ${done.uuid} failed: ${done.last_error ?? 'no error recorded'}`);
      }),
    );
  allocation
    .command('set')
    .description("change an allocation's name or extra fields (1.57+)")
    .argument('<allocation>', 'allocation uuid or name')
    .option('--name <name>', 'new name')
    .option('--extra <key=value>', 'set an extra field (repeatable)', collect)
    .action(
      a(async ({ client, out }, o, ident: string) => {
        const ops: B.PatchOperation[] = [];
        if (o.name !== undefined) ops.push({ op: 'replace', path: '/name', value: o.name });
        for (const [k, v] of Object.entries(keyValues(o.extra, '--extra'))) ops.push({ op: 'add', path: `/extra/${k}`, value: v });
        if (!ops.length) throw new UsageError('nothing to change: give --name or --extra');
        out.print(await client.baremetal.updateAllocation(ident, ops));
      }),
    );
  allocation
    .command('delete')
    .description('delete an allocation, releasing its node')
    .argument('<allocation>', 'allocation uuid or name')
    .action(
      a(async ({ client, out }, _o, ident: string) => {
        await client.baremetal.deleteAllocation(ident);
        out.note(`deleted allocation ${ident}`);
      }),
    );
  allocation
    .command('wait')
    .description('wait until an allocation is active (exit 6 if it fails or time runs out)')
    .argument('<allocation>', 'allocation uuid or name')
    .option('--max-wait <seconds>', 'give up after this long', positiveSeconds, DEFAULT_WAIT_SECONDS)
    .action(
      a(async ({ client, out }, o, ident: string) => {
        const done = await client.baremetal.waitForAllocation(ident, { timeoutMs: Math.round(o.maxWait * 1000) });
        out.print(done, allocationRow);
        if (done.state === 'error') throw new WaitFailedError(`allocation ${done.uuid} failed: ${done.last_error ?? 'no error recorded'}`);
      }),
    );

  baremetal
    .command('conductor')
    .description('conductors (allot processes) and whether they are alive')
    .command('list')
    .description('list conductors')
    .action(
      a(async ({ client, out }) =>
        out.print(await client.baremetal.listConductors(true), (l: B.ConductorSelection[]) => ({ rows: l, columns: ['hostname', 'alive', 'updated_at'] })),
      ),
    );
}
