// What people see: tables, the progress bar (only on a terminal), the default output format,
// and readable log lines from `allot serve` on a terminal (JSON lines otherwise).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { outputFormat, renderTable } from '../../src/cli/output.js';
import { progressBar } from '../../src/cli/progress.js';
import { prettyLine, usePrettyLogs } from '../../src/server/log.js';
import { spawnServer } from '../helpers/server.js';

const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/cli/main.js');

/** A stream that says it is (or is not) a terminal, and keeps what was written. */
function terminal(isTTY: boolean) {
  const written: string[] = [];
  return { isTTY, columns: 100, write: (s: string) => written.push(s), written };
}

describe('output', () => {
  test('tables align columns under a header; nested values are compact JSON', () => {
    const text = renderTable({
      rows: [
        { name: 'cn1', total: 16, traits: ['A', 'B'], extra: { rack: 1 } },
        { name: 'compute-22', total: 8, traits: [], extra: null },
      ],
    });
    assert.equal(
      text,
      `${['name        total  traits  extra', '----------  -----  ------  ----------', 'cn1         16     A, B    {"rack":1}', 'compute-22  8'].join('\n')}\n`,
    );
    assert.equal(renderTable({ rows: [] }), '(none)\n');
  });

  test('the default format is table on a terminal and JSON otherwise', () => {
    assert.equal(outputFormat(undefined, { isTTY: true }), 'table');
    assert.equal(outputFormat(undefined, { isTTY: false }), 'json');
    assert.equal(outputFormat('yaml', { isTTY: true }), 'yaml');
    assert.throws(() => outputFormat('xml'), /--output must be one of table, json, yaml/);
  });

  test('the progress bar draws on a terminal only, at most every 100 ms, and ends its line', () => {
    let now = 0;
    const tty = terminal(true);
    const bar = progressBar('importing', 1000, tty, () => now);
    for (let i = 0; i < 10; i++) {
      now += 10; // 10 ms apart: too soon to redraw
      bar.advance(50);
    }
    now += 200;
    bar.advance(100);
    bar.finish();
    assert.equal(tty.written.length, 5, 'the first draw, one per 100 ms (not one per advance), the finish, the newline');
    assert.match(tty.written[1]!, /^\rimporting \[#+-+\] 500\/1000 50% 0\.1s$/);
    assert.match(tty.written[2]!, /^\rimporting \[#+-+\] 600\/1000 60% 0\.3s$/);
    assert.match(tty.written[3]!, /600\/1000 60%/);
    assert.equal(tty.written[4], '\n');

    const pipe = terminal(false);
    const silent = progressBar('importing', 1000, pipe);
    silent.advance(1000);
    silent.finish();
    assert.deepEqual(pipe.written, [], 'nothing for a pipe or a log file');
  });

  test('log lines for people: time, level, message, fields, and an error stack below', () => {
    const line = JSON.stringify({
      level: 30,
      time: Date.UTC(2026, 0, 2, 3, 4, 5, 678),
      pid: 1,
      msg: 'allot ready',
      db: 'sqlite:./allot.db',
      workers: ['a', 'b'],
    });
    assert.equal(prettyLine(line, false), '03:04:05.678 INFO  allot ready db=sqlite:./allot.db workers=["a","b"]\n');
    const err = JSON.stringify({ level: 50, time: 0, msg: 'failed', err: { type: 'Error', message: 'boom here', stack: 'Error: boom here\n    at x' } });
    assert.equal(prettyLine(err, false), '00:00:00.000 ERROR failed err="boom here"\n    Error: boom here\n        at x\n');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour escapes
    assert.match(prettyLine(line, true), /\u001b\[32mINFO \u001b\[0m/, 'colored level on a color terminal');
    assert.equal(usePrettyLogs('auto', { isTTY: true }), true);
    assert.equal(usePrettyLogs('auto', { isTTY: false }), false);
    assert.equal(usePrettyLogs('json', { isTTY: true }), false);
  });

  test('allot serve --log-format pretty writes readable lines; piped, it writes JSON by default', async () => {
    const proc = spawn(process.execPath, [cli, 'serve', '--db', 'sqlite::memory:', '--port', '0', '--log-format', 'pretty'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => proc.on('exit', resolve));
    let out = '';
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no readable "allot ready" line:\n${out}`)), 60_000);
        proc.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (/ INFO {2}allot ready /.test(out)) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      assert.match(out, /^\d\d:\d\d:\d\d\.\d{3} INFO {2}main listening on http:\/\/127\.0\.0\.1:\d+\/ api=main/m);
      assert.doesNotMatch(out, /^\{/m, 'no JSON lines');
    } finally {
      proc.kill('SIGTERM');
      assert.equal(await exited, 0);
    }
    const json = await spawnServer(['--db', 'sqlite::memory:']);
    try {
      assert.ok(
        json
          .output()
          .split('\n')
          .filter(Boolean)
          .every((l) => l.startsWith('{')),
        'every line is JSON',
      );
    } finally {
      await json.stop();
    }
  });
});
