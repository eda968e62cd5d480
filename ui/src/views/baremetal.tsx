// Bare-metal nodes by provision state with their allocations, and the conductors (allot
// processes) with their heartbeats.
import { useState } from 'preact/hooks';
import { type Segment, StackedBar } from '../charts.js';
import { Badge, Empty, ErrorNotice, Filter, Loading, Panel, Stat, usePage } from '../components.js';
import {
  ALLOCATION_STATES,
  type BaremetalSnapshot,
  type BmAllocation,
  type Conductor,
  type Node,
  PROVISION_STATES,
  holderOf,
  stateColor,
} from '../baremetal-data.js';
import { count, duration, shortId, timestamp } from '../format.js';
import { instanceLink } from '../links.js';
import type { Live } from '../live.js';

const RECENT_ALLOCATIONS = 10;

/** `node`: list only this node first (a link from a service instance's holdings). */
export function BaremetalView(props: { live: Live<BaremetalSnapshot>; node?: string | null }) {
  const { data, error } = props.live;
  const [state, setState] = useState<string>('');
  const [filter, setFilter] = useState(props.node ?? '');
  if (!data) return error ? <ErrorNotice error={error} stale={false} /> : <Loading />;
  const allocationsByUuid = new Map(data.allocations.map((a) => [a.uuid, a]));
  const nodesByUuid = new Map(data.nodes.map((n) => [n.uuid, n]));
  const byState = new Map<string, number>();
  for (const n of data.nodes) byState.set(n.provision_state, (byState.get(n.provision_state) ?? 0) + 1);
  const known = PROVISION_STATES.filter((s) => byState.has(s.state) || s.state === 'available' || s.state === 'active').map(
    (s): Segment => ({ key: s.state, label: s.label, value: byState.get(s.state) ?? 0, color: s.color }),
  );
  const others = [...byState.keys()]
    .filter((s) => !PROVISION_STATES.some((p) => p.state === s))
    .map((s): Segment => ({ key: s, label: s, value: byState.get(s)!, color: stateColor(s) }));
  const segments = [...known, ...others];
  const allocationSegments = ALLOCATION_STATES.map(
    (s): Segment => ({ key: s.state, label: s.state, value: data.allocations.filter((a) => a.state === s.state).length, color: s.color }),
  );
  const alive = data.conductors.filter((c) => c.alive).length;
  const allocatable = data.nodes.filter((n) => n.provision_state === 'available' && !n.maintenance && !n.allocation_uuid && n.power_state).length;

  const needle = filter.trim().toLowerCase();
  const nodes = data.nodes
    .filter(
      (n) =>
        (!state || n.provision_state === state) &&
        (!needle || (n.name ?? '').toLowerCase().includes(needle) || n.uuid.startsWith(needle) || (n.resource_class ?? '').toLowerCase().includes(needle)),
    )
    .sort((a, b) => (a.name ?? a.uuid).localeCompare(b.name ?? b.uuid));

  return (
    <div class="view" data-view="baremetal">
      <ErrorNotice error={error} stale />
      {!data.nodesComplete && <div class="notice">Showing the first {count(data.nodes.length)} nodes.</div>}
      <div class="stats">
        <Stat id="nodes" label="nodes" value={count(data.nodes.length)} />
        <Stat id="allocatable" label="ready to allocate" value={count(allocatable)} hint="available, powered, no allocation" />
        <Stat
          id="allocations"
          label="allocations"
          value={count(data.allocations.length)}
          hint={`${allocationSegments[1]!.value} active · ${allocationSegments[2]!.value} failed`}
        />
        <Stat id="conductors" label="conductors alive" value={`${alive} / ${data.conductors.length}`} />
      </div>
      <div class="columns">
        <Panel id="states" title="Nodes by provision state" subtitle="click a state to list its nodes">
          <StackedBar chart="provision-states" label="nodes by provision state" segments={segments} pick={{ picked: state, onPick: setState }} />
        </Panel>
        <Panel id="conductors" title="Conductors" subtitle="every allot process works allocations and writes a heartbeat">
          <ConductorTable conductors={data.conductors} serverTime={data.serverTime} />
        </Panel>
      </div>
      <Panel id="bm-allocations" title="Allocations" subtitle={`the ${RECENT_ALLOCATIONS} newest`} wide>
        <StackedBar chart="allocation-states" label="allocations by state" segments={allocationSegments} />
        <AllocationTable
          allocations={[...data.allocations].sort((a, b) => b.created_at.localeCompare(a.created_at)).slice(0, RECENT_ALLOCATIONS)}
          nodes={nodesByUuid}
        />
      </Panel>
      <NodeTable
        nodes={nodes}
        total={data.nodes.length}
        state={state}
        clearState={() => setState('')}
        filter={filter}
        setFilter={setFilter}
        allocations={allocationsByUuid}
      />
    </div>
  );
}

