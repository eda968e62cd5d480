// The npm package as users get it: `npm pack` (with the package's own lifecycle scripts, on a
// copy of exactly the files deploy/Dockerfile copies into its build, so the dist/ other tests run
// is left alone and the image's build is known to have what it needs), `npm install <tarball>` into an
// empty directory (from the npm registry), then the installed `allot`: help, version, serve, the
// typed client imported as `allot/client` (in JavaScript and in TypeScript), and every
// subcommand's help listing every option.
import assert from 'node:assert/strict';
import { type ExecFileOptions, execFile, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Command } from 'commander';
import { allCommands, buildProgram } from '../../src/cli/program.js';
import { dockerCopySources } from '../helpers/dockerfile.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const work = mkdtempSync(path.join(os.tmpdir(), 'allot-pack-'));
const source = path.join(work, 'source');
const app = path.join(work, 'app');
const version = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;

/** The caller's environment without npm's per-run variables (they belong to the outer `npm test`). */
const cleanEnv = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_') && !k.startsWith('ALLOT_')));

function run(cmd: string, args: string[], options: ExecFileOptions = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(cmd, args, { env: cleanEnv(), maxBuffer: 16 << 20, timeout: 600_000, ...options }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout: String(stdout), stderr: String(stderr) }),
    ),
  );
}

const installedCli = () => path.join(app, 'node_modules', 'allot', 'dist', 'cli', 'main.js');
const allot = (args: string[]) => run(process.execPath, [installedCli(), ...args], { cwd: app });
const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

