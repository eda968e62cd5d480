// The dashboard: a header (views, live status, refresh interval, token) and the view of the URL's
// hash (#/capacity, #/consumers, #/baremetal, #/pools, #/instances, #/instances/<id>; links.ts).
import { type JSX, render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Api, type ApiName, NOAUTH_TOKEN, type ServerSettings, initialToken, loadServerSettings, storeToken } from './api.js';
import { loadBaremetal } from './baremetal-data.js';
import { ChartDefs } from './charts.js';
import { duration } from './format.js';
import { PoolsCache } from './ids-data.js';
import { loadInstance, loadInstances } from './instances-data.js';
import { type Place, ROUTES, placeOf } from './links.js';
import { type Live, LiveContext, type LiveSettings, type LiveStatus, useLive } from './live.js';
import { PlacementCache, type PlacementSnapshot } from './placement-data.js';
import './styles.css';
import { BaremetalView } from './views/baremetal.js';
import { CapacityView } from './views/capacity.js';
import { ConsumersView } from './views/consumers.js';
import { InstanceView, InstancesView } from './views/instances.js';
import { PoolsView } from './views/pools.js';

const REFRESH_CHOICES = [0, 2000, 3000, 5000, 10000, 30000];
const REFRESH_KEY = 'allot.refresh';
const DEFAULT_REFRESH_MS = 3000;

/** `?refresh=SECONDS` in the address (for a wall screen, or tests) wins over the saved choice. */
function initialRefreshMs(): number {
  const fromUrl = new URLSearchParams(location.search).get('refresh');
  if (fromUrl !== null && Number.isFinite(Number(fromUrl))) return Math.max(0, Number(fromUrl) * 1000);
  const saved = Number(localStorage.getItem(REFRESH_KEY));
  return REFRESH_CHOICES.includes(saved) && localStorage.getItem(REFRESH_KEY) !== null ? saved : DEFAULT_REFRESH_MS;
}

/** First how the server authenticates, then the dashboard. */
function App() {
  const [settings, setSettings] = useState<ServerSettings | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  useEffect(() => {
    loadServerSettings().then(setSettings, (err: Error) => setFailure(err.message));
  }, []);
  if (failure)
    return (
      <div class="notice error" role="alert">
        Could not reach allot: {failure}
      </div>
    );
  return settings ? <Dashboard settings={settings} /> : null;
}

