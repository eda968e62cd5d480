// The `allot` command tree, built without side effects so tests can walk it (every command's
// help is checked for completeness) and main.ts can run it.
import { createRequire } from 'node:module';
import { Command } from 'commander';
import { registerBaremetalCommands } from './baremetal.js';
import { EXIT_CODES_HELP } from './exit.js';
import { registerIdsCommands } from './ids.js';
import { registerPlacementCommands } from './placement.js';
import { registerServerCommands } from './server.js';
import { registerSizingCommand } from './sizing.js';

/** The package's version (from dist/cli/ and src/cli/ alike, package.json is two levels up). */
export function packageVersion(): string {
  return (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
}

const CLIENT_HELP = `
Client commands (placement, baremetal, ids) talk to a running server:
  --url / ALLOT_URL (default http://127.0.0.1:8778), --token / ALLOT_TOKEN (default admin),
  or a Keystone token by password when OS_AUTH_URL is set (OS_USERNAME, OS_PASSWORD,
  OS_PROJECT_NAME, OS_USER_DOMAIN_NAME, OS_PROJECT_DOMAIN_NAME).
  --output table|json|yaml / ALLOT_OUTPUT: table on a terminal, JSON otherwise.
  Errors are one line on stderr: the API's message, its code and the request id.`;

export function buildProgram(): Command {
  const program = new Command();
  program
    .name('allot')
    .description('Allocates scarce things correctly when many clients ask at once: Placement, bare-metal and identifier APIs.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help for the command')
    .helpCommand('help [command]', 'show help for a command')
    .configureHelp({ showGlobalOptions: true })
    .exitOverride()
    .addHelpText('after', `${CLIENT_HELP}\n\n${EXIT_CODES_HELP}\n`);
  registerServerCommands(program);
  registerSizingCommand(program);
  registerPlacementCommands(program);
  registerBaremetalCommands(program);
  registerIdsCommands(program);
  return program;
}

/** Every command below `root` (depth first), with its full name: `placement provider list`. */
export function allCommands(root: Command): Array<{ path: string[]; command: Command }> {
  const out: Array<{ path: string[]; command: Command }> = [];
  const walk = (cmd: Command, path: string[]) => {
    for (const sub of cmd.commands) {
      const p = [...path, sub.name()];
      out.push({ path: p, command: sub });
      walk(sub, p);
    }
  };
  walk(root, []);
  return out;
}
