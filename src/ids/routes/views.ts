// How the identifier API shows its resources: pure functions from what the services return to
// the JSON bodies (docs/ids.md, openapi.ts). Each returns its response schema's wire type
// (src/client/ids-wire.ts, generated from schemas.ts), so a view that writes a member the schema
// does not describe, or leaves out one it requires, does not compile.
import type * as Wire from '../../client/ids-wire.js';
import { deserializeSpace, formatPoint, formatValue } from '../core/pool-space.js';
import { wireUtilization } from '../core/utilization.js';
import { type ForcedRelease, forcedReleasesOf, isPoolRelease } from '../core/instance-values.js';
import { type Span, fromKey } from '../core/values.js';
import type { PooledAllocation } from '../services/allocations.js';
import type { OutboxRow } from '../services/outbox.js';
import type { PoolDetails } from '../services/pools.js';
import { type InstanceDetails, attributeSet } from '../services/service-instances.js';
import type { Spec } from '../services/specs.js';

export function poolView({ row, counts }: PoolDetails): Wire.Pool {
  const space = deserializeSpace(row.definition);
  const spans = (list: Span[]) => list.map((s) => ({ lower: formatPoint(space, s.first), upper: formatPoint(space, s.last) }));
  return {
    name: row.name,
    // the columns hold what the service wrote: one of the schema's values
    kind: row.kind as Wire.PoolKind,
    project_id: row.project_id,
    family: space.family === null ? null : space.family === 4 ? 'ipv4' : 'ipv6',
    ranges: spans(space.ranges),
    excluded: spans(space.excluded),
    static: spans(space.staticBand),
    prefix_length: space.prefixLength,
    strategy: row.strategy as Wire.Strategy,
    description: row.description,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    generation: row.generation,
    utilization: wireUtilization(counts, row.allocation_count),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function allocationView({ pool, row }: PooledAllocation): Wire.Allocation {
  const block = 1n << BigInt(row.block_log2);
  const view: Wire.Allocation = {
    id: row.id,
    pool: pool.name,
    owner: row.owner,
    purpose: row.purpose,
    value: formatValue(pool.space, fromKey(row.first_key), block),
    last_value: formatPoint(pool.space, fromKey(row.last_key)),
    state: row.state as Wire.Allocation['state'],
    expires_at: row.expires_at,
    version: row.version,
    source: row.source as Wire.Allocation['source'],
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
  if (pool.space.kind === 'prefix') {
    view.prefix_length = (pool.space.family === 4 ? 32 : 128) - row.block_log2;
  } else view.count = Number(block);
  return view;
}

export function specView(spec: Spec): Wire.Spec {
  const { id: _id, ...rest } = spec;
  return rest;
}

/** A forced release as clients see it: with its source, without a pool value's key. */
function shownRelease(f: ForcedRelease) {
  if (!isPoolRelease(f)) return f;
  const { key: _, ...shown } = f;
  return { source: 'pool' as const, ...shown };
}

export function instanceView({ row, spec, pendingDeallocations, holdings }: InstanceDetails): Wire.Instance {
  return {
    id: row.id,
    project_id: row.project_id,
    service_type: row.service_type,
    allocation_spec: spec.name,
    lifecycle: row.lifecycle,
    state: row.state,
    version: row.version,
    candidate_attributes: attributeSet(row.candidate),
    candidate_validated: row.candidate_validated === 1,
    active_attributes: attributeSet(row.active),
    rollback_attributes: attributeSet(row.rollback),
    last_error: row.last_error,
    forced_releases: forcedReleasesOf(row.forced_releases).map(shownRelease),
    pending_deallocations: pendingDeallocations,
    holdings,
    created_at: row.created_at,
    updated_at: row.updated_at,
    terminated_at: row.terminated_at,
  };
}

export function outboxView(row: OutboxRow): Wire.OutboxEntry {
  return {
    id: row.id,
    inventory: row.inventory,
    operation: row.operation,
    owner: row.owner_key,
    attribute: row.attribute,
    instance_id: row.instance_id,
    value: row.value === null ? null : (JSON.parse(row.value) as unknown),
    state: row.state as Wire.OutboxEntry['state'],
    attempts: row.attempts,
    next_attempt_at: row.state === 'pending' ? row.next_attempt_at : null,
    last_error: row.last_error,
    created_at: row.created_at,
    updated_at: row.updated_at,
    completed_at: row.completed_at,
  };
}
