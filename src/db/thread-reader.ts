// SQLite: a read-only connection to the database file on a worker thread, for long reads. SQLite
// runs on the thread that asks it, so a statement on the process's own connection holds the event
// loop until it ends; the candidates index's full load reads every provider (at a million, seconds
// of SQLite) and would hold every request that long. On a thread of its own the reads also run
// beside the JavaScript that applies them, on the machine's other core.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

export interface ThreadReader {
  /** the first row of a read (`select …` only: the connection is read-only) */
  one<R>(sql: string, params: readonly unknown[]): Promise<R | undefined>;
  close(): Promise<void>;
}

// Plain CommonJS, run by the worker as it is (the sources are TypeScript; a worker is given a file
// or code, and code needs no build step). It answers one statement at a time, in order.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
const prepared = new Map();
parentPort.on('message', ({ id, sql, params }) => {
  try {
    let statement = prepared.get(sql);
    if (!statement) prepared.set(sql, (statement = db.prepare(sql)));
    parentPort.postMessage({ id, row: statement.get(...params) });
  } catch (err) {
    parentPort.postMessage({ id, error: { message: err.message, code: err.code } });
  }
});
`;

export function openThreadReader(file: string, busyTimeoutMs: number): ThreadReader {
  // execArgv: none of the parent's (a loader such as tsx would only slow the thread's start)
  const worker = new Worker(WORKER, {
    eval: true,
    execArgv: [],
    workerData: { driver: createRequire(import.meta.url).resolve('better-sqlite3'), file, busyTimeoutMs },
  });
  const waiting = new Map<number, { resolve: (row: unknown) => void; reject: (err: Error) => void }>();
  let next = 0;
  const failAll = (err: Error) => {
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  };
  worker.on('message', ({ id, row, error }: { id: number; row?: unknown; error?: { message: string; code?: string } }) => {
    const w = waiting.get(id);
    waiting.delete(id);
    if (error) w?.reject(Object.assign(new Error(error.message), { code: error.code }));
    else w?.resolve(row);
  });
  // the driver could not open the file, say: as the same error a read on the main connection gives
  worker.on('error', (err) => failAll(err));
  worker.on('exit', () => failAll(Object.assign(new Error('the SQLite reader thread ended'), { code: 'SQLITE_CANTOPEN' })));
  return {
    one: <R>(sql: string, params: readonly unknown[]) =>
      new Promise<R | undefined>((resolve, reject) => {
        const id = next++;
        waiting.set(id, { resolve: resolve as (row: unknown) => void, reject });
        worker.postMessage({ id, sql, params });
      }),
    close: async () => {
      await worker.terminate();
    },
  };
}
