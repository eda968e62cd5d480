// Debian packages the tests need besides npm's: the real OpenStack command-line clients, which the
// client tests drive against allot, and Chromium, in which the dashboard's tests open /ui (driven by
// playwright-core; never a browser download of Playwright's own). Installed on first use when we
// may (root + apt-get); otherwise the run stops and says what to install.
import { spawnSync } from 'node:child_process';

/** Debian package → a shell check that it is usable */
const PACKAGES: Record<string, string> = {
  'python3-openstackclient': 'openstack --version',
  'python3-osc-placement': '/usr/bin/python3 -c "import osc_placement"',
  'python3-ironicclient': '/usr/bin/python3 -c "import ironicclient"',
  chromium: '/usr/bin/chromium --version',
};

const works = (check: string) => spawnSync('sh', ['-c', `${check} >/dev/null 2>&1`]).status === 0;

/** Install what is missing of `only` (default: every package the tests need). */
export function ensureSystemPackages(only: string[] = Object.keys(PACKAGES)): void {
  const missing = Object.entries(PACKAGES)
    .filter(([pkg, check]) => only.includes(pkg) && !works(check))
    .map(([pkg]) => pkg);
  if (missing.length === 0) return;
  const canInstall = process.getuid?.() === 0 && works('command -v apt-get');
  if (!canInstall) {
    console.error(`The tests need these Debian packages: ${missing.join(' ')}\n  sudo apt-get install -y ${missing.join(' ')}`);
    process.exit(1);
  }
  console.log(`# installing ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const cmd of [['apt-get', 'update', '-qq'], ['apt-get', 'install', '-y', '-qq', ...missing]]) {
    const result = spawnSync(cmd[0]!, cmd.slice(1), { stdio: ['ignore', 'ignore', 'inherit'], env });
    if (result.status !== 0) {
      console.error(`could not install ${missing.join(' ')} (${cmd.join(' ')} failed)`);
      process.exit(1);
    }
  }
}
