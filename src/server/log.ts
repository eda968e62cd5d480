// The process's logger: JSON lines for machines (the default when stdout is not a terminal), or
// one readable line per entry for people at a terminal (`--log-format pretty`, or `auto` on a
// TTY): `12:04:05.123 INFO  allot ready db=sqlite:./allot.db workers=[…]`.
import { type DestinationStream, type Logger, pino } from 'pino';
import type { Config } from '../config.js';

const LEVELS: Record<number, [name: string, color: string]> = {
  10: ['TRACE', '90'],
  20: ['DEBUG', '36'],
  30: ['INFO ', '32'],
  40: ['WARN ', '33'],
  50: ['ERROR', '31'],
  60: ['FATAL', '35'],
};

/** Fields every line has, or that say nothing to a person reading a terminal. */
const QUIET = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'v']);

function scalar(value: unknown): string {
  if (typeof value === 'string') return /[\s"=]/.test(value) || value === '' ? JSON.stringify(value) : value;
  return JSON.stringify(value);
}

/** One pino JSON line as a readable line (and an error's stack below it). */
export function prettyLine(line: string, color: boolean): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const time = new Date(Number(entry.time)).toISOString().slice(11, 23);
  const [name, code] = LEVELS[Number(entry.level)] ?? [String(entry.level).padEnd(5), '0'];
  const level = color ? `\u001b[${code}m${name}\u001b[0m` : name;
  let stack = '';
  const fields: string[] = [];
  for (const [key, value] of Object.entries(entry)) {
    if (QUIET.has(key) || value === undefined) continue;
    const err = value as { message?: string; stack?: string; type?: string };
    if ((key === 'err' || key === 'error') && err && typeof err === 'object' && typeof err.message === 'string') {
      fields.push(`${key}=${scalar(err.message)}`);
      if (err.stack) stack = `\n    ${err.stack.split('\n').join('\n    ')}`;
      continue;
    }
    fields.push(`${key}=${scalar(value)}`);
  }
  const msg = typeof entry.msg === 'string' ? entry.msg : '';
  const dim = (s: string) => (color && s ? `\u001b[2m${s}\u001b[0m` : s);
  return `${dim(time)} ${level} ${msg}${fields.length ? ` ${dim(fields.join(' '))}` : ''}${stack}\n`;
}

/** A destination that writes pretty lines to `out` (pino hands it one JSON line per write). */
export function prettyDestination(out: NodeJS.WritableStream & { isTTY?: boolean }): DestinationStream {
  const color = out.isTTY === true && !process.env.NO_COLOR;
  return { write: (line: string) => void out.write(prettyLine(line, color)) };
}

export function usePrettyLogs(format: Config['logFormat'], stdout: { isTTY?: boolean } = process.stdout): boolean {
  return format === 'pretty' || (format === 'auto' && stdout.isTTY === true);
}

export function createLogger(config: Pick<Config, 'logLevel' | 'logFormat'>): Logger {
  const options = { level: config.logLevel, base: { pid: process.pid } };
  return usePrettyLogs(config.logFormat) ? pino(options, prettyDestination(process.stdout)) : pino(options);
}
