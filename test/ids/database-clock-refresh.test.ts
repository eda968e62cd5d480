// The rule of the database's clock (db/database-clock.ts) on its own: "now" is this host's monotonic
// clock plus a measured offset to the database's clock, kept from the sample with the shortest round
// trip, replaced by a later measurement only when that one is as precise or disagrees by more than
// both can be wrong, kept through a failed measurement, and measured again by the db-clock worker
// every DATABASE_CLOCK_REFRESH_MS. First with host clocks and a database clock moved by hand (no
// sleeps), then with the clock as a process opens it, reading a real database.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, mock, test } from 'node:test';
import pino from 'pino';
import { sql } from 'kysely';
import type { Database } from '../../src/db/database.js';
import { DATABASE_CLOCK_REFRESH_MS, DatabaseClock, type HostClocks, databaseClockWorker } from '../../src/db/database-clock.js';
import { openDatabase } from '../../src/db/open.js';
import { DIALECTS, freshDatabaseUrl } from '../helpers/databases.js';

/** This host's clocks, moved by the test: the monotonic one only forwards, the wall clock anywhere. */
class HandHost implements HostClocks {
  mono = 1_000;
  wall = Date.UTC(2026, 0, 1);
  monotonicMs(): number {
    return this.mono;
  }
  wallMs(): number {
    return this.wall;
  }
}

/**
 * A database whose clock is `offsetMs` ahead of the host's monotonic clock. Each read takes the next
 * of `roundTrips` (ms, else 2) and reads the clock `readAt` of the way through it (½: the middle,
 * where the measurement assumes it); `failAfter` reads succeed, then every read fails.
 */
class HandDatabase {
  roundTrips: number[] = [];
  readAt = 0.5;
  failAfter = Number.POSITIVE_INFINITY;
  reads = 0;
  constructor(
    private readonly host: HandHost,
    public offsetMs: number,
  ) {}
  readonly readMs = async (): Promise<number> => {
    const roundTrip = this.roundTrips.shift() ?? 2;
    this.reads++;
    this.host.mono += roundTrip * this.readAt;
    const databaseMs = this.host.mono + this.offsetMs;
    this.host.mono += roundTrip * (1 - this.readAt);
    if (this.reads > this.failAfter) throw new Error('connection terminated');
    return databaseMs;
  };
}

const OFFSET = 1_767_225_600_000; // the database's epoch ms at monotonic 0

function clockOn(offsetMs = OFFSET) {
  const host = new HandHost();
  const database = new HandDatabase(host, offsetMs);
  return { host, database, clock: new DatabaseClock(database.readMs, host) };
}

