// The dashboard's charts: small SVGs drawn in percentages of their width, so they stretch with the
// page without distorting. Each carries `data-chart` (and the numbers it draws) for tests and for
// anyone reading the page's markup.
import type { StripBucket } from './free-strip.js';

export const COLORS = {
  used: '#2563eb',
  free: '#dbeafe',
  warn: '#d97706',
  over: '#dc2626',
  idle: '#e2e8f0',
  text: '#0f172a',
} as const;

/** Fill of a utilization: blue while there is room, amber from 85 %, red when full or over. */
export function levelColor(fraction: number): string {
  if (fraction >= 1) return COLORS.over;
  if (fraction >= 0.85) return COLORS.warn;
  return COLORS.used;
}

const pct = (x: number) => `${Math.max(0, Math.min(100, x * 100))}%`;

/** The shared SVG definitions (the overcommit hatching); rendered once by the app. */
export function ChartDefs() {
  return (
    <svg width="0" height="0" aria-hidden="true" style={{ position: 'absolute' }}>
      <defs>
        <pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
          <rect width="6" height="6" fill={COLORS.free} />
          <line x1="0" y1="0" x2="0" y2="6" stroke="#93c5fd" stroke-width="3" />
        </pattern>
      </defs>
    </svg>
  );
}

/**
 * Capacity of a resource class: used (solid) against what may be allocated, with the share that
 * exists only through overcommit (allocation_ratio > 1) hatched beyond the physical line.
 */
export function CapacityBar(props: { used: number; capacity: number; physical: number; height?: number; label: string }) {
  const { used, capacity, physical } = props;
  const scale = Math.max(capacity, used, 1);
  const fraction = capacity > 0 ? used / capacity : used > 0 ? Infinity : 0;
  const overcommitted = capacity > physical && physical >= 0;
  return (
    <svg
      class="bar"
      width="100%"
      height={props.height ?? 18}
      role="img"
      aria-label={props.label}
      data-chart="capacity-bar"
      data-used={used}
      data-capacity={capacity}
    >
      <title>{props.label}</title>
      <rect x="0" y="0" width="100%" height="100%" rx="3" fill={COLORS.free} />
      {overcommitted && <rect x={pct(physical / scale)} y="0" width={pct((capacity - physical) / scale)} height="100%" fill="url(#hatch)" />}
      <rect x="0" y="0" width={pct(Math.min(used, capacity) / scale)} height="100%" rx="3" fill={levelColor(fraction)} data-part="used" />
      {used > capacity && <rect x={pct(capacity / scale)} y="0" width={pct((used - capacity) / scale)} height="100%" fill={COLORS.over} />}
      {overcommitted && (
        <line x1={pct(physical / scale)} x2={pct(physical / scale)} y1="0" y2="100%" stroke={COLORS.text} stroke-width="1.5" stroke-dasharray="3 2" />
      )}
    </svg>
  );
}

/** A small utilization meter for table cells. */
export function Meter(props: { fraction: number | null; label: string }) {
  const f = props.fraction;
  return (
    <svg class="meter" width="100%" height="10" role="img" aria-label={props.label} data-chart="meter" data-fraction={f ?? ''}>
      <title>{props.label}</title>
      <rect x="0" y="0" width="100%" height="100%" rx="2" fill={f === null ? COLORS.idle : COLORS.free} />
      {f !== null && <rect x="0" y="0" width={pct(Math.min(f, 1))} height="100%" rx="2" fill={levelColor(f)} />}
    </svg>
  );
}

export interface Segment {
  key: string;
  label: string;
  value: number;
  color: string;
}

/**
 * Counts side by side in one bar (nodes by state, …), with a legend that names and counts them.
 * With `pick`, each name in the legend is a button that picks its segment (again: none).
 */
export function StackedBar(props: { segments: Segment[]; label: string; chart: string; pick?: { picked: string; onPick: (key: string) => void } }) {
  const pick = props.pick;
  const total = props.segments.reduce((n, s) => n + s.value, 0);
  let x = 0;
  return (
    <div class="stacked">
      <svg class="bar" width="100%" height="26" role="img" aria-label={props.label} data-chart={props.chart} data-total={total}>
        <title>{props.label}</title>
        <rect x="0" y="0" width="100%" height="100%" rx="4" fill={COLORS.idle} />
        {props.segments
          .filter((s) => s.value > 0)
          .map((s) => {
            const start = x;
            x += s.value / total;
            return (
              <rect key={s.key} x={pct(start)} y="0" width={pct(s.value / total)} height="100%" fill={s.color} data-segment={s.key} data-value={s.value}>
                <title>{`${s.label}: ${s.value}`}</title>
              </rect>
            );
          })}
      </svg>
      <ul class="legend">
        {props.segments.map((s) => (
          <li key={s.key} class={s.value === 0 ? 'zero' : ''}>
            <span class="swatch" style={{ background: s.color }} />
            {pick ? (
              <button
                type="button"
                class={`linklike${pick.picked === s.key ? ' selected' : ''}`}
                onClick={() => pick.onPick(pick.picked === s.key ? '' : s.key)}
              >
                {s.label}
              </button>
            ) : (
              s.label
            )}
            <strong>{s.value}</strong>
          </li>
        ))}
      </ul>
    </div>
  );
}

/**
 * Where a pool's free values lie: its span cut into equal buckets, each coloured from used
 * (dark) to free (light) by the share of its usable values that are free. Excluded values and
 * holes between ranges are grey.
 */
export function FreeStrip(props: { buckets: StripBucket[]; label: string; staticMarks: Array<[number, number]> }) {
  const n = props.buckets.length;
  return (
    <svg class="strip" width="100%" height="34" role="img" aria-label={props.label} data-chart="free-strip" data-buckets={n}>
      <title>{props.label}</title>
      {props.buckets.map((b, i) => (
        <rect
          key={i}
          x={pct(i / n)}
          y="0"
          width={pct(1 / n + 0.0005)}
          height="26"
          fill={b.free === null ? COLORS.idle : mix(COLORS.used, '#bbf7d0', b.free)}
          data-free={b.free ?? ''}
        >
          <title>{b.title}</title>
        </rect>
      ))}
      {props.staticMarks.map(([a, b], i) => (
        <rect key={`s${i}`} x={pct(a)} y="28" width={pct(Math.max(b - a, 0.004))} height="6" rx="1" fill="#7c3aed">
          <title>static band: only explicit requests take these values</title>
        </rect>
      ))}
    </svg>
  );
}

/** Linear mix of two #rrggbb colours: t = 0 gives `a`, 1 gives `b`. */
function mix(a: string, b: string, t: number): string {
  const ch = (hex: string, i: number) => parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16);
  const out = [0, 1, 2].map((i) =>
    Math.round(ch(a, i) + (ch(b, i) - ch(a, i)) * t)
      .toString(16)
      .padStart(2, '0'),
  );
  return `#${out.join('')}`;
}
