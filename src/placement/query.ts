// Parsing of the query parameters shared by GET /resource_providers and
// GET /allocation_candidates: `resources`, `required` (traits) and `member_of` (aggregates),
// with the microversion rules for each form. Errors use Placement's wording.
import { isUuid, normalizeUuid } from '../core/uuid.js';
import type { QueryParams } from '../server/http.js';
import { CODES, placementError } from './errors.js';
import type { Microversion } from '../core/microversion.js';

/** resources=VCPU:2,MEMORY_MB:1024 → Map(class → amount); a repeated class keeps the last amount. */
export function parseResources(value: string): Map<string, number> {
  const form = 'Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024.';
  if (value.trim() === '') throw placementError(400, `${form} Got: empty string.`);
  const out = new Map<string, number>();
  for (const part of value.split(',')) {
    const pieces = part.split(':');
    if (pieces.length !== 2) throw placementError(400, `${form} Got: ${part}.`);
    const [name, amountText] = pieces as [string, string];
    if (!/^\s*[+-]?\d+\s*$/.test(amountText)) {
      throw placementError(400, `Requested resource ${name} expected positive integer amount. Got: ${amountText}.`);
    }
    const amount = Number(amountText);
    if (amount < 1) throw placementError(400, `Requested resource ${name} requires amount >= 1. Got: ${amount}.`);
    out.set(name, amount);
  }
  return out;
}

/** A trait filter: every `required`, none of `forbidden`, and at least one of each `anyOf` set. */
export interface TraitFilter {
  required: Set<string>;
  forbidden: Set<string>;
  anyOf: string[][];
}

export const emptyTraitFilter = (): TraitFilter => ({ required: new Set(), forbidden: new Set(), anyOf: [] });

export function traitNames(filter: TraitFilter): string[] {
  return [...new Set([...filter.required, ...filter.forbidden, ...filter.anyOf.flat()])];
}

/**
 * The `required<suffix>` parameter(s). Before 1.39 only the last one counts (as a Python MultiDict
 * gives it); from 1.39 repeated parameters are ANDed and `in:A,B` means any of A and B.
 */
export function parseTraits(query: QueryParams, key: string, mv: Microversion): TraitFilter {
  const allowForbidden = mv.atLeast('1.22');
  const allowAnyOf = mv.atLeast('1.39');
  const values = allowAnyOf ? query.all(key) : query.has(key) ? [query.get(key)!] : [];
  const filter = emptyTraitFilter();
  for (const value of values) {
    if (value.startsWith('in:')) {
      if (!allowAnyOf) throw placementError(400, "The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39.");
      const names = value.slice(3).split(',').map((s) => s.trim());
      if (names.some((n) => n === '' || n.startsWith('!'))) {
        throw placementError(400, `Invalid query string parameters: Expected '${key}' parameter value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: ${value}`);
      }
      filter.anyOf.push([...new Set(names)]);
      continue;
    }
    const names = value.split(',').map((s) => s.trim());
    const valid = names.every((n) => n !== '' && n !== '!' && (allowForbidden || !n.startsWith('!')));
    if (!valid) {
      const form = allowForbidden ? 'HW_CPU_X86_VMX,!CUSTOM_MAGIC' : 'HW_CPU_X86_VMX,CUSTOM_MAGIC';
      throw placementError(400, `Invalid query string parameters: Expected '${key}' parameter value of the form: ${form}. Got: ${value}`);
    }
    for (const n of names) {
      if (n.startsWith('!')) filter.forbidden.add(n.slice(1));
      else filter.required.add(n);
    }
  }
  return filter;
}

/** An aggregate filter: member of at least one aggregate of each `anyOf` set, and of none of `forbidden`. */
export interface AggregateFilter {
  anyOf: string[][];
  forbidden: Set<string>;
}

export function parseMemberOf(query: QueryParams, key: string, mv: Microversion): AggregateFilter {
  const values = query.all(key);
  if (values.length > 1 && !mv.atLeast('1.24')) throw placementError(400, `Multiple ${key} parameters are not supported`);
  const filter: AggregateFilter = { anyOf: [], forbidden: new Set() };
  for (const raw of values) {
    let value = raw;
    const forbidden = value.startsWith('!');
    if (forbidden) {
      if (!mv.atLeast('1.32')) throw placementError(400, 'Forbidden member_of parameters are not supported in the specified microversion');
      value = value.slice(1);
    }
    const prefixed = value.startsWith('in:');
    if (prefixed) value = value.slice(3);
    if (value.includes(',') && !prefixed) {
      throw placementError(400, `Multiple values for '${key}' must be prefixed with the 'in:' or '!in:' keyword. Got: ${raw}`);
    }
    const uuids = value.split(',');
    if (!uuids.every(isUuid)) {
      throw placementError(400, `Invalid query string parameters: Expected '${key}' parameter to contain valid UUID(s). Got: ${raw}`);
    }
    const normalized = [...new Set(uuids.map(normalizeUuid))];
    if (forbidden) normalized.forEach((u) => filter.forbidden.add(u));
    else filter.anyOf.push(normalized);
  }
  return filter;
}

/** Reject query keys that may appear only once but were repeated. */
export function requireSingle(query: QueryParams, key: string): void {
  if (query.all(key).length > 1) throw placementError(400, `Query parameter '${key}' may be given only once.`, CODES.duplicateKey);
}
