// README.md's option table, written from src/config.ts's one option table (OPTIONS): each row an
// option's flag (and `--no-…` for a switch), environment variable, default and doc, in the
// table's order, after the configuration file's own row (CONFIG_FILE). So an option is declared
// once: `npx tsx scripts/options-table.ts` rewrites the rows between README.md's markers, and
// test/docs.test.ts fails when they are not what config.ts says.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_FILE, OPTIONS, type OptionSpec, displayValue, isSwitch } from '../src/config.js';

export const README = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'README.md');
const BEGIN = '<!-- options: written by `npx tsx scripts/options-table.ts` from src/config.ts; do not edit -->';
const END = '<!-- /options -->';

/** How the table writes an option's default: its `documentedDefault`, else as `allot config` shows it (unset: none; a switch: on/off). */
export function documentedDefault(spec: OptionSpec): string {
  if (spec.documentedDefault) return spec.documentedDefault;
  const value = displayValue(spec, spec.default);
  if (value === null || (Array.isArray(value) && value.length === 0)) return 'none';
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  return `\`${String(value)}\``;
}

/** The option's flag cell: `--x`, or `--x` / `--no-x` for a switch that is on by default. */
function flagCell(spec: OptionSpec): string {
  const name = spec.flag.split(' ')[0]!;
  return isSwitch(spec) && spec.default === true ? `\`${name}\` / \`--no-${name.slice(2)}\`` : `\`${name}\``;
}

/** The table, as README.md holds it between its markers (columns padded to their widest cell). */
export function optionsTable(): string {
  const rows = [
    ['flag', 'environment', 'default', 'meaning'],
    [`\`${CONFIG_FILE.flag}\``, `\`${CONFIG_FILE.env}\``, 'none', CONFIG_FILE.doc],
    ...OPTIONS.map((spec) => [flagCell(spec), `\`${spec.env}\``, documentedDefault(spec), spec.doc]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  const [header, ...body] = rows;
  return [line(header!), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...body.map(line)].join('\n');
}

/** README.md with the rows between its markers written anew. */
export function readmeWithTable(readme: string): string {
  const start = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`README.md has no option table between ${BEGIN} and ${END}`);
  return `${readme.slice(0, start + BEGIN.length)}\n${optionsTable()}\n${readme.slice(end)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const before = readFileSync(README, 'utf8');
  const after = readmeWithTable(before);
  if (after !== before) writeFileSync(README, after);
  console.log(after === before ? 'README.md: the option table is up to date' : 'README.md: the option table rewritten');
}
