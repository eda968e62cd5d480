// The chaos run's network: one network namespace per machine (PostgreSQL, each allot process, the
// test's clients) plugged into a bridge in a hub namespace of its own. Every address, link, rule
// and queue is inside namespaces this run made, so nothing of the host's network is touched, and
// deleting the namespaces removes all of it. Faults act on one machine's link to another:
// - a partition drops every packet between them (iptables DROP in the first one's namespace, both
//   directions: no reset, no refusal, the sender's TCP just retransmits until it heals);
// - loss drops a random share of those packets (iptables `statistic`);
// - a slow link delays every packet of the machine (`tc netem` delay; on a kernel built without
//   netem, as this project's machines are, a `tbf` rate limit: the packets queue behind it).
import { execFile, spawnSync } from 'node:child_process';

const SUBNET = '10.233.0';

export interface Machine {
  name: string;
  ns: string;
  ip: string;
}

/** Run a command to its end; throws with its output when it fails. */
function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: 20_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${command} ${args.join(' ')}: ${stderr || err.message}`));
      else resolve(stdout);
    });
  });
}

function runSync(command: string, args: string[]): { ok: boolean; output: string } {
  const r = spawnSync(command, args, { encoding: 'utf8', timeout: 20_000 });
  return { ok: r.status === 0, output: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

const inNs = (ns: string, args: string[]) => ['netns', 'exec', ns, ...args];

export class ChaosNetwork {
  readonly hub: string;
  readonly machines = new Map<string, Machine>();
  /** how a slow link is made here: netem delay when the kernel has it, else a tbf rate limit */
  readonly slowKind: 'netem' | 'tbf' = 'tbf';
  private readonly rules = new Map<string, string[][]>();

  /** The machines of a run named `prefix` (their namespaces are made by create(), or already exist). */
  constructor(
    readonly prefix: string,
    names: string[],
  ) {
    this.hub = `${prefix}-hub`;
    for (const [i, name] of names.entries()) this.machines.set(name, { name, ns: `${prefix}-${name}`, ip: `${SUBNET}.${10 + i}` });
    // a slow link is a netem delay where the kernel has it (the probe needs the hub: absent, it is tbf)
    if (runSync('ip', inNs(this.hub, ['tc', 'qdisc', 'add', 'dev', 'lo', 'root', 'netem', 'delay', '1ms'])).ok) {
      this.slowKind = 'netem';
      runSync('ip', inNs(this.hub, ['tc', 'qdisc', 'del', 'dev', 'lo', 'root']));
    }
  }

  /** Namespaces this run made (read back from `ip netns`, so a crashed run's are found too). */
  static namespacesOf(prefix: string): string[] {
    const list = runSync('ip', ['netns', 'list']).output;
    return list
      .split('\n')
      .map((l) => l.split(' ')[0]!)
      .filter((n) => n.startsWith(`${prefix}-`));
  }

  /** Make the hub and one namespace per machine, each with an address on the bridge. */
  async create(): Promise<void> {
    await run('ip', ['netns', 'add', this.hub]);
    await run('ip', ['-n', this.hub, 'link', 'add', 'br0', 'type', 'bridge']);
    await run('ip', ['-n', this.hub, 'link', 'set', 'br0', 'up']);
    for (const machine of this.machines.values()) {
      const name = machine.name;
      await run('ip', ['netns', 'add', machine.ns]);
      // the veth pair is made inside the namespaces: no interface ever exists in the host's
      await run('ip', ['-n', this.hub, 'link', 'add', `v-${name}`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', machine.ns]);
      await run('ip', ['-n', this.hub, 'link', 'set', `v-${name}`, 'master', 'br0', 'up']);
      await run('ip', ['-n', machine.ns, 'addr', 'add', `${machine.ip}/24`, 'dev', 'eth0']);
      await run('ip', ['-n', machine.ns, 'link', 'set', 'eth0', 'up']);
      await run('ip', ['-n', machine.ns, 'link', 'set', 'lo', 'up']);
    }
  }

  machine(name: string): Machine {
    const m = this.machines.get(name);
    if (!m) throw new Error(`no machine ${name}`);
    return m;
  }

  /** Drop every packet between `a` and `b` (in both directions) until heal(). */
  partition(a: string, b: string): Promise<void> {
    return this.addRules(`partition ${a} ${b}`, a, b, []);
  }

  /** Drop `probability` (0–1) of the packets between `a` and `b` until heal(). */
  loss(a: string, b: string, probability: number): Promise<void> {
    return this.addRules(`loss ${a} ${b}`, a, b, ['-m', 'statistic', '--mode', 'random', '--probability', probability.toFixed(3)]);
  }

  /** Remove the partition or loss between `a` and `b`. */
  async heal(a: string, b: string): Promise<void> {
    for (const key of [`partition ${a} ${b}`, `loss ${a} ${b}`]) {
      const rules = this.rules.get(key);
      if (!rules) continue;
      this.rules.delete(key);
      for (const rule of rules) await run('ip', inNs(this.machine(a).ns, ['iptables', '-D', ...rule]));
    }
  }

  private async addRules(key: string, a: string, b: string, match: string[]): Promise<void> {
    const peer = this.machine(b).ip;
    const rules = [
      ['INPUT', '-s', peer, ...match, '-j', 'DROP'],
      ['OUTPUT', '-d', peer, ...match, '-j', 'DROP'],
    ];
    this.rules.set(key, rules);
    for (const rule of rules) await run('ip', inNs(this.machine(a).ns, ['iptables', '-I', ...rule]));
  }

  /** Slow every packet to and from `name` (both directions of its link). */
  async slow(name: string, delayMs: number): Promise<void> {
    const qdisc =
      this.slowKind === 'netem'
        ? ['netem', 'delay', `${delayMs}ms`, `${Math.round(delayMs / 2)}ms`]
        : ['tbf', 'rate', '128kbit', 'burst', '4kb', 'latency', `${delayMs * 4}ms`];
    await run('ip', inNs(this.machine(name).ns, ['tc', 'qdisc', 'add', 'dev', 'eth0', 'root', ...qdisc]));
    await run('ip', inNs(this.hub, ['tc', 'qdisc', 'add', 'dev', `v-${name}`, 'root', ...qdisc]));
  }

  async unslow(name: string): Promise<void> {
    await run('ip', inNs(this.machine(name).ns, ['tc', 'qdisc', 'del', 'dev', 'eth0', 'root']));
    await run('ip', inNs(this.hub, ['tc', 'qdisc', 'del', 'dev', `v-${name}`, 'root']));
  }

  /** Remove every partition, loss and slow link (the machines stay). */
  async healAll(): Promise<void> {
    for (const key of [...this.rules.keys()]) {
      const [, a, b] = key.split(' ');
      await this.heal(a!, b!);
    }
    for (const name of this.machines.keys()) {
      runSync('ip', inNs(this.machine(name).ns, ['tc', 'qdisc', 'del', 'dev', 'eth0', 'root']));
      runSync('ip', inNs(this.hub, ['tc', 'qdisc', 'del', 'dev', `v-${name}`, 'root']));
    }
  }
}

/**
 * Remove a run's namespaces, and with them every interface, address, rule and queue; processes
 * still inside them (started by the run: PostgreSQL, allot) are resumed and killed first, by pid.
 * Synchronous, so that it can run from an exit handler.
 */
export function destroyNamespaces(prefix: string): { killed: number; removed: string[] } {
  const namespaces = ChaosNetwork.namespacesOf(prefix);
  let killed = 0;
  for (const ns of namespaces) {
    const pids = runSync('ip', ['netns', 'pids', ns])
      .output.split('\n')
      .map(Number)
      .filter((p) => Number.isInteger(p) && p > 0 && p !== process.pid);
    for (const pid of pids) {
      for (const sig of ['SIGCONT', 'SIGKILL'] as const) {
        try {
          process.kill(pid, sig);
        } catch {
          /* gone already */
        }
      }
      killed++;
    }
  }
  for (const ns of namespaces) runSync('ip', ['netns', 'del', ns]);
  return { killed, removed: namespaces };
}
