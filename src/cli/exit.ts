// Exit codes scripts can rely on, and the one place an error becomes a message and a code.
// README.md ("Command line") and `allot --help` list the same table.
import { CommanderError } from 'commander';
import { AllotApiError } from '../client/errors.js';
import { WaitTimeoutError } from '../client/baremetal.js';
import { ConfigError } from '../config.js';

export const EXIT = {
  /** done */
  ok: 0,
  /** the API refused the request (4xx other than below): bad input, forbidden, unauthenticated */
  refused: 1,
  /** wrong command line, configuration or input file: nothing was sent */
  usage: 2,
  /** no usable answer: server unreachable, timed out, 5xx, or the database is down (503) */
  unavailable: 3,
  /** the thing named does not exist (404) */
  notFound: 4,
  /** conflict (409, 412): a generation or version moved, in use, capacity, already exists */
  conflict: 5,
  /** a wait (--wait) ended without success: the allocation or node failed, or time ran out */
  waitFailed: 6,
} as const;

export const EXIT_CODES_HELP = `Exit codes:
  0  success
  1  the API refused the request (4xx not listed below)
  2  usage error: bad arguments, configuration or input file (nothing was sent)
  3  server unreachable, timed out, or answered 5xx (e.g. 503 while its database is down)
  4  not found (404)
  5  conflict (409/412): a generation moved, in use, no capacity, already exists
  6  a --wait ended without success (failed, or out of time)`;

/** A mistake on the command line or in an input file, found before anything was sent. */
export class UsageError extends Error {}

/** What the command line names does not exist (a name or a value looked up through the API). */
export class NotFoundError extends Error {}

/** A wait that ended without success, with what was seen last. */
export class WaitFailedError extends Error {}

export function exitCodeOf(err: unknown): number {
  if (err instanceof CommanderError) {
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help')
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    return EXIT.usage;
  }
  if (err instanceof UsageError || err instanceof ConfigError) return EXIT.usage;
  if (err instanceof NotFoundError) return EXIT.notFound;
  if (err instanceof WaitTimeoutError || err instanceof WaitFailedError) return EXIT.waitFailed;
  if (err instanceof AllotApiError) {
    if (err.status === 0 || err.status >= 500) return EXIT.unavailable;
    if (err.status === 404) return EXIT.notFound;
    if (err.status === 409 || err.status === 412) return EXIT.conflict;
    return EXIT.refused;
  }
  return EXIT.refused;
}

/** One line for stderr: what went wrong, with the API's code and the request id; no stack. */
export function messageOf(err: unknown): string {
  if (err instanceof AllotApiError) return err.describe();
  if (err instanceof Error) return err.message;
  return String(err);
}
