// The one place a policy decision becomes an answer: allowed, or 403 in the API's wording.
import type { Logger } from 'pino';
import { HTTP, httpError } from '../http/errors.js';
import type { Credentials } from './credentials.js';
import type { PolicyEngine } from './policy.js';

/** What each API's own service says when policy refuses (Placement's and Ironic's wording). */
function refusal(api: string, rule: string): string {
  if (api === 'baremetal') return `Access was denied to the following resource: ${rule}`;
  return `Policy does not allow ${rule} to be performed.`;
}

export function authorizeOrRefuse(
  policy: PolicyEngine,
  api: string,
  rule: string,
  target: Record<string, unknown>,
  credentials: Credentials,
  log: Logger,
): void {
  const decision = policy.decide(api, rule, target, credentials);
  if (decision === 'allow') return;
  // A route naming a rule that does not exist is a bug; refusing (as oslo.policy does) is the safe answer.
  if (decision === 'unknown_rule') log.error({ api, rule }, 'no such policy rule; refused');
  else log.debug({ api, rule, decision, user: credentials.userId, project: credentials.projectId, system: credentials.systemScope }, 'policy refused');
  throw httpError(403, HTTP.forbidden, refusal(api, rule), { rule });
}
