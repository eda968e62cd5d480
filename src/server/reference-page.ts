// The API reference at /ui/reference on the main port: one HTML page rendered here, once, from the
// three OpenAPI documents the APIs serve (placement/openapi.ts, baremetal/openapi.ts,
// ids/openapi.ts). It loads nothing from elsewhere (works offline) and runs no script: the strict
// Content-Security-Policy allows only its own stylesheet, served beside it.
import type { FastifyInstance } from 'fastify';
import { documentedRoutes } from '../baremetal/api.js';
import { baremetalDocument } from '../baremetal/openapi.js';
import type { SecurityMode } from '../http/openapi.js';
import { idsRoutes } from '../ids/api.js';
import { idsDocument } from '../ids/openapi.js';
import { placementRoutes } from '../placement/api.js';
import { placementDocument } from '../placement/openapi.js';

const HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

// biome-ignore lint: an OpenAPI document is loosely typed JSON
type Json = any;

/** The three documents as the main port serves them (each API under its default prefix). */
export function referenceDocuments(security: SecurityMode): Array<{ id: string; doc: Json }> {
  return [
    { id: 'placement', doc: placementDocument(placementRoutes, '/placement', security) },
    { id: 'baremetal', doc: baremetalDocument(documentedRoutes, '/baremetal', security) },
    { id: 'ids', doc: idsDocument(idsRoutes, '/ids', security) },
  ];
}

const escapeHtml = (s: unknown) =>
  String(s ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');

/** `#/components/schemas/Pool` → the schema it names, so the page shows bodies in full. */
function resolve(doc: Json, value: Json): Json {
  if (value && typeof value.$ref === 'string' && value.$ref.startsWith('#/')) {
    return value.$ref
      .slice(2)
      .split('/')
      .reduce((node: Json, key: string) => node?.[key], doc);
  }
  return value;
}

function renderOperation(doc: Json, api: string, path: string, method: string, op: Json): string {
  const id = `${api}-${op.operationId ?? `${method}${path}`}`.replace(/[^A-Za-z0-9_-]/g, '-');
  const parameters = (op.parameters ?? []).map(
    (p: Json) =>
      `<tr><td><code>${escapeHtml(p.name)}</code></td><td>${escapeHtml(p.in)}</td><td>${p.required ? 'yes' : ''}</td><td>${escapeHtml(p.description ?? '')}</td></tr>`,
  );
  const body = op.requestBody?.content?.['application/json']?.schema;
  const responses = Object.entries(op.responses ?? {}).map(([status, r]) => {
    const response = resolve(doc, r);
    return `<li><code>${escapeHtml(status)}</code> ${escapeHtml(response?.description ?? '')}</li>`;
  });
  const needsToken = (op.security ?? doc.security ?? []).length > 0;
  return `<section class="operation" id="${escapeHtml(id)}">
<h3><span class="method ${escapeHtml(method)}">${escapeHtml(method.toUpperCase())}</span> <code>${escapeHtml(path)}</code>${needsToken ? ' <span class="token">X-Auth-Token</span>' : ''}</h3>
<p>${escapeHtml(op.summary ?? '')}</p>
${parameters.length ? `<table><thead><tr><th>parameter</th><th>in</th><th>required</th><th>description</th></tr></thead><tbody>${parameters.join('')}</tbody></table>` : ''}
${body ? `<details><summary>request body (application/json)</summary><pre>${escapeHtml(JSON.stringify(resolve(doc, body), null, 2))}</pre></details>` : ''}
<ul class="responses">${responses.join('')}</ul>
</section>`;
}

/** The page: a table of contents, then each API's operations in route-table order. */
export function renderReferencePage(documents: Array<{ id: string; doc: Json }>): string {
  const toc = documents.map(
    ({ id, doc }) =>
      `<li><a href="#${escapeHtml(id)}">${escapeHtml(doc.info.title)}</a> — <a href="${escapeHtml(doc.servers?.[0]?.url ?? '')}/openapi.json">openapi.json</a></li>`,
  );
  const apis = documents.map(({ id, doc }) => {
    const operations = Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
      Object.entries(item as Record<string, Json>).map(([method, op]) => renderOperation(doc, id, path, method, op)),
    );
    const error = resolve(doc, doc.components?.responses?.Error ?? doc.components?.responses?.Problem);
    return `<article id="${escapeHtml(id)}">
<h2>${escapeHtml(doc.info.title)} <small>version ${escapeHtml(doc.info.version)}</small></h2>
<p>${escapeHtml(doc.info.description)}</p>
<p>Base URL: <code>${escapeHtml(doc.servers?.[0]?.url ?? '')}</code>. Authentication: ${escapeHtml(doc.components?.securitySchemes?.token?.description ?? 'none')}. Errors: ${escapeHtml(error?.description ?? '')}.</p>
${operations.join('\n')}
</article>`;
  });
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>allot API reference</title>
<link rel="stylesheet" href="/ui/reference/reference.css">
</head>
<body>
<header><h1>allot API reference</h1><p>Generated from the OpenAPI 3.1 documents this server serves.</p><ul>${toc.join('')}</ul></header>
<main>
${apis.join('\n')}
</main>
</body>
</html>
`;
}

const STYLESHEET = `body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:72rem;padding:1rem 2rem;color:#1d232a}
h1{margin-bottom:.2rem}h2{border-bottom:2px solid #d0d7de;padding-bottom:.3rem;margin-top:2.5rem}h2 small{font-weight:normal;color:#57606a;font-size:.6em}
h3{font-size:1rem;margin:.2rem 0}.operation{border:1px solid #d0d7de;border-radius:6px;padding:.6rem .9rem;margin:.7rem 0}
.method{display:inline-block;min-width:4.2rem;text-align:center;border-radius:4px;color:#fff;font-size:.8rem;padding:.1rem .3rem;background:#57606a}
.method.get{background:#0969da}.method.post{background:#1a7f37}.method.put{background:#9a6700}.method.patch{background:#8250df}.method.delete{background:#cf222e}
.token{font-size:.75rem;color:#57606a;border:1px solid #d0d7de;border-radius:4px;padding:0 .3rem}
table{border-collapse:collapse;margin:.4rem 0}td,th{border:1px solid #d0d7de;padding:.2rem .5rem;text-align:left;font-size:.9rem}
pre{background:#f6f8fa;padding:.6rem;overflow:auto;font-size:.8rem}.responses{margin:.3rem 0;padding-left:1.2rem;font-size:.9rem}
@media (prefers-color-scheme:dark){body{background:#0d1117;color:#e6edf3}pre{background:#161b22}.operation,td,th{border-color:#30363d}}`;

/** GET /ui/reference and its stylesheet, rendered once for this process's --auth. */
export function installReferencePage(server: FastifyInstance, security: SecurityMode): void {
  let page: string | null = null;
  server.get('/ui/reference', (_req, reply) => {
    page ??= renderReferencePage(referenceDocuments(security));
    return reply.headers(HEADERS).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(page);
  });
  server.get('/ui/reference/reference.css', (_req, reply) =>
    reply.headers(HEADERS).header('cache-control', 'no-cache').type('text/css; charset=utf-8').send(STYLESHEET),
  );
}
