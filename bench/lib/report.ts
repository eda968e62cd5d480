// The readable side of the results: one table, a row per measured number, a column per target,
// and how many times better each allot target did than the real Placement.

type Results = Record<string, any>;

interface Metric {
  label: string;
  /** 'higher' = a rate; 'lower' = a latency; 'none' = shown without a ratio */
  better: 'higher' | 'lower' | 'none';
  get(r: Results): number | string | null | undefined;
}

const level = (rows: any[] | undefined, c: number) => rows?.find?.((x: any) => x.concurrency === c);

function metrics(sizes: number[], concurrency: number[], largeConcurrency: number[]): Metric[] {
  const m: Metric[] = [];
  sizes.forEach((n, i) => {
    m.push({ label: `set-up to ${n} providers: providers/s`, better: 'higher', get: (r) => r.sizes?.[i]?.setup?.providers_per_s });
    m.push({ label: `server memory at ${n} providers: RSS MB`, better: 'none', get: (r) => r.sizes?.[i]?.server_memory?.server_rss_mb });
    const levels = i === 0 ? concurrency : largeConcurrency;
    for (const q of ['limit_50', 'required_traits_limit_50', 'no_limit']) {
      const cand = (r: Results) => r.sizes?.[i]?.candidates;
      const unsupported = (r: Results) => (cand(r) && cand(r).supported === false ? 'unsupported' : undefined);
      m.push({ label: `candidates ${q} @${n}: p50 ms (C=1)`, better: 'lower', get: (r) => unsupported(r) ?? level(cand(r)?.[q], levels[0]!)?.latency?.p50_ms });
      for (const c of levels.slice(1)) {
        m.push({ label: `candidates ${q} @${n}: req/s (C=${c})`, better: 'higher', get: (r) => unsupported(r) ?? level(cand(r)?.[q], c)?.ops_per_s });
      }
    }
  });
  for (const c of concurrency) {
    m.push({ label: `scheduler loop C=${c}: claims/s`, better: 'higher', get: (r) => level(r.scheduler_loop, c)?.ops_per_s });
    m.push({ label: `scheduler loop C=${c}: p50 ms`, better: 'lower', get: (r) => level(r.scheduler_loop, c)?.latency?.p50_ms });
    m.push({ label: `scheduler loop C=${c}: p99 ms`, better: 'lower', get: (r) => level(r.scheduler_loop, c)?.latency?.p99_ms });
    m.push({ label: `scheduler loop C=${c}: conflict rate`, better: 'none', get: (r) => level(r.scheduler_loop, c)?.conflict_rate });
  }
  for (const c of concurrency) {
    m.push({ label: `claim write path C=${c}: claims/s`, better: 'higher', get: (r) => level(r.claim_write_path, c)?.ops_per_s });
    m.push({ label: `claim write path C=${c}: p99 ms`, better: 'lower', get: (r) => level(r.claim_write_path, c)?.latency?.p99_ms });
    m.push({ label: `claim write path C=${c}: server CPU ms/claim`, better: 'lower', get: (r) => level(r.claim_write_path, c)?.cost?.server_cpu_ms_per_op });
  }
  for (const c of concurrency) m.push({ label: `migration swap C=${c}: swaps/s`, better: 'higher', get: (r) => level(r.migration_swap, c)?.ops_per_s });
  for (const c of concurrency) m.push({ label: `deletes C=${c}: deletes/s`, better: 'higher', get: (r) => level(r.deletes, c)?.ops_per_s });
  for (const c of concurrency) {
    m.push({
      label: `contention C=${c}: verified / 5xx`,
      better: 'none',
      get: (r) => {
        const x = level(r.contention, c);
        return x ? `${x.verified?.ok ? 'ok' : 'FAILED'} / ${x.outcomes?.http_5xx}` : undefined;
      },
    });
  }
  m.push({ label: 'scheduler loop picks from', better: 'none', get: (r) => (r.pick_path ? String(r.pick_path).split('?')[0] : undefined) });
  return m;
}

const fmt = (v: unknown): string => {
  if (v === undefined || v === null) return '-';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
  return String(v);
};

/** allot ÷ real, oriented so that >1 means allot did better. */
export function ratio(better: Metric['better'], allot: unknown, real: unknown): number | null {
  if (better === 'none' || typeof allot !== 'number' || typeof real !== 'number' || allot <= 0 || real <= 0) return null;
  return better === 'higher' ? allot / real : real / allot;
}

const fmtRatio = (x: number | null) => (x === null ? '' : x >= 10 ? `${x.toFixed(0)}×` : `${x.toFixed(2)}×`);

export function table(
  targets: Record<string, Results>,
  opts: { sizes: number[]; concurrency: number[]; largeConcurrency: number[]; reference?: string },
): string {
  const names = Object.keys(targets);
  const ref = opts.reference && targets[opts.reference] ? opts.reference : undefined;
  const others = names.filter((n) => n !== ref);
  const header = ['', ...names, ...(ref ? others.map((n) => `${n} vs real`) : [])];
  const rows: string[][] = [header];
  for (const metric of metrics(opts.sizes, opts.concurrency, opts.largeConcurrency)) {
    const values = names.map((n) => metric.get(targets[n]!));
    if (values.every((v) => v === undefined || v === null)) continue;
    const ratios = ref ? others.map((n) => fmtRatio(ratio(metric.better, metric.get(targets[n]!), metric.get(targets[ref]!)))) : [];
    rows.push([metric.label, ...values.map(fmt), ...ratios]);
  }
  const widths = header.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  const out = [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)];
  if (ref) out.push('', `"× vs real": how many times better than the real Placement (rates: allot ÷ real; latencies: real ÷ allot).`);
  return out.join('\n');
}

/** The ratios the targets are stated in, for the JSON document. */
export function ratios(targets: Record<string, Results>, reference: string, opts: { sizes: number[]; concurrency: number[]; largeConcurrency: number[] }) {
  const real = targets[reference];
  if (!real) return {};
  const out: Record<string, Record<string, number | null>> = {};
  for (const [name, r] of Object.entries(targets)) {
    if (name === reference) continue;
    const row: Record<string, number | null> = {};
    for (const metric of metrics(opts.sizes, opts.concurrency, opts.largeConcurrency)) {
      if (metric.better === 'none') continue;
      const x = ratio(metric.better, metric.get(r), metric.get(real));
      if (x !== null) row[metric.label] = Number(x.toFixed(2));
    }
    out[`${name} vs ${reference}`] = row;
  }
  return out;
}
