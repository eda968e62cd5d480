// JSON Patch (RFC 6902) as Ironic applies it to nodes and allocations: only add, replace and
// remove; paths of word characters and dashes; a patch is applied to the resource's API document
// and the result is then validated like a create. Removing a top-level field sets it to null
// (the caller turns null into the field's default: {} for documents). Pure; no I/O.
import { pyRepr } from '../../core/json-schema.js';
import { baremetalDomainError } from './domain-errors.js';

export interface PatchOp {
  op: 'add' | 'replace' | 'remove';
  path: string;
  value?: unknown;
}

/** The top-level field a patch operation touches (`/extra/foo` → `extra`). */
export const rootField = (op: PatchOp): string => op.path.split('/')[1]!;

/** Apply the operations in order to a copy of `doc`; an operation that cannot apply is a DomainError (`patch_failed`). */
export function applyPatch(doc: Record<string, unknown>, ops: PatchOp[]): Record<string, unknown> {
  const out = structuredClone(doc);
  for (const op of ops) {
    const fail = (reason: string) => baremetalDomainError('patch_failed', { op, reason }, `couldn't apply patch ${pyRepr(op)}: ${reason}`);
    if ((op.op === 'add' || op.op === 'replace') && !('value' in op))
      throw baremetalDomainError('patch_value_missing', { op }, `'add' and 'replace' operations need a value: ${pyRepr(op)}`);
    const segments = op.path.split('/').slice(1);
    if (segments.length === 1) {
      // top level: every patchable field is in the document (null when unset)
      setOwn(out, segments[0]!, op.op === 'remove' ? null : structuredClone(op.value));
      continue;
    }
    let parent: unknown = out;
    for (const segment of segments.slice(0, -1)) {
      const next = child(parent, segment);
      if (next === undefined) throw fail(`member '${segment}' not found in ${pyRepr(parent)}`);
      parent = next;
    }
    const last = segments[segments.length - 1]!;
    if (Array.isArray(parent)) {
      const index = last === '-' && op.op === 'add' ? parent.length : /^\d+$/.test(last) ? Number(last) : NaN;
      const limit = op.op === 'add' ? parent.length : parent.length - 1;
      if (!Number.isInteger(index) || index > limit) throw fail(`can't ${op.op === 'add' ? 'insert' : op.op} outside of list`);
      if (op.op === 'add') parent.splice(index, 0, structuredClone(op.value));
      else if (op.op === 'replace') parent[index] = structuredClone(op.value);
      else parent.splice(index, 1);
    } else if (parent !== null && typeof parent === 'object') {
      const obj = parent as Record<string, unknown>;
      const exists = Object.hasOwn(obj, last);
      if (op.op !== 'add' && !exists) throw fail(`can't ${op.op} a non-existent object '${last}'`);
      if (op.op === 'remove') delete obj[last];
      else setOwn(obj, last, structuredClone(op.value));
    } else {
      throw fail(`member '${last}' not found in ${pyRepr(parent)}`);
    }
  }
  return out;
}

/** Set an own property even when it is named `__proto__` (a JSON key like any other). */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

function child(parent: unknown, segment: string): unknown {
  if (Array.isArray(parent)) return /^\d+$/.test(segment) ? parent[Number(segment)] : undefined;
  if (parent !== null && typeof parent === 'object' && Object.hasOwn(parent, segment)) {
    return (parent as Record<string, unknown>)[segment];
  }
  return undefined;
}
