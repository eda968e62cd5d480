// The web dashboard at /ui on the main port: the files `npm run build` put in dist/ui/ (sources in
// ui/), read once when the server is built. The page reads the three APIs like any other client,
// so it needs nothing from the server but these files and how callers authenticate
// (/ui/server.json), so that with Keystone it asks for a token before it asks the APIs anything.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { AuthMode } from '../config.js';

/** dist/ui/, from src/server/ (tests run the sources) and from dist/server/ alike. */
const BUILT_UI = fileURLToPath(new URL('../../dist/ui/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
};

/** The page loads only its own files and talks only to this server. */
const HEADERS = {
  'content-security-policy':
    "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

interface StaticFile {
  body: Buffer;
  type: string;
  cacheControl: string;
}

function readBuiltFiles(dir: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  const walk = (sub: string) => {
    for (const name of readdirSync(path.join(dir, sub))) {
      const rel = sub ? `${sub}/${name}` : name;
      const full = path.join(dir, rel);
      if (statSync(full).isDirectory()) walk(rel);
      else
        files.set(rel, {
          body: readFileSync(full),
          type: TYPES[path.extname(name)] ?? 'application/octet-stream',
          // assets/ names carry a hash of their content; index.html must be asked for every time
          cacheControl: rel.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
        });
    }
  };
  walk('');
  return files;
}

/** What the page learns from /ui/server.json (ui/src/api.ts, ServerSettings). */
export interface DashboardSettings {
  auth: AuthMode;
}

export function installDashboard(server: FastifyInstance, log: FastifyBaseLogger, settings: DashboardSettings, dir = BUILT_UI): void {
  let files: Map<string, StaticFile>;
  try {
    files = readBuiltFiles(dir);
  } catch {
    log.warn({ dir }, 'the dashboard is not built (npm run build); /ui answers 404');
    files = new Map();
  }
  server.route({ method: ['GET', 'HEAD'], url: '/ui', handler: (_req, reply) => reply.redirect('/ui/', 302) });
  // Public like the APIs' version documents: the mode is no secret (a 401's WWW-Authenticate says it too).
  server.route({
    method: ['GET', 'HEAD'],
    url: '/ui/server.json',
    handler: (_req, reply) => reply.headers(HEADERS).header('cache-control', 'no-cache').send({ auth: settings.auth }),
  });
  server.route({
    method: ['GET', 'HEAD'],
    url: '/ui/*',
    handler: (req, reply) => {
      const rel = (req.params as { '*': string })['*'] || 'index.html';
      const file = files.get(rel);
      if (!file) return reply.code(404).send({ error: files.size ? `No file /ui/${rel}` : 'The dashboard is not built: run `npm run build`.' });
      return reply.headers(HEADERS).header('cache-control', file.cacheControl).type(file.type).send(file.body);
    },
  });
}
