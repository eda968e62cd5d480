// Service instances of the identifier API: every instance with its state, spec and project and
// what it holds; and one instance's page, with its attribute sets and its holdings across the
// three engines, each linking to where the dashboard shows it (the node in the bare-metal view,
// the consumer in the consumers view, the value in the pools view).
import { useState } from 'preact/hooks';
import { type Segment, StackedBar } from '../charts.js';
import { Badge, Empty, ErrorNotice, Filter, Loading, Panel, Stat, usePage } from '../components.js';
import { count, shortId, timestamp } from '../format.js';
import {
  type Holding,
  INSTANCE_STATES,
  type Instance,
  type InstanceDetail,
  type InstancesSnapshot,
  SOURCE_COLORS,
  type Spec,
  amountsText,
  capacityTotals,
  instanceStateColor,
  valueText,
} from '../instances-data.js';
import { consumerLink, instanceLink, instanceOwner, nodeLink, poolLink } from '../links.js';
import type { Live } from '../live.js';

const SETS = ['candidate', 'active', 'rollback'] as const;

export function InstancesView(props: { live: Live<InstancesSnapshot> }) {
  const { data, error } = props.live;
  const [state, setState] = useState('');
  const [filter, setFilter] = useState('');
  if (!data) return error ? <ErrorNotice error={error} stale={false} /> : <Loading />;
  const all = data.instances;
  const byState = new Map<string, number>();
  for (const i of all) byState.set(i.state, (byState.get(i.state) ?? 0) + 1);
  const segments = [
    ...INSTANCE_STATES.map((s): Segment => ({ key: s.state, label: s.state, value: byState.get(s.state) ?? 0, color: s.color })),
    ...[...byState.keys()]
      .filter((s) => !INSTANCE_STATES.some((k) => k.state === s))
      .map((s): Segment => ({ key: s, label: s, value: byState.get(s)!, color: instanceStateColor(s) })),
  ];
  const holdings = all.flatMap((i) => i.holdings);
  const capacity = new Map<string, number>();
  for (const h of holdings) if (h.source === 'capacity') for (const [rc, n] of capacityTotals(h.value)) capacity.set(rc, (capacity.get(rc) ?? 0) + n);

  const needle = filter.trim().toLowerCase();
  const shown = all
    .filter((i) => (!state || i.state === state) && (!needle || searchText(i).includes(needle)))
    .sort((a, b) => b.updated_at.localeCompare(a.updated_at) || a.id.localeCompare(b.id));

  return (
    <div class="view" data-view="instances">
      <ErrorNotice error={error} stale />
      {!data.complete && <div class="notice">Showing the first {count(all.length)} instances.</div>}
      <div class="stats">
        <Stat
          id="live-instances"
          label="live instances"
          value={count(all.filter((i) => i.state !== 'terminated').length)}
          hint={`${count(all.length)} in all`}
        />
        <Stat id="held-nodes" label="bare-metal nodes held" value={count(holdings.filter((h) => h.source === 'node').length)} />
        <Stat
          id="held-capacity"
          label="Placement capacity held"
          value={count(holdings.filter((h) => h.source === 'capacity').length)}
          hint={capacity.size ? amountsText(capacity) : undefined}
        />
        <Stat id="held-values" label="pool values held" value={count(holdings.filter((h) => h.source === 'pool').length)} />
      </div>
      <Panel id="instance-states" title="Instances by state" subtitle="click a state to list its instances" wide>
        <StackedBar chart="instance-states" label="service instances by state" segments={segments} pick={{ picked: state, onPick: setState }} />
      </Panel>
      <InstanceTable instances={shown} total={all.length} state={state} clearState={() => setState('')} filter={filter} setFilter={setFilter} />
    </div>
  );
}

/** What the list's filter looks in: id, spec, project, service type and what the instance holds. */
function searchText(i: Instance): string {
  return [i.id, i.allocation_spec, i.project_id ?? '', i.service_type, ...i.holdings.map((h) => valueText(h.value))].join(' ').toLowerCase();
}

