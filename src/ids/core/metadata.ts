// The free-form labels of pools and allocations, and what a PATCH leaves of them.
import { mergePatch } from '../../core/merge-patch.js';
import { invalidRequest } from '../errors.js';

/** Most labels one pool or allocation keeps. */
export const MAX_LABELS = 64;

/**
 * The metadata (JSON) after a PATCH: the patch's own, or with a merge patch (RFC 7396) the patch
 * merged into what is kept — null removes a label, a null patch all of them.
 */
export function patchedMetadata(kept: string, patch: Record<string, unknown> | null, merge: boolean): string {
  const next = merge ? mergePatch(JSON.parse(kept), patch) : patch;
  const labels = next === null ? {} : next;
  const count = Object.keys(labels).length;
  if (count > MAX_LABELS)
    throw invalidRequest(`/metadata: the merged metadata would hold ${count} labels, more than ${MAX_LABELS}`, {
      errors: [{ pointer: '/metadata', detail: `more than ${MAX_LABELS} labels` }],
    });
  return JSON.stringify(labels);
}
