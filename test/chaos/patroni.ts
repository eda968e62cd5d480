// The chaos run's database with --patroni: two PostgreSQL 15 members managed by Patroni with
// synchronous replication (`synchronous_mode: true`: a commit is acknowledged once the standby has
// it, so an acknowledged write survives a failover) and one etcd, each in a network namespace of
// its own, and an HAProxy beside every client of the database — each allot process and the test's
// clients — in that one's namespace, sending connections to the member whose Patroni answers 200
// to GET /primary. The connections the members see come from the client's own address, so the
// allocation change log (allocation-changes.ts) still names the writing process, and a partition
// of a process from the database cuts its HAProxy off from both members.
//
// Faults: freeze and kill act on the current primary's PostgreSQL (Patroni restarts a killed one
// while it holds the leader lock); a failover either switches over (`patronictl switchover`) or
// crashes the primary's machine — its Patroni and its PostgreSQL, SIGKILL — until the standby takes
// the lock over, then starts its Patroni again (it rejoins as a standby, rewound).
//
// The layout is the HA test's (test/helpers/patroni-layout.ts), with the namespaces' addresses.
import { type ChildProcess, spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { PG_BIN, haproxyConfig, patroniYaml } from '../helpers/patroni-layout.js';
import { descendants, signal } from '../helpers/process-tree.js';
import type { Machine } from './network.js';
import { launch } from './processes.js';

const SCOPE = 'allot-chaos';
/** the port of every sidecar HAProxy, on each client's loopback */
const PROXY_PORT = 5000;
const REST_PORT = 8008;
const PG_PORT = 5432;
const ETCD_PORT = 2379;
/** How long a fault waits for the pair to have a primary (and a synchronous standby) before it counts as not injected. */
const SETTLE_MS = 30_000;

/** Debian packages → what the run needs of them. */
const PACKAGES: Record<string, string> = {
  patroni: '/usr/bin/patroni',
  'python3-etcd': '/usr/lib/python3/dist-packages/etcd/__init__.py',
  'etcd-server': '/usr/bin/etcd',
  haproxy: '/usr/sbin/haproxy',
  'postgresql-15': `${PG_BIN}/postgres`,
};

export function missingPatroniPackages(): string[] {
  return Object.entries(PACKAGES)
    .filter(([, file]) => spawnSync('test', ['-e', file]).status !== 0)
    .map(([pkg]) => pkg);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return { uid: id('-u'), gid: id('-g') };
}

async function getStatus(url: string): Promise<number | null> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    await res.text();
    return res.status;
  } catch {
    return null;
  }
}

/** A member's Patroni configuration (test/helpers/patroni-layout.ts) in its namespace: trust on the run's subnet, no fsync. */
function memberYaml(dir: string, member: Machine, etcd: Machine, subnet: string): string {
  return patroniYaml({
    scope: SCOPE,
    name: member.name,
    rest: `${member.ip}:${REST_PORT}`,
    postgres: `${member.ip}:${PG_PORT}`,
    etcd: `${etcd.ip}:${ETCD_PORT}`,
    dir,
    socketDir: `${dir}/${member.name}-run`,
    maxConnections: 300,
    parameters: { fsync: "'off'" },
    initdb: ['auth-local: trust', 'auth-host: trust'],
    hba: [`host replication all ${subnet} trust`, `host all all ${subnet} trust`],
    superuser: { username: 'postgres', password: 'chaos' },
    passwords: { replication: 'chaos', rewind: 'chaos' },
  });
}

/** The HAProxy beside each client of the database, on its loopback. */
const proxyConfig = (members: Machine[]) =>
  haproxyConfig({ bind: `127.0.0.1:${PROXY_PORT}`, members: members.map((m) => ({ name: m.name, postgres: `${m.ip}:${PG_PORT}`, restPort: REST_PORT })) });

export class ChaosPatroni {
  private readonly patronis = new Map<string, ChildProcess>();
  private readonly others: ChildProcess[] = [];
  /** the processes a freeze stopped (the primary may change meanwhile: these are resumed) */
  private frozen: number[] = [];
  readonly logs: string[] = [];
  started = false;

  constructor(
    readonly dir: string,
    readonly members: Machine[],
    readonly etcd: Machine,
    /** the machines that reach the database (through their own HAProxy) */
    readonly clients: Machine[],
  ) {}

  get describe(): string {
    return `Patroni members at ${this.members.map((m) => m.ip).join(' and ')} (etcd at ${this.etcd.ip}), reached through HAProxy on each client's 127.0.0.1:${PROXY_PORT}`;
  }

