// The chaos run's fault schedule (schedule.ts) over many seeds: a pause that waits for another
// conductor to take the paused process's work over (pause-allocating, pause-node-lock) is left the
// time that take-over needs — no fault on PostgreSQL, and none that stops or cuts off an allot
// process, is on while it waits for work to hold and then for the take-over; and it lasts past the
// take-over. (Before, 11 of 27 paused node locks of an hour-long run were never taken over.)
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FAULT_KINDS, type Fault, PATRONI_FAULT_KINDS, Rng, type ScheduleSettings, makeSchedule } from './schedule.js';

const SETTINGS: ScheduleSettings = {
  seconds: 600,
  processes: 3,
  heartbeatTimeoutS: 6,
  statementBoundS: 5,
  delayedWorkers: [1, 2],
  lockingWorkers: [1, 2],
  holdWaitS: 5,
  takeOverS: 9,
};

/** Faults that leave the other conductors working: any other would stop a take-over. */
const HARMLESS = new Set(['client-partition', 'slow', 'skew']);
const ZOMBIE = new Set(['pause-allocating', 'pause-node-lock']);

const schedules = (kinds: readonly string[]) =>
  Array.from({ length: 40 }, (_, seed) => makeSchedule(new Rng(seed), { ...SETTINGS, kinds: kinds as Fault['kind'][] }));

describe('the chaos fault schedule', () => {
  for (const [name, kinds] of [
    ['one PostgreSQL', FAULT_KINDS],
    ['Patroni', PATRONI_FAULT_KINDS],
  ] as const)
    test(`a pause waiting for a take-over has it to itself until the take-over is due (${name}, 40 seeds)`, () => {
      let zombies = 0;
      for (const faults of schedules(kinds)) {
        for (const z of faults.filter((f) => ZOMBIE.has(f.kind))) {
          zombies++;
          assert.ok(z.duration >= SETTINGS.takeOverS + 3, `a ${z.kind} of ${z.duration} s ends before its take-over is due`);
          const due = z.at + SETTINGS.holdWaitS + SETTINGS.takeOverS;
          for (const f of faults) {
            if (f === z || HARMLESS.has(f.kind)) continue;
            const on = { from: f.at, to: f.at + f.duration + (ZOMBIE.has(f.kind) ? SETTINGS.holdWaitS : 0) };
            assert.ok(on.to <= z.at || on.from >= due, `${f.kind} at ${f.at} s for ${f.duration} s meets the ${z.kind} at ${z.at} s`);
          }
        }
      }
      assert.ok(zombies > 40 * 4, `only ${zombies} pauses waiting for a take-over in 40 ten-minute schedules`);
    });

  test('every kind still comes up in a four-minute schedule (seed 33, as CI runs it)', () => {
    const faults = makeSchedule(new Rng(33).fork(1), { ...SETTINGS, seconds: 240 });
    assert.deepEqual(new Set(faults.map((f) => f.kind)), new Set(FAULT_KINDS));
  });
});
