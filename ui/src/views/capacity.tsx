// Capacity at a glance: per resource class what exists, what is used and what is free, with the
// overcommit; per provider tree the load; the heaviest and the emptiest providers.
import { useState } from 'preact/hooks';
import { CapacityBar, Meter } from '../charts.js';
import { Empty, ErrorNotice, Filter, Loading, Panel, Stat, usePage } from '../components.js';
import { amount, classLabel, count, percent } from '../format.js';
import type { Live } from '../live.js';
import type { ClassUse, PlacementSnapshot, ProviderView, TreeView } from '../placement-data.js';

const RANKED = 8;

export function CapacityView(props: { live: Live<PlacementSnapshot> }) {
  const { data, error } = props.live;
  if (!data) return error ? <ErrorNotice error={error} stale={false} /> : <Loading />;
  const withInventory = data.providers.filter((p) => p.load !== null);
  const byLoad = [...withInventory].sort((a, b) => b.load! - a.load! || a.name.localeCompare(b.name));
  const consumers = data.consumers.length;
  const names = new Map(data.providers.map((p) => [p.uuid, p.name]));
  return (
    <div class="view" data-view="capacity">
      <ErrorNotice error={error} stale />
      {data.pending > 0 && <div class="notice">Reading the details of {count(data.pending)} providers whose inventories or allocations changed…</div>}
      <div class="stats">
        <Stat id="providers" label="resource providers" value={count(data.providers.length)} hint={`in ${count(data.trees.length)} trees`} />
        <Stat id="classes" label="resource classes" value={count(data.classes.length)} />
        <Stat id="consumers" label="consumers holding allocations" value={count(consumers)} />
        <Stat id="fullest" label="fullest class" value={fullest(data.classes)} />
      </div>

      <Panel id="classes" title="Capacity by resource class" subtitle={<ClassLegend />} wide>
        {data.classes.length === 0 ? (
          <Empty>No provider has inventory yet.</Empty>
        ) : (
          <div class="class-rows">
            {data.classes.map(([rc, u]) => (
              <ClassRow key={rc} rc={rc} use={u} />
            ))}
          </div>
        )}
      </Panel>

      <div class="columns">
        <Panel id="heaviest" title="Heaviest providers" subtitle="fullest resource class first">
          <RankedProviders providers={byLoad.slice(0, RANKED)} names={names} />
        </Panel>
        <Panel id="emptiest" title="Emptiest providers" subtitle="most room left first">
          <RankedProviders providers={[...byLoad].reverse().slice(0, RANKED)} names={names} />
        </Panel>
      </div>

      <TreesPanel trees={data.trees} classes={data.classes.map(([rc]) => rc)} />
    </div>
  );
}

function fullest(classes: Array<[string, ClassUse]>): string {
  let best: [string, number] | null = null;
  for (const [rc, u] of classes) {
    const f = u.capacity > 0 ? u.used / u.capacity : 0;
    if (!best || f > best[1]) best = [rc, f];
  }
  return best ? `${classLabel(best[0])} ${percent(best[1])}` : '–';
}

function ClassLegend() {
  return (
    <span class="chart-legend">
      <span class="swatch used" /> used <span class="swatch free" /> free <span class="swatch hatch" /> only through overcommit <span class="swatch line" />{' '}
      physical capacity
    </span>
  );
}

function ratioText(u: ClassUse): string {
  const r = (x: number) => `${Number(x.toFixed(2))}×`;
  return u.minRatio === u.maxRatio ? r(u.minRatio) : `${r(u.minRatio)}–${r(u.maxRatio)}`;
}

function ClassRow(props: { rc: string; use: ClassUse }) {
  const { rc, use: u } = props;
  const free = u.capacity - u.used;
  const fraction = u.capacity > 0 ? u.used / u.capacity : 0;
  return (
    <div class="class-row" data-rc={rc}>
      <div class="class-name">
        <strong>{classLabel(rc)}</strong>
        {classLabel(rc) !== rc && <code>{rc}</code>}
      </div>
      <div class="class-bar">
        <CapacityBar
          used={u.used}
          capacity={u.capacity}
          physical={u.physical}
          label={`${rc}: ${amount(rc, u.used)} used of ${amount(rc, u.capacity)}`}
          height={22}
        />
      </div>
      <dl class="class-numbers">
        <div>
          <dt>used</dt>
          <dd data-field="used">
            {amount(rc, u.used)} <span class="muted">({percent(fraction)})</span>
          </dd>
        </div>
        <div>
          <dt>free</dt>
          <dd data-field="free" class={free < 0 ? 'over' : ''}>
            {amount(rc, free)}
          </dd>
        </div>
        <div>
          <dt>capacity</dt>
          <dd data-field="capacity" title={`total ${amount(rc, u.total)} − reserved ${amount(rc, u.reserved)}, × allocation ratio`}>
            {amount(rc, u.capacity)}
          </dd>
        </div>
        <div>
          <dt>overcommit</dt>
          <dd data-field="ratio" title={`physical (total − reserved): ${amount(rc, u.physical)}; reserved for the hosts: ${amount(rc, u.reserved)}`}>
            {ratioText(u)}
          </dd>
        </div>
      </dl>
    </div>
  );
}