  /** Through the HAProxy of the machine it is used on: every client has one on 127.0.0.1. */
  url(database: string): string {
    return `postgres://postgres@127.0.0.1:${PROXY_PORT}/${database}`;
  }

  private log(name: string): string {
    const file = path.join(this.dir, `${name}.log`);
    if (!this.logs.includes(file)) this.logs.push(file);
    return file;
  }

  async init(): Promise<void> {
    const owner = postgresUser();
    mkdirSync(this.dir, { recursive: true });
    chownSync(this.dir, owner.uid, owner.gid);
    const subnet = `${this.etcd.ip.replace(/\.\d+$/, '.0')}/24`;
    for (const m of this.members) {
      // each member's socket in a directory of its own: both listen on the same port
      mkdirSync(path.join(this.dir, `${m.name}-run`));
      chownSync(path.join(this.dir, `${m.name}-run`), owner.uid, owner.gid);
      const file = path.join(this.dir, `${m.name}.yml`);
      writeFileSync(file, memberYaml(this.dir, m, this.etcd, subnet), { mode: 0o600 });
      chownSync(file, owner.uid, owner.gid);
    }
    writeFileSync(path.join(this.dir, 'haproxy.cfg'), proxyConfig(this.members));
  }

  /** First call: etcd, both members, every HAProxy, until a writable primary with its synchronous standby. Later: until a writable primary. */
  async start(): Promise<void> {
    if (!this.started) {
      this.started = true;
      this.others.push(
        launch(
          this.etcd,
          [
            '/usr/bin/etcd',
            '--name',
            'etcd1',
            '--data-dir',
            path.join(this.dir, 'etcd'),
            '--listen-client-urls',
            `http://${this.etcd.ip}:${ETCD_PORT}`,
            '--advertise-client-urls',
            `http://${this.etcd.ip}:${ETCD_PORT}`,
            '--listen-peer-urls',
            'http://127.0.0.1:2380',
            '--initial-advertise-peer-urls',
            'http://127.0.0.1:2380',
            '--initial-cluster',
            'etcd1=http://127.0.0.1:2380',
          ],
          this.log('etcd'),
        ),
      );
      await this.until('etcd answering', 30_000, async () => (await getStatus(`http://${this.etcd.ip}:${ETCD_PORT}/health`)) === 200);
      for (const m of this.members) this.startMember(m);
      for (const c of this.clients)
        this.others.push(launch(c, ['/usr/sbin/haproxy', '-f', path.join(this.dir, 'haproxy.cfg'), '-db'], this.log(`haproxy-${c.name}`)));
      await this.until('a primary with a synchronous standby', 120_000, async () => (await this.healthy()) !== null);
    }
    await this.until('a writable primary behind HAProxy', 90_000, () => this.writable());
  }

  private startMember(m: Machine): void {
    const child = launch(
      m,
      ['setpriv', '--reuid=postgres', '--regid=postgres', '--init-groups', '/usr/bin/patroni', path.join(this.dir, `${m.name}.yml`)],
      this.log(m.name),
      {
        ...process.env,
        HOME: this.dir,
      },
    );
    this.patronis.set(m.name, child);
  }

