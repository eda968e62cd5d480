// What Placement handlers get and give: the request with Placement's own helpers (JSON bodies
// checked as Placement checks them, schemas chosen by microversion, Accept), and the response
// with Placement's `last-modified`.
import type { WireTypes } from '../client/placement-wire.js';
import { type JsonSchema, describeSchemaError, validate } from '../core/json-schema.js';
import { type Schemas, schemaAt } from '../core/microversion.js';
import type { OperationDoc } from '../http/openapi.js';
import { HTTP } from '../http/errors.js';
import { ApiRequest, type ApiResponse, type JsonText, type Endpoint as PipelineEndpoint } from '../http/pipeline.js';
import type { PlacementContext } from './context.js';
import { type ResponseName, schemaRef } from './schemas.js';
import { accepts } from '../http/accept.js';
import { placementError } from './errors.js';

export interface PlacementResponse extends ApiResponse {
  /** ISO timestamp for `last-modified` (1.15+); defaults to now */
  lastModified?: string | null;
}

/** An endpoint of this API: its handler, versions, policy and documentation in one declaration. */
export type Endpoint = PipelineEndpoint<PlacementContext, PlacementRequest, PlacementResponse> & OperationDoc;

/**
 * An endpoint's answer, declared once: the response schema it names (the OpenAPI document's
 * component) and its handler, whose body is that schema's generated wire type, as data or as JSON
 * text written by typed pieces (core/json-text.ts) — an answer other than the schema it declares
 * does not compile.
 */
export const answers = <N extends ResponseName>(
  name: N,
  handle: (req: PlacementRequest, ctx: PlacementContext) => Promise<PlacementResponse & { body: WireTypes[N] | JsonText<WireTypes[N]> }>,
): Pick<Endpoint, 'response' | 'handle'> => ({ response: schemaRef(name), handle });

export class PlacementRequest extends ApiRequest {
  /** An absolute URL on this server for a path, as Placement puts in `Location`. */
  absoluteUrl(path: string): string {
    return `${this.raw.protocol}://${this.raw.host}${path}`;
  }

  /** A path under this API's mount, for links. */
  link(path: string): string {
    return `${this.prefix}${path}`;
  }

  /** 406 unless the client accepts JSON (Placement checks this on reads). */
  requireJsonAccept(): void {
    const accept = this.raw.headers.accept;
    if (accept && !accepts(accept, 'application/json')) throw placementError(406, 'Only application/json is provided');
  }

  /**
   * The JSON body, checked for content type, syntax and the endpoint's declared schema (or one the
   * handler names for an older microversion) at the request's microversion.
   */
  json<T>(schemas: Schemas = this.declared('body')): T {
    const contentType = this.raw.headers['content-type'];
    if (!contentType) {
      if (this.bodyBytes.length > 0) throw placementError(400, 'content-type header required');
      throw placementError(415, 'The media type None is not supported, use application/json');
    }
    const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
    if (mediaType !== 'application/json') throw placementError(415, `The media type ${contentType} is not supported, use application/json`);
    let data: unknown;
    try {
      data = this.jsonBody();
    } catch (err) {
      if ((err as { code?: string }).code === HTTP.badJson) throw placementError(400, `Malformed JSON: ${(err as Error).message}`);
      throw err;
    }
    if (data === undefined) throw placementError(400, 'Malformed JSON: Unexpected end of JSON input');
    const error = validate(this.schema(schemas), data);
    if (error) throw placementError(400, `JSON does not validate: ${describeSchemaError(error)}`);
    return data as T;
  }

  /**
   * Query parameters validated against the endpoint's declared `query` (or schemas the handler
   * names; one value per key, the last one wins); `omit` are checked elsewhere.
   */
  queryObject<T>(schemas: Schemas = this.declared('query'), omit: readonly string[] = []): T {
    const object = this.query.toObject();
    for (const name of omit) delete object[name];
    const error = validate(this.schema(schemas), object);
    if (error) throw placementError(400, `Invalid query string parameters: ${describeSchemaError(error)}`);
    return object as T;
  }

  private schema(schemas: Schemas): JsonSchema {
    return schemaAt(schemas, this.mv);
  }
}
