// How many PostgreSQL backends wait for a lock, sampled while a bench phase runs: the mean says
// whether a phase queues on a lock (a hot row) or is bound by something else.
import pg from 'pg';

/** Sample `pg_locks` every `everyMs` until stopped; `stop()` gives the mean number of ungranted locks. */
export function sampleLockWaiters(dbUrl: string, everyMs = 20): { stop(): Promise<number> } {
  let waiting = 0;
  let samples = 0;
  let sampling = true;
  const sampler = (async () => {
    const probe = new pg.Client({ connectionString: dbUrl });
    await probe.connect();
    while (sampling) {
      const r = await probe.query('select count(*)::int as n from pg_locks where not granted');
      waiting += r.rows[0].n;
      samples++;
      await new Promise((res) => setTimeout(res, everyMs));
    }
    await probe.end();
  })();
  return {
    async stop() {
      sampling = false;
      await sampler;
      return waiting / Math.max(1, samples);
    },
  };
}
