#!/usr/bin/env node
// The `allot` command.
import { Command, Option } from 'commander';
import { type Config, OPTIONS, loadConfig } from '../config.js';
import { openDatabase } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { startAllot } from '../server/start.js';
import { registerIdsCommands } from './ids.js';

const program = new Command();
program.name('allot').description('Allocates scarce things correctly when many clients ask at once.');

function withOptions(cmd: Command, keys: Array<keyof Config>): Command {
  for (const spec of OPTIONS.filter((o) => keys.includes(o.key))) {
    cmd.addOption(new Option(spec.flag, `${spec.description} [env ${spec.env}]`));
  }
  return cmd;
}

function configFrom(opts: Record<string, string | undefined>): Config {
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
).action(async (opts: Record<string, string | undefined>) => {
  const config = configFrom(opts);
  const running = await startAllot(config).catch((err: Error) => {
    console.error(`allot: cannot start: ${err.message}`);
    process.exit(1);
  });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    running.services.log.info({ signal }, 'stopping');
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

withOptions(program.command('migrate').description('bring the database schema up to date and exit'), ['db', 'sqliteSync']).action(
  async (opts: Record<string, string | undefined>) => {
    const config = configFrom(opts);
    const database = await openDatabase(config.db, { sqliteSync: config.sqliteSync });
    try {
      const applied = await migrate(database);
      console.log(applied.length ? `applied: ${applied.join(', ')}` : 'schema is up to date');
    } finally {
      await database.close();
    }
  },
);

registerIdsCommands(program);

program.parseAsync().catch((err: Error) => {
  console.error(`allot: ${err.message}`);
  process.exit(1);
});
