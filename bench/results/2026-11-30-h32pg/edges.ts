// `npx tsx bench/results/2026-11-30-h32pg/edges.ts BASE AFTER`: full loads of 0, 1, one chunk, two, two and one, three and one
// providers on both databases (PostgreSQL at 127.0.0.1:5499), the two builds' indexes compared by compare.mjs
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { migrate } from '../../../src/db/migrate.js';
import { openDatabase } from '../../../src/db/open.js';
import { fillCandidateProviders } from '../../lib/fill-candidates.js';
const [base, after] = process.argv.slice(2);
for (const n of [0, 1, 10_000, 20_000, 20_001, 30_001]) {
  for (const dialect of ['postgres', 'sqlite'] as const) {
    let url: string;
    if (dialect === 'postgres') {
      const c = new pg.Client('postgres://postgres@127.0.0.1:5499/postgres');
      await c.connect();
      await c.query(`drop database if exists h32pg_e${n}`);
      await c.query(`create database h32pg_e${n}`);
      await c.end();
      url = `postgres://postgres@127.0.0.1:5499/h32pg_e${n}`;
    } else url = `sqlite:/tmp/h32pg-e${n}.db`;
    if (n > 0) await fillCandidateProviders(url, dialect, n);
    else { const db = await openDatabase(url); await migrate(db); await db.close(); }
    const out = execFileSync('node', ['bench/results/2026-11-30-index-load/compare.mjs', base!, after!, url], { encoding: 'utf8' });
    console.log(n, dialect, out.trim());
  }
}
