// A highly available PostgreSQL for `npm run test:ha`, laid out as docs/operations.md tells
// operators to: one etcd member, two PostgreSQL 15 members managed by Patroni with synchronous
// replication, and HAProxy sending every connection to the member Patroni's REST API calls the
// primary. Everything listens on 127.0.0.1 and lives in one temporary directory; nothing is
// installed here (the Debian packages must be present, .ci/run installs them).
// The configuration texts are in layout.ts (docs/operations.md prints them; a test compares).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chownSync, closeSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../helpers/postgres.js';
import { type MemberPorts, PG_BIN, SUPERUSER, etcdArgs, haproxyConfig, patroniYaml } from './layout.js';
import { descendants, signal } from '../helpers/process-tree.js';

/** Debian package → files the test runs from it. */
const PACKAGES: Record<string, string[]> = {
  patroni: ['/usr/bin/patroni', '/usr/bin/patronictl'],
  // Patroni's etcd support: Debian's patroni depends on python3-etcd OR python3-kazoo OR
  // python3-kubernetes …, so on a machine that has one of the others (the OpenStack packages bring
  // them) it comes without it, and the members cannot reach etcd
  'python3-etcd': ['/usr/lib/python3/dist-packages/etcd/__init__.py'],
  'etcd-server': ['/usr/bin/etcd'],
  haproxy: ['/usr/sbin/haproxy'],
  'postgresql-15': ['postgres', 'initdb', 'pg_ctl', 'pg_rewind', 'pg_basebackup', 'pg_controldata'].map((b) => `${PG_BIN}/${b}`),
};

/** The packages whose programs are missing, with what is missing. Empty when all are there. */
export function missingPackages(): string[] {
  return Object.entries(PACKAGES)
    .map(([pkg, files]) => [pkg, files.filter((f) => !existsSync(f))] as const)
    .filter(([, missing]) => missing.length > 0)
    .map(([pkg, missing]) => `${pkg} (${missing.join(', ')})`);
}

export interface Member extends MemberPorts {
  configFile: string;
  dataDir: string;
}

/** One member as Patroni's GET /cluster lists it. */
export interface MemberStatus {
  name: string;
  role: string;
  state: string;
  timeline?: number;
  lag?: number | string;
}