function ConductorTable(props: { conductors: Conductor[]; serverTime: number }) {
  if (props.conductors.length === 0) return <Empty>No conductor registered.</Empty>;
  return (
    <table class="grid">
      <thead>
        <tr>
          <th>hostname</th>
          <th>state</th>
          <th>last heartbeat</th>
          <th>registered</th>
        </tr>
      </thead>
      <tbody>
        {props.conductors.map((c) => {
          const heartbeat = c.updated_at ? Date.parse(c.updated_at) : null;
          return (
            <tr key={c.hostname} data-conductor={c.hostname}>
              <td class="mono">{c.hostname}</td>
              <td>
                <span class={`dot ${c.alive ? 'ok' : 'dead'}`} /> {c.alive ? 'alive' : 'dead'}
              </td>
              <td title={timestamp(c.updated_at)} data-field="heartbeat">
                {heartbeat === null ? '–' : `${duration(props.serverTime - heartbeat)} ago`}
              </td>
              <td class="muted">{timestamp(c.created_at)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function AllocationTable(props: { allocations: BmAllocation[]; nodes: Map<string, Node> }) {
  if (props.allocations.length === 0) return <Empty>No allocations.</Empty>;
  return (
    <table class="grid">
      <thead>
        <tr>
          <th>allocation</th>
          <th>state</th>
          <th>resource class</th>
          <th>node</th>
          <th>owner</th>
          <th>held by</th>
          <th>created</th>
        </tr>
      </thead>
      <tbody>
        {props.allocations.map((a) => (
          <tr key={a.uuid} data-allocation={a.name ?? a.uuid}>
            <td title={a.uuid}>
              {a.name ?? <span class="mono">{shortId(a.uuid)}</span>}
              {a.last_error && <div class="error-text small">{a.last_error}</div>}
            </td>
            <td>
              <Badge color={ALLOCATION_STATES.find((s) => s.state === a.state)?.color ?? '#64748b'}>{a.state}</Badge>
            </td>
            <td>{a.resource_class ?? '–'}</td>
            <td class="nowrap">{a.node_uuid ? (props.nodes.get(a.node_uuid)?.name ?? shortId(a.node_uuid)) : <span class="muted">–</span>}</td>
            <td class="nowrap">{a.owner ?? <span class="muted">–</span>}</td>
            <td class="nowrap">
              <HolderLink allocation={a} />
            </td>
            <td class="muted nowrap">{timestamp(a.created_at)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function NodeTable(props: {
  nodes: Node[];
  total: number;
  state: string;
  clearState: () => void;
  filter: string;
  setFilter: (v: string) => void;
  allocations: Map<string, BmAllocation>;
}) {
  const { rows, pager } = usePage(props.nodes);
  return (
    <Panel
      id="nodes"
      title={props.state ? `Nodes in ${props.state}` : 'Nodes'}
      subtitle={props.nodes.length === props.total ? `${count(props.total)} nodes` : `${count(props.nodes.length)} of ${count(props.total)} nodes`}
      wide
      actions={
        <>
          {props.state && (
            <button type="button" onClick={props.clearState}>
              all states
            </button>
          )}
          <Filter value={props.filter} onInput={props.setFilter} placeholder="name, uuid or resource class" />
        </>
      }
    >
      {rows.length === 0 ? (
        <Empty>{props.total === 0 ? 'No nodes enrolled.' : 'No node matches.'}</Empty>
      ) : (
        <table class="grid">
          <thead>
            <tr>
              <th>node</th>
              <th>provision state</th>
              <th>power</th>
              <th>resource class</th>
              <th>allocation</th>
              <th>conductor</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((n) => {
              const a = n.allocation_uuid ? props.allocations.get(n.allocation_uuid) : undefined;
              return (
                <tr key={n.uuid} data-node={n.name ?? n.uuid}>
                  <td title={n.uuid}>
                    {n.name ?? <span class="mono">{shortId(n.uuid)}</span>}
                    {n.maintenance && (
                      <>
                        {' '}
                        <Badge color="#f59e0b">maintenance</Badge>
                      </>
                    )}
                    {n.last_error && <div class="error-text small">{n.last_error}</div>}
                  </td>
                  <td>
                    <Badge color={stateColor(n.provision_state)}>{n.provision_state}</Badge>
                    {n.target_provision_state && <span class="muted small"> → {n.target_provision_state}</span>}
                  </td>
                  <td>{n.power_state ?? <span class="muted">–</span>}</td>
                  <td>{n.resource_class ?? <span class="muted">–</span>}</td>
                  <td>
                    {n.allocation_uuid ? (
                      <>
                        <span title={n.allocation_uuid}>
                          {a?.name ?? shortId(n.allocation_uuid)} {a && <span class="muted small">({a.state})</span>}
                        </span>
                        {a && holderOf(a) && (
                          <div class="small">
                            <HolderLink allocation={a} />
                          </div>
                        )}
                      </>
                    ) : (
                      <span class="muted">–</span>
                    )}
                  </td>
                  <td class="mono small">{n.conductor ?? '–'}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {pager}
    </Panel>
  );
}

/** The service instance holding an allocation, linked to its page; a dash for any other allocation. */
function HolderLink(props: { allocation: BmAllocation }) {
  const holder = holderOf(props.allocation);
  if (!holder) return <span class="muted">–</span>;
  return (
    <a href={instanceLink(holder.instance)} title={holder.instance} data-field="held-by">
      service instance {shortId(holder.instance)}
      {holder.attribute && ` · ${holder.attribute}`}
    </a>
  );
}
