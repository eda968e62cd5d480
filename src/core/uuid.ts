import { randomUUID } from 'node:crypto';

const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

export const newUuid = (): string => randomUUID();

export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}

/** The canonical form (lower case, dashed) of a UUID given with or without dashes. */
export function normalizeUuid(value: string): string {
  const hex = value.replace(/-/g, '').toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