export interface PatroniCluster {
  dir: string;
  members: Member[];
  haproxyPort: number;
  /** a URL through HAProxy (always the primary) */
  url(user: { username: string; password: string }, database: string): string;
  /** the members as Patroni sees them (null when no REST API answers) */
  status(): Promise<MemberStatus[] | null>;
  /** the member holding the leader lock, by Patroni's REST API */
  primary(): Promise<Member | null>;
  /**
   * `leader` (any member when not given) holds the lock and runs, the other member is its
   * synchronous standby, streaming, no lag; bounded. (Right after a fault Patroni still reports
   * the old state for a moment: name the leader you expect.)
   */
  waitHealthy(timeoutMs: number, leader?: string): Promise<MemberStatus[]>;
  /** SIGKILL the postmaster of the current primary; resolves to the member and the pid */
  killPrimaryPostmaster(): Promise<{ member: Member; pid: number }>;
  /** `patronictl switchover --force` from the current primary to the other member */
  switchover(): Promise<{ from: string; to: string; output: string }>;
  /** the tail of every log, for failure messages */
  logs(lines?: number): string;
  /** copy every log into `dir` (kept after destroy, for a failed run) */
  saveLogs(dir: string): void;
  /** stop everything (bounded) and delete the directory */
  destroy(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** As root the cluster runs as `postgres` (PostgreSQL refuses root); otherwise as ourselves. */
function runAs(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const uid = id('-u');
  const gid = id('-g');
  if (!Number.isInteger(uid) || !Number.isInteger(gid) || uid <= 0)
    throw new Error('running as root needs a `postgres` user (the postgresql-15 package creates it)');
  return { uid, gid };
}

async function getJson(url: string, timeoutMs = 1_000): Promise<{ status: number; body: any } | null> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    let body: unknown = null;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body };
  } catch {
    return null;
  }
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | null | undefined | false>, explain: () => string = () => ''): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms\n${explain()}`);
    await sleep(200);
  }
}

/** Run a command to its end (killed after `timeoutMs`), without blocking the event loop. */
function runCommand(command: string, args: string[], timeoutMs: number, env: NodeJS.ProcessEnv): Promise<{ code: number | string; output: string }> {
  return new Promise((resolve) => {
    const proc = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    proc.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    proc.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => proc.pid && signal(-proc.pid, 'SIGKILL'), timeoutMs);
    proc.on('error', (err) => {
      clearTimeout(timer);
      resolve({ code: err.message, output });
    });
    proc.on('close', (code, sig) => {
      clearTimeout(timer);
      resolve({ code: code ?? String(sig), output });
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function startCluster(): Promise<PatroniCluster> {
  const owner = runAs();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'allot-ha-'));
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const etcdPort = await freePort();
  const etcdPeerPort = await freePort();
  const haproxyPort = await freePort();
  const members: Member[] = [];
  for (const name of ['pg1', 'pg2']) {
    const ports = { name, pgPort: await freePort(), restPort: await freePort() };
    members.push({ ...ports, configFile: path.join(dir, `${name}.yml`), dataDir: path.join(dir, name) });
  }

  const children: Array<{ name: string; proc: ChildProcess; log: string }> = [];
  /** every postmaster pid seen, so that cleanup finds those Patroni detached from itself */
  const postmasters = new Set<number>();
  const launch = (name: string, command: string, args: string[]) => {
    const log = path.join(dir, `${name}.log`);
    const fd = openSync(log, 'a');
    // detached: a process group of its own, so that cleanup can signal it as a whole
    const proc = spawn(command, args, { cwd: dir, detached: true, stdio: ['ignore', fd, fd], ...(owner ?? {}), env: { ...process.env, HOME: dir } });
    closeSync(fd);
    proc.on('error', () => {});
    children.push({ name, proc, log });
    return proc;
  };
  const write = (file: string, text: string) => {
    writeFileSync(file, text, { mode: 0o600 });
    if (owner) chownSync(file, owner.uid, owner.gid);
  };
  const tail = (file: string, lines: number) => {
    try {
      return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  };
  const logs = (lines = 40) => children.map((c) => `--- ${c.name} (${c.log}) ---\n${tail(c.log, lines)}`).join('\n');
  const postmasterPid = (m: Member): number | null => {
    try {
      const pid = Number(readFileSync(path.join(m.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (Number.isInteger(pid) && pid > 0) {
        postmasters.add(pid);
        return pid;
      }
    } catch {
      /* not running */
    }
    return null;
  };

  let destroyed = false;
  const killEverything = () => {
    for (const m of members) postmasterPid(m);
    for (const c of children) if (c.proc.pid) signal(-c.proc.pid, 'SIGKILL');
    for (const pid of postmasters) {
      if (!alive(pid)) continue;
      const tree = descendants(pid);
      signal(pid, 'SIGKILL');
      for (const child of tree) signal(child, 'SIGKILL');
    }
  };
  // A test runner interrupted mid-run must not leave a cluster behind.
  const onSignal = (sig: NodeJS.Signals) => {
    killEverything();
    rmSync(dir, { recursive: true, force: true });
    process.exit(sig === 'SIGINT' ? 130 : 143);
  };
  const onExit = () => killEverything();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('exit', onExit);

  const status = async (): Promise<MemberStatus[] | null> => {
    for (const m of members) {
      const res = await getJson(`http://127.0.0.1:${m.restPort}/cluster`);
      if (res?.status === 200 && Array.isArray(res.body?.members)) return res.body.members as MemberStatus[];
    }
    return null;
  };
  const primary = async (): Promise<Member | null> => {
    for (const m of members) if ((await getJson(`http://127.0.0.1:${m.restPort}/primary`))?.status === 200) return m;
    return null;
  };
  const healthy = (s: MemberStatus[] | null) => {
    if (!s || s.length !== members.length) return false;
    const leader = s.find((m) => m.role === 'leader' && m.state === 'running');
    const standby = s.find((m) => m.role === 'sync_standby' && (m.state === 'running' || m.state === 'streaming'));
    return !!leader && !!standby && standby.lag === 0 && standby.timeline === leader.timeline;
  };
  // Healthy as Patroni itself judges a switchover candidate: the leader answers /primary, the
  // other member /sync (a synchronous standby in the DCS, streaming), with no lag.
  const waitHealthy = (timeoutMs: number, expected?: string) =>
    until(
      `a healthy cluster (leader ${expected ?? ''} + streaming synchronous standby)`,
      timeoutMs,
      async () => {
        const s = await status();
        if (!healthy(s)) return null;
        const leader = members.find((m) => m.name === s!.find((x) => x.role === 'leader')!.name)!;
        if (expected && leader.name !== expected) return null;
        const standby = members.find((m) => m !== leader)!;
        if ((await getJson(`http://127.0.0.1:${leader.restPort}/primary`))?.status !== 200) return null;
        if ((await getJson(`http://127.0.0.1:${standby.restPort}/sync`))?.status !== 200) return null;
        return s;
      },
      logs,
    );

  const cluster: PatroniCluster = {
    dir,
    members,
    haproxyPort,
    url: (user, database) => `postgres://${user.username}:${encodeURIComponent(user.password)}@127.0.0.1:${haproxyPort}/${database}`,
    status,
    primary,
    waitHealthy,
    killPrimaryPostmaster: async () => {
      const member = await primary();
      if (!member) throw new Error(`no primary to kill\n${logs()}`);
      const pid = postmasterPid(member);
      if (!pid) throw new Error(`no postmaster.pid in ${member.dataDir}`);
      process.kill(pid, 'SIGKILL');
      return { member, pid };
    },
    switchover: async () => {
      const from = await primary();
      if (!from) throw new Error(`no primary to switch over from\n${logs()}`);
      const to = members.find((m) => m !== from)!;
      // Not spawnSync: the load and the pollers must go on while patronictl waits for the result.
      const run = await runCommand('patronictl', ['-c', from.configFile, 'switchover', '--leader', from.name, '--candidate', to.name, '--force'], 60_000, {
        ...process.env,
        HOME: dir,
      });
      const output = run.output;
      // patronictl exits 0 when Patroni refuses or fails the switchover; its output says which.
      if (run.code !== 0 || !/Successfully switched over/.test(output)) throw new Error(`patronictl switchover did not succeed (${run.code}):\n${output}`);
      return { from: from.name, to: to.name, output };
    },
    logs,
    saveLogs: (target) => {
      mkdirSync(target, { recursive: true });
      for (const c of children) if (existsSync(c.log)) copyFileSync(c.log, path.join(target, path.basename(c.log)));
      for (const m of members) if (existsSync(m.configFile)) copyFileSync(m.configFile, path.join(target, path.basename(m.configFile)));
    },
    destroy: async () => {
      if (destroyed) return;
      destroyed = true;
      for (const m of members) postmasterPid(m);
      // Patroni stops its PostgreSQL on SIGTERM (a fast shutdown); give it a few seconds.
      for (const c of children) if (c.name.startsWith('patroni') && c.proc.exitCode === null && c.proc.pid) signal(c.proc.pid, 'SIGTERM');
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline && [...postmasters].some(alive)) await sleep(100);
      killEverything();
      const exited = Date.now() + 5_000;
      while (Date.now() < exited && (children.some((c) => c.proc.exitCode === null && c.proc.signalCode === null) || [...postmasters].some(alive)))
        await sleep(50);
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
      process.removeListener('exit', onExit);
      rmSync(dir, { recursive: true, force: true });
    },
  };

  try {
    launch('etcd', '/usr/bin/etcd', etcdArgs({ dir, clientPort: etcdPort, peerPort: etcdPeerPort }));
    await until('etcd answering', 20_000, async () => (await getJson(`http://127.0.0.1:${etcdPort}/health`))?.body?.health === 'true', logs);
    for (const m of members) {
      write(m.configFile, patroniYaml({ dir, member: m, etcdPort }));
      launch(`patroni-${m.name}`, '/usr/bin/patroni', [m.configFile]);
    }
    const haproxyFile = path.join(dir, 'haproxy.cfg');
    write(haproxyFile, haproxyConfig({ port: haproxyPort, members }));
    launch('haproxy', '/usr/sbin/haproxy', ['-f', haproxyFile, '-db']);
    await waitHealthy(90_000);
    // Through HAProxy: the primary answers and takes writes.
    await until(
      'a writable primary behind HAProxy',
      20_000,
      async () => {
        const client = new pg.Client({ connectionString: cluster.url(SUPERUSER, 'postgres'), connectionTimeoutMillis: 1_000 });
        try {
          await client.connect();
          const r = await client.query('select pg_is_in_recovery() as standby');
          return r.rows[0]?.standby === false;
        } finally {
          await client.end().catch(() => {});
        }
      },
      logs,
    );
    return cluster;
  } catch (err) {
    await cluster.destroy();
    throw err;
  }
}

/** Run statements as the superuser through HAProxy (each on its own, outside a transaction). */
export async function asSuperuser(cluster: PatroniCluster, database: string, statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: cluster.url(SUPERUSER, database), connectionTimeoutMillis: 2_000, query_timeout: 10_000 });
  await client.connect();
  try {
    for (const s of statements) await client.query(s);
  } finally {
    await client.end().catch(() => {});
  }
}
