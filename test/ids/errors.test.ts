// The identifier API's error table against its documentation: clients read docs/ids.md to know
// every code they may meet. The codes are enumerated from the code — the catalogue of problem
// codes, every domain error's wording, and every refusal of the request pipeline (http.*) as this
// API renders it — and each must be in the table, on the row that names it; the table names no
// code the server does not have.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { ApiError, HTTP, type HttpStatus } from '../../src/http/errors.js';
import { DOMAIN_ERRORS, PROBLEM_CODES, renderProblem } from '../../src/ids/errors.js';

/** The table's rows: the codes of the first column and the domain errors of the last. */
function documentedRows(): Array<{ codes: string[]; domain: string[] }> {
  const docs = readFileSync(new URL('../../docs/ids.md', import.meta.url), 'utf8');
  const ticked = (cell: string) => [...cell.matchAll(/`([a-z_.]+)`/g)].map((m) => m[1]!);
  return docs
    .split('\n')
    .filter((line) => line.startsWith('| `ids.'))
    .map((line) => {
      const cells = line.split('|').map((c) => c.trim());
      return { codes: ticked(cells[1]!), domain: ticked(cells[4]!) };
    });
}

/** The code this API answers for a pipeline error (its problem body's `code`). */
function renderedCode(status: HttpStatus, code: string): string {
  const rendered = renderProblem(new ApiError(status, code, 'x'), { requestId: 'req-x', method: 'GET', path: '/ids/v1', headers: {}, mv: null, route: null });
  return (JSON.parse(rendered.body) as { code: string }).code;
}

/** A status each pipeline refusal is raised with (http/, server/app.ts, auth/). */
const PIPELINE_STATUSES: Record<string, HttpStatus[]> = {
  [HTTP.notFound]: [404],
  [HTTP.methodNotAllowed]: [405],
  [HTTP.notImplemented]: [501],
  [HTTP.unauthorized]: [401],
  [HTTP.forbidden]: [403],
  [HTTP.notAcceptable]: [406],
  [HTTP.unsupportedMediaType]: [415],
  [HTTP.badJson]: [400],
  [HTTP.badQuery]: [400],
  [HTTP.badUrl]: [400],
  [HTTP.badRequest]: [400],
  [HTTP.requestTimeout]: [408],
  [HTTP.bodyTooLarge]: [413],
  [HTTP.uriTooLong]: [414],
  [HTTP.headersTooLarge]: [431],
  [HTTP.unavailable]: [503, 507],
  [HTTP.notReady]: [503],
  [HTTP.identityUnavailable]: [503],
  [HTTP.internal]: [500],
};

describe('identifier API problem codes', () => {
  const rows = documentedRows();
  const documented = new Set(rows.flatMap((r) => r.codes));

  test("docs/ids.md's table lists exactly the problem codes of the catalogue", () => {
    assert.deepEqual([...documented].sort(), Object.keys(PROBLEM_CODES).sort());
  });

  test('every domain error is listed on the row of the code it answers with', () => {
    for (const [domainCode, wording] of Object.entries(DOMAIN_ERRORS)) {
      const row = rows.find((r) => r.codes.includes(wording.code) && r.domain.includes(domainCode));
      assert.ok(row, `docs/ids.md: the row of ${wording.code} does not list the domain error ${domainCode}`);
    }
    const known = new Set(Object.keys(DOMAIN_ERRORS));
    for (const name of rows.flatMap((r) => r.domain)) assert.ok(known.has(name), `docs/ids.md lists the domain error ${name}, which does not exist`);
  });

  test('every refusal of the request pipeline answers with a documented code', () => {
    assert.deepEqual(Object.keys(PIPELINE_STATUSES).sort(), Object.values(HTTP).sort(), 'a status for every pipeline code');
    for (const [code, statuses] of Object.entries(PIPELINE_STATUSES)) {
      for (const status of statuses) {
        const answered = renderedCode(status, code);
        assert.ok(documented.has(answered), `${code} (${status}) answers ${answered}, which docs/ids.md does not list`);
      }
    }
  });
});
