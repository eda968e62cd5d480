// A node's two locks, as every node write takes them: its row, locked first in each transaction
// (then, if needed, its allocation: one lock order), and its operation lock (`reservation`), held
// by an allocation or a transition while it runs; a change that meets it waits (nodeTransaction)
// or is refused (node_locked). Also the refusal every destructive write shares: a protected node.
import { backoffDelay, sleep } from '../../core/backoff.js';
import { DomainError } from '../../core/errors.js';
import type { Tx } from '../../db/database.js';
import { transaction } from '../../db/transaction.js';
import type { BaremetalContext } from '../context.js';
import { type NodeRecord, lockNode, nodeNotFound } from '../store/nodes.js';
import { baremetalDomainError } from '../core/domain-errors.js';

const nodeLocked = (node: NodeRecord) =>
  baremetalDomainError('node_locked', { node: node.uuid, host: node.reservation }, `node ${node.uuid} is locked by ${node.reservation}`);
export const nodeProtected = (node: NodeRecord) => baremetalDomainError('node_protected', { node: node.uuid }, `node ${node.uuid} is protected`);

/** A node that exists, locked for this transaction. */
export async function requireLockedNode(tx: Tx, ident: string | number): Promise<NodeRecord> {
  const node = await lockNode(tx, ident);
  if (!node) throw nodeNotFound(String(ident));
  return node;
}

/** Refused while another operation (an allocation or a transition) holds the node's lock. */
export function requireUnlocked(node: NodeRecord): void {
  if (node.reservation !== null) throw nodeLocked(node);
}

/** Pauses between tries of a change that met the node's lock. */
const LOCK_BACKOFF = { baseMs: 10, maxMs: 200 };

/**
 * A transaction that changes a node and is refused while another operation holds the node's lock
 * (requireUnlocked): run again until the lock is free, for at most --node-lock-wait, as Ironic's
 * conductor tries a node's lock several times before it answers NodeLocked — a change right after
 * a quick transition (a power change, 10 ms here) waits for it instead of failing. The wait is
 * outside the transaction: the transition that holds the lock needs the node's row to finish.
 */
export async function nodeTransaction<T>(ctx: BaremetalContext, work: (tx: Tx) => Promise<T>): Promise<T> {
  const deadline = performance.now() + ctx.config.nodeLockWait;
  for (let round = 1; ; round++) {
    try {
      return await transaction(ctx.database, work);
    } catch (err) {
      const left = deadline - performance.now();
      if (!(err instanceof DomainError && err.code === 'node_locked') || left <= 0) throw err;
      await sleep(Math.min(left, backoffDelay(round, LOCK_BACKOFF)));
    }
  }
}
