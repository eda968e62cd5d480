// What every client command shares: where the server is, who is asking, how long to wait, how to
// print. Options sit on the API's command (`allot placement --url …`) and may be given anywhere on
// the line; each also comes from the environment.
import { type Command, InvalidArgumentError, Option } from 'commander';
import { AllotClient } from '../client/index.js';
import { keystonePasswordToken } from '../client/keystone.js';
import { MAX_EXACT_INTEGER, holdsInexactInteger } from '../core/exact-json.js';
import type { TokenProvider } from '../client/http.js';
import { EXIT_CODES_HELP, UsageError } from './exit.js';
import { OUTPUT_FORMATS, Printer, outputFormat } from './output.js';

export const DEFAULT_URL = 'http://127.0.0.1:8778';

export interface CliContext {
  client: AllotClient;
  out: Printer;
}

/** Repeatable option: `--trait A --trait B` → ['A', 'B']. */
export const collect = (value: string, previous: string[] = []) => [...previous, value];

/** An integer option or argument (commander reports a bad one as a usage error). */
export const integer =
  (min = 0, max = Number.MAX_SAFE_INTEGER) =>
  (raw: string): number => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    return n;
  };

export const positiveSeconds = (raw: string): number => {
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a number of seconds greater than 0');
  return n;
};

/** The options of a client command group (placement, baremetal, ids). */
export function addConnectionOptions(cmd: Command, options: { microversion?: string } = {}): Command {
  cmd
    .addOption(new Option('--url <url>', "the server's main-port base URL").env('ALLOT_URL').default(DEFAULT_URL))
    .addOption(
      new Option('--token <token>', "x-auth-token to send (allot's noauth2: `admin` is an administrator; default admin unless OS_AUTH_URL is set)").env(
        'ALLOT_TOKEN',
      ),
    )
    .addOption(new Option('--os-auth-url <url>', 'Keystone URL: get a token by password (Keystone v3) instead of --token').env('OS_AUTH_URL'))
    .addOption(new Option('--os-username <name>', 'Keystone user').env('OS_USERNAME'))
    .addOption(new Option('--os-password <password>', 'Keystone password').env('OS_PASSWORD'))
    .addOption(new Option('--os-project-name <name>', 'Keystone project to scope the token to').env('OS_PROJECT_NAME'))
    .addOption(new Option('--os-user-domain-name <name>', "the user's Keystone domain").env('OS_USER_DOMAIN_NAME').default('Default'))
    .addOption(new Option('--os-project-domain-name <name>', "the project's Keystone domain").env('OS_PROJECT_DOMAIN_NAME').default('Default'))
    .addOption(new Option('--timeout <seconds>', 'longest wait for one HTTP call').env('ALLOT_TIMEOUT').default(30).argParser(positiveSeconds))
    .addOption(
      new Option('-o, --output <format>', 'table (default on a terminal), json (default otherwise) or yaml').choices(OUTPUT_FORMATS).env('ALLOT_OUTPUT'),
    );
  if (options.microversion)
    cmd.addOption(new Option('--microversion <version>', `${options.microversion} microversion to use (default: the newest both sides know)`));
  cmd.addHelpText('after', `\n${EXIT_CODES_HELP}\n`);
  return cmd;
}

interface ConnectionOptions {
  url: string;
  token?: string;
  osAuthUrl?: string;
  osUsername?: string;
  osPassword?: string;
  osProjectName?: string;
  osUserDomainName?: string;
  osProjectDomainName?: string;
  timeout: number;
  output?: string;
  microversion?: string;
}

function tokenFrom(o: ConnectionOptions, timeoutMs: number): string | TokenProvider {
  if (o.token) return o.token;
  if (o.osAuthUrl) {
    const missing = [
      ['--os-username / OS_USERNAME', o.osUsername],
      ['--os-password / OS_PASSWORD', o.osPassword],
    ]
      .filter(([, v]) => !v)
      .map(([name]) => name);
    if (missing.length) throw new UsageError(`Keystone authentication (OS_AUTH_URL is set) needs ${missing.join(' and ')}`);
    return keystonePasswordToken({
      authUrl: o.osAuthUrl,
      username: o.osUsername!,
      password: o.osPassword!,
      projectName: o.osProjectName,
      userDomainName: o.osUserDomainName,
      projectDomainName: o.osProjectDomainName,
      timeoutMs,
    });
  }
  return 'admin';
}

export function contextFrom(raw: Record<string, unknown>, api: 'placement' | 'baremetal' | 'ids'): CliContext {
  const o = raw as unknown as ConnectionOptions;
  try {
    const url = new URL(o.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw new UsageError(`--url must be an http(s) URL, got ${JSON.stringify(o.url)}`);
  }
  const timeoutMs = Math.round(o.timeout * 1000);
  const client = new AllotClient({
    url: o.url,
    token: tokenFrom(o, timeoutMs),
    timeoutMs,
    placementMicroversion: api === 'placement' ? o.microversion : undefined,
    baremetalMicroversion: api === 'baremetal' ? o.microversion : undefined,
  });
  return { client, out: new Printer(outputFormat(o.output)) };
}

/**
 * An action with the shared context: `act('placement', (ctx, opts, uuid) => …)`. Commander hands
 * actions (...arguments, options, command); the connection options come from the ancestors.
 */
export function act<A extends any[]>(api: 'placement' | 'baremetal' | 'ids', fn: (ctx: CliContext, opts: Record<string, any>, ...args: A) => Promise<void>) {
  return async (...params: unknown[]) => {
    const cmd = params[params.length - 1] as Command;
    const opts = params[params.length - 2] as Record<string, any>;
    await fn(contextFrom(cmd.optsWithGlobals(), api), opts, ...(params.slice(0, -2) as A));
  };
}

/** `k=v` pairs; v is JSON when it parses as JSON, text otherwise. */
export function keyValues(pairs: string[] = [], what = '--property'): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i < 1) throw new UsageError(`${what} wants name=value, got ${JSON.stringify(p)}`);
    const raw = p.slice(i + 1);
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      value = raw;
    }
    if (value !== raw && holdsInexactInteger(raw))
      throw new UsageError(
        `${what} ${p.slice(0, i)}: ${raw} holds an integer beyond ±${MAX_EXACT_INTEGER}, which JSON would round (quote it to send a string)`,
      );
    out[p.slice(0, i)] = value;
  }
  return out;
}

/** A JSON document from a file, or stdin for `-`. */
export async function readJsonFile(file: string): Promise<unknown> {
  const { readFileSync } = await import('node:fs');
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${file} is not JSON: ${(err as Error).message}`);
  }
  if (holdsInexactInteger(text)) throw new UsageError(`${file} holds an integer beyond ±${MAX_EXACT_INTEGER}, which JSON would round`);
  return data;
}
