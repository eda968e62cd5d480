import { randomUUID } from 'node:crypto';

const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

export const newUuid = (): string => randomUUID();

export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}

/** The 32 hex digits of a uuid-like value (see isUuidLike). */
const hexOf = (value: string) =>
  value
    .replace(/urn:/g, '')
    .replace(/uuid:/g, '')
    .replace(/^[{}]+|[{}]+$/g, '')
    .replace(/-/g, '');

/**
 * oslo.utils' is_uuid_like, which Placement's `uuid` format checks: 32 hex digits once an
 * `urn:`/`uuid:` prefix, surrounding braces and every hyphen are dropped (any case).
 */
export function isUuidLike(value: string): boolean {
  return /^[0-9a-fA-F]{32}$/.test(hexOf(value));
}

/** The canonical form (lower case, dashed) of a uuid-like value, as Python's str(uuid.UUID(value)). */
export function normalizeUuid(value: string): string {
  const hex = hexOf(value).toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
