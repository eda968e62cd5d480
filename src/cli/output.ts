// What client commands print: `--output table|json|yaml`. Table by default when stdout is a
// terminal, JSON otherwise (so a pipe or a script gets something to parse). JSON and YAML show
// the API's body as it came (lists as arrays of items); a table shows chosen columns.
import { stringify as toYaml } from 'yaml';
import { UsageError } from './exit.js';

export type OutputFormat = 'table' | 'json' | 'yaml';
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['table', 'json', 'yaml'];

export function outputFormat(requested: string | undefined, stdout: { isTTY?: boolean } = process.stdout): OutputFormat {
  if (requested === undefined || requested === '') return stdout.isTTY ? 'table' : 'json';
  if (!(OUTPUT_FORMATS as readonly string[]).includes(requested))
    throw new UsageError(`--output must be one of ${OUTPUT_FORMATS.join(', ')}, got ${JSON.stringify(requested)}`);
  return requested as OutputFormat;
}

/** How a table shows a value: a list of rows and the columns to show (default: the rows' keys). */
export interface TableView {
  rows: ReadonlyArray<object>;
  columns?: string[];
  /** a line above the table, when one value is shown as several tables */
  title?: string;
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v === 'string' || typeof v === 'number')) return value.join(', ');
  return JSON.stringify(value);
}

/** Rows as aligned columns with a header line. */
export function renderTable(view: TableView): string {
  const columns = view.columns ?? [...new Set(view.rows.flatMap((r) => Object.keys(r)))];
  const title = view.title ? `${view.title}:\n` : '';
  if (view.rows.length === 0) return `${title}(none)\n`;
  const cells = view.rows.map((r) => columns.map((c) => cell((r as Record<string, unknown>)[c]).replace(/\n/g, ' ')));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return `${title}${[line(columns), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n')}\n`;
}

/** One object as field/value rows. */
export function fieldsView(object: Record<string, unknown>, only?: string[]): TableView {
  // links (and Ironic's link lists: ports, states, …) say nothing at a terminal
  const isLinks = (v: unknown) => Array.isArray(v) && v.length > 0 && v.every((x) => x && typeof x === 'object' && 'href' in x && 'rel' in x);
  const keys = only ?? Object.keys(object).filter((k) => k !== 'links' && !isLinks(object[k]));
  return { rows: keys.map((k) => ({ field: k, value: object[k] })), columns: ['field', 'value'] };
}

export class Printer {
  constructor(
    readonly format: OutputFormat,
    private readonly out: NodeJS.WritableStream = process.stdout,
  ) {}

  /** Print `data` as JSON/YAML, or as the table(s) `view` makes of it (default: fields of an object, keys of rows). */
  print(data: unknown, view?: (data: any) => TableView | TableView[]): void {
    if (data === undefined) return;
    if (this.format === 'json') this.out.write(`${JSON.stringify(data, null, 2)}\n`);
    else if (this.format === 'yaml') this.out.write(toYaml(data));
    else this.out.write([view ? view(data) : defaultView(data)].flat().map(renderTable).join('\n'));
  }

  /** A line for people (tables only): e.g. "deleted node-1". JSON and YAML print nothing. */
  note(text: string): void {
    if (this.format === 'table') this.out.write(`${text}\n`);
  }
}

function defaultView(data: unknown): TableView {
  if (Array.isArray(data)) return { rows: data.map((d) => (d !== null && typeof d === 'object' ? (d as Record<string, unknown>) : { value: d })) };
  if (data !== null && typeof data === 'object') return fieldsView(data as Record<string, unknown>);
  return { rows: [{ value: data }], columns: ['value'] };
}
