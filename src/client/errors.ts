// The one error every client call throws when an API refuses a request, whatever the API's wire
// format: Placement's {"errors": [{status, title, detail, code, request_id}]}, Ironic's
// {"error_message": "<JSON string of {faultcode, faultstring} or {code, title, description}>"},
// and the identifier API's RFC 9457 problem+json {type, title, status, detail, code, request_id}.
// A request that never got an answer (unreachable, timed out) is an AllotApiError with status 0.

export type ApiName = 'placement' | 'baremetal' | 'ids' | 'keystone';

export class AllotApiError extends Error {
  override readonly name = 'AllotApiError';
  constructor(
    /** HTTP status; 0 when no answer came (unreachable, timeout, aborted) */
    readonly status: number,
    /**
     * The API's stable code when it has one: Placement's `placement.*` (1.23+), the identifier
     * API's `ids.*`, Ironic's faultcode (`Client` / `Server`); `client.unreachable` and
     * `client.timeout` when no answer came; null when the API gave none.
     */
    readonly code: string | null,
    /** the API's own message: Placement's detail without the status boilerplate, Ironic's faultstring, the problem's detail */
    message: string,
    /** the request id the server answered with (from its header or error body); null when unknown */
    readonly requestId: string | null,
    readonly api: ApiName,
    /** HTTP method and URL of the request, for messages */
    readonly request: { method: string; url: string },
    /** the parsed error body, for API-specific fields (`held_by`, `errors`, `conflicts`, …) */
    readonly body: unknown = null,
  ) {
    super(message);
  }

  /** No answer came: the server is down, unreachable, or slower than the timeout. */
  get unreachable(): boolean {
    return this.status === 0;
  }

  /** One line for people: `<message> (HTTP 409 placement.concurrent_update, request req-…)`. */
  describe(): string {
    const what = this.status === 0 ? (this.code ?? 'no answer') : [`HTTP ${this.status}`, this.code].filter(Boolean).join(' ');
    const id = this.requestId ? `, request ${this.requestId}` : '';
    return `${this.message || '(no message)'} (${what}${id})`;
  }
}

const REQUEST_ID_HEADERS = ['x-openstack-request-id', 'openstack-request-id', 'x-request-id'];

const asRecord = (v: unknown): Record<string, unknown> | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/**
 * Placement lays `detail` out as its WSGI stack does: "<status explanation>\n\n <message>  ".
 * The message is the part after the blank line; a routing error has none (the explanation then).
 */
function placementMessage(detail: string): string {
  const parts = detail.split('\n\n');
  const message = parts.slice(1).join('\n\n').trim();
  return message || (parts[0] ?? '').trim();
}

interface Parsed {
  code: string | null;
  message: string;
  requestId: string | null;
}

function parsePlacement(body: Record<string, unknown>): Parsed | null {
  const first = Array.isArray(body.errors) ? asRecord(body.errors[0]) : null;
  if (!first) return null;
  const detail = str(first.detail) ?? str(first.title) ?? '';
  return { code: str(first.code), message: placementMessage(detail), requestId: str(first.request_id) };
}

function parseIronic(body: Record<string, unknown>): Parsed | null {
  const raw = body.error_message;
  let inner: Record<string, unknown> | null = asRecord(raw);
  if (typeof raw === 'string') {
    try {
      inner = asRecord(JSON.parse(raw));
    } catch {
      return { code: null, message: raw, requestId: null };
    }
  }
  if (!inner) return null;
  if (typeof inner.faultstring === 'string') return { code: str(inner.faultcode), message: inner.faultstring, requestId: null };
  // the web framework's own errors (routing, method, version negotiation)
  const description = str(inner.description);
  return { code: null, message: description || str(inner.title) || '', requestId: null };
}

function parseProblem(body: Record<string, unknown>): Parsed | null {
  if (typeof body.code !== 'string' && typeof body.type !== 'string') return null;
  let message = str(body.detail) ?? str(body.title) ?? '';
  // validation errors point at the offending fields; they belong in the one line
  if (Array.isArray(body.errors) && body.errors.length) {
    const points = body.errors
      .map(asRecord)
      .filter((e): e is Record<string, unknown> => e !== null)
      .slice(0, 3)
      .map((e) => [str(e.pointer), str(e.detail)].filter(Boolean).join(': '));
    if (points.length) message += ` [${points.join('; ')}${body.errors.length > 3 ? '; …' : ''}]`;
  }
  if (typeof body.index === 'number') message += ` (item ${body.index})`;
  return { code: str(body.code), message, requestId: str(body.request_id) };
}

/** Keystone: {"error": {"code", "title", "message"}} */
function parseKeystone(body: Record<string, unknown>): Parsed | null {
  const error = asRecord(body.error);
  if (!error) return null;
  return { code: str(error.title), message: str(error.message) ?? '', requestId: null };
}

const PARSERS: Record<ApiName, (body: Record<string, unknown>) => Parsed | null> = {
  placement: parsePlacement,
  baremetal: parseIronic,
  ids: parseProblem,
  keystone: parseKeystone,
};

/** The AllotApiError for an HTTP answer that is not a success. */
export function errorFromResponse(api: ApiName, request: { method: string; url: string }, status: number, headers: Headers, text: string): AllotApiError {
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  const record = asRecord(body);
  // Each API's own format first, then the others (a proxy or another API may have answered).
  const order: ApiName[] = [api, ...(Object.keys(PARSERS) as ApiName[]).filter((a) => a !== api)];
  let parsed: Parsed | null = null;
  for (const name of order) {
    parsed = record ? PARSERS[name](record) : null;
    if (parsed) break;
  }
  const headerId = REQUEST_ID_HEADERS.map((h) => headers.get(h)).find((v): v is string => !!v) ?? null;
  const fallback =
    text
      .trim()
      .split('\n')
      .find((l) => l.trim()) ?? '';
  return new AllotApiError(
    status,
    parsed?.code ?? null,
    parsed?.message || fallback.slice(0, 500),
    headerId ?? parsed?.requestId ?? null,
    api,
    request,
    body ?? (text || null),
  );
}

/** The AllotApiError for a request that got no answer at all. */
export function errorFromFailure(api: ApiName, request: { method: string; url: string }, err: unknown, timeoutMs: number): AllotApiError {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError') return new AllotApiError(0, 'client.timeout', `no answer from ${request.url} within ${timeoutMs} ms`, null, api, request);
  if (e?.name === 'AbortError') return new AllotApiError(0, 'client.aborted', `request to ${request.url} was aborted`, null, api, request);
  const cause = e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err);
  return new AllotApiError(0, 'client.unreachable', `cannot reach ${request.url}: ${cause}`, null, api, request);
}
