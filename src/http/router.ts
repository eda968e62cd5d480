// Routing by table: path (with `:param` segments) → method → endpoint. The router knows which
// methods a path allows, so a wrong method is a 405 with `Allow` (OpenStack clients expect it),
// and it decodes path segments itself so that a malformed or over-long segment is refused in the
// API's own format rather than by the web framework.
import { HTTP, httpError } from './errors.js';

export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
export type Method = (typeof METHODS)[number];

/** path (`/resource_providers/:uuid`) → method → endpoint */
export type RouteTable<E> = Record<string, Partial<Record<Method, E>>>;

/** Longest path segment accepted (resource class and trait names, up to 255 characters, travel in paths). */
export const MAX_SEGMENT_LENGTH = 1024;

export type RouteMatch<E> =
  | { found: false }
  | {
      found: true;
      /** the table's path, e.g. `/resource_providers/:uuid` (for logs and metrics) */
      template: string;
      /** undefined when the path exists but not with this method (405) */
      endpoint: E | undefined;
      allowed: Method[];
      params: Record<string, string>;
    };

interface Node<E> {
  literals: Map<string, Node<E>>;
  param: { name: string; node: Node<E> } | null;
  route: { template: string; byMethod: Partial<Record<Method, E>>; allowed: Method[] } | null;
}

const newNode = <E>(): Node<E> => ({ literals: new Map(), param: null, route: null });

export class Router<E> {
  private readonly root = newNode<E>();

  /** `trailingSlash`: also answer each path with a trailing `/` (Ironic does). */
  constructor(table: RouteTable<E>, options: { trailingSlash?: boolean } = {}) {
    for (const [template, byMethod] of Object.entries(table)) {
      const allowed = METHODS.filter((m) => byMethod[m] !== undefined);
      const route = { template, byMethod, allowed };
      this.insert(segmentsOf(template), route);
      if (options.trailingSlash && template !== '/') this.insert([...segmentsOf(template), ''], route);
    }
  }

  private insert(segments: string[], route: NonNullable<Node<E>['route']>): void {
    let node = this.root;
    for (const segment of segments) {
      if (segment.startsWith(':')) {
        node.param ??= { name: segment.slice(1), node: newNode() };
        node = node.param.node;
      } else {
        let next = node.literals.get(segment);
        if (!next) node.literals.set(segment, (next = newNode()));
        node = next;
      }
    }
    node.route = route;
  }

  /** Match a request path (no query string). Throws http.bad_url / http.uri_too_long for a bad segment. */
  match(method: string, path: string): RouteMatch<E> {
    const segments = segmentsOf(path).map(decodeSegment);
    const params: Record<string, string> = {};
    const node = this.walk(this.root, segments, 0, params);
    if (!node?.route) return { found: false };
    const { template, byMethod, allowed } = node.route;
    return { found: true, template, endpoint: byMethod[method as Method], allowed, params };
  }

  /** Literal segments win over parameters; backtracks when a literal branch leads nowhere. */
  private walk(node: Node<E>, segments: string[], i: number, params: Record<string, string>): Node<E> | null {
    if (i === segments.length) return node.route ? node : null;
    const segment = segments[i]!;
    const literal = node.literals.get(segment);
    if (literal) {
      const found = this.walk(literal, segments, i + 1, params);
      if (found) return found;
    }
    // A parameter never holds NUL (nothing stored can match it) and is never empty.
    if (node.param && segment !== '' && !segment.includes('\0')) {
      const found = this.walk(node.param.node, segments, i + 1, params);
      if (found) {
        params[node.param.name] = segment;
        return found;
      }
    }
    return null;
  }
}

/** `/a/b/` → ['a', 'b', ''] ; `/` → [] */
function segmentsOf(path: string): string[] {
  if (path === '/' || path === '') return [];
  return path.replace(/^\//, '').split('/');
}

function decodeSegment(segment: string): string {
  if (segment.length > MAX_SEGMENT_LENGTH) throw httpError(414, HTTP.uriTooLong, `A path segment is longer than ${MAX_SEGMENT_LENGTH} characters.`);
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw httpError(400, HTTP.badUrl, `The path segment ${JSON.stringify(segment.slice(0, 100))} is not valid percent-encoding.`);
  }
}