  private async until(what: string, ms: number, probe: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await probe().catch(() => false))) {
      if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`);
      await sleep(250);
    }
  }

  /** The leader and its synchronous standby, when both are there (by Patroni's REST API). */
  async healthy(): Promise<{ primary: Machine; standby: Machine } | null> {
    const primary = await this.primary();
    if (!primary) return null;
    const standby = this.members.find((m) => m !== primary)!;
    return (await getStatus(`http://${standby.ip}:${REST_PORT}/sync`)) === 200 ? { primary, standby } : null;
  }

  /**
   * What `look` finds once the pair has settled, waiting up to SETTLE_MS: a fault scheduled soon
   * after a failover or a crash finds the old primary still rejoining as a standby (seen in a
   * 10-minute run at load 15: three failovers and a kill found no primary or no synchronous
   * standby and were not injected). null when it did not settle in time.
   */
  private async settled<T>(look: () => Promise<T | null>): Promise<T | null> {
    const until = Date.now() + SETTLE_MS;
    for (;;) {
      const found = await look();
      if (found || Date.now() >= until) return found;
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  async primary(): Promise<Machine | null> {
    for (const m of this.members) if ((await getStatus(`http://${m.ip}:${REST_PORT}/primary`)) === 200) return m;
    return null;
  }

  private async writable(): Promise<boolean> {
    const client = new pg.Client({ connectionString: this.url('postgres'), connectionTimeoutMillis: 1_000, query_timeout: 2_000 });
    client.on('error', () => {});
    try {
      await client.connect();
      const r = await client.query('select pg_is_in_recovery() as standby');
      return r.rows[0]?.standby === false;
    } finally {
      await client.end().catch(() => {});
    }
  }

  private postmaster(m: Machine): number | null {
    try {
      const pid = Number(readFileSync(path.join(this.dir, m.name, 'postmaster.pid'), 'utf8').split('\n')[0]);
      return Number.isInteger(pid) && pid > 0 ? pid : null;
    } catch {
      return null;
    }
  }

  /** SIGSTOP (true) the primary's PostgreSQL, every process of it; SIGCONT (false) what was stopped. */
  async freeze(frozen: boolean): Promise<void> {
    if (!frozen) {
      for (const pid of this.frozen) signal(pid, 'SIGCONT');
      this.frozen = [];
      return;
    }
    const primary = await this.settled(() => this.primary());
    const pid = primary && this.postmaster(primary);
    if (!pid) throw new Error('no primary to freeze');
    this.frozen = [pid, ...descendants(pid)];
    for (const p of this.frozen) signal(p, 'SIGSTOP');
  }

  /** SIGKILL the primary's PostgreSQL (its Patroni restarts it, or the standby takes over). */
  async kill(): Promise<void> {
    const primary = await this.settled(() => this.primary());
    const pid = primary && this.postmaster(primary);
    if (!pid) throw new Error('no primary to kill');
    const tree = [pid, ...descendants(pid)];
    for (const p of tree) signal(p, 'SIGCONT');
    for (const p of tree) signal(p, 'SIGKILL');
  }

  /**
   * A failover: `switchover` by patronictl, or a crash of the primary's machine (its Patroni and
   * its PostgreSQL, SIGKILL) until the standby has taken over. Resolves to what happened.
   */
  async failover(how: 'switchover' | 'crash'): Promise<string> {
    const now = await this.settled(() => this.healthy());
    if (!now) throw new Error('no primary with a synchronous standby to fail over from');
    const { primary, standby } = now;
    if (how === 'switchover') {
      const r = spawnSync(
        'ip',
        [
          'netns',
          'exec',
          primary.ns,
          'patronictl',
          '-c',
          path.join(this.dir, `${primary.name}.yml`),
          'switchover',
          '--leader',
          primary.name,
          '--candidate',
          standby.name,
          '--force',
        ],
        { encoding: 'utf8', timeout: 60_000, env: { ...process.env, HOME: this.dir } },
      );
      const output = `${r.stdout ?? ''}${r.stderr ?? ''}`;
      if (!/Successfully switched over/.test(output)) throw new Error(`patronictl switchover did not succeed: ${output.slice(-500)}`);
      return `switched over from ${primary.name} to ${standby.name}`;
    }
    const patroni = this.patronis.get(primary.name);
    const pid = this.postmaster(primary);
    const tree = [...(patroni?.pid ? [patroni.pid, ...descendants(patroni.pid)] : []), ...(pid ? [pid, ...descendants(pid)] : [])];
    for (const p of tree) signal(p, 'SIGKILL');
    this.patronis.delete(primary.name);
    await this.until(`${standby.name} taking over`, 60_000, async () => (await this.primary()) === standby);
    this.startMember(primary);
    return `crashed ${primary.name}; ${standby.name} took over`;
  }

  /** After the faults: nothing frozen, every member's Patroni running, a primary with its synchronous standby. */
  async recover(): Promise<void> {
    await this.freeze(false);
    for (const m of this.members) if (!this.patronis.get(m.name) || this.patronis.get(m.name)!.exitCode !== null) this.startMember(m);
    await this.until('a primary with a synchronous standby again', 120_000, async () => (await this.healthy()) !== null);
    await this.start();
  }

  async stop(): Promise<void> {
    await this.freeze(false);
    for (const p of this.patronis.values()) if (p.pid) signal(p.pid, 'SIGTERM');
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && [...this.patronis.values()].some((p) => p.exitCode === null && p.signalCode === null)) await sleep(100);
    for (const m of this.members) {
      const pid = this.postmaster(m);
      if (pid) for (const p of [pid, ...descendants(pid)]) signal(p, 'SIGKILL');
    }
    for (const p of [...this.patronis.values(), ...this.others]) if (p.pid && p.exitCode === null) signal(p.pid, 'SIGKILL');
  }
}
