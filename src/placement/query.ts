// Parsing of the query parameters shared by GET /resource_providers and
// GET /allocation_candidates: `resources`, `required` (traits) and `member_of` (aggregates),
// with the microversion rules for each form. Errors use Placement's wording.
import { isUuidLike } from '../core/uuid.js';
import type { QueryParams } from '../http/query.js';
import { placementError } from './errors.js';
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

/**
 * The `required<suffix>` parameter(s). Before 1.39 only the last one counts (as a Python MultiDict
 * gives it); from 1.39 repeated parameters are ANDed and `in:A,B` means any of A and B. Messages
 * are Placement's, which name the parameter `required` whatever its suffix.
 */
export function parseTraits(query: QueryParams, key: string, mv: Microversion): TraitFilter {
  const allowForbidden = mv.atLeast('1.22');
  const allowAnyOf = mv.atLeast('1.39');
  const values = allowAnyOf ? query.all(key) : query.has(key) ? [query.get(key)!] : [];
  const filter = emptyTraitFilter();
  for (const value of values) {
    const parsed = parseTraitValue(value, allowForbidden, allowAnyOf);
    if (parsed.anyOf) filter.anyOf.push(parsed.anyOf);
    for (const n of parsed.required) filter.required.add(n);
    for (const n of parsed.forbidden) filter.forbidden.add(n);
  }
  return filter;
}

/** One trait-list value: `A,!B` (forbidden from 1.22) or `in:A,B` (any of, from 1.39). */
export function parseTraitValue(value: string, allowForbidden: boolean, allowAnyOf: boolean): { required: string[]; forbidden: string[]; anyOf?: string[] } {
  const invalid = 'Invalid query string parameters:';
  if (value.startsWith('in:')) {
    if (!allowAnyOf) throw placementError(400, `${invalid} The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. Got: ${value}`);
    const names = [
      ...new Set(
        value
          .slice(3)
          .split(',')
          .map((s) => s.trim()),
      ),
    ];
    if (names.some((n) => n === '')) {
      throw placementError(400, `${invalid} Expected 'required' parameter value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: ${value}`);
    }
    if (names.some((n) => n.startsWith('!'))) {
      throw placementError(400, `${invalid} The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden traits. Got: ${value}`);
    }
    return { required: [], forbidden: [], anyOf: names };
  }
  const names = value.split(',').map((s) => s.trim());
  const forbidden = names.filter((n) => n.startsWith('!')).map((n) => n.replace(/^!+/, ''));
  const required = names.filter((n) => !n.startsWith('!'));
  if ([...names, ...forbidden].some((n) => n === '')) {
    const form = allowForbidden ? 'HW_CPU_X86_VMX,!CUSTOM_MAGIC' : 'HW_CPU_X86_VMX,CUSTOM_MAGIC';
    throw placementError(400, `${invalid} Expected 'required' parameter value of the form: ${form}. Got an empty trait in: ${value}`);
  }
  if (forbidden.length > 0 && !allowForbidden) {
    throw placementError(400, `${invalid} Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: ${value}`);
  }
  return { required, forbidden };
}

/** An aggregate filter: member of at least one aggregate of each `anyOf` set, and of none of `forbidden`. */
export interface AggregateFilter {
  anyOf: string[][];
  forbidden: Set<string>;
}

/** The `member_of<suffix>` parameter(s): repeatable from 1.24, forbidden (`!`, `!in:`) from 1.32. */
export function parseMemberOf(query: QueryParams, key: string, mv: Microversion): AggregateFilter {
  const values = query.all(key);
  const suffix = key.slice('member_of'.length);
  if (values.length > 1 && !mv.atLeast('1.24')) throw placementError(400, `Multiple member_of${suffix} parameters are not supported`);
  const filter: AggregateFilter = { anyOf: [], forbidden: new Set() };
  for (const value of values) {
    if (value.includes(',') && !value.startsWith('in:') && !value.startsWith('!in:')) {
      throw placementError(
        400,
        `Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword using the valid microversion. Got: ${value}`,
      );
    }
    let required: string[] = [];
    let forbidden: string[] = [];
    if (value.startsWith('!in:')) forbidden = value.slice(4).split(',');
    else if (value.startsWith('!')) forbidden = [value.slice(1)];
    else if (value.startsWith('in:')) required = value.slice(3).split(',');
    else required = [value];
    for (const uuid of [...required, ...forbidden]) {
      if (!isUuidLike(uuid))
        throw placementError(400, `Invalid query string parameters: Expected 'member_of' parameter to contain valid UUID(s). Got: ${uuid}`);
    }
    if (required.length > 0) filter.anyOf.push([...new Set(required)]);
    if (forbidden.length > 0) {
      if (!mv.atLeast('1.32')) throw placementError(400, `Forbidden member_of${suffix} parameters are not supported in the specified microversion`);
      for (const u of forbidden) filter.forbidden.add(u);
    }
  }
  return filter;
}

/** One request group as the query string gives it (`resources<S>`, `required<S>`, `member_of<S>`, `in_tree<S>`). */
export interface ParsedGroup {
  /** '' for the unsuffixed group; otherwise the suffix as written (`1`, `_NET`) */
  suffix: string;
  /** null when the group has no `resources<S>` (a resourceless group, 1.36) */
  resources: Map<string, number> | null;
  traits: TraitFilter;
  memberOf: AggregateFilter;
  /** normalized uuid of `in_tree<S>` */
  inTree: string | null;
}

const GROUP_KEY = /^(resources|required|member_of|in_tree)([1-9][0-9]*)?$/;
const GROUP_KEY_1_33 = /^(resources|required|member_of|in_tree)([a-zA-Z0-9_-]{1,64})?$/;

/**
 * The request groups of GET /allocation_candidates, in the order their first parameter appears.
 * Suffixes are numbers before 1.33, then 1–64 characters of [a-zA-Z0-9_-]. A repeated
 * `resources<S>` or `in_tree<S>` keeps the last value; every value is still checked.
 */
export function parseRequestGroups(query: QueryParams, mv: Microversion): Map<string, ParsedGroup> {
  const pattern = mv.atLeast('1.33') ? GROUP_KEY_1_33 : GROUP_KEY;
  const groups = new Map<string, ParsedGroup>();
  for (const [key, value] of query.pairs) {
    const match = pattern.exec(key);
    if (!match) continue;
    const [, kind, suffix = ''] = match;
    let group = groups.get(suffix);
    if (!group) {
      group = { suffix, resources: null, traits: emptyTraitFilter(), memberOf: { anyOf: [], forbidden: new Set() }, inTree: null };
      groups.set(suffix, group);
    }
    if (kind === 'resources') group.resources = parseResources(value);
    else if (kind === 'required') group.traits = parseTraits(query, key, mv);
    else if (kind === 'member_of') group.memberOf = parseMemberOf(query, key, mv);
    else {
      const uuid = value.trim();
      if (!isUuidLike(uuid)) throw placementError(400, `Invalid query string parameters: Expected 'in_tree' parameter to be a format of uuid. Got: ${value}`);
      group.inTree = uuid;
    }
  }
  return groups;
}
