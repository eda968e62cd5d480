// The databases every behaviour is tested on. A test file loops over `DIALECTS` and asks for a
// fresh database of its own for each.
import { createTestDatabase } from './postgres.js';

export const DIALECTS = ['sqlite', 'postgres'] as const;
export type TestDialect = (typeof DIALECTS)[number];

/** A fresh, empty database URL of the given dialect. */
export async function freshDatabaseUrl(dialect: TestDialect): Promise<string> {
  if (dialect === 'sqlite') return 'sqlite::memory:';
  const admin = process.env.ALLOT_TEST_PG_ADMIN_URL;
  if (!admin) throw new Error('ALLOT_TEST_PG_ADMIN_URL is not set: run the tests with `npm test`');
  return createTestDatabase(admin);
}