describe('npm package', () => {
  let tarball: string;

  before(async () => {
    // the package's inputs, as the image's build has them; node_modules shared for the build
    mkdirSync(source);
    for (const entry of dockerCopySources()) {
      cpSync(path.join(root, entry), path.join(source, entry), { recursive: true });
    }
    symlinkSync(path.join(root, 'node_modules'), path.join(source, 'node_modules'), 'dir');
    const packed = await run('npm', ['pack', '--pack-destination', work], { cwd: source });
    assert.equal(packed.code, 0, packed.stderr);
    tarball = path.join(work, packed.stdout.trim().split('\n').pop()!);

    mkdirSync(app);
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'allot-consumer', private: true, type: 'module' }));
    const installed = await run('npm', ['install', '--no-audit', '--no-fund', tarball], { cwd: app });
    assert.equal(installed.code, 0, installed.stderr);
  });

  after(() => rmSync(work, { recursive: true, force: true }));

  test('the tarball holds the build, the deploy files and the lock, not the sources or tests', async () => {
    const listing = (await run('tar', ['tzf', tarball])).stdout.split('\n');
    for (const f of [
      'package/bin/allot.js',
      'package/dist/cli/main.js',
      'package/dist/client/index.js',
      'package/dist/client/index.d.ts',
      'package/dist/ui/index.html',
      'package/npm-shrinkwrap.json',
      'package/deploy/allot.service',
      'package/deploy/Dockerfile',
      'package/README.md',
    ]) {
      assert.ok(listing.includes(f), `${f} is packed`);
    }
    assert.ok(!listing.some((f) => f.startsWith('package/src/') || f.startsWith('package/test/')), 'no sources or tests');
    // the lock travels only inside the package: the checkout keeps no npm-shrinkwrap.json
    assert.equal((await run('ls', [path.join(source, 'npm-shrinkwrap.json')])).code !== 0, true);
  });

  test('npx allot --help and --version', async () => {
    const help = await run('npx', ['--no-install', 'allot', '--help'], { cwd: app });
    assert.equal(help.code, 0, help.stderr);
    for (const cmd of ['serve', 'migrate', 'config', 'placement', 'baremetal', 'ids']) assert.match(help.stdout, new RegExp(`^  ${cmd} `, 'm'));
    assert.match(help.stdout, /Exit codes:/);
    const v = await run('npx', ['--no-install', 'allot', '--version'], { cwd: app });
    assert.equal(v.stdout.trim(), version);
  });

  test('the installed allot serves, its CLI and the exported typed client talk to it', async () => {
    const proc = spawn(process.execPath, [installedCli(), 'serve', '--db', 'sqlite::memory:', '--port', '0'], {
      cwd: app,
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => proc.on('exit', resolve));
    try {
      let out = '';
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the installed allot did not start:\n${out}`)), 60_000);
        proc.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const port = /"port":(\d+)/.exec(out)?.[1];
          if (port && out.includes('"allot ready"')) {
            clearTimeout(timer);
            resolve(`http://127.0.0.1:${port}`);
          }
        });
      });
      const health = await fetch(`${url}/healthz`);
      assert.equal(health.status, 200);

      const created = await allot(['placement', 'provider', 'create', 'from-package', '--url', url]);
      assert.equal(created.code, 0, created.stderr);
      assert.equal(JSON.parse(created.stdout).name, 'from-package');

      // JavaScript: the package's export `allot/client`
      const js = await run(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import { AllotClient } from 'allot/client';
           const c = new AllotClient({ url: ${JSON.stringify(url)}, token: 'admin' });
           const pool = await c.ids.createPool({ name: 'vlan', kind: 'integer', ranges: ['1-4094'] });
           const providers = await c.placement.listProviders({ name: 'from-package' });
           console.log(JSON.stringify({ pool: pool.name, providers: providers.length, mv: await c.placement.microversion() }));`,
        ],
        { cwd: app },
      );
      assert.equal(js.code, 0, js.stderr);
      assert.deepEqual(JSON.parse(js.stdout), { pool: 'vlan', providers: 1, mv: '1.39' });
    } finally {
      proc.kill('SIGTERM');
      assert.equal(await exited, 0);
    }
  });

  test('TypeScript sees the client types through the package exports', async () => {
    writeFileSync(
      path.join(app, 'good.ts'),
      `import { AllotClient, AllotApiError, retryOnConflict, type placement } from 'allot/client';
       const c = new AllotClient({ url: 'http://127.0.0.1:8778' });
       export async function f(): Promise<number> {
         const rp: placement.ResourceProvider = await c.placement.getProvider('x');
         await retryOnConflict(() => c.placement.updateProviderTraits(rp.uuid, (t) => [...t, 'CUSTOM_X']));
         try { return (await c.ids.getPool('vlan')).utilization.allocations; } catch (e) { if (e instanceof AllotApiError) return e.status; throw e; }
       }\n`,
    );
    writeFileSync(
      path.join(app, 'bad.ts'),
      `import { AllotClient } from 'allot/client';\nexport const n: number = (await new AllotClient({ url: 'x' }).ids.getPool('vlan')).name;\n`,
    );
    const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const flags = [
      '--noEmit',
      '--strict',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--types',
      'node',
      '--typeRoots',
      path.join(root, 'node_modules', '@types'),
    ];
    const good = await run(process.execPath, [tsc, ...flags, 'good.ts'], { cwd: app });
    assert.equal(good.code, 0, good.stdout + good.stderr);
    const bad = await run(process.execPath, [tsc, ...flags, 'bad.ts'], { cwd: app });
    assert.notEqual(bad.code, 0, 'a wrong type is caught: the types are real, not any');
    assert.match(bad.stdout, /Type 'string' is not assignable to type 'number'/);
  });

  test("every command's --help describes it and lists every option and argument", async () => {
    const commands = allCommands(buildProgram());
    const missing: string[] = [];
    const check = async ({ path: names, command }: { path: string[]; command: Command }) => {
      const where = `allot ${names.join(' ')}`;
      if (!command.description()) missing.push(`${where}: no description`);
      const help = await allot([...names, '--help']);
      if (help.code !== 0) return void missing.push(`${where} --help exited ${help.code}: ${help.stderr}`);
      const text = squash(help.stdout);
      if (!text.includes(squash(command.description()).slice(0, 40))) missing.push(`${where}: help lacks the description`);
      for (const option of command.options) {
        if (!option.description) missing.push(`${where} ${option.flags}: no description`);
        if (!text.includes(option.flags)) missing.push(`${where}: help lacks ${option.flags}`);
        else if (!text.includes(squash(option.description).slice(0, 30))) missing.push(`${where}: help lacks the description of ${option.flags}`);
      }
      for (const argument of command.registeredArguments) {
        if (!argument.description) missing.push(`${where} <${argument.name()}>: no description`);
        if (!text.includes(argument.name())) missing.push(`${where}: help lacks <${argument.name()}>`);
      }
    };
    // four at a time: enough to keep two cores busy
    const queue = [...commands];
    await Promise.all(
      [1, 2, 3, 4].map(async () => {
        for (let next = queue.shift(); next; next = queue.shift()) await check(next);
      }),
    );
    assert.deepEqual(missing, []);
    assert.ok(commands.length > 100, `${commands.length} commands checked`);
  });
});
