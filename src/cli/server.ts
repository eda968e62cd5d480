// `allot serve`, `allot migrate` and `allot config`: the commands that run or inspect a server
// process. Their options come from the one option table (src/config.ts), so a flag, its
// environment variable and its key in the configuration file can never drift apart.
import { type Command, Option } from 'commander';
import { stringify as toYaml } from 'yaml';
import {
  CONFIG_ENV,
  type Config,
  type ConfigSource,
  OPTIONS,
  type ResolvedConfig,
  databaseOptions,
  type DisplayValue,
  type OptionSpec,
  displayValue,
  fileKey,
  isSwitch,
  maskedValue,
  resolveConfig,
} from '../config.js';
import { UsageError } from './exit.js';
import { OUTPUT_FORMATS, Printer, outputFormat } from './output.js';

function withOptions(cmd: Command, keys: Array<keyof Config>): Command {
  cmd.addOption(new Option('--config <file>', `YAML configuration file (keys: the flags without --, e.g. "port: 8778") [env ${CONFIG_ENV}]`));
  for (const spec of OPTIONS.filter((o) => keys.includes(o.key))) {
    cmd.addOption(new Option(spec.flag, `${plainText(spec.doc)} [env ${spec.env}]`));
    if (isSwitch(spec)) cmd.addOption(new Option(spec.flag.replace(/^--/, '--no-'), `the opposite of ${spec.flag}`));
  }
  return cmd;
}

/** An option's README line for a terminal: no backticks, a link as its text. */
const plainText = (markdown: string) => markdown.replace(/`/g, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');

const sourceText = (s: ConfigSource): string =>
  s.from === 'default' ? 'default' : s.from === 'file' ? `file ${s.path}` : s.from === 'env' ? `env ${s.name}` : `flag ${s.flag}`;

/** The effective configuration as rows: key (as in the file), value (in the flag's units, secrets masked unless `showSecrets`), source. */
export function configRows(resolved: ResolvedConfig, showSecrets = false): Array<{ key: string; value: unknown; source: string }> {
  return OPTIONS.map((spec) => ({
    key: fileKey(spec),
    value: (showSecrets ? (_: OptionSpec, v: DisplayValue) => v : maskedValue)(spec, displayValue(spec, resolved.config[spec.key])),
    source: sourceText(resolved.sources[spec.key]),
  }));
}

export function registerServerCommands(program: Command): void {
  withOptions(
    program.command('serve').description('run the HTTP APIs and background workers (logs: JSON lines, or readable lines on a terminal)'),
    OPTIONS.map((o) => o.key),
  ).action(async (opts: Record<string, string | boolean | undefined>) => {
    const { config } = resolveConfig(opts);
    const { startAllot } = await import('../server/start.js');
    const running = await startAllot(config).catch((err: Error) => {
      console.error(`allot: cannot start: ${err.message}`);
      process.exit(1);
    });
    running.ready.catch((err: Error) => {
      running.context.log.fatal({ err }, 'cannot start');
      console.error(`allot: cannot start: ${err.message}`);
      process.exit(1);
    });
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      running.context.log.info({ signal }, 'stopping');
      // A shutdown that hangs ends the process anyway, 30 s after the drain.
      setTimeout(() => process.exit(1), config.shutdownDelay + 30_000).unref();
      running.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  });

  withOptions(program.command('migrate').description('bring the database schema up to date and exit'), [
    'db',
    'sqliteSync',
    'dbConnectTimeout',
    'dbStatementTimeout',
  ])
    .addOption(new Option('--wait <seconds>', 'how long to wait for an unreachable or recovering database').default('60'))
    .action(async (opts: Record<string, string | boolean | undefined>) => {
      const { config } = resolveConfig(opts);
      const wait = Number(opts.wait);
      if (!Number.isFinite(wait) || wait < 0) throw new UsageError('--wait must be a number of seconds');
      const [{ pino }, { openDatabase }, { prepareDatabase }] = await Promise.all([import('pino'), import('../db/open.js'), import('../server/start.js')]);
      const log = pino({ level: 'warn' });
      const database = await openDatabase(config.db, databaseOptions(config));
      const deadline = Date.now() + wait * 1000;
      try {
        const applied = await prepareDatabase(database, log, () => (Date.now() >= deadline ? `the database did not become reachable within ${wait}s` : null));
        console.log(applied.length ? `applied: ${applied.join(', ')}` : 'schema is up to date');
      } finally {
        await database.close();
      }
    });

  withOptions(
    program
      .command('config')
      .description(
        'print the effective configuration of `allot serve` with the same flags, environment and --config file: each key, its value ' +
          '(secrets masked) and where it came from (flag, env, file, default). --output yaml prints it as a configuration file',
      ),
    OPTIONS.map((o) => o.key),
  )
    .addOption(new Option('-o, --output <format>', 'table (default on a terminal), json (default otherwise) or yaml').choices(OUTPUT_FORMATS))
    .addOption(
      new Option('--show-secrets', 'print passwords as they are (masked otherwise: the yaml output is then a usable file only once they are put back)'),
    )
    .action(async (opts: Record<string, string | boolean | undefined>) => {
      const resolved = resolveConfig(opts);
      const rows = configRows(resolved, opts.showSecrets === true);
      const format = outputFormat(typeof opts.output === 'string' ? opts.output : undefined);
      if (format === 'yaml') {
        // a configuration file: `key: value  # source`
        const lines = rows.map((r) => `${toYaml({ [r.key]: r.value }).trimEnd()}  # ${r.source}`);
        const masked = opts.showSecrets !== true && lines.some((l) => l.includes('****'));
        const header = `# allot configuration${resolved.file ? ` (file: ${resolved.file})` : ''}${masked ? '\n# passwords are masked (****): put them back, or print with --show-secrets' : ''}`;
        process.stdout.write(`${header}\n${lines.join('\n')}\n`);
        return;
      }
      new Printer(format).print(rows, (r) => ({ rows: r, columns: ['key', 'value', 'source'] }));
    });
}
