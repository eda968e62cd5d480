// `If-Match` (RFC 9110 §13.1.1) on the identifier API. ETags are the strong `"<version>"`; the
// header may list several, and is compared strongly: a weak tag (`W/"3"`) never matches, whatever
// its version, and neither does a tag this API never gave.
import { idsDomainError } from './domain-errors.js';

/** The versions an `If-Match` names: null when it is absent or `*` (anything matches). */
export type IfMatch = readonly number[] | null;

const ENTITY_TAG = /^\s*(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"\s*$/;

/** Parse the header's value; undefined when it is not a list of entity tags. */
export function parseIfMatch(header: string | undefined): IfMatch | undefined {
  if (header === undefined || header.trim() === '*') return null;
  const versions: number[] = [];
  for (const part of header.split(',')) {
    const m = ENTITY_TAG.exec(part);
    if (!m) return undefined;
    if (!m[1] && /^\d{1,9}$/.test(m[2]!)) versions.push(Number(m[2]));
  }
  return versions;
}

/** Whether the current version is one the header names. */
export const matches = (ifMatch: IfMatch, current: number): boolean => ifMatch === null || ifMatch.includes(current);

/** 412 `version_mismatch` unless the current version is one the header names. */
export function requireMatch(ifMatch: IfMatch, current: number): void {
  if (!matches(ifMatch, current)) throw idsDomainError('version_mismatch', { current });
}
