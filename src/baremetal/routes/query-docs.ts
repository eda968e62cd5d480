// The query parameters of Ironic's lists as the OpenAPI document shows them (endpoints declare
// them as their `query`; the handlers read the parameters through IronicRequest.queryArgs).
import type { JsonSchema } from '../../core/json-schema.js';

/** A list's paging, sorting and field selection, and its own filters. */
export const listQuery = (extra: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  properties: {
    limit: { type: 'integer' },
    marker: { type: 'string' },
    sort_key: { type: 'string' },
    sort_dir: { type: 'string', enum: ['asc', 'desc'] },
    fields: { type: 'string' },
    ...extra,
  },
});

export const text: JsonSchema = { type: 'string' };
export const flag: JsonSchema = { type: 'boolean' };

/** The node list's filters. */
export const NODE_FILTERS: Record<string, JsonSchema> = {
  instance_uuid: text,
  maintenance: flag,
  associated: flag,
  retired: flag,
  sharded: flag,
  provision_state: text,
  driver: text,
  resource_class: text,
  conductor_group: text,
  conductor: text,
  fault: text,
  owner: text,
  lessee: text,
  description_contains: text,
  shard: text,
};
