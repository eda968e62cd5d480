// Parsing shared by the bare-metal routes: booleans and UUIDs in query strings, empty bodies, the identifiers of nodes and allocations in paths; and what a view
// needs to know of the request. (Lists: listing.ts.)
import { isUuidLike, normalizeUuid } from '../../core/uuid.js';
import { BOOL_WORDS, isHostnameSafe, isUuidOrName, parseBool } from '../core/rules.js';
import { badRequest, frameworkError } from '../errors.js';
import { nodeNotFound } from '../services/node-reads.js';
import type { IronicRequest } from '../request.js';
import type { BaremetalContext } from '../context.js';
import type { ViewContext } from '../views.js';

export function queryBool(args: Record<string, string>, name: string): boolean | undefined {
  const raw = args[name];
  if (raw === undefined) return undefined;
  const value = parseBool(raw);
  if (value === null) throw badRequest(`Invalid ${name}: Unrecognized value '${raw}', acceptable values are: ${BOOL_WORDS.map((w) => `'${w}'`).join(', ')}`);
  return value;
}

export function queryUuid(args: Record<string, string>, name: string): string | undefined {
  const raw = args[name];
  if (raw === undefined) return undefined;
  if (!isUuidLike(raw)) throw badRequest(`Expected UUID for ${name}: ${raw}`);
  return normalizeUuid(raw);
}

/** The body of a 202/204 verb that takes no document (or an empty one). */
export function emptyBody(req: IronicRequest): void {
  const body = req.jsonBody();
  if (body === undefined || body === null) return;
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest(`Schema error for body: ${JSON.stringify(body)} is not of type 'object'`);
  const keys = Object.keys(body);
  if (keys.length)
    throw badRequest(
      `Schema error for body: Additional properties are not allowed (${keys.map((k) => `'${k}'`).join(', ')} ${keys.length === 1 ? 'was' : 'were'} unexpected)`,
    );
}

/**
 * The node a path names, checked as Ironic checks it before looking: neither a uuid nor a logical
 * name is a 400 "Expected UUID or name for <arg>: …" — in the web framework's envelope where
 * Ironic's argument is `node` (the node and its traits and allocation), in Ironic's own where it
 * is `node_ident` (states and maintenance). Before 1.5 names did not exist (a name is not found);
 * before 1.10 a name had to be a hostname.
 */
export function nodeIdent(req: IronicRequest, arg: 'node' | 'node_ident'): string {
  const ident = req.param('node');
  if (!isUuidOrName(ident)) {
    const message = `Expected UUID or name for ${arg}: ${ident}`;
    throw arg === 'node' ? frameworkError(400, message) : badRequest(message);
  }
  if (isUuidLike(ident)) return ident;
  if (!req.mv.atLeast('1.5')) throw nodeNotFound(ident);
  if (!req.mv.atLeast('1.10') && !isHostnameSafe(ident)) throw badRequest(invalidUuidOrName(ident));
  return ident;
}

/** The allocation a path names: neither a uuid nor a logical name is Ironic's 400 (`patch`: PATCH's wording). */
export function allocationIdent(req: IronicRequest, patch = false): string {
  const ident = req.param('allocation');
  if (!isUuidOrName(ident)) throw badRequest(patch ? invalidUuidOrName(ident) : `Expected UUID or name for allocation_ident: ${ident}`);
  return ident;
}

/** Ironic's InvalidUuidOrName. */
export const invalidUuidOrName = (ident: string) => `Expected a logical name or UUID but received ${ident}.`;

/** What a view needs of the request: its microversion, base URL (links) and this conductor. */
export const viewContext = (req: IronicRequest, ctx: BaremetalContext): ViewContext => ({ mv: req.mv, base: req.baseUrl, conductor: ctx.conductorId });
