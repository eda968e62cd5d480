// CPU time and memory of the processes under test, read from /proc (Linux). Lets the report say
// how much server and database CPU each operation cost, and how much memory a server holds.
import { readFileSync, readdirSync } from 'node:fs';

const CLOCK_TICKS = 100; // USER_HZ on Linux
const PAGE_KB = 4;

interface ProcStat {
  pid: number;
  ppid: number;
  comm: string;
  cpuTicks: number;
  rssKb: number;
}

function readStat(pid: number): ProcStat | null {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = raw.lastIndexOf(')');
    const comm = raw.slice(raw.indexOf('(') + 1, close);
    const f = raw.slice(close + 2).split(' ');
    // fields after comm: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14) … rss(21).
    // cutime/cstime hold the CPU of children that exited and were reaped (PostgreSQL backends
    // of closed connections), so a tree's CPU does not drop when a process goes away.
    const cpuTicks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    return { pid, ppid: Number(f[1]), comm, cpuTicks, rssKb: Number(f[21]) * PAGE_KB };
  } catch {
    return null;
  }
}

function allProcesses(): ProcStat[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map((d) => readStat(Number(d)))
    .filter((p): p is ProcStat => p !== null);
}

/** The process and all its descendants. */
export function processTree(rootPid: number): ProcStat[] {
  const all = allProcesses();
  const byParent = new Map<number, ProcStat[]>();
  for (const p of all) byParent.set(p.ppid, [...(byParent.get(p.ppid) ?? []), p]);
  const out: ProcStat[] = [];
  const root = all.find((p) => p.pid === rootPid);
  if (!root) return out;
  const queue = [root];
  while (queue.length) {
    const p = queue.shift()!;
    out.push(p);
    queue.push(...(byParent.get(p.pid) ?? []));
  }
  return out;
}

export interface Usage {
  /** CPU seconds (user + system) of the server processes */
  server_cpu_s: number;
  /** CPU seconds of PostgreSQL processes (when they are descendants of the watched roots) */
  db_cpu_s: number;
  server_rss_mb: number;
  db_rss_mb: number;
  /** SQL statements the server sent so far (with --count-queries) */
  sql_statements?: number;
}

/**
 * CPU and memory of the process trees rooted at `roots`, split into the database (processes
 * named `postgres`) and the rest (the server: node, uwsgi, python).
 */
export function usageOf(roots: number[]): Usage {
  const seen = new Set<number>();
  let serverTicks = 0;
  let dbTicks = 0;
  let serverRss = 0;
  let dbRss = 0;
  for (const root of roots) {
    for (const p of processTree(root)) {
      if (seen.has(p.pid)) continue;
      seen.add(p.pid);
      if (p.comm === 'postgres') {
        dbTicks += p.cpuTicks;
        dbRss += p.rssKb;
      } else {
        serverTicks += p.cpuTicks;
        serverRss += p.rssKb;
      }
    }
  }
  return {
    server_cpu_s: serverTicks / CLOCK_TICKS,
    db_cpu_s: dbTicks / CLOCK_TICKS,
    server_rss_mb: Math.round(serverRss / 1024),
    db_rss_mb: Math.round(dbRss / 1024),
  };
}

/** Peak resident memory (VmHWM) summed over the server processes of a tree (not PostgreSQL), MB. */
export function peakServerRssMb(rootPid: number): number | null {
  let kb = 0;
  for (const p of processTree(rootPid)) {
    if (p.comm === 'postgres') continue;
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${p.pid}/status`, 'utf8'));
      if (m) kb += Number(m[1]);
    } catch {
      /* exited */
    }
  }
  return kb ? Math.round(kb / 1024) : null;
}

/** 1-minute load average and the number of CPUs, to judge how quiet the machine was. */
export function loadAverage(): { load1: number; load5: number; load15: number } {
  const [a, b, c] = readFileSync('/proc/loadavg', 'utf8').split(' ').map(Number);
  return { load1: a!, load5: b!, load15: c! };
}

/** CPU per operation of one measured stretch: the server, its PostgreSQL (null on SQLite) and this process (the client). */
export interface CpuPerOp {
  server_cpu_ms_per_op: number;
  /** null when no PostgreSQL was watched (SQLite runs inside the server process) */
  db_cpu_ms_per_op: number | null;
  client_cpu_ms_per_op: number;
  /** all three over wall time: 2.0 = both cores of this machine */
  cores_busy: number;
}

/**
 * Starts measuring the CPU of the process trees `roots()` (the server, and PostgreSQL processes
 * when they are among them) and of this process; `per(ops)` ends the stretch.
 */
export function cpuMeter(roots: () => number[]): { per(ops: number): CpuPerOp } {
  const hasDb = () => roots().some((pid) => processTree(pid)[0]?.comm === 'postgres');
  const u0 = usageOf(roots());
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  return {
    per(ops) {
      const u1 = usageOf(roots());
      const c = process.cpuUsage(c0);
      const seconds = (performance.now() - t0) / 1000;
      const server = u1.server_cpu_s - u0.server_cpu_s;
      const db = u1.db_cpu_s - u0.db_cpu_s;
      const client = (c.user + c.system) / 1e6;
      const ms = (s: number) => Math.round(((s * 1000) / Math.max(ops, 1)) * 1000) / 1000;
      return {
        server_cpu_ms_per_op: ms(server),
        db_cpu_ms_per_op: hasDb() ? ms(db) : null,
        client_cpu_ms_per_op: ms(client),
        cores_busy: Math.round(((server + db + client) / seconds) * 100) / 100,
      };
    },
  };
}
