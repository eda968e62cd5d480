// The documents stay true: README.md's option table is the one scripts/options-table.ts writes
// from src/config.ts (every option once, its environment variable, default and meaning), the option tables of docs/ agree with it (flag,
// environment variable, default), every relative link points to a file that exists, and
// docs/operations.md prints exactly the Patroni, HAProxy, etcd and allot settings that
// `npm run test:ha` runs (test/ha/layout.ts, test/ha/load-balancer.ts), and the "operations"
// columns of docs/auth.md's rule tables are what the endpoints declare (their `policy`).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { buildProgram } from '../src/cli/program.js';
import { COEFFICIENTS } from '../src/cli/sizing-model.js';
import { documentedRoutes as baremetalRoutes } from '../src/baremetal/api.js';
import { METHODS, type RouteTable } from '../src/http/router.js';
import { idsRoutes } from '../src/ids/api.js';
import { placementRoutes } from '../src/placement/api.js';
import { CONFIG_ENV, OPTIONS, type OptionSpec, displayValue, fileKey, readConfigFile } from '../src/config.js';
import { readmeWithTable } from '../scripts/options-table.js';
import { ALLOT_HA_ARGS, ALLOT_USER, DOCUMENTED, etcdArgs, haproxyConfig, patroniYaml } from './ha/layout.js';
import { DOCUMENTED_LOAD_BALANCER, SHUTDOWN_DELAY_ARGS, loadBalancerConfig } from './ha/load-balancer.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
const docs = readdirSync(path.join(root, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`);

const flagOf = (spec: OptionSpec) => spec.flag.split(' ')[0]!;

/** How a table may write the option's default: as `allot config` shows it, or off/none/on. */
function documentedDefaults(spec: OptionSpec): string[] {
  if (spec.documentedDefault) return [spec.documentedDefault];
  const value = displayValue(spec, spec.default);
  if (value === null || (Array.isArray(value) && value.length === 0)) return ['off', 'none'];
  if (typeof spec.default === 'boolean') return spec.default ? ['on', '`true`'] : ['off', '`false`'];
  return [`\`${String(value)}\``];
}

/** Rows `| \`--flag\` | \`ENV\` | default | meaning |` of a markdown file. */
function optionRows(text: string): Array<{ flag: string; env: string; def: string; meaning: string }> {
  return text
    .split('\n')
    .filter((line) => line.startsWith('| `--'))
    .map((line) => {
      const cells = line.split('|').map((c) => c.trim());
      // `--x` or `--x` / `--no-x`: the first names the option
      return { flag: cells[1]!.split(' / ')[0]!.replace(/`/g, ''), env: cells[2]!.replace(/`/g, ''), def: cells[3]!, meaning: cells[4]! };
    });
}

/** Each row names an option with its environment variable and default; the option it names, if any. */
function checkRow(file: string, row: ReturnType<typeof optionRows>[number]): OptionSpec | null {
  // the configuration file's own option: no key of the file, no default
  if (row.flag === '--config') {
    assert.equal(row.env, CONFIG_ENV, `${file}: the environment variable of --config`);
    return null;
  }
  const spec = OPTIONS.find((o) => flagOf(o) === row.flag);
  assert.ok(spec, `${file} lists ${row.flag}, which allot does not have`);
  assert.equal(row.env, spec.env, `${file}: the environment variable of ${row.flag}`);
  assert.ok(documentedDefaults(spec).includes(row.def), `${file}: the default of ${row.flag} is ${documentedDefaults(spec).join(' or ')}, not ${row.def}`);
  return spec;
}

/** A shell command as the document writes it: the command, then one `--flag value` per line. */
function commandBlock(command: string, args: string[]): string {
  const lines = [command];
  for (let i = 0; i < args.length; i += 2) lines.push(`  ${args[i]} ${args[i + 1]}`);
  return lines.join(' \\\n');
}

/** `:uuid` and `{uuid}` alike: a path with its parameters unnamed and without its query. */
const pathShape = (p: string) => p.replace(/\?.*$/, '').replace(/:\w+|\{[^}]*\}/g, '{}');

/** Every operation of a route table (`METHOD /path`) → the policy rule its endpoint declares (none: public). */
function declaredOperations(routes: RouteTable<{ policy?: string }>): Map<string, string | undefined> {
  const out = new Map<string, string | undefined>();
  for (const [template, byMethod] of Object.entries(routes)) {
    for (const method of METHODS) if (byMethod[method]) out.set(`${method} ${pathShape(template)}`, byMethod[method]!.policy);
  }
  return out;
}

