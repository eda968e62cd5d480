// Placement microversions: what each one changed, and how a request's version is negotiated.
// Handlers ask `req.mv.atLeast('1.x')` and pick schemas with `byVersion` (core/microversion.ts).
import { placementError } from './errors.js';
import { Microversion } from '../core/microversion.js';

/** Every microversion, with what it added. The last entry is the maximum we serve. */
export const VERSIONS: ReadonlyArray<readonly [string, string]> = [
  ['1.0', 'initial API: providers, inventories, allocations, usages'],
  ['1.1', 'provider aggregates: GET/PUT /resource_providers/{uuid}/aggregates'],
  ['1.2', 'custom resource classes: /resource_classes'],
  ['1.3', 'member_of filter on GET /resource_providers'],
  ['1.4', 'resources filter on GET /resource_providers'],
  ['1.5', 'DELETE /resource_providers/{uuid}/inventories'],
  ['1.6', 'traits: /traits and /resource_providers/{uuid}/traits'],
  ['1.7', 'PUT /resource_classes/{name} creates a class idempotently, with no body'],
  ['1.8', 'project_id and user_id required when writing allocations'],
  ['1.9', 'GET /usages for a project (and user)'],
  ['1.10', 'GET /allocation_candidates'],
  ['1.11', "'allocations' link on providers"],
  ['1.12', 'PUT /allocations/{consumer} takes the dict form; candidates return it'],
  ['1.13', 'POST /allocations for several consumers at once'],
  ['1.14', 'nested providers: parent_provider_uuid, root_provider_uuid, in_tree'],
  ['1.15', 'last-modified and cache-control headers'],
  ['1.16', 'limit on GET /allocation_candidates'],
  ['1.17', 'required traits on GET /allocation_candidates'],
  ['1.18', 'required traits on GET /resource_providers'],
  ['1.19', 'aggregates carry and require resource_provider_generation'],
  ['1.20', 'POST /resource_providers answers 200 with the provider'],
  ['1.21', 'member_of on GET /allocation_candidates'],
  ['1.22', 'forbidden traits (!TRAIT)'],
  ['1.23', 'error codes in error responses'],
  ['1.24', 'repeated member_of parameters'],
  ['1.25', 'granular request groups on GET /allocation_candidates'],
  ['1.26', 'reserved may equal total'],
  ['1.27', 'provider_summaries list every inventory'],
  ['1.28', 'consumer generations'],
  ['1.29', 'nested providers in allocation candidates; parent and root in summaries'],
  ['1.30', 'POST /reshaper'],
  ['1.31', 'in_tree (and in_tree<N>) on GET /allocation_candidates'],
  ['1.32', 'forbidden aggregates (member_of=!…)'],
  ['1.33', 'request group suffixes may be strings'],
  ['1.34', 'mappings in allocation requests'],
  ['1.35', 'root_required on GET /allocation_candidates'],
  ['1.36', 'same_subtree and resourceless request groups'],
  ['1.37', 'providers may be re-parented and un-parented'],
  ['1.38', 'consumer types'],
  ['1.39', 'any-of traits: required=in:A,B'],
];

export const MIN_VERSION = VERSIONS[0]![0];
export const MAX_VERSION = VERSIONS[VERSIONS.length - 1]![0];

const MIN = Microversion.parse(MIN_VERSION);
const MAX = Microversion.parse(MAX_VERSION);

/**
 * The version a request asked for in `OpenStack-API-Version: placement X.Y` (or `latest`).
 * No header means the minimum. Malformed is 400; outside what we serve is 406.
 */
export function negotiate(header: string | string[] | undefined): Microversion {
  const requested = placementVersionIn(header);
  if (requested === null) return MIN;
  if (requested === 'latest') return MAX;
  const m = /^(\d+)\.(\d+)$/.exec(requested);
  if (!m) throw placementError(400, `invalid version string: ${requested}`);
  const version = new Microversion(Number(m[1]), Number(m[2]));
  if (version.compare(MIN) < 0 || version.compare(MAX) > 0) {
    throw placementError(406, `Unacceptable version header: ${requested}`);
  }
  return version;
}

/** Find the placement entry in a header that may name several services: "compute 2.1, placement 1.5". */
function placementVersionIn(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  const values = Array.isArray(header) ? header : [header];
  for (const value of values) {
    for (const part of value.split(',')) {
      const [service, ...rest] = part.trim().split(/\s+/);
      if (service?.toLowerCase() === 'placement') return rest.join(' ').trim().toLowerCase();
    }
  }
  return null;
}
