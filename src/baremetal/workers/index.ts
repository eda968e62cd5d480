// The bare-metal background work of a process (`allot serve` starts it once the database is
// ready): the allocation worker and the transition timers take the work the context's queue and
// timers hold; the conductor registers (after reconciling the Placement mirror, with the
// placement backend), resumes its own work, and then beats its heartbeat and takes over the work
// of dead conductors periodically. Stopping finishes what runs and marks the conductor offline,
// so the others may take over at once.
import type { BackgroundWorker } from '../../background/worker.js';
import { backoffDelay, sleep } from '../../core/backoff.js';
import { classifyFault } from '../../db/faults.js';
import type { BaremetalContext } from '../context.js';
import { completeTransition } from '../services/node-states.js';
import { ensureRegistered, unregister } from '../services/conductors.js';
import { allocationWork } from './allocation-worker.js';
import { heartbeatTask, resumeOwn, takeOverTask } from './conductor.js';
import { reconcileMirror } from './mirror.js';

/** Waits between start-up attempts while the database is away. */
const START_BACKOFF = { baseMs: 200, maxMs: 5_000 };
/** How soon a transition that met a database fault is tried again. */
const RETRY_TRANSITION_AFTER_FAULT_MS = 1_000;

export function createBaremetalWorker(ctx: BaremetalContext): BackgroundWorker {
  const heartbeat = heartbeatTask(ctx);
  const takeover = ctx.config.takeoverInterval > 0 ? takeOverTask(ctx) : null;
  let started: Promise<void> | null = null;
  let stopping = false;

  const finishTransition = (nodeId: number) =>
    completeTransition(ctx, nodeId).catch((err) => {
      // The database is away: the transition stays recorded on the node; try again later.
      if (classifyFault(err)) return void ctx.transitions.schedule(nodeId, RETRY_TRANSITION_AFTER_FAULT_MS);
      ctx.log.error({ err, node: nodeId }, 'finishing a node transition failed');
    });

  return {
    name: 'baremetal-conductor',
    start: () => {
      ctx.allocations.start(allocationWork(ctx));
      ctx.transitions.start(finishTransition);
      // Keeps trying while the database is away; a conductor that never starts would leave its
      // allocations to the others' take-over, and beat no heartbeat.
      started = (async () => {
        for (let attempt = 1; !stopping; attempt++) {
          try {
            if (ctx.backend.name === 'placement') await reconcileMirror(ctx);
            await ensureRegistered(ctx);
            await resumeOwn(ctx);
            break;
          } catch (err) {
            ctx.log.error({ err, attempt }, 'bare-metal conductor failed to start; trying again');
            await sleep(backoffDelay(attempt, START_BACKOFF));
          }
        }
        if (stopping) return;
        heartbeat.start();
        takeover?.start();
        ctx.log.info({ backend: ctx.backend.name }, 'bare-metal conductor started');
      })();
    },
    stop: async () => {
      stopping = true;
      await started;
      await heartbeat.stop();
      await takeover?.stop();
      await ctx.allocations.stop();
      await ctx.transitions.stop();
      await unregister(ctx).catch((err) => ctx.log.warn({ err }, 'could not unregister the conductor'));
    },
  };
}
