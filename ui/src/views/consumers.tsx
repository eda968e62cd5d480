// Consumers and their allocations, gathered from the providers' allocations, with the project,
// user and type of each (placement-data.ts reads them); the largest consumers and the projects.
import { useState } from 'preact/hooks';
import { COLORS, Meter } from '../charts.js';
import { Empty, ErrorNotice, Filter, Loading, Panel, Stat, usePage } from '../components.js';
import { amount, classLabel, count, percent, shortId } from '../format.js';
import { instanceLink } from '../links.js';
import type { Live } from '../live.js';
import type { ClassUse, ConsumerView, PlacementSnapshot } from '../placement-data.js';

const TOP = 10;

/** `consumer`: list only this consumer first (a link from a service instance's holdings). */
export function ConsumersView(props: { live: Live<PlacementSnapshot>; consumer?: string | null }) {
  const { data, error } = props.live;
  const [filter, setFilter] = useState(props.consumer ?? '');
  if (!data) return error ? <ErrorNotice error={error} stale={false} /> : <Loading />;
  const needle = filter.trim().toLowerCase();
  const shown = needle
    ? data.consumers.filter(
        (c) =>
          c.uuid.includes(needle) ||
          c.holdings.some((h) => h.provider.name.toLowerCase().includes(needle)) ||
          c.owner?.project_id?.toLowerCase().includes(needle) ||
          c.owner?.user_id?.toLowerCase().includes(needle),
      )
    : data.consumers;
  const capacity = new Map(data.classes);
  return (
    <div class="view" data-view="consumers">
      <ErrorNotice error={error} stale />
      {data.ownersPending > 0 && <div class="notice">Reading the project and user of {count(data.ownersPending)} consumers…</div>}
      <div class="stats">
        <Stat id="consumers" label="consumers" value={count(data.consumers.length)} />
        <Stat id="allocations" label="allocations (consumer × provider)" value={count(data.consumers.reduce((n, c) => n + c.holdings.length, 0))} />
        <Stat
          id="providers-used"
          label="providers with allocations"
          value={count(new Set(data.consumers.flatMap((c) => c.holdings.map((h) => h.provider.uuid))).size)}
        />
        <Stat
          id="largest"
          label="largest consumer's share"
          value={data.consumers[0] ? `${percent(data.consumers[0].share)}` : '–'}
          hint={data.consumers[0]?.shareClass ? `of all ${classLabel(data.consumers[0].shareClass)}` : undefined}
        />
      </div>
      <div class="columns">
        <Panel id="top-consumers" title="Largest consumers" subtitle="share of the cloud's capacity, in the class where it is largest">
          {data.consumers.length === 0 ? <Empty>No allocations yet.</Empty> : <TopConsumers consumers={data.consumers.slice(0, TOP)} />}
        </Panel>
        <Panel id="projects" title="Projects" subtitle="what each project's consumers hold">
          <Projects consumers={data.consumers} capacity={capacity} />
        </Panel>
      </div>
      <ConsumerTable consumers={shown} total={data.consumers.length} filter={filter} setFilter={setFilter} />
    </div>
  );
}

function TopConsumers(props: { consumers: ConsumerView[] }) {
  const max = Math.max(...props.consumers.map((c) => c.share), 0.0001);
  return (
    <svg class="hbars" width="100%" height={props.consumers.length * 26} role="img" aria-label="largest consumers" data-chart="top-consumers">
      {props.consumers.map((c, i) => (
        <g key={c.uuid} data-consumer={c.uuid}>
          <text x="0" y={i * 26 + 17} class="hbar-label">
            <title>{c.uuid}</title>
            {c.uuid.slice(0, 8)} {c.owner?.project_id ?? ''}
          </text>
          <rect x="34%" y={i * 26 + 4} width={`${(c.share / max) * 36}%`} height="18" rx="3" fill={COLORS.used} />
          <text x={`${34 + (c.share / max) * 36 + 1}%`} y={i * 26 + 17} class="hbar-value">
            {percent(c.share)} {c.shareClass ? classLabel(c.shareClass) : ''}
          </text>
        </g>
      ))}
    </svg>
  );
}

interface ProjectUse {
  project: string;
  consumers: number;
  totals: Record<string, number>;
  share: number;
  shareClass: string | null;
}

