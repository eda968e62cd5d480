// `allot sizing`: how many allot processes and cores, how big a PostgreSQL and how much memory a
// deployment needs, and whether one primary is enough, from the measured coefficients of
// sizing-model.ts. Sends nothing anywhere.
import { type Command, InvalidArgumentError, Option } from 'commander';
import { defaultConfig } from '../config.js';
import { integer } from './connection.js';
import { OUTPUT_FORMATS, Printer, type TableView, outputFormat } from './output.js';
import { COEFFICIENTS, type SizingDialect, type SizingResult, sizeDeployment } from './sizing-model.js';

/** A rate or a share: a finite number from `min`. */
const number =
  (min: number, max = Number.MAX_SAFE_INTEGER) =>
  (raw: string): number => {
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw new InvalidArgumentError(`expected a number from ${min} to ${max}`);
    return n;
  };
const positive =
  (max = Number.MAX_SAFE_INTEGER) =>
  (raw: string): number => {
    const n = number(0, max)(raw);
    if (n === 0) throw new InvalidArgumentError(`expected a number greater than 0, at most ${max}`);
    return n;
  };

/** The result as rows of what to provision: item, value, and what it follows from. */
function resultTables(r: SizingResult): TableView[] {
  const pg = r.db === 'postgres';
  const rows: Array<{ item: string; value: unknown; note: string }> = [
    {
      item: 'allot processes',
      value: r.allot_processes,
      note: pg ? 'one core each (one JavaScript thread); two at least, so one can stop' : 'SQLite: one process owns the file',
    },
    { item: 'allot cores', value: r.allot_cores, note: 'CPU of all requests ÷ --utilization' },
    { item: 'memory per allot process, MB', value: r.memory_per_allot_process_mb, note: 'every process holds the whole provider index' },
    { item: 'database size, MB', value: r.database_size_mb, note: 'providers, consumers, nodes, identifier values, with indexes' },
  ];
  if (pg) {
    rows.push(
      { item: 'PostgreSQL cores', value: r.postgres_cores, note: 'CPU of all statements ÷ --utilization' },
      { item: 'shared_buffers, MB', value: r.shared_buffers_mb, note: 'the database size and a quarter: all of it is the working set' },
      { item: 'max_connections', value: r.max_connections, note: 'processes × --pool-size, and 10 spare' },
      { item: 'PostgreSQL memory, MB', value: r.postgres_memory_mb, note: 'shared_buffers and each connection’s private memory' },
    );
  }
  rows.push({
    item: pg ? 'one primary enough' : 'one SQLite process enough',
    value: r.one_primary_enough ? 'yes' : 'no',
    note: r.one_primary_enough ? 'every limit below within --utilization' : 'see the limits past --utilization below',
  });
  return [
    { rows, columns: ['item', 'value', 'note'] },
    {
      title: 'limits',
      rows: r.limits.map((l) => ({ limit: l.what, load: l.load, capacity: l.capacity, share: l.share, ok: l.ok ? 'yes' : 'NO' })),
      columns: ['limit', 'load', 'capacity', 'share', 'ok'],
    },
  ];
}

const coefficientRows = (): TableView => ({
  rows: Object.entries(COEFFICIENTS).map(([name, c]) => ({ name, sqlite: c.sqlite, postgres: c.postgres, unit: c.unit, source: c.source })),
  columns: ['name', 'sqlite', 'postgres', 'unit', 'source'],
});

export function registerSizingCommand(program: Command): void {
  const count = integer(0);
  program
    .command('sizing')
    .description(
      'size a deployment from measured costs: allot processes and cores, PostgreSQL cores, memory, shared_buffers, max_connections, ' +
        'and whether one PostgreSQL primary is enough (docs/operations.md "Capacity planning"); contacts no server',
    )
    .addOption(new Option('--db <dialect>', 'the database').choices(['postgres', 'sqlite']).default('postgres'))
    .addOption(
      new Option('--providers <n>', 'Placement resource providers (compute nodes, and bare-metal nodes with --baremetal-backend placement)')
        .argParser(count)
        .default(0),
    )
    .addOption(new Option('--nodes <n>', 'bare-metal nodes').argParser(count).default(0))
    .addOption(new Option('--values <n>', 'identifier values held').argParser(count).default(0))
    .addOption(new Option('--consumers <n>', 'Placement consumers holding allocations (instances, migrations)').argParser(count).default(0))
    .addOption(
      new Option('--claims-per-s <r>', 'Placement claims (PUT /allocations) and deletes; count a move (POST /allocations of two consumers) as two')
        .argParser(number(0))
        .default(0),
    )
    .addOption(new Option('--candidates-per-s <r>', 'GET /allocation_candidates (limit=50)').argParser(number(0)).default(0))
    .addOption(
      new Option('--registrations-per-s <r>', 'provider registration requests (POST provider, PUT inventories, traits, aggregates)')
        .argParser(number(0))
        .default(0),
    )
    .addOption(new Option('--allocations-per-s <r>', 'bare-metal allocations').argParser(number(0)).default(0))
    .addOption(new Option('--id-allocations-per-s <r>', 'identifier allocations').argParser(number(0)).default(0))
    .addOption(
      new Option('--reservations-per-s <r>', 'service-instance reservations (a node, capacity and identifiers in one request)').argParser(number(0)).default(0),
    )
    .addOption(new Option('--shared-providers <n>', "providers the reservations' capacity is spread over (1: all on one)").argParser(integer(1)).default(1))
    .addOption(new Option('--pools <n>', 'pools the identifier allocations and reservations are spread over').argParser(integer(1)).default(1))
    .addOption(
      new Option('--utilization <share>', 'the share of each core and each measured limit to plan for (0.5: room for twice the load)')
        .argParser(positive(1))
        .default(0.5),
    )
    .addOption(
      new Option('--pool-size <n>', 'PostgreSQL connections per allot process (allot serve --pool-size)')
        .argParser(integer(1, 1000))
        .default(defaultConfig().poolSize),
    )
    .addOption(
      new Option('--commit-rate <r>', "the primary's durable commits/s (pgbench -N -M prepared -c 8 on it); default: this project's machine").argParser(
        positive(),
      ),
    )
    .addOption(new Option('--coefficients', 'print the model’s coefficients and the measurements they come from, and nothing else'))
    .addOption(new Option('-o, --output <format>', 'table (default on a terminal), json (default otherwise) or yaml').choices(OUTPUT_FORMATS))
    .addOption(new Option('--json', 'the same as --output json'))
    .action((opts: Record<string, any>) => {
      const format = opts.json ? 'json' : outputFormat(opts.output);
      const printer = new Printer(format);
      if (opts.coefficients) {
        printer.print(COEFFICIENTS, () => coefficientRows());
        return;
      }
      const result = sizeDeployment({
        db: opts.db as SizingDialect,
        providers: opts.providers,
        nodes: opts.nodes,
        values: opts.values,
        consumers: opts.consumers,
        claimsPerS: opts.claimsPerS,
        candidatesPerS: opts.candidatesPerS,
        registrationsPerS: opts.registrationsPerS,
        allocationsPerS: opts.allocationsPerS,
        idAllocationsPerS: opts.idAllocationsPerS,
        reservationsPerS: opts.reservationsPerS,
        utilization: opts.utilization,
        poolSize: opts.poolSize,
        commitRate: opts.commitRate,
        sharedProviders: opts.sharedProviders,
        pools: opts.pools,
      });
      printer.print(result, resultTables);
    });
}
