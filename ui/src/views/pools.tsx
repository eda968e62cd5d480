// Identifier pools: utilization, a strip showing where the free values lie, and the allocations
// of the pool chosen.
import { useState } from 'preact/hooks';
import type { Api } from '../api.js';
import { FreeStrip, Meter } from '../charts.js';
import { Badge, Empty, ErrorNotice, Loading, Panel, Stat, usePage } from '../components.js';
import { bigCount, count, duration, percent, timestamp } from '../format.js';
import type { IdAllocation, Pool, PoolView } from '../ids-data.js';
import { instanceLink, instanceOfOwner } from '../links.js';
import { type Live, useLive } from '../live.js';

const ALLOCATIONS_SHOWN = 100;

/**
 * `pool`: the pool chosen first; `owner`: list only its allocations in that pool (a link from a
 * service instance's holdings), until another pool is chosen.
 */
export function PoolsView(props: { live: Live<PoolView[]>; api: Api; pool?: string | null; owner?: string | null }) {
  const { data, error } = props.live;
  const [chosen, setChosen] = useState<string | null>(props.pool ?? null);
  const [owner, setOwner] = useState<string | null>(props.owner ?? null);
  if (!data) return error ? <ErrorNotice error={error} stale={false} /> : <Loading />;
  const selected = data.find((p) => p.pool.name === chosen) ?? data[0];
  const allocations = data.reduce((n, p) => n + p.pool.utilization.allocations, 0);
  const fullest = [...data].sort((a, b) => b.pool.utilization.used_percent - a.pool.utilization.used_percent)[0];
  return (
    <div class="view" data-view="pools">
      <ErrorNotice error={error} stale />
      <div class="stats">
        <Stat id="pools" label="identifier pools" value={count(data.length)} />
        <Stat id="id-allocations" label="allocations" value={count(allocations)} />
        <Stat id="fullest-pool" label="fullest pool" value={fullest ? `${fullest.pool.name} ${percent(fullest.pool.utilization.used_percent / 100)}` : '–'} />
      </div>
      <Panel id="pool-list" title="Pools" subtitle={<StripLegend />} wide>
        {data.length === 0 ? (
          <Empty>No identifier pools yet.</Empty>
        ) : (
          <div class="pools">
            {data.map((p) => (
              <PoolRow
                key={p.pool.name}
                view={p}
                selected={p === selected}
                onSelect={() => {
                  setChosen(p.pool.name);
                  setOwner(null);
                }}
              />
            ))}
          </div>
        )}
      </Panel>
      {selected && <PoolAllocations api={props.api} pool={selected.pool} owner={owner} showAll={() => setOwner(null)} />}
    </div>
  );
}

function StripLegend() {
  return (
    <span class="chart-legend">
      <span class="swatch used" /> taken <span class="swatch freeish" /> free <span class="swatch idle" /> excluded or outside the ranges{' '}
      <span class="swatch static" /> static band
    </span>
  );
}

function spanText(pool: Pool): string {
  return pool.ranges.map((r) => (r.lower === r.upper ? String(r.lower) : `${r.lower} – ${r.upper}`)).join(', ');
}

function PoolRow(props: { view: PoolView; selected: boolean; onSelect: () => void }) {
  const { pool, buckets, staticMarks } = props.view;
  const u = pool.utilization;
  const first = pool.ranges[0]?.lower;
  const last = pool.ranges[pool.ranges.length - 1]?.upper;
  return (
    <div class={`pool${props.selected ? ' selected' : ''}`} data-pool={pool.name}>
      <div class="pool-head">
        <button type="button" class="pool-name linklike" onClick={props.onSelect} aria-pressed={props.selected}>
          {pool.name}
        </button>
        <Badge color="#e2e8f0">{pool.kind === 'prefix' ? `prefix /${pool.prefix_length}` : pool.family ? `${pool.kind} ${pool.family}` : pool.kind}</Badge>
        <span class="muted small">{spanText(pool)}</span>
        <span class="muted small">strategy {pool.strategy}</span>
        {pool.description && <span class="small">{pool.description}</span>}
      </div>
      <div class="pool-body">
        <div class="pool-util">
          <div class="pool-percent" data-field="used-percent">
            {percent(u.used_percent / 100)}
          </div>
          <Meter fraction={u.used_percent / 100} label={`${pool.name}: ${u.used} of ${u.total} used`} />
          <div class="small">
            <span data-field="used">{bigCount(u.used)}</span> of {bigCount(u.total)}{' '}
            {pool.kind === 'integer' ? 'values' : pool.kind === 'address' ? 'addresses' : `/${pool.prefix_length} prefixes`} taken
          </div>
          <div class="small muted">
            <span data-field="allocations">{count(u.allocations)}</span> allocations · largest free block {bigCount(u.largest_free_block)}
          </div>
        </div>
        <div class="pool-strip">
          <FreeStrip buckets={buckets} staticMarks={staticMarks} label={`free values of ${pool.name}`} />
          <div class="strip-axis small muted">
            <span>{String(first ?? '')}</span>
            {!props.view.freeComplete && <span>first {count(props.view.freeSpans)} free spans drawn</span>}
            <span>{String(last ?? '')}</span>
          </div>
        </div>
      </div>
    </div>
  );
}

