// `allot sizing` (the built dist/, as a user runs it): golden inputs give the outputs the
// coefficient table makes of them, worked out here by hand from COEFFICIENTS; a limit past
// --utilization says one primary is not enough; bad input is one line and exit code 2. It
// contacts no server, so it runs once, not per database.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { COEFFICIENTS } from '../../src/cli/sizing-model.js';

const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/cli/main.js');

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(process.execPath, [cli, 'sizing', ...args], (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

async function sizing(...args: string[]) {
  const r = await run([...args, '--json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const pg = (name: keyof typeof COEFFICIENTS) => COEFFICIENTS[name].postgres!;
const lite = (name: keyof typeof COEFFICIENTS) => COEFFICIENTS[name].sqlite!;
const MB = 1024 * 1024;

describe('allot sizing', () => {
  test('PostgreSQL: cores, processes, memory, connections and limits are the coefficients times the load', async () => {
    const out = await sizing(
      ...['--providers', '100000', '--nodes', '5000', '--values', '200000', '--consumers', '500000'],
      ...['--claims-per-s', '200', '--candidates-per-s', '400', '--registrations-per-s', '30', '--allocations-per-s', '20'],
      ...['--id-allocations-per-s', '50', '--reservations-per-s', '10'],
    );
    const allotCpu =
      (200 * pg('allot_ms_per_claim') +
        400 * pg('allot_ms_per_candidates') +
        30 * pg('allot_ms_per_registration') +
        20 * pg('allot_ms_per_baremetal_allocation') +
        50 * pg('allot_ms_per_identifier_allocation') +
        10 * pg('allot_ms_per_reservation')) /
      1000 /
      0.5;
    const pgCpu =
      (200 * pg('postgres_ms_per_claim') +
        400 * pg('postgres_ms_per_candidates') +
        30 * pg('postgres_ms_per_registration') +
        20 * pg('postgres_ms_per_baremetal_allocation') +
        50 * pg('postgres_ms_per_identifier_allocation') +
        10 * pg('postgres_ms_per_reservation')) /
      1000 /
      0.5;
    assert.equal(out.db, 'postgres');
    assert.equal(out.allot_cores, Math.round(allotCpu * 100) / 100);
    assert.equal(out.postgres_cores, Math.round(pgCpu * 100) / 100);
    assert.equal(out.allot_processes, Math.max(2, Math.ceil(allotCpu)));
    assert.equal(out.memory_per_allot_process_mb, Math.ceil(pg('allot_base_mb') + (100000 * pg('allot_bytes_per_provider')) / MB));
    const dbMb = Math.ceil(
      (100000 * pg('db_bytes_per_provider') +
        500000 * pg('db_bytes_per_consumer') +
        5000 * pg('db_bytes_per_node') +
        200000 * pg('db_bytes_per_identifier_value')) /
        MB,
    );
    assert.equal(out.database_size_mb, dbMb);
    assert.equal(out.shared_buffers_mb, Math.max(128, Math.ceil((dbMb * 1.25) / 128) * 128));
    assert.equal(out.max_connections, out.allot_processes * 10 + 10, "allot's default --pool-size, 10 spare");
    assert.equal(out.postgres_memory_mb, out.shared_buffers_mb + out.max_connections * pg('postgres_mb_per_connection'));
    const commits = 200 + 30 + 20 + 50 + 10;
    assert.deepEqual(out.limits[0], {
      what: 'commits/s on the primary',
      load: commits,
      capacity: pg('durable_commits_per_s'),
      share: Math.round((commits / pg('durable_commits_per_s')) * 100) / 100,
      ok: commits / pg('durable_commits_per_s') <= 0.5,
    });
    assert.equal(out.limits[1].load, 10, 'every reservation on one provider');
    assert.equal(out.limits[2].load, 60, 'identifier allocations and reservations from one pool');
    assert.equal(
      out.one_primary_enough,
      out.limits.every((l: { ok: boolean }) => l.ok),
    );
  });

  test('SQLite: one process, no PostgreSQL, and its CPU is a limit of its own', async () => {
    const out = await sizing('--db', 'sqlite', '--providers', '20000', '--claims-per-s', '100', '--candidates-per-s', '100');
    const cores = (100 * lite('allot_ms_per_claim') + 100 * lite('allot_ms_per_candidates')) / 1000 / 0.5;
    assert.equal(out.allot_processes, 1);
    assert.equal(out.allot_cores, Math.round(cores * 100) / 100);
    assert.equal(out.postgres_cores, null);
    assert.equal(out.shared_buffers_mb, null);
    assert.equal(out.max_connections, null);
    assert.equal(out.database_size_mb, Math.ceil((20000 * lite('db_bytes_per_provider')) / MB));
    const own = out.limits.find((l: { what: string }) => l.what.startsWith('CPU of the one SQLite process'));
    assert.equal(own.load, Math.round(cores * 0.5 * 100) / 100);
    assert.equal(own.capacity, 1);
  });

  test('a load past a measured limit: one primary is not enough, and the limit says which', async () => {
    const rate = pg('durable_commits_per_s'); // 100 % of the commit rate, past 0.5
    const out = await sizing('--claims-per-s', String(rate), '--reservations-per-s', String(pg('one_provider_reservations_per_s')), '--shared-providers', '2');
    assert.equal(out.one_primary_enough, false);
    const commits = out.limits.find((l: { what: string }) => l.what === 'commits/s on the primary');
    assert.equal(commits.ok, false);
    const provider = out.limits.find((l: { what: string }) => l.what === 'reservations/s on one provider');
    assert.equal(provider.load, pg('one_provider_reservations_per_s') / 2, 'spread over two providers');
    assert.equal(provider.ok, true);
    // the operator's own primary: a faster commit rate moves the line
    const faster = await sizing('--claims-per-s', String(rate), '--commit-rate', String(rate * 4));
    assert.equal(faster.limits[0].ok, true);
    assert.equal(faster.limits[0].share, 0.25);
    // and --utilization is the line
    const tight = await sizing('--claims-per-s', String(rate * 0.2), '--utilization', '0.1');
    assert.equal(tight.limits[0].ok, false);
  });

  test('--pool-size sets max_connections; --coefficients prints the one table with its sources', async () => {
    const out = await sizing('--claims-per-s', '10', '--pool-size', '25');
    assert.equal(out.max_connections, 2 * 25 + 10);
    const table = await sizing('--coefficients');
    assert.deepEqual(table, JSON.parse(JSON.stringify(COEFFICIENTS)));
    for (const [name, c] of Object.entries(COEFFICIENTS)) assert.ok(c.source.length > 0, `${name} names its measurement`);
    const text = await run(['--coefficients', '-o', 'table']);
    assert.equal(text.code, 0);
    assert.match(text.stdout, /^name\s+sqlite\s+postgres\s+unit\s+source$/m);
    assert.match(text.stdout, /bench\/results\/2026-11-29-sizing\//);
  });

  test('a table for people', async () => {
    const r = await run(['--providers', '1000', '--claims-per-s', '10', '-o', 'table']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^allot processes\s+2\s/m);
    assert.match(r.stdout, /^one primary enough\s+yes\s/m);
    assert.match(r.stdout, /^limits:$/m);
  });

  for (const [args, message] of [
    [['--providers', 'many'], /option '--providers <n>' argument 'many' is invalid/],
    [['--providers', '-5'], /option '--providers <n>' argument '-5' is invalid/],
    [['--claims-per-s', 'fast'], /option '--claims-per-s <r>' argument 'fast' is invalid. expected a number/],
    [['--utilization', '0'], /option '--utilization <share>' argument '0' is invalid/],
    [['--utilization', '1.5'], /option '--utilization <share>' argument '1.5' is invalid/],
    [['--db', 'oracle'], /argument 'oracle' is invalid. Allowed choices are postgres, sqlite/],
    [['--pools', '0'], /option '--pools <n>' argument '0' is invalid/],
    [['--nodes'], /option '--nodes <n>' argument missing/],
    [['--frobnicate'], /unknown option '--frobnicate'/],
  ] as Array<[string[], RegExp]>) {
    test(`refuses ${args.join(' ')}: one line, exit 2, nothing on stdout`, async () => {
      const r = await run(args);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.equal(r.stdout, '');
    });
  }
});
