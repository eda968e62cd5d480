// What bare-metal handlers get and give: the request with Ironic's own helpers (query arguments
// checked as Ironic checks them, JSON bodies and schema errors worded as Ironic words them).
import type { WireTypes } from '../client/baremetal-wire.js';
import { schemaAt } from '../core/microversion.js';
import type { OperationDoc } from '../http/openapi.js';
import { type JsonSchema, bestMatch, pyRepr, validate } from '../core/json-schema.js';
import { HTTP } from '../http/errors.js';
import { ApiRequest, type ApiResponse, type Endpoint as PipelineEndpoint } from '../http/pipeline.js';
import { badRequest, frameworkError, notAcceptable } from './errors.js';
import type { BaremetalContext } from './context.js';
import type { Compare } from './core/paging.js';
import { type ResponseName, schemaRef } from './schemas.js';

export type IronicResponse = ApiResponse;
/** An endpoint of this API: its handler, versions, policy rule and documentation in one declaration. */
export type Endpoint = PipelineEndpoint<BaremetalContext, IronicRequest, IronicResponse> & OperationDoc & { query?: IronicQuery };

/**
 * An endpoint's answer, declared once: the response schema it names (the OpenAPI document's
 * component, schemas.ts) and its handler, whose body is that schema's generated wire type — a list
 * whose envelope or items differ from the schema it declares does not compile.
 */
export const answers = <N extends ResponseName>(
  name: N,
  handle: (req: IronicRequest, ctx: BaremetalContext) => Promise<IronicResponse & { body: WireTypes[N] }>,
): Pick<Endpoint, 'response' | 'handle'> => ({ response: schemaRef(name), handle });

/** A query parameter newer than 1.1: the version that brought it; `named`: Ironic's 406 names that version. */
export interface ParamSince {
  since: string;
  named?: boolean;
}

/** A list filter that compares one column of the listed table (routes/query.ts `column`). */
export interface ColumnFilter {
  column: string;
  compare: Compare;
  /** the request's text → the value compared (its 400 when malformed); none: the text itself */
  parse?: (raw: string) => string;
}

/**
 * An endpoint's query parameters (routes/query.ts builds them): a JSON schema whose properties are
 * the parameters (what the OpenAPI document shows), the versions of those newer than 1.1, and the
 * column each column filter compares.
 */
export type IronicQuery = JsonSchema & {
  properties: Record<string, JsonSchema>;
  versions: Readonly<Record<string, ParamSince>>;
  columns: Readonly<Record<string, ColumnFilter>>;
};

export class IronicRequest extends ApiRequest {
  /**
   * The query parameters the endpoint declares (`query`), one value each, as Ironic checks them:
   * an undeclared name is a 400 "Unexpected arguments: …", a repeated one "Expected string for
   * …", one newer than the request's version a 406 (naming the version where Ironic's does).
   */
  queryArgs(): Record<string, string> {
    const declared = this.endpoint.query as IronicQuery | undefined;
    const allowed = Object.keys(declared?.properties ?? {});
    const unknown = this.query.keys().filter((k) => !allowed.includes(k));
    if (unknown.length) throw badRequest(`Unexpected arguments: ${unknown.join(', ')}`);
    const out: Record<string, string> = {};
    for (const key of this.query.keys()) {
      const values = this.query.all(key);
      if (values.length > 1) throw badRequest(`Expected string for ${key}: ${pyRepr(values)}`);
      out[key] = values[0]!;
    }
    for (const key of Object.keys(out)) {
      const v = declared?.versions[key];
      if (v && !this.mv.atLeast(v.since)) throw notAcceptable(v.named ? v.since : undefined);
    }
    return out;
  }

  /** The JSON body (any JSON value), or undefined when there is none. A missing or empty content type is JSON, as in Ironic. */
  override jsonBody(): unknown {
    const contentType = this.raw.headers['content-type'];
    if (contentType) {
      const media = contentType.split(';')[0]!.trim().toLowerCase();
      if (media !== '' && media !== 'application/json' && !media.endsWith('+json')) {
        throw frameworkError(415, `The request media type ${media} is not supported; use application/json.`);
      }
    }
    try {
      return super.jsonBody();
    } catch (err) {
      if ((err as { code?: string }).code === HTTP.badJson) throw badRequest(`Malformed JSON in the request body: ${(err as Error).message}`);
      throw err;
    }
  }

  /** The JSON body checked against the schema the endpoint declares (`body`); errors read "Schema error for <what>: …". */
  json<T>(what: string): T {
    const schema = schemaAt(this.declared('body'), this.mv);
    const data = this.jsonBody();
    if (data === undefined) throw badRequest(`Missing the request body (a JSON ${what}).`);
    checkSchema(schema, data, what);
    return data as T;
  }
}

/** Validate against a schema, wording the error as Ironic does (with a root cause for anyOf/oneOf). */
export function checkSchema(schema: JsonSchema, data: unknown, what: string): void {
  const error = validate(schema, data);
  if (!error) return;
  let message = error.message;
  // Ironic looks into the branches for a likelier cause than "not valid under any of the given schemas".
  let current = error;
  let cause: string | null = null;
  while (current.context.length) {
    current = bestMatch(current.context);
    cause = current.message;
  }
  if (cause !== null) message += `. Possible root cause: ${cause}`;
  throw badRequest(`Schema error for ${what}: ${message}`);
}
