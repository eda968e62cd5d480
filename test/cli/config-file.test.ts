// The YAML configuration file: keys are the flags without `--` (from the one option table),
// precedence flags > environment > file > defaults, validation naming the key, `allot config`
// showing each value's source with secrets masked, and `allot serve --config` using it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { OPTIONS, defaultConfig, displayValue, fileKey, resolveConfig } from '../../src/config.js';
import { request } from '../helpers/http.js';
import { spawnServer } from '../helpers/server.js';

const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/cli/main.js');
const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-config-'));
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  // a clean environment: no ALLOT_* of the caller leaks into what is being checked
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ALLOT_')));
  return new Promise((resolve) =>
    execFile(process.execPath, [cli, ...args], { env: { ...base, ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

describe('configuration file', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('every option has a file key, and precedence is flags > environment > file > defaults', () => {
    assert.equal(new Set(OPTIONS.map(fileKey)).size, OPTIONS.length);
    const f = file(
      'precedence.yaml',
      'port: 9001\nhost: 0.0.0.0\nlog-level: debug\nheartbeat-interval: 0.5\ncors-allowed-origins:\n  - https://a.example\n  - https://b.example\n',
    );
    const r = resolveConfig({ config: f, port: '9003' }, { ALLOT_PORT: '9002', ALLOT_HOST: '10.0.0.1' });
    assert.equal(r.config.port, 9003);
    assert.deepEqual(r.sources.port, { from: 'flag', flag: '--port' });
    assert.equal(r.config.host, '10.0.0.1');
    assert.deepEqual(r.sources.host, { from: 'env', name: 'ALLOT_HOST' });
    assert.equal(r.config.logLevel, 'debug');
    assert.deepEqual(r.sources.logLevel, { from: 'file', path: f });
    assert.equal(r.config.heartbeatInterval, 500, 'seconds in the file, as on the command line');
    assert.deepEqual(r.config.corsAllowedOrigins, ['https://a.example', 'https://b.example']);
    assert.equal(r.config.bodyLimit, 1 << 20);
    assert.deepEqual(r.sources.bodyLimit, { from: 'default' });
    // ALLOT_CONFIG names the file when --config does not
    assert.equal(resolveConfig({}, { ALLOT_CONFIG: f }).config.port, 9001);
  });

  test("every default is a value the option's own parser gives back from its written form", () => {
    const defaults = defaultConfig() as unknown as Record<string, unknown>;
    for (const spec of OPTIONS) {
      const value = defaults[spec.key];
      if (value === null) continue; // unset
      const written = displayValue(spec, value);
      assert.deepEqual(spec.parse(Array.isArray(written) ? written.join(',') : String(written)), value, `the default of ${spec.flag}`);
    }
  });

  test('mistakes are refused with the file and the key named', () => {
    const cases: Array<[string, RegExp]> = [
      ['prot: 8778\n', /unknown key "prot" \(did you mean "port"\?\)/],
      ['port: [1, 2]\n', /: port: expected a single value, got a list/],
      ['db:\n  url: x\n', /: db: expected a single value, got a mapping/],
      ['port: eighty\n', /: port: port must be an integer from 0 to 65535, got "eighty"/],
      ['sqlite-sync: sometimes\n', /: sqlite-sync: sqlite sync must be one of full, normal, off/],
      ['- port\n', /must be a mapping of option names to values/],
      ['port: 1\n  host: x\n', /not valid YAML \(line 1, column 7: "port: 1"\): .*; indent with spaces only/],
      ['cors-allowed-origins: [https://a.example, 5]\n', /: cors-allowed-origins: expected a list of strings, got 5$/],
      ['cors-allowed-origins: https://a.example/path\n', /: cors-allowed-origins: .*got "https:\/\/a\.example\/path" \(did you mean https:\/\/a\.example\?\)/],
    ];
    for (const [text, expected] of cases) {
      const f = file('bad.yaml', text);
      assert.throws(
        () => resolveConfig({ config: f }, {}),
        (err: Error) => {
          assert.match(err.message, expected);
          assert.ok(err.message.startsWith(f), `names the file: ${err.message}`);
          return true;
        },
      );
    }
    assert.throws(() => resolveConfig({ config: path.join(dir, 'none.yaml') }, {}), /cannot read configuration file .*none\.yaml: ENOENT/);
  });

  test('a value YAML reads as a mapping (db: sqlite::memory:) is named with its line and the quotes it needs', async () => {
    const f = file('unquoted.yaml', 'port: 0\ndb: sqlite::memory:\n');
    const refused = await run(['serve', '--config', f]);
    assert.equal(refused.code, 2, refused.stdout);
    assert.equal(
      refused.stderr,
      `allot: ${f}: not valid YAML (line 2, column 5: "db: sqlite::memory:"): Nested mappings are not allowed in compact mappings; quote the value: db: "sqlite::memory:"\n`,
    );
    // the fix as suggested is read as meant
    assert.equal(resolveConfig({ config: file('quoted.yaml', 'port: 0\ndb: "sqlite::memory:"\n') }, {}).config.db, 'sqlite::memory:');
  });

  test('allot config prints each value, its source, and masks secrets; yaml output is a usable file', async () => {
    const f = file('show.yaml', 'db: postgres://allot:s3cret@db.example/allot\nheartbeat-timeout: 90\n');
    const json = await run(['config', '--config', f, '--port', '1234', '-o', 'json'], { ALLOT_LOG_LEVEL: 'warn' });
    assert.equal(json.code, 0, json.stderr);
    const rows = JSON.parse(json.stdout) as Array<{ key: string; value: unknown; source: string }>;
    const row = (k: string) => rows.find((r) => r.key === k)!;
    assert.deepEqual(row('db'), { key: 'db', value: 'postgres://allot:****@db.example/allot', source: `file ${f}` });
    assert.deepEqual(row('port'), { key: 'port', value: 1234, source: 'flag --port' });
    assert.deepEqual(row('log-level'), { key: 'log-level', value: 'warn', source: 'env ALLOT_LOG_LEVEL' });
    assert.deepEqual(row('heartbeat-timeout'), { key: 'heartbeat-timeout', value: 90, source: `file ${f}` });
    assert.deepEqual(row('body-limit'), { key: 'body-limit', value: 1048576, source: 'default' });
    // JSON's own types: a switch is a boolean, not "false"
    assert.deepEqual(row('insecure-noauth'), { key: 'insecure-noauth', value: false, source: 'default' });
    assert.deepEqual(row('enforce-scope'), { key: 'enforce-scope', value: true, source: 'default' });
    assert.equal(rows.length, OPTIONS.length);
    assert.doesNotMatch(json.stdout, /s3cret/);
    // --show-secrets prints them as they are
    const shown = await run(['config', '--config', f, '-o', 'json', '--show-secrets']);
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal((JSON.parse(shown.stdout) as typeof rows).find((r) => r.key === 'db')!.value, 'postgres://allot:s3cret@db.example/allot');

    // passwords node-postgres reads from the query string are masked too
    const query = await run(['config', '-o', 'json', '--db', 'postgres://allot:pw1@db.example/allot?password=qq2&sslmode=require&sslpassword=zz3']);
    assert.equal(query.code, 0, query.stderr);
    assert.doesNotMatch(query.stdout, /pw1|qq2|zz3/);
    assert.match(query.stdout, /allot:\*\*\*\*@db\.example\/allot\?password=\*\*\*\*&sslmode=require&sslpassword=\*\*\*\*/);
    // a database URL no driver takes is refused like any bad value of the file
    const badDb = await run(['config', '--config', file('bad-db.yaml', 'db: mysql://x\n')]);
    assert.equal(badDb.code, 2, badDb.stdout);
    assert.match(badDb.stderr, /bad-db\.yaml.*db.*unsupported database URL "mysql:\/\/x"/s);

    const yaml = await run(['config', '--config', f, '-o', 'yaml']);
    assert.match(yaml.stdout, /^# passwords are masked \(\*\*\*\*\): put them back, or print with --show-secrets$/m);
    const reread = file('reread.yaml', yaml.stdout.replace('allot:****@', 'allot:s3cret@'));
    assert.equal(Object.keys(parseYaml(yaml.stdout) as object).length, OPTIONS.length);
    assert.equal(resolveConfig({ config: reread }, {}).config.heartbeatTimeout, 90_000, 'the printed configuration reads back');
    // with --show-secrets the printed file is the configuration itself
    const whole = await run(['config', '--config', f, '-o', 'yaml', '--show-secrets']);
    assert.doesNotMatch(whole.stdout, /masked/);
    const same = resolveConfig({ config: file('whole.yaml', whole.stdout) }, {});
    assert.equal(same.config.db, 'postgres://allot:s3cret@db.example/allot');
    assert.equal(same.config.insecureNoauth, false);

    const bad = await run(['config', '--config', file('typo.yaml', 'log-levl: debug\n')]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^allot: .*typo\.yaml: unknown key "log-levl" \(did you mean "log-level"\?\)\n$/);
  });

  test('cors-allowed-origins takes browser origins only, kept as browsers write them', async () => {
    // accepted: scheme and host in any case, a default port written out; shown normalised
    const ok = await run(['config', '-o', 'json', '--cors-allowed-origins', 'HTTPS://Dash.Example.com:443, http://b.example:8080,http://[::1]:8080']);
    assert.equal(ok.code, 0, ok.stderr);
    const rows = JSON.parse(ok.stdout) as Array<{ key: string; value: unknown }>;
    assert.deepEqual(rows.find((r) => r.key === 'cors-allowed-origins')?.value, ['https://dash.example.com', 'http://b.example:8080', 'http://[::1]:8080']);

    // refused, from a flag, the environment or the file, with exit code 2 and the reason
    const refused: Array<[string, RegExp]> = [
      [
        'https://a.example/path',
        /must be origins only, with no path \(not even "\/"\), query or user .*got "https:\/\/a\.example\/path" \(did you mean https:\/\/a\.example\?\)/,
      ],
      ['https://a.example/,*', /got "https:\/\/a\.example\/" \(did you mean https:\/\/a\.example\?\)/],
      ['https://a.example?x=1', /did you mean https:\/\/a\.example\?/],
      ['https://user@a.example', /without a user or password .*did you mean https:\/\/a\.example\?/],
      ['https://user:s3cret@a.example', /^(?![\s\S]*s3cret)[\s\S]*did you mean https:\/\/a\.example\?/],
      ['*', /must list the origins allowed \(.*\), got "\*": a wildcard is not offered/],
      ['https://a.example, *', /got "\*": a wildcard is not offered/],
      ['ftp://x', /must be http or https origins .*got "ftp:\/\/x"/],
      ['not an origin', /must be browser origins \(scheme:\/\/host\[:port\], e\.g\. https:\/\/dash\.example\.com\), got "not an origin"/],
      ['null', /must be browser origins .*got "null"/],
    ];
    for (const [value, expected] of refused) {
      const flag = await run(['config', '--cors-allowed-origins', value]);
      assert.equal(flag.code, 2, `${value}: ${flag.stdout}`);
      assert.match(flag.stderr, /^allot: cors allowed origins /);
      assert.match(flag.stderr, expected);
      const env = await run(['config'], { ALLOT_CORS_ALLOWED_ORIGINS: value });
      assert.equal(env.code, 2, `${value}: ${env.stdout}`);
      assert.match(env.stderr, expected);
    }
    const f = file('cors-bad.yaml', 'cors-allowed-origins:\n  - https://a.example\n  - 5\n');
    const listed = await run(['config', '--config', f]);
    assert.equal(listed.code, 2, listed.stdout);
    assert.match(listed.stderr, /cors-bad\.yaml: cors-allowed-origins: expected a list of strings, got 5\n$/);
    const slash = await run([
      'serve',
      '--port',
      '0',
      '--db',
      'sqlite::memory:',
      '--config',
      file('cors-slash.yaml', 'cors-allowed-origins: [https://a.example/]\n'),
    ]);
    assert.equal(slash.code, 2, 'allot serve does not start');
    assert.match(slash.stderr, /cors-slash\.yaml: cors-allowed-origins: .*\(did you mean https:\/\/a\.example\?\)/);
  });

  test('allot serve takes its settings from the file, and refuses a bad one with exit 2', async () => {
    const f = file('serve.yaml', `db: sqlite:${path.join(dir, 'from-file.db')}\nlog-level: info\nmax-candidates: 77\n`);
    const server = await spawnServer(['--config', f]);
    try {
      assert.equal((await request('GET', `${server.url}/healthz`)).status, 200);
      assert.match(server.output(), /from-file\.db/, 'the database named in the file is used');
    } finally {
      assert.equal(await server.stop(), 0);
    }
    const refused = await run(['serve', '--port', '0', '--config', file('serve-bad.yaml', 'max-candidates: 0\n')]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /serve-bad\.yaml: max-candidates: max candidates must be an integer from 1 to 1000000, got "0"/);
  });
});