function valueText(a: IdAllocation): string {
  if (typeof a.value === 'string' && a.value.includes('/')) return a.value;
  return a.value === a.last_value ? String(a.value) : `${a.value} – ${a.last_value}`;
}

function PoolAllocations(props: { api: Api; pool: Pool; owner: string | null; showAll: () => void }) {
  const name = props.pool.name;
  const ownerQuery = props.owner === null ? '' : `&owner=${encodeURIComponent(props.owner)}`;
  const live = useLive(
    async (signal) =>
      (
        await props.api.get<{ items: IdAllocation[]; next_cursor: string | null }>(
          'ids',
          `/v1/allocations?pool=${encodeURIComponent(name)}${ownerQuery}&limit=${ALLOCATIONS_SHOWN}`,
          signal,
        )
      ).body,
    `pool:${name}:${props.owner ?? ''}`,
  );
  const items = live.data?.items ?? [];
  const { rows, pager } = usePage(items);
  return (
    <Panel
      id="pool-allocations"
      title={props.owner === null ? `Allocations in ${name}` : `Allocations in ${name} held by ${props.owner}`}
      subtitle={
        props.owner === null
          ? `${count(props.pool.utilization.allocations)} allocations${live.data?.next_cursor ? `; the first ${ALLOCATIONS_SHOWN} listed` : ''}`
          : `${count(items.length)} of the pool's ${count(props.pool.utilization.allocations)} allocations`
      }
      actions={
        props.owner !== null && (
          <button type="button" onClick={props.showAll}>
            all allocations
          </button>
        )
      }
      wide
    >
      <ErrorNotice error={live.error} stale={!!live.data} />
      {!live.data ? (
        <Loading />
      ) : items.length === 0 ? (
        <Empty>Nothing allocated from {name}.</Empty>
      ) : (
        <table class="grid">
          <thead>
            <tr>
              <th>value</th>
              <th>owner</th>
              <th>purpose</th>
              <th>state</th>
              <th>allocated</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((a) => (
              <tr key={a.id} data-id-allocation={a.owner}>
                <td class="mono">
                  {valueText(a)}
                  {(a.count ?? 1) > 1 && <span class="muted small"> ({a.count} values)</span>}
                </td>
                <td>
                  <OwnerText owner={a.owner} />
                </td>
                <td>{a.purpose || <span class="muted">–</span>}</td>
                <td>
                  {a.state === 'reserved' ? (
                    <Badge color="#fde68a" title={`expires ${timestamp(a.expires_at)}`}>
                      reserved{a.expires_at ? `, ${duration(Date.parse(a.expires_at) - Date.now())} left` : ''}
                    </Badge>
                  ) : (
                    <Badge color="#2563eb">allocated</Badge>
                  )}
                </td>
                <td class="muted">{timestamp(a.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {pager}
    </Panel>
  );
}

/** An allocation's owner; a service instance's links to the instance's page. */
function OwnerText(props: { owner: string }) {
  const instance = instanceOfOwner(props.owner);
  return instance === null ? (
    <span>{props.owner}</span>
  ) : (
    <a href={instanceLink(instance)} data-field="instance">
      {props.owner}
    </a>
  );
}
