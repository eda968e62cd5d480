// `npx tsx bench/results/2026-11-30-index-load/pg-run.ts N BASE_TREE NEW_TREE`: a throwaway
// PostgreSQL filled with N providers (bench/lib/fill-candidates.ts), then pg-load.mjs's alternated
// full loads of the two builds (each TREE with a dist/ from `npm run build`); ROUNDS=2 for two rounds.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, startEmbeddedPostgres } from '../../../test/helpers/postgres.js';
import { fillCandidateProviders } from '../../lib/fill-candidates.js';

const [n, base, after] = process.argv.slice(2);
const pg = await startEmbeddedPostgres();
try {
  const url = await createTestDatabase(pg.adminUrl, 'index_load');
  const t0 = performance.now();
  await fillCandidateProviders(url, 'postgres', Number(n));
  console.error(`# fill ${Math.round(performance.now() - t0)} ms`);
  const loads = path.join(path.dirname(fileURLToPath(import.meta.url)), 'pg-load.mjs');
  console.log(execFileSync('node', ['--expose-gc', loads, url, base!, after!], { encoding: 'utf8' }));
} finally {
  await pg.stop();
}
