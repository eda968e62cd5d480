// Building blocks every view uses: panels, headline numbers, pagers and notices.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError } from './api.js';
import { count } from './format.js';

export function Panel(props: {
  title: string;
  subtitle?: ComponentChildren;
  actions?: ComponentChildren;
  children: ComponentChildren;
  id?: string;
  wide?: boolean;
}) {
  return (
    <section class={`panel${props.wide ? ' wide' : ''}`} id={props.id} data-panel={props.id}>
      <header>
        <div>
          <h2>{props.title}</h2>
          {props.subtitle && <p class="subtitle">{props.subtitle}</p>}
        </div>
        {props.actions && <div class="actions">{props.actions}</div>}
      </header>
      {props.children}
    </section>
  );
}

/** A headline number with its caption. */
export function Stat(props: { label: string; value: ComponentChildren; hint?: ComponentChildren; id?: string }) {
  return (
    <div class="stat" data-stat={props.id}>
      <div class="stat-value">{props.value}</div>
      <div class="stat-label">{props.label}</div>
      {props.hint && <div class="stat-hint">{props.hint}</div>}
    </div>
  );
}

export const PAGE_SIZE = 25;

/** Client-side paging of a list already summarized in memory. */
export function usePage<T>(items: T[], pageSize = PAGE_SIZE): { rows: T[]; pager: ComponentChildren } {
  const [page, setPage] = useState(0);
  const pages = Math.max(1, Math.ceil(items.length / pageSize));
  const current = Math.min(page, pages - 1);
  const rows = items.slice(current * pageSize, (current + 1) * pageSize);
  const pager =
    items.length > pageSize ? (
      <nav class="pager" aria-label="pages">
        <button type="button" disabled={current === 0} onClick={() => setPage(current - 1)}>
          ‹ Previous
        </button>
        <span>
          {count(current * pageSize + 1)}–{count(current * pageSize + rows.length)} of {count(items.length)}
        </span>
        <button type="button" disabled={current >= pages - 1} onClick={() => setPage(current + 1)}>
          Next ›
        </button>
      </nav>
    ) : null;
  return { rows, pager };
}

export function ErrorNotice(props: { error: Error | null; stale: boolean }) {
  if (!props.error) return null;
  const e = props.error;
  const what = !(e instanceof ApiError)
    ? e.message
    : e.status === 403
      ? `The ${e.api} API refused this token the access (403): ${e.message.replace(/\.?$/, '.')} Sign in with a token whose roles may read it (docs/auth.md lists each rule).`
      : `The ${e.api} API answered ${e.status}: ${e.message}`;
  return (
    <div class="notice error" role="alert">
      <strong>Could not refresh.</strong> {what}
      {props.stale && ' The figures below are from the last successful refresh.'}
    </div>
  );
}

export function Loading() {
  return <div class="notice">Loading…</div>;
}

export function Empty(props: { children: ComponentChildren }) {
  return <div class="empty">{props.children}</div>;
}

export function Badge(props: { color: string; children: ComponentChildren; title?: string }) {
  return (
    <span class="badge" style={{ background: props.color, color: textOn(props.color) }} title={props.title}>
      {props.children}
    </span>
  );
}

export function Filter(props: { value: string; onInput: (v: string) => void; placeholder: string; id?: string }) {
  return (
    <input
      class="filter"
      type="search"
      id={props.id}
      value={props.value}
      placeholder={props.placeholder}
      onInput={(e) => props.onInput((e.target as HTMLInputElement).value)}
    />
  );
}

/** Dark or white text, whichever reads better on a #rrggbb background. */
function textOn(background: string): string {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(background.slice(i, i + 2), 16) / 255);
  const luminance = 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  return luminance > 0.55 ? '#0f172a' : '#ffffff';
}
