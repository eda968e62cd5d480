// The built `allot` CLI (dist/, as a user runs it) against a server: its exit code and output.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/cli/main.js');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `allot …` with the server's URL in the environment; never throws. */
export function runCli(url: string, args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { env: { ...process.env, ALLOT_URL: url, ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** `allot(…)`: a command that must succeed, its JSON output; `fails(code, …)`: one that must exit `code`, its stderr. */
export function cliCommands(url: () => string) {
  return {
    allot: async (...args: string[]) => {
      const r = await runCli(url(), args);
      assert.equal(r.code, 0, `allot ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
      return r.stdout.trim() ? JSON.parse(r.stdout) : null;
    },
    fails: async (expectedCode: number, ...args: string[]) => {
      const r = await runCli(url(), args);
      assert.equal(r.code, expectedCode, `allot ${args.join(' ')}: expected exit ${expectedCode}, got ${r.code}: ${r.stderr}`);
      return r.stderr;
    },
  };
}
