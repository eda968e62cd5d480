// The rules of node and allocation fields, pure: names, traits, booleans as Ironic reads them,
// the fake-hardware driver and its interfaces, conductor groups, and Placement's names for
// bare-metal resource classes. Facts of the Ironic API (or allot's choice, stated where made).
import { isUuidLike } from '../../core/uuid.js';
import standardTraits from '../../placement/data/standard-traits.json' with { type: 'json' };

// ---- names -----------------------------------------------------------------------------------

/**
 * A node or allocation name: RFC 3986 unreserved characters (1.10+), at most 255, and not
 * uuid-like as oslo's is_uuid_like sees it (such a name could not be told from a uuid in a URL).
 */
export function isValidName(name: string): boolean {
  return name.length > 0 && name.length <= 255 && /^[A-Za-z0-9\-._~]+$/.test(name) && !isUuidLike(name);
}

/** Ironic's logical name: RFC 3986 unreserved characters, at most 255. */
export function isLogicalName(ident: string): boolean {
  return ident.length <= 255 && /^[A-Za-z0-9\-._~]+$/.test(ident);
}

/** What a path or a query may name a node or allocation by: uuid-like, or a logical name (Ironic's rule). */
export function isUuidOrName(ident: string): boolean {
  return isUuidLike(ident) || isLogicalName(ident);
}

/** Node names before 1.10: hostnames (RFC 952/1123 as Ironic's old check reads them). */
export function isHostnameSafe(name: string): boolean {
  return name.length <= 255 && /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9\-_]{0,62}[a-z0-9])*\.?$/.test(name);
}

// ---- traits ----------------------------------------------------------------------------------

export const CUSTOM_TRAIT_PATTERN = '^CUSTOM_[A-Z0-9_]+$';
export const STANDARD_TRAITS: readonly string[] = standardTraits.traits;
/** Ironic's limit on traits per node. */
export const MAX_TRAITS_PER_NODE = 50;

// ---- booleans --------------------------------------------------------------------------------

/** Booleans in query strings and JSON patches, as oslo's strutils accepts them. */
const TRUE = ['1', 't', 'true', 'on', 'y', 'yes'];
const FALSE = ['0', 'f', 'false', 'off', 'n', 'no'];
export function parseBool(value: unknown): boolean | null {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return null;
  const v = value.trim().toLowerCase();
  if (TRUE.includes(v)) return true;
  if (FALSE.includes(v)) return false;
  return null;
}
/** The accepted words, sorted, for error messages. */
export const BOOL_WORDS: readonly string[] = [...TRUE, ...FALSE].sort();

// ---- the fake-hardware driver ----------------------------------------------------------------

/** The one hardware type allot simulates. */
export const DRIVER = 'fake-hardware';

/** fake-hardware's hardware interfaces: the default first, then the others it can be given. */
export const INTERFACES: Record<string, readonly string[]> = {
  bios_interface: ['fake', 'no-bios'],
  boot_interface: ['fake'],
  console_interface: ['fake', 'no-console'],
  deploy_interface: ['fake'],
  inspect_interface: ['fake', 'no-inspect'],
  management_interface: ['fake'],
  network_interface: ['noop'],
  power_interface: ['fake'],
  raid_interface: ['fake', 'no-raid'],
  rescue_interface: ['fake', 'no-rescue'],
  storage_interface: ['noop'],
  vendor_interface: ['fake', 'no-vendor'],
};

/** Ironic's limit on a node's description, in characters. */
export const MAX_DESCRIPTION = 4096;

/** A conductor group: letters, digits, `_`, `-`, `.` and `:` (Ironic's rule). */
export const isValidConductorGroup = (group: string): boolean => /^[a-zA-Z0-9_\-.:]*$/.test(group);

// ---- Placement -------------------------------------------------------------------------------

/**
 * The Placement resource class of a node's resource class, as Nova's Ironic driver names it:
 * `CUSTOM_` + the name in upper case with anything but A-Z, 0-9 and _ replaced by _.
 */
export function placementResourceClass(resourceClass: string): string {
  return `CUSTOM_${resourceClass.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}`;
}