function Projects(props: { consumers: ConsumerView[]; capacity: Map<string, ClassUse> }) {
  const byProject = new Map<string, ProjectUse>();
  for (const c of props.consumers) {
    if (!c.owner) continue;
    const key = c.owner.project_id ?? '(none)';
    const p = byProject.get(key) ?? { project: key, consumers: 0, totals: {}, share: 0, shareClass: null };
    p.consumers++;
    for (const [rc, n] of Object.entries(c.totals)) p.totals[rc] = (p.totals[rc] ?? 0) + n;
    byProject.set(key, p);
  }
  for (const p of byProject.values())
    for (const [rc, n] of Object.entries(p.totals)) {
      const cap = props.capacity.get(rc)?.capacity ?? 0;
      if (cap > 0 && n / cap >= p.share) {
        p.share = n / cap;
        p.shareClass = rc;
      }
    }
  const projects = [...byProject.values()].sort((a, b) => b.share - a.share || a.project.localeCompare(b.project));
  if (projects.length === 0) return <Empty>No allocations yet.</Empty>;
  return (
    <table class="ranked">
      <tbody>
        {projects.slice(0, TOP).map((p) => (
          <tr key={p.project} data-project={p.project}>
            <td class="name">
              {p.project}
              <div class="muted small">{p.consumers === 1 ? '1 consumer' : `${count(p.consumers)} consumers`}</div>
            </td>
            <td class="meter-cell">
              <Meter fraction={p.share} label={`${p.project}: ${percent(p.share)} of ${p.shareClass ?? ''}`} />
            </td>
            <td class="num">{percent(p.share)}</td>
            <td class="muted small">
              {['VCPU', 'PCPU', 'MEMORY_MB', 'DISK_GB']
                .filter((rc) => p.totals[rc])
                .map((rc) => `${amount(rc, p.totals[rc]!)}${rc === 'MEMORY_MB' ? ' memory' : rc === 'DISK_GB' ? ' disk' : ''}`)
                .join(' · ')}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ConsumerTable(props: { consumers: ConsumerView[]; total: number; filter: string; setFilter: (v: string) => void }) {
  const { rows, pager } = usePage(props.consumers);
  return (
    <Panel
      id="consumer-list"
      title="Consumers and their allocations"
      subtitle={
        props.consumers.length === props.total
          ? `${count(props.total)} consumers, largest first`
          : `${count(props.consumers.length)} of ${count(props.total)} consumers match`
      }
      wide
      actions={<Filter value={props.filter} onInput={props.setFilter} placeholder="consumer, provider, project or user" id="consumer-filter" />}
    >
      {rows.length === 0 ? (
        <Empty>{props.total === 0 ? 'No consumer holds anything yet.' : 'No consumer matches.'}</Empty>
      ) : (
        <table class="grid">
          <thead>
            <tr>
              <th>consumer</th>
              <th>project / user</th>
              <th>type</th>
              <th>allocations</th>
              <th>share</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((c) => {
              const d = c.owner;
              return (
                <tr key={c.uuid} data-consumer={c.uuid}>
                  <td class="mono">
                    {c.uuid}
                    {d?.consumer_generation != null && <div class="muted small">generation {d.consumer_generation}</div>}
                    {c.instance && (
                      <div class="small">
                        <a href={instanceLink(c.instance)} title={c.instance} data-field="instance">
                          service instance {shortId(c.instance)}
                        </a>
                      </div>
                    )}
                  </td>
                  <td>
                    {d ? (
                      <>
                        <div>{d.project_id ?? '–'}</div>
                        <div class="muted small">{d.user_id ?? ''}</div>
                      </>
                    ) : (
                      <span class="muted">…</span>
                    )}
                  </td>
                  <td>{d?.consumer_type ?? <span class="muted">–</span>}</td>
                  <td>
                    {c.holdings.map((h) => (
                      <div key={h.provider.uuid} class="holding">
                        <span class="provider" title={h.provider.uuid}>
                          {h.provider.name}
                        </span>
                        {Object.entries(h.resources).map(([rc, n]) => (
                          <span key={rc} class="chip" title={rc}>
                            {rc === 'MEMORY_MB' || rc === 'DISK_GB'
                              ? `${amount(rc, n)} ${classLabel(rc).toLowerCase()}`
                              : amount(rc, n) === String(n)
                                ? `${n} ${rc}`
                                : amount(rc, n)}
                          </span>
                        ))}
                      </div>
                    ))}
                  </td>
                  <td class="meter-cell">
                    <Meter fraction={c.share} label={`${percent(c.share)} of ${c.shareClass ?? ''}`} />
                    <span class="small">{percent(c.share)}</span>
                  </td>
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