function InstanceTable(props: { instances: Instance[]; total: number; state: string; clearState: () => void; filter: string; setFilter: (v: string) => void }) {
  const { rows, pager } = usePage(props.instances);
  return (
    <Panel
      id="instance-list"
      title={props.state ? `Instances in ${props.state}` : 'Service instances'}
      subtitle={
        props.instances.length === props.total
          ? `${count(props.total)} instances, last changed first`
          : `${count(props.instances.length)} of ${count(props.total)} instances`
      }
      wide
      actions={
        <>
          {props.state && (
            <button type="button" onClick={props.clearState}>
              all states
            </button>
          )}
          <Filter value={props.filter} onInput={props.setFilter} placeholder="id, spec, project or what it holds" id="instance-filter" />
        </>
      }
    >
      {rows.length === 0 ? (
        <Empty>{props.total === 0 ? 'No service instances yet.' : 'No instance matches.'}</Empty>
      ) : (
        <table class="grid">
          <thead>
            <tr>
              <th>instance</th>
              <th>state</th>
              <th>spec</th>
              <th>project</th>
              <th>holds</th>
              <th>last change</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((i) => (
              <tr key={i.id} data-instance={i.id}>
                <td>
                  <a class="mono" href={instanceLink(i.id)} title={i.id}>
                    {shortId(i.id)}
                  </a>
                  {i.service_type && <div class="muted small">{i.service_type}</div>}
                  {i.last_error && <div class="error-text small">{i.last_error}</div>}
                </td>
                <td>
                  <Badge color={instanceStateColor(i.state)}>{i.state}</Badge>
                </td>
                <td>{i.allocation_spec}</td>
                <td>{i.project_id ?? <span class="muted">–</span>}</td>
                <td data-field="holds">
                  {i.holdings.length === 0 ? <span class="muted">nothing</span> : i.holdings.map((h, k) => <HoldingChip key={k} holding={h} />)}
                </td>
                <td class="muted nowrap">{timestamp(i.updated_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {pager}
    </Panel>
  );
}

function HoldingChip(props: { holding: Holding }) {
  const h = props.holding;
  return (
    <span class="chip" title={`${h.attribute ?? '(released)'}: ${h.source}`} data-source={h.source}>
      <span class="source-dot" style={{ background: SOURCE_COLORS[h.source] }} />
      {valueText(h.value)}
    </span>
  );
}

export function InstanceView(props: { id: string; live: Live<InstanceDetail> }) {
  const { data, error } = props.live;
  const back = (
    <a class="back" href="#/instances">
      ‹ all service instances
    </a>
  );
  if (!data)
    return (
      <div class="view">
        {back}
        {error ? <ErrorNotice error={error} stale={false} /> : <Loading />}
      </div>
    );
  const { instance: i, spec } = data;
  return (
    <div class="view" data-view="instance" data-instance={i.id}>
      {back}
      <ErrorNotice error={error} stale />
      <h1 class="title mono">{props.id}</h1>
      <div class="stats">
        <Stat id="state" label="state" value={<Badge color={instanceStateColor(i.state)}>{i.state}</Badge>} hint={`lifecycle ${i.lifecycle}`} />
        <Stat id="spec" label="allocation spec" value={i.allocation_spec} hint={i.service_type || undefined} />
        <Stat id="project" label="project" value={i.project_id ?? '–'} />
        <Stat id="version" label="version" value={count(i.version)} hint={`changed ${timestamp(i.updated_at)}`} />
      </div>
      {i.last_error && (
        <div class="notice error" data-field="last-error">
          <strong>Last error:</strong> {i.last_error}
        </div>
      )}
      <Panel id="holdings" title="Holdings" subtitle="what the instance holds in each engine, and where it is shown" wide>
        <HoldingTable instance={i} spec={spec} />
      </Panel>
      <Panel id="sets" title="Attribute sets" subtitle={i.candidate_validated ? 'the candidate set is validated' : undefined} wide>
        <SetTable instance={i} spec={spec} />
      </Panel>
      {i.forced_releases.length > 0 && (
        <Panel id="forced-releases" title="Released while held" subtitle="since the last validation, which takes each attribute again" wide>
          <ReleaseTable releases={i.forced_releases} />
        </Panel>
      )}
    </div>
  );
}

/** Where the dashboard shows a holding, and what the link says. */
function shownAt(h: Holding, instance: Instance, spec: Spec): { href: string; text: string } | null {
  switch (h.source) {
    case 'node':
      return { href: nodeLink(h.value.node), text: `node ${h.value.name ?? shortId(h.value.node)} in Bare metal` };
    case 'capacity':
      return { href: consumerLink(h.value.consumer), text: `consumer ${shortId(h.value.consumer)} in Consumers` };
    case 'pool': {
      const s = h.attribute === null ? undefined : spec.attributes[h.attribute];
      return s?.from === 'pool' ? { href: poolLink(s.pool, instanceOwner(instance.id)), text: `pool ${s.pool} in Identifier pools` } : null;
    }
    case 'inventory':
      return null;
  }
}

function HoldingTable(props: { instance: Instance; spec: Spec }) {
  const { instance, spec } = props;
  if (instance.holdings.length === 0) return <Empty>It holds nothing.</Empty>;
  return (
    <table class="grid">
      <thead>
        <tr>
          <th>attribute</th>
          <th>engine</th>
          <th>value</th>
          <th>shown in</th>
          <th>in its API</th>
        </tr>
      </thead>
      <tbody>
        {instance.holdings.map((h, k) => {
          const at = shownAt(h, instance, spec);
          const s = h.attribute === null ? undefined : spec.attributes[h.attribute];
          return (
            <tr key={k} data-holding={h.attribute ?? '(released)'} data-source={h.source}>
              <td>{h.attribute ?? <span class="muted">(released)</span>}</td>
              <td>
                <Badge color={SOURCE_COLORS[h.source]}>{h.source}</Badge>
              </td>
              <td class="mono" data-field="value">
                {valueText(h.value)}
                {h.source === 'capacity' && (
                  <div class="muted small">
                    {Object.keys(h.value.allocations)
                      .map((p) => `on provider ${shortId(p)}`)
                      .join(', ')}
                  </div>
                )}
              </td>
              <td data-field="shown-in">
                {at ? <a href={at.href}>{at.text}</a> : <span class="muted">{s?.from === 'inventory' ? `inventory ${s.inventory}` : '–'}</span>}
              </td>
              <td class="mono small muted" data-field="href">
                {h.href ?? '–'}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** Where an attribute's value comes from, in a few words. */
function sourceText(spec: Spec, attribute: string): string {
  const s = spec.attributes[attribute];
  if (!s) return 'given';
  switch (s.from) {
    case 'pool':
      return `pool ${s.pool}`;
    case 'lookup':
      return `lookup in ${s.inventory}`;
    case 'inventory':
      return `inventory ${s.inventory}`;
    case 'node':
      return `node of class ${s.resource_class}`;
    case 'capacity':
      return `capacity${s.in_tree_of ? ` under ${s.in_tree_of}` : ''}`;
  }
}

function SetTable(props: { instance: Instance; spec: Spec }) {
  const sets = { candidate: props.instance.candidate_attributes, active: props.instance.active_attributes, rollback: props.instance.rollback_attributes };
  const names = [...new Set([...Object.keys(props.spec.attributes), ...SETS.flatMap((s) => Object.keys(sets[s] ?? {}))])].sort();
  if (SETS.every((s) => sets[s] === null)) return <Empty>No attribute set: the instance is terminated.</Empty>;
  return (
    <table class="grid">
      <thead>
        <tr>
          <th>attribute</th>
          <th>from</th>
          {SETS.map((s) => (
            <th key={s}>{sets[s] === null ? <span class="muted">{s} (none)</span> : s}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {names.map((name) => (
          <tr key={name} data-attribute={name}>
            <td>{name}</td>
            <td class="muted small">{sourceText(props.spec, name)}</td>
            {SETS.map((s) => {
              const v = sets[s]?.[name];
              return (
                <td key={s} class="mono" data-set={s}>
                  {v === undefined ? <span class="muted">–</span> : valueText(v)}
                </td>
              );
            })}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ReleaseTable(props: { releases: Instance['forced_releases'] }) {
  return (
    <table class="grid">
      <thead>
        <tr>
          <th>attribute</th>
          <th>engine</th>
          <th>value</th>
          <th>in the sets</th>
          <th>why</th>
          <th>when</th>
        </tr>
      </thead>
      <tbody>
        {props.releases.map((r, k) => (
          <tr key={k} data-release={r.attribute}>
            <td>{r.attribute}</td>
            <td>
              <Badge color={SOURCE_COLORS[r.source]}>{r.source}</Badge>
            </td>
            <td class="mono">{valueText(r.value)}</td>
            <td>{r.sets.join(', ')}</td>
            <td>{r.source === 'pool' ? `released with force from ${r.pool}` : r.reason}</td>
            <td class="muted nowrap">{timestamp(r.released_at)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