/**
 * The rule tables of one section of docs/auth.md (those with an "operations" column): rule → the
 * operations its row names (a row of several rules names them for each). An operation is written
 * `METHOD /path`, or `…/tail` for the one operation of the API with that method and tail; methods
 * written alone before a path (`GET`, `PUT /x`) go with it, and a path alone takes the method
 * written before it.
 */
function documentedOperations(heading: string, operations: ReadonlyMap<string, unknown>): Map<string, string[]> {
  const doc = read('docs/auth.md');
  const start = doc.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `docs/auth.md has no section ${heading}`);
  const end = doc.slice(start + 1).search(/\n##+ /);
  const lines = doc.slice(start, end < 0 ? undefined : start + 1 + end).split('\n');
  const out = new Map<string, string[]>();
  let inTable = false;
  for (const line of lines) {
    if (!line.startsWith('|')) inTable = false;
    else if (/^\| rule +\| operations /.test(line)) inTable = true;
    else if (inTable && line.startsWith('| `')) {
      const [, rules, named] = line.split('|').map((c) => c.trim());
      let method = '';
      let alone: string[] = [];
      const ops: string[] = [];
      for (const [, span] of named!.matchAll(/`([^`]+)`/g)) {
        const m = /^(?:(GET|PUT|POST|PATCH|DELETE) ?)?((?:\/|…\/)\S*)?$/.exec(span!);
        if (!m) continue;
        method = m[1] ?? method;
        if (!m[2]) {
          alone.push(method);
          continue;
        }
        const shape = pathShape(m[2]);
        for (const each of [...alone, method]) {
          const matching = shape.startsWith('…/')
            ? [...operations.keys()].filter((op) => op.startsWith(`${each} /`) && op.endsWith(shape.slice(1)))
            : [`${each} ${shape}`];
          assert.equal(matching.length, 1, `docs/auth.md, ${heading}: \`${each} ${m[2]}\` is not one operation (${matching.join(', ') || 'none'})`);
          ops.push(matching[0]!);
        }
        alone = [];
      }
      for (const [, rule] of rules!.matchAll(/`([^`]+)`/g)) out.set(rule!, [...(out.get(rule!) ?? []), ...ops]);
    }
  }
  return out;
}

describe('the documents', () => {
  test("README's option table is what scripts/options-table.ts writes from src/config.ts (npx tsx scripts/options-table.ts rewrites it)", () => {
    const readme = read('README.md');
    assert.equal(readme, readmeWithTable(readme));
    // and it lists every option once, by its flag
    const rows = optionRows(readme);
    for (const spec of OPTIONS) assert.equal(rows.filter((r) => r.flag === flagOf(spec)).length, 1, `README.md lists ${flagOf(spec)} once`);
  });

  test('the option tables in docs/ agree with the options', () => {
    for (const file of docs) for (const row of optionRows(read(file))) checkRow(file, row);
  });

  test('every allot configuration file the documents show is one allot reads', () => {
    const keys = new Set(OPTIONS.map(fileKey));
    const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-docs-'));
    try {
      for (const file of ['README.md', ...docs]) {
        for (const [, block] of read(file).matchAll(/```yaml\n([\s\S]*?)```/g)) {
          // a block whose top-level keys are all allot options is a configuration file (not Patroni's, not lifecycles)
          const topKeys = [...block!.matchAll(/^([a-z][\w-]*):/gm)].map((m) => m[1]!);
          if (topKeys.length === 0 || !topKeys.every((k) => keys.has(k))) continue;
          const copy = path.join(dir, 'allot.yaml');
          writeFileSync(copy, block!);
          assert.doesNotThrow(() => readConfigFile(copy), `${file}: the configuration file\n${block}`);
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('every relative link points to a file that exists', () => {
    for (const file of ['README.md', ...docs]) {
      for (const [, target] of read(file).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!) || target!.startsWith('#')) continue;
        const resolved = path.resolve(path.dirname(path.join(root, file)), target!.split('#')[0]!);
        assert.ok(existsSync(resolved), `${file} links to ${target}, which does not exist`);
      }
    }
  });

  for (const [heading, routes] of [
    ['### Placement', placementRoutes],
    ['### Identifier API', idsRoutes],
  ] as const) {
    test(`docs/auth.md, ${heading.slice(4)}: each rule's operations are the operations whose endpoints declare it`, () => {
      const operations = declaredOperations(routes as RouteTable<{ policy?: string }>);
      const declared = new Map<string, string[]>();
      for (const [op, rule] of operations) if (rule) declared.set(rule, [...(declared.get(rule) ?? []), op]);
      const byRule = (m: Map<string, string[]>) => Object.fromEntries([...m].map(([rule, ops]) => [rule, [...new Set(ops)].sort()]).sort());
      assert.deepEqual(byRule(documentedOperations(heading, operations)), byRule(declared));
    });
  }

  test("docs/auth.md, Bare-metal: each rule's row names the operations whose endpoints declare it, and names only operations", () => {
    // Ironic's handlers check more rules than the one an endpoint declares (a list's `list` or
    // `list_all`, a field's own rule): a row may name operations that declare another rule.
    const operations = declaredOperations(baremetalRoutes as RouteTable<{ policy?: string }>);
    const documented = documentedOperations('### Bare-metal (Ironic)', operations);
    for (const [op, rule] of operations) if (rule) assert.ok(documented.get(rule)?.includes(op), `docs/auth.md: the row of ${rule} does not name ${op}`);
    for (const [rule, ops] of documented)
      for (const op of ops) assert.ok(operations.has(op), `docs/auth.md: the row of ${rule} names ${op}, which is no operation`);
  });

  test("docs/operations.md's table of sizing coefficients is allot sizing's, every one with its values", () => {
    const doc = read('docs/operations.md');
    const section = doc.slice(doc.indexOf('## Capacity planning'), doc.indexOf('\n## ', doc.indexOf('## Capacity planning') + 1));
    const cell = (text: string) => (text === '—' ? null : Number(text.replace(/ /g, '')));
    const rows = section
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => line.split('|').map((c) => c.trim()))
      .map((cells) => ({ name: cells[1]!.replace(/`/g, ''), sqlite: cell(cells[2]!), postgres: cell(cells[3]!), unit: cells[4] }));
    assert.deepEqual(
      rows,
      Object.entries(COEFFICIENTS).map(([name, c]) => ({ name, sqlite: c.sqlite, postgres: c.postgres, unit: c.unit })),
    );
  });

  test('docs/operations.md prints the load balancer the rolling-restart test runs, word for word', () => {
    const doc = read('docs/operations.md');
    assert.ok(doc.includes(`\`\`\`\n${loadBalancerConfig(DOCUMENTED_LOAD_BALANCER)}\`\`\``), 'the HAProxy configuration');
    const [flag, value] = SHUTDOWN_DELAY_ARGS;
    assert.match(doc, new RegExp(`^${flag!.slice(2)}: ${value} `, 'm'), "the processes' shutdown delay in allot.yaml");
  });

  test('docs/operations.md prints the layout npm run test:ha runs, word for word', () => {
    const doc = read('docs/operations.md');
    const [pg1, pg2] = DOCUMENTED.members.map((member) => patroniYaml({ dir: DOCUMENTED.dir, member, etcdPort: DOCUMENTED.etcd.clientPort }));
    assert.ok(doc.includes(`\`\`\`yaml\n${pg1}\`\`\``), 'the Patroni configuration of pg1');
    // pg2's file differs in a few lines, which the document lists
    const pg1Lines = new Set(pg1!.split('\n'));
    for (const line of pg2!.split('\n').filter((l) => !pg1Lines.has(l))) assert.ok(doc.includes(line.trim()), `pg2.yml's line ${line.trim()}`);
    assert.ok(doc.includes(`\`\`\`\n${haproxyConfig({ port: DOCUMENTED.haproxyPort, members: DOCUMENTED.members })}\`\`\``), 'the HAProxy configuration');
    assert.ok(doc.includes(commandBlock('etcd', etcdArgs({ dir: DOCUMENTED.dir, ...DOCUMENTED.etcd }))), 'the etcd command');
    const url = `postgres://${ALLOT_USER.username}:${ALLOT_USER.password}@127.0.0.1:${DOCUMENTED.haproxyPort}/allot`;
    assert.ok(doc.includes(commandBlock('allot serve', ['--db', url, ...ALLOT_HA_ARGS])), 'the allot command line');
    // Every allot flag the document names exists.
    // flags of the other programs it shows: etcd, patronictl, useradd, systemctl, openstack
    const others = new Set<string>([
      ...etcdArgs({ dir: '', clientPort: 0, peerPort: 0 }).filter((a) => a.startsWith('--')),
      ...['--leader', '--candidate', '--force', '--wait', '--system', '--home-dir', '--shell', '--now', '--os-endpoint'],
    ]);
    // and `allot sizing`'s own (its section, "Capacity planning")
    const sizing = buildProgram().commands.find((c) => c.name() === 'sizing')!;
    for (const option of sizing.options) if (option.long) others.add(option.long);
    for (const [, flag] of doc.matchAll(/(?<![\w-])(--[a-z][a-z-]+)/g)) {
      if (others.has(flag!)) continue;
      // --config, and `allot config`'s own --show-secrets, are flags besides the options
      assert.ok(
        ['--config', '--show-secrets'].includes(flag!) || OPTIONS.some((o) => flagOf(o) === flag),
        `docs/operations.md names ${flag}, which allot does not have`,
      );
    }
  });
});