function providerPath(p: ProviderView, names: Map<string, string>): string {
  return p.parent === null ? p.name : `${names.get(p.root) ?? '…'} › ${p.name}`;
}

function RankedProviders(props: { providers: ProviderView[]; names: Map<string, string> }) {
  if (props.providers.length === 0) return <Empty>No provider has inventory yet.</Empty>;
  return (
    <table class="ranked">
      <tbody>
        {props.providers.map((p) => {
          const u = p.classes[p.loadClass!]!;
          return (
            <tr key={p.uuid} data-provider={p.name}>
              <td class="name" title={p.uuid}>
                {providerPath(p, props.names)}
              </td>
              <td class="meter-cell">
                <Meter fraction={p.load} label={`${p.name}: ${percent(p.load!)} of ${p.loadClass}`} />
              </td>
              <td class="num">{percent(p.load!)}</td>
              <td class="muted small nowrap">
                {classLabel(p.loadClass!)} {amount(p.loadClass!, u.used)} / {amount(p.loadClass!, u.capacity)}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

type TreeOrder = 'heaviest' | 'emptiest' | 'name';

function TreesPanel(props: { trees: TreeView[]; classes: string[] }) {
  const [filter, setFilter] = useState('');
  const [order, setOrder] = useState<TreeOrder>('heaviest');
  const shownClasses = props.classes.slice(0, 4);
  const needle = filter.trim().toLowerCase();
  const trees = props.trees
    .filter((t) => !needle || t.members.some((m) => m.name.toLowerCase().includes(needle) || m.uuid.startsWith(needle)))
    .sort((a, b) => {
      if (order === 'name') return a.root.name.localeCompare(b.root.name);
      const la = a.load ?? -1;
      const lb = b.load ?? -1;
      return (order === 'heaviest' ? lb - la : la - lb) || a.root.name.localeCompare(b.root.name);
    });
  const { rows, pager } = usePage(trees);
  return (
    <Panel
      id="trees"
      title="Provider trees"
      subtitle="a compute node with its children (NUMA cells, devices) counts as one tree"
      wide
      actions={
        <>
          <Filter value={filter} onInput={setFilter} placeholder="provider name or uuid" />
          <select value={order} onChange={(e) => setOrder((e.target as HTMLSelectElement).value as TreeOrder)} aria-label="order">
            <option value="heaviest">heaviest first</option>
            <option value="emptiest">emptiest first</option>
            <option value="name">by name</option>
          </select>
        </>
      }
    >
      {rows.length === 0 ? (
        <Empty>{props.trees.length === 0 ? 'No resource providers yet.' : 'No tree matches.'}</Empty>
      ) : (
        <table class="grid">
          <thead>
            <tr>
              <th>tree</th>
              <th class="num">providers</th>
              {shownClasses.map((rc) => (
                <th key={rc}>{classLabel(rc)}</th>
              ))}
              <th class="num">load</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((t) => (
              <tr key={t.root.uuid} data-tree={t.root.name}>
                <td class="name" title={t.root.uuid}>
                  {t.root.name}
                  {t.members.length > 1 && (
                    <div class="muted small">
                      {t.members
                        .filter((m) => m !== t.root)
                        .map((m) => m.name)
                        .join(', ')}
                    </div>
                  )}
                </td>
                <td class="num">{t.members.length}</td>
                {shownClasses.map((rc) => {
                  const u = t.classes[rc];
                  return (
                    <td key={rc} class="usage-cell">
                      {u ? (
                        <>
                          <Meter fraction={u.capacity > 0 ? u.used / u.capacity : null} label={`${rc} ${amount(rc, u.used)} of ${amount(rc, u.capacity)}`} />
                          <span class="small">
                            {amount(rc, u.used)} / {amount(rc, u.capacity)}
                          </span>
                        </>
                      ) : (
                        <span class="muted">–</span>
                      )}
                    </td>
                  );
                })}
                <td class="num" title={t.loadClass ? `fullest class: ${t.loadClass}` : ''}>
                  {t.load === null ? '–' : percent(t.load)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {pager}
    </Panel>
  );
}