function Dashboard({ settings }: { settings: ServerSettings }) {
  const [place, setPlace] = useState<Place>(placeOf(location.hash));
  // null: Keystone authentication and no token yet — nothing is read until one is given
  const [token, setToken] = useState(() => initialToken(settings));
  const [signIn, setSignIn] = useState<{ reason: ApiName | null } | null>(null);
  const [refreshMs, setRefreshMs] = useState(initialRefreshMs);
  const [status, setStatus] = useState<LiveStatus | null>(null);

  useEffect(() => {
    const onHash = () => setPlace(placeOf(location.hash));
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  const api = useMemo(() => (token === null ? null : new Api(token, (reason) => setSignIn({ reason }))), [token]);
  // What the views keep between refreshes (provider details, free spans) belongs to one token.
  const placement = useMemo(() => new PlacementCache(), [token]);
  const pools = useMemo(() => new PoolsCache(), [token]);
  const live: LiveSettings = useMemo(() => ({ refreshMs, report: setStatus }), [refreshMs]);

  const chooseRefresh = (ms: number) => {
    localStorage.setItem(REFRESH_KEY, String(ms));
    setRefreshMs(ms);
  };
  const useToken = (t: string) => {
    storeToken(t);
    setToken(t);
    setSignIn(null);
    setStatus(null);
  };

  return (
    <LiveContext.Provider value={live}>
      <ChartDefs />
      <header class="top">
        <a class="brand" href="#/capacity">
          <img src="/ui/favicon.svg" alt="" width="22" height="22" /> allot
        </a>
        <nav class="tabs">
          {ROUTES.map((r) => (
            <a key={r.path} href={`#/${r.path}`} class={place.route === r.path ? 'active' : ''} data-route={r.path}>
              {r.title}
            </a>
          ))}
        </nav>
        <div class="controls">
          <LiveIndicator status={status} refreshMs={refreshMs} />
          <select aria-label="refresh interval" value={String(refreshMs)} onChange={(e) => chooseRefresh(Number((e.target as HTMLSelectElement).value))}>
            {[...new Set([...REFRESH_CHOICES, refreshMs])]
              .sort((a, b) => a - b)
              .map((ms) => (
                <option key={ms} value={String(ms)}>
                  {ms === 0 ? 'live updates off' : `refresh every ${ms / 1000} s`}
                </option>
              ))}
          </select>
          <button type="button" class="token" onClick={() => setSignIn({ reason: null })} title="the token sent to the APIs">
            {token === null ? 'sign in' : settings.auth === 'noauth' && token === NOAUTH_TOKEN ? 'noauth (admin)' : 'signed in'}
          </button>
        </div>
      </header>
      {(signIn || api === null) && (
        <SignIn
          auth={settings.auth}
          reason={signIn?.reason ?? null}
          current={token}
          onToken={useToken}
          onCancel={api === null ? null : () => setSignIn(null)}
        />
      )}
      <main>{api !== null && <RouteView place={place} api={api} placement={placement} pools={pools} />}</main>
    </LiveContext.Provider>
  );
}

/**
 * The view of the address. A link's parameters (`?node=`, `?consumer=`, `?pool=&owner=`) say what
 * the view shows first; the view is made anew when they change (its data is not read again).
 */
function RouteView(props: { place: Place; api: Api; placement: PlacementCache; pools: PoolsCache }) {
  const { place, api } = props;
  const focus = place.params.toString();
  switch (place.route) {
    case 'capacity':
      return <PlacementRoute api={api} cache={props.placement} token={api.token} withOwners={false} render={(l) => <CapacityView live={l} />} />;
    case 'consumers':
      return (
        <PlacementRoute
          api={api}
          cache={props.placement}
          token={api.token}
          withOwners
          render={(l) => <ConsumersView key={focus} live={l} consumer={place.params.get('consumer')} />}
        />
      );
    case 'baremetal':
      return <BaremetalRoute api={api} token={api.token} node={place.params.get('node')} focus={focus} />;
    case 'pools':
      return <PoolsRoute api={api} cache={props.pools} token={api.token} pool={place.params.get('pool')} owner={place.params.get('owner')} focus={focus} />;
    case 'instances':
      return place.rest[0] ? <InstanceRoute api={api} token={api.token} id={place.rest[0]} /> : <InstancesRoute api={api} token={api.token} />;
  }
}

function PlacementRoute(props: {
  api: Api;
  cache: PlacementCache;
  token: string;
  withOwners: boolean;
  render: (live: Live<PlacementSnapshot>) => JSX.Element;
}) {
  const live = useLive(
    (signal) => props.cache.refresh(props.api, signal, props.withOwners),
    `placement:${props.token}:${props.withOwners}`,
    (s) => s.unfinished,
  );
  return props.render(live);
}

function BaremetalRoute(props: { api: Api; token: string; node: string | null; focus: string }) {
  const live = useLive((signal) => loadBaremetal(props.api, signal), `baremetal:${props.token}`);
  return <BaremetalView key={props.focus} live={live} node={props.node} />;
}

function PoolsRoute(props: { api: Api; cache: PoolsCache; token: string; pool: string | null; owner: string | null; focus: string }) {
  const live = useLive((signal) => props.cache.refresh(props.api, signal), `pools:${props.token}`);
  return <PoolsView key={props.focus} live={live} api={props.api} pool={props.pool} owner={props.owner} />;
}

function InstancesRoute(props: { api: Api; token: string }) {
  const live = useLive((signal) => loadInstances(props.api, signal), `instances:${props.token}`);
  return <InstancesView live={live} />;
}

function InstanceRoute(props: { api: Api; token: string; id: string }) {
  const live = useLive((signal) => loadInstance(props.api, props.id, signal), `instance:${props.token}:${props.id}`);
  return <InstanceView id={props.id} live={live} />;
}

/** "updated 2 s ago", ticking; red when the last refresh failed. */
function LiveIndicator(props: { status: LiveStatus | null; refreshMs: number }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  const s = props.status;
  const state = !s ? 'waiting' : s.error ? 'failing' : props.refreshMs > 0 ? 'live' : 'paused';
  return (
    <span class={`live ${state}`} title={s?.error ?? ''} data-live={state}>
      <span class="pulse" />
      {!s ? 'loading' : s.error ? 'refresh failed' : `updated ${duration(now - s.at)} ago`}
    </span>
  );
}

/**
 * The sign-in step. With `--auth keystone` it comes first (nothing is read without a token) and
 * again when an API answers 401 (the token expired or was revoked); otherwise from the header. The
 * operator pastes a Keystone token (`openstack token issue -f value -c id`); it is kept in this
 * tab's sessionStorage only and sent as `X-Auth-Token` (api.ts, authHeaders). With noauth, a
 * token is Placement's noauth2 `USER[:PROJECT]`, and "No authentication" goes back to `admin`.
 */
function SignIn(props: {
  auth: ServerSettings['auth'];
  reason: ApiName | null;
  current: string | null;
  onToken: (t: string) => void;
  onCancel: (() => void) | null;
}) {
  const [value, setValue] = useState(props.current === null || props.current === NOAUTH_TOKEN ? '' : props.current);
  const keystone = props.auth === 'keystone';
  return (
    <div class="signin-backdrop">
      <form
        class="signin"
        onSubmit={(e) => {
          e.preventDefault();
          if (value.trim()) props.onToken(value.trim());
        }}
      >
        <h2>Sign in</h2>
        {props.reason && (
          <p class="notice error" role="alert" data-signin="refused">
            The {props.reason} API refused the token (401): {keystone ? 'Keystone does not know it, or it has expired or been revoked.' : 'it names no caller.'}{' '}
            Give a valid token.
          </p>
        )}
        {keystone ? (
          <p>
            This allot checks Keystone tokens. Paste one; it is sent as <code>X-Auth-Token</code> to the three APIs and kept only in this browser tab.
          </p>
        ) : (
          <p>
            This allot runs without authentication (<code>--auth noauth</code>): a token only names the Placement caller, as <code>USER[:PROJECT]</code>;{' '}
            <code>admin</code> is an administrator.
          </p>
        )}
        {keystone && <pre>openstack token issue -f value -c id</pre>}
        <input
          type="password"
          autocomplete="off"
          placeholder="token"
          value={value}
          onInput={(e) => setValue((e.target as HTMLInputElement).value)}
          aria-label="token"
        />
        <div class="signin-actions">
          <button type="submit" class="primary" disabled={!value.trim()}>
            Use this token
          </button>
          {!keystone && (
            <button type="button" onClick={() => props.onToken(NOAUTH_TOKEN)} title="allot's default --auth noauth mode">
              No authentication (noauth)
            </button>
          )}
          {props.onCancel && (
            <button type="button" onClick={props.onCancel}>
              Cancel
            </button>
          )}
        </div>
      </form>
    </div>
  );
}

render(<App />, document.getElementById('app')!);
