// Other projects' material that some optional suites need and the repository does not carry:
// Placement's own gabbi tests with their runner, and launchers of the real Placement and the real
// Ironic (Debian ships the services, not these). A suite takes each from an option or an
// environment variable, never from a default path; when it is not given, or not there, the
// suite stops with one line that says what to pass and what to install.
import { existsSync } from 'node:fs';
import path from 'node:path';

const REFERENCES = {
  'conformance-runner': {
    label: "Placement's gabbi runner",
    env: 'ALLOT_CONFORMANCE_RUNNER',
    what: "Placement's gabbi runner, run_gabbits.py beside Placement's gabbits/",
    packages: 'python3-gabbi python3-yaml',
  },
  'real-placement': {
    label: 'the real Placement',
    env: 'ALLOT_REAL_PLACEMENT',
    what: 'a launcher of the real Placement, real_placement.py (--port P [--db postgresql]; serves until SIGTERM)',
    packages: 'python3-placement uwsgi uwsgi-plugin-python3',
  },
  'real-ironic': {
    label: 'the real Ironic',
    env: 'ALLOT_REAL_IRONIC',
    what: 'a launcher of the real Ironic, real_ironic.py (start|stop --state-dir D [--port P])',
    packages: 'python3-ironic',
  },
} as const;

/**
 * The file an option names (`given`), else the one its environment variable names; the process
 * exits 2 with one line when neither is given or the file is not there.
 */
export function referenceFile(name: keyof typeof REFERENCES, command: string, given?: string): string {
  const { env, what, packages } = REFERENCES[name];
  const file = given ?? process.env[env];
  const stop = (why: string): never => {
    console.error(`${command}: ${why}: pass --${name} PATH or set ${env} (${what}; needs apt-get install -y ${packages})`);
    process.exit(2);
  };
  if (!file) return stop(`needs ${name}`);
  if (!existsSync(file)) return stop(`${name} ${file} is not there`);
  return path.resolve(file);
}

/**
 * A differential run compares allot with a running reference at `url`: when nothing answers
 * there, the process exits 2 with one line that says how to start one.
 */
export async function requireAnswering(url: string, name: 'real-placement' | 'real-ironic', command: string): Promise<void> {
  const answered = await fetch(url, { signal: AbortSignal.timeout(10_000) }).then(
    () => true,
    () => false,
  );
  if (answered) return;
  const { label, env, packages } = REFERENCES[name];
  console.error(`${command}: nothing answers at ${url}: start ${label} there first (/usr/bin/python3 "$${env}" …; needs apt-get install -y ${packages})`);
  process.exit(2);
}