describe("the database clock's rule", () => {
  test('read before a measurement succeeded, it throws; a failed first measurement leaves it unmeasured', async () => {
    const { host, database, clock } = clockOn();
    assert.throws(() => clock.nowMs(), /has not been measured yet/);
    assert.throws(() => clock.nowIso(), /has not been measured yet/);
    database.failAfter = 1;
    await assert.rejects(clock.measure(), /connection terminated/);
    assert.throws(() => clock.nowMs(), /has not been measured yet/);
    database.failAfter = Number.POSITIVE_INFINITY;
    await clock.measure();
    assert.equal(clock.nowMs(), host.mono + OFFSET);
  });

  test('a measurement keeps the sample with the shortest round trip, taken at its middle', async () => {
    const { host, database, clock } = clockOn();
    // each read at the start of its round trip: a sample is wrong by half its round trip, the shortest least
    database.readAt = 0;
    database.roundTrips = [10, 2, 6];
    const measured = await clock.measure();
    assert.equal(database.reads, 3);
    assert.equal(measured.uncertaintyMs, 1);
    assert.equal(clock.nowMs(), host.mono + OFFSET - 1);
    assert.equal(measured.skewMs, host.mono + OFFSET - 1 - host.wall);
    assert.equal(clock.nowIso(), new Date(host.mono + OFFSET - 1).toISOString());
  });

  test('between measurements now runs on the monotonic clock; a jump of the wall clock moves neither now nor the offset kept', async () => {
    const { host, clock } = clockOn();
    await clock.measure();
    const at = clock.nowMs();
    host.mono += 45_000;
    assert.equal(clock.nowMs(), at + 45_000);
    // the host's wall clock is stepped back an hour (NTP, an operator, libfaketime): the skew reported follows, now does not
    const skewBefore = (await clock.measure()).skewMs;
    const nowBefore = clock.nowMs();
    host.wall -= 3_600_000;
    const after = await clock.measure();
    assert.equal(clock.nowMs(), nowBefore + 3 * 2);
    assert.equal(after.skewMs, skewBefore + 3_600_000 + 3 * 2);
  });

  test('a later measurement that agrees replaces the kept offset only when it is at least as precise', async () => {
    const { host, database, clock } = clockOn();
    database.roundTrips = [10, 10, 10];
    await clock.measure(); // exact offset, wrong by at most 5 ms
    // the database's clock drifts 3 ms ahead: within what either measurement can be wrong by
    database.offsetMs += 3;
    database.roundTrips = [20, 20, 20];
    const slow = await clock.measure();
    assert.equal(slow.uncertaintyMs, 5, 'a slower measurement that agrees changed the kept one');
    assert.equal(clock.nowMs(), host.mono + OFFSET);
    database.roundTrips = [10, 10, 10];
    const asPrecise = await clock.measure();
    assert.equal(asPrecise.uncertaintyMs, 5);
    assert.equal(clock.nowMs(), host.mono + OFFSET + 3);
    database.offsetMs += 3;
    database.roundTrips = [4, 4, 4];
    const better = await clock.measure();
    assert.equal(better.uncertaintyMs, 2);
    assert.equal(clock.nowMs(), host.mono + OFFSET + 6);
  });

  test("a measurement that disagrees by more than both can be wrong replaces it, however slow (the database's clock stepped: a failover)", async () => {
    const { host, database, clock } = clockOn();
    await clock.measure(); // wrong by at most 1 ms
    database.offsetMs += 5_000;
    database.roundTrips = [40, 40, 40];
    const measured = await clock.measure();
    assert.equal(measured.uncertaintyMs, 20);
    assert.equal(clock.nowMs(), host.mono + OFFSET + 5_000);
    // a slower one still: a step back by as much as the two can be wrong by (20 + 30 ms) changes nothing, one more millisecond does
    database.offsetMs -= 50;
    database.roundTrips = [60, 60, 60];
    assert.equal((await clock.measure()).uncertaintyMs, 20);
    assert.equal(clock.nowMs(), host.mono + OFFSET + 5_000);
    database.offsetMs -= 1;
    database.roundTrips = [60, 60, 60];
    assert.equal((await clock.measure()).uncertaintyMs, 30);
    assert.equal(clock.nowMs(), host.mono + OFFSET + 5_000 - 51);
  });

  test('a failed measurement keeps the offset it had: now goes on, the step it missed is followed once one succeeds', async () => {
    const { host, database, clock } = clockOn();
    await clock.measure();
    database.offsetMs += 60_000;
    database.failAfter = database.reads + 1; // the second sample fails
    await assert.rejects(clock.measure(), /connection terminated/);
    assert.equal(clock.nowMs(), host.mono + OFFSET);
    host.mono += 10_000;
    assert.equal(clock.nowMs(), host.mono + OFFSET);
    database.failAfter = Number.POSITIVE_INFINITY;
    await clock.measure();
    assert.equal(clock.nowMs(), host.mono + OFFSET + 60_000);
  });

  test('the db-clock worker measures again DATABASE_CLOCK_REFRESH_MS after the last measurement, failed ones included', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    const lines: string[] = [];
    const log = pino(
      { level: 'info' },
      new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const { host, database, clock } = clockOn();
    const worker = databaseClockWorker(() => clock.measure(), log);
    const settled = () => new Promise((resolve) => setImmediate(resolve));
    try {
      assert.equal(DATABASE_CLOCK_REFRESH_MS, 60_000);
      worker.start();
      mock.timers.tick(DATABASE_CLOCK_REFRESH_MS - 1);
      await settled();
      assert.equal(database.reads, 0, 'measured before the interval passed');
      mock.timers.tick(1);
      await settled();
      assert.equal(database.reads, 3);
      assert.equal(clock.nowMs(), host.mono + OFFSET);
      // the next one fails: logged, the offset kept, and tried again an interval later
      database.failAfter = database.reads;
      database.offsetMs += 1_000;
      mock.timers.tick(DATABASE_CLOCK_REFRESH_MS);
      await settled();
      assert.equal(database.reads, 4);
      assert.match(lines.join(''), /"worker":"db-clock".*db-clock failed/);
      assert.equal(clock.nowMs(), host.mono + OFFSET);
      database.failAfter = Number.POSITIVE_INFINITY;
      mock.timers.tick(DATABASE_CLOCK_REFRESH_MS - 1);
      await settled();
      assert.equal(database.reads, 4);
      mock.timers.tick(1);
      await settled();
      assert.equal(database.reads, 7);
      assert.equal(clock.nowMs(), host.mono + OFFSET + 1_000);
    } finally {
      await worker.stop();
      mock.timers.reset();
    }
  });
});

for (const dialect of DIALECTS) {
  describe(`the database clock as a process opens it (${dialect})`, () => {
    let url: string;
    let database: Database;
    before(async () => {
      url = await freshDatabaseUrl(dialect);
      database = await openDatabase(url);
    });
    after(() => database?.close());

    if (dialect === 'sqlite') {
      test("one host: the process's wall clock is the database's, nothing to measure", () => {
        assert.equal(database.measureClock, undefined);
        const before = Date.now();
        const now = database.clock.nowMs();
        assert.ok(now >= before && now <= Date.now());
      });
      return;
    }

    test("it reads the server's clock_timestamp(): unmeasured it throws, measured it is within the measurement's error of the server's clock", async () => {
      assert.throws(() => database.clock.nowMs(), /has not been measured yet/);
      const measured = await database.measureClock!();
      // the server runs on this host: its clock is this process's wall clock
      assert.ok(Math.abs(measured.skewMs) <= measured.uncertaintyMs + 1, `skew ${measured.skewMs} ms, uncertainty ${measured.uncertaintyMs} ms`);
      for (let i = 0; i < 5; i++) {
        const before = database.clock.nowMs();
        const { rows } = await sql<{ now_ms: number }>`select extract(epoch from clock_timestamp()) * 1000 as now_ms`.execute(database.db as never);
        const after = database.clock.nowMs();
        const server = Number(rows[0]!.now_ms);
        assert.ok(
          server >= before - measured.uncertaintyMs - 1 && server <= after + measured.uncertaintyMs + 1,
          `the server's clock read ${server}, between ${before} and ${after} on the database clock (± ${measured.uncertaintyMs} ms)`,
        );
      }
    });

    test('a measurement that cannot reach the server fails and leaves the clock running on the offset it kept', async () => {
      const other = await openDatabase(url);
      const measured = await other.measureClock!();
      await other.close();
      await assert.rejects(other.measureClock!());
      const before = Date.now();
      const now = other.clock.nowMs();
      const error = measured.uncertaintyMs + 1;
      assert.ok(now >= before - error && now <= Date.now() + error, `now ${now} on the kept offset (± ${measured.uncertaintyMs} ms), the wall clock ${before}`);
    });
  });
}
