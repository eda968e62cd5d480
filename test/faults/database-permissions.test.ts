// A database allot may not write does not heal by waiting: `allot serve` exits at once with a
// message naming what is wrong (the file, the directory, the role), the permission and the fix,
// instead of listening with /readyz at 503 for ever; and it leaves nothing behind (SQLite: no
// -wal or -shm it created). An unreachable database is still waited for (test/faults/postgres.test.ts,
// connect-timeout.test.ts). File permissions mean nothing to root, so as root the server runs as
// the user `nobody`, who owns the test's files.
import assert from 'node:assert/strict';
import { type SpawnOptions, spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';

const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/cli/main.js');
const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;
/** who runs allot here: root's files would all be writable */
const runner: Pick<SpawnOptions, 'uid' | 'gid'> = asRoot ? { uid: NOBODY, gid: NOBODY } : {};

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run the CLI to its exit (bounded: a process still running after a minute is killed and fails the test). */
function runCli(args: string[]): Promise<Exit> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ALLOT_')));
  const child = spawn(process.execPath, [cli, ...args], { ...runner, env: { ...env, ALLOT_LOG_FORMAT: 'json' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`allot ${args[0]} did not exit within 60 s:\n${stdout}${stderr}`));
    }, 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const serve = (db: string) => runCli(['serve', '--port', '0', '--db', db]);

for (const dialect of DIALECTS) {
  describe(`a database allot may not write (${dialect})`, () => {
    if (dialect === 'sqlite') {
      let dir: string;
      let file: string;
      /** a directory of the runner's with an allot database in it */
      before(async () => {
        dir = mkdtempSync(path.join(os.tmpdir(), 'allot-permissions-'));
        if (asRoot) chownSync(dir, NOBODY, NOBODY);
        file = path.join(dir, 'allot.db');
        const migrated = await runCli(['migrate', '--db', `sqlite:${file}`]);
        assert.equal(migrated.code, 0, migrated.stderr);
        assert.deepEqual(readdirSync(dir), ['allot.db'], 'a clean close leaves no -wal or -shm');
      });
      after(() => rmSync(dir, { recursive: true, force: true }));

      test('a read-only database file: the start exits naming the file and the fix, and creates nothing', async () => {
        chmodSync(file, 0o444);
        try {
          for (const command of [['serve', '--port', '0'], ['migrate']]) {
            const refused = await runCli([...command, '--db', `sqlite:${file}`]);
            assert.equal(refused.code, 1, `${command[0]}: ${refused.stdout}${refused.stderr}`);
            assert.match(refused.stderr, new RegExp(`cannot open the SQLite database ${file}: ${file} is not readable and writable by .*mode 0444`));
            assert.match(refused.stderr, /give that user read and write permission on the file/);
            assert.doesNotMatch(refused.stderr, /allot\.db-wal|readonly database/);
            assert.deepEqual(readdirSync(dir), ['allot.db'], `${command[0]} left no -wal or -shm behind`);
          }
        } finally {
          chmodSync(file, 0o644);
        }
      });

      test('a -wal or -shm file left read-only by someone else is named, and once fixed allot starts', async () => {
        for (const companion of [`${file}-wal`, `${file}-shm`]) {
          writeFileSync(companion, '');
          if (asRoot) chownSync(companion, NOBODY, NOBODY);
          chmodSync(companion, 0o444);
          const refused = await serve(`sqlite:${file}`);
          assert.equal(refused.code, 1, refused.stdout + refused.stderr);
          assert.match(refused.stderr, new RegExp(`${companion} is not readable and writable by .*mode 0444, left so by an earlier run or another user`));
          assert.doesNotMatch(refused.stderr, /readonly database/);
          chmodSync(companion, 0o644);
          const fixed = await runCli(['migrate', '--db', `sqlite:${file}`]);
          assert.equal(fixed.code, 0, fixed.stderr);
          rmSync(companion, { force: true });
        }
      });

      test('a read-only directory: the start exits naming the directory, since SQLite must create -wal and -shm in it', async () => {
        chmodSync(dir, 0o555);
        try {
          const refused = await serve(`sqlite:${file}`);
          assert.equal(refused.code, 1, refused.stdout + refused.stderr);
          assert.match(
            refused.stderr,
            new RegExp(`the directory ${dir} is not writable by .*mode 0555, and SQLite must create allot\\.db-wal, allot\\.db-shm in it`),
          );
        } finally {
          chmodSync(dir, 0o755);
        }
        assert.deepEqual(readdirSync(dir), ['allot.db']);
      });

      test('a database in a directory that does not exist names the path', async () => {
        const missing = path.join(dir, 'no', 'such');
        const refused = await serve(`sqlite:${path.join(missing, 'allot.db')}`);
        assert.equal(refused.code, 1, refused.stdout + refused.stderr);
        assert.match(refused.stderr, new RegExp(`the directory ${missing} does not exist: create it \\(mkdir -p ${missing}\\)`));
      });

      test('a database below a file, where a directory should be, names the file in the way (was: a bare ENOTDIR)', async () => {
        const inTheWay = path.join(dir, 'allot.db');
        const refused = await serve(`sqlite:${path.join(inTheWay, 'sub', 'allot.db')}`);
        assert.equal(refused.code, 1, refused.stdout + refused.stderr);
        assert.match(
          refused.stderr,
          new RegExp(`the directory ${inTheWay}/sub cannot exist: ${inTheWay} is a file, not a directory; name a file in another directory`),
        );
        assert.doesNotMatch(refused.stderr, /ENOTDIR/);
      });
    } else {
      let url: URL;
      let admin: pg.Client;
      const role = `allot_noddl_${process.pid}`;
      before(async () => {
        url = new URL(await freshDatabaseUrl('postgres'));
        admin = new pg.Client({ connectionString: process.env.ALLOT_TEST_PG_ADMIN_URL });
        await admin.connect();
        await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'secret-pw'`);
        url.username = role;
        url.password = 'secret-pw';
      });
      after(async () => {
        await admin.query(`DROP DATABASE IF EXISTS ${url.pathname.slice(1)} WITH (FORCE)`);
        await admin.query(`DROP ROLE IF EXISTS ${role}`);
        await admin.end();
      });

      test('a role that may connect but not create tables: the start exits naming the database and the grant it needs', async () => {
        const refused = await serve(url.toString());
        assert.equal(refused.code, 1, refused.stdout + refused.stderr);
        const masked = url.toString().replace(':secret-pw@', ':****@');
        assert.ok(refused.stderr.includes(`allot: cannot start: ${masked}: permission denied for schema public`), refused.stderr);
        assert.match(refused.stderr, /GRANT CREATE ON SCHEMA public TO it/);
        assert.doesNotMatch(refused.stdout + refused.stderr, /secret-pw/);

        // once granted, the same role migrates
        const adminOfDb = new URL(process.env.ALLOT_TEST_PG_ADMIN_URL!);
        adminOfDb.pathname = url.pathname;
        const owner = new pg.Client({ connectionString: adminOfDb.toString() });
        await owner.connect();
        await owner.query(`GRANT CREATE ON SCHEMA public TO ${role}`);
        await owner.end();
        const granted = await runCli(['migrate', '--db', url.toString()]);
        assert.equal(granted.code, 0, granted.stderr);
      });
    }
  });
}
