// Debian packages the tests need besides npm's: the real OpenStack command-line clients, which the
// client tests drive against allot, a real Keystone (with uwsgi to serve it) for the
// authentication tests, and Chromium, in which the dashboard's tests open /ui (driven by
// playwright-core; never a browser download of Playwright's own). Installed on first use when we
// may (root + apt-get); otherwise the run stops and says what to install.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';

/** Debian package → a shell check that it is usable */
const PACKAGES: Record<string, string> = {
  'python3-openstackclient': 'openstack --version',
  'python3-osc-placement': '/usr/bin/python3 -c "import osc_placement"',
  'python3-ironicclient': '/usr/bin/python3 -c "import ironicclient"',
  // npm run test:clients: the clients' own functional suites (scripts/test-clients.ts)
  'python3-pytest': '/usr/bin/python3 -c "import pytest"',
  'python3-openstacksdk': '/usr/bin/python3 -c "import openstack.tests.functional"',
  'python3-placement': '/usr/bin/python3 -c "import placement.tests.functional.fixtures.placement"',
  'python3-tempest': '/usr/bin/python3 -c "import tempest.lib.cli.base"',
  // Nova's functional tests (the nova suites); nova-common holds the api-paste.ini they read
  'python3-nova': '/usr/bin/python3 -c "import nova.tests.functional"',
  'nova-common': 'test -r /etc/nova/api-paste.ini',
  // its API tests, run by stestr (which brings python3-subunit)
  'ironic-tempest-plugin': '/usr/bin/python3 -c "import ironic_tempest_plugin.tests.api, stestr, subunit"',
  keystone: 'test -x /usr/bin/keystone-manage && /usr/bin/python3 -c "import keystone"',
  'python3-keystonemiddleware': '/usr/bin/python3 -c "import keystonemiddleware"',
  uwsgi: 'uwsgi --version',
  'uwsgi-plugin-python3': 'test -e /usr/lib/uwsgi/plugins/python3_plugin.so',
  chromium: '/usr/bin/chromium --version',
  // test/deploy.test.ts: systemd-analyze verify of deploy/allot.service
  systemd: 'systemd-analyze --version',
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
  // The keystone package would start a system-wide Keystone; the tests start their own. On a
  // machine that has no policy for it (a container), packages may not start services meanwhile.
  const policy = '/usr/sbin/policy-rc.d';
  const ownPolicy = !existsSync(policy);
  if (ownPolicy) writeFileSync(policy, '#!/bin/sh\n# allot scripts/system-deps.ts: no service starts while installing\nexit 101\n', { mode: 0o755 });
  const failed = [
    ['apt-get', 'update', '-qq'],
    ['apt-get', 'install', '-y', '-qq', ...missing],
  ].find((cmd) => spawnSync(cmd[0]!, cmd.slice(1), { stdio: ['ignore', 'ignore', 'inherit'], env }).status !== 0);
  if (ownPolicy) rmSync(policy, { force: true });
  if (failed) {
    console.error(`could not install ${missing.join(' ')} (${failed.join(' ')} failed)`);
    process.exit(1);
  }
}
