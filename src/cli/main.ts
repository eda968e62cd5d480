#!/usr/bin/env node
// The `allot` command.
import { Command, Option } from 'commander';
import { pino } from 'pino';
import { type Config, OPTIONS, databaseOptions, isSwitch, loadConfig } from '../config.js';
import { openDatabase } from '../db/database.js';
import { prepareDatabase, startAllot } from '../server/start.js';
import { registerIdsCommands } from './ids.js';

const program = new Command();
program.name('allot').description('Allocates scarce things correctly when many clients ask at once.');

function withOptions(cmd: Command, keys: Array<keyof Config>): Command {
  for (const spec of OPTIONS.filter((o) => keys.includes(o.key))) {
    cmd.addOption(new Option(spec.flag, `${spec.description} [env ${spec.env}]`));
    if (isSwitch(spec)) cmd.addOption(new Option(spec.flag.replace(/^--/, '--no-'), `the opposite of ${spec.flag}`));
  }
  return cmd;
}

function configFrom(opts: Record<string, string | boolean | undefined>): Config {
  try {
    return loadConfig(opts);
  } catch (err) {
    console.error(`allot: ${(err as Error).message}`);
    process.exit(2);
  }
}

withOptions(
  program.command('serve').description('run the HTTP APIs and background workers'),
  OPTIONS.map((o) => o.key),
).action(async (opts: Record<string, string | boolean | undefined>) => {
  const config = configFrom(opts);
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
    // A second signal, or a shutdown that hangs, ends the process anyway.
    setTimeout(() => process.exit(1), 30_000).unref();
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
});

withOptions(program.command('migrate').description('bring the database schema up to date and exit'), ['db', 'sqliteSync', 'dbConnectTimeout', 'dbStatementTimeout'])
  .addOption(new Option('--wait <seconds>', 'how long to wait for an unreachable or recovering database').default('60'))
  .action(async (opts: Record<string, string | undefined>) => {
    const config = configFrom(opts);
    const wait = Number(opts.wait);
    if (!Number.isFinite(wait) || wait < 0) {
      console.error('allot: --wait must be a number of seconds');
      process.exit(2);
    }
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

registerIdsCommands(program);

program.parseAsync().catch((err: Error) => {
  console.error(`allot: ${err.message}`);
  process.exit(1);
});
