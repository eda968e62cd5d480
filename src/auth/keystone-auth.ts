// `--auth keystone`: every request outside the version documents carries a Keystone token in
// `X-Auth-Token`, validated as keystonemiddleware validates it (keystone.ts) and kept in a
// bounded cache (token-cache.ts) for --keystone-token-cache-time, never past the token's expiry.
// No token, or one Keystone does not know or that has expired: 401 with
// `WWW-Authenticate: Keystone uri="…"`; Keystone unreachable or failing: 503.
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import { HTTP, httpError } from '../http/errors.js';
import type { AccessControl } from '../http/pipeline.js';
import { authorizeOrRefuse } from './authorize.js';
import type { Credentials } from './credentials.js';
import { type KeystoneClient, KeystoneUnavailable, type Validation } from './keystone.js';
import type { PolicyEngine } from './policy.js';
import { TokenCache } from './token-cache.js';

export interface KeystoneAuthOptions {
  cacheTimeMs: number;
  cacheSize: number;
}

export class KeystoneAuth implements AccessControl {
  private readonly cache: TokenCache<Validation>;
  private readonly challenge: Record<string, string>;

  constructor(
    private readonly keystone: KeystoneClient,
    private readonly policy: PolicyEngine,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly options: KeystoneAuthOptions,
  ) {
    this.cache = new TokenCache(options.cacheSize, clock);
    this.challenge = { 'www-authenticate': `Keystone uri="${keystone.root}"` };
  }

  /** Tokens are not sent by browsers on their own: any Host may ask. */
  admit(): void {}

  async authenticate(_api: string, headers: FastifyRequest['headers']): Promise<Credentials> {
    const raw = headers['x-auth-token'];
    const token = (Array.isArray(raw) ? raw[0] : raw)?.trim();
    if (!token) throw this.unauthorized('no X-Auth-Token');
    let validation: Validation;
    try {
      validation = await this.cache.getOrLoad(token, () => this.validate(token));
    } catch (err) {
      if (err instanceof KeystoneUnavailable) throw httpError(503, HTTP.identityUnavailable, `The identity service is unavailable: ${err.message}`);
      throw err;
    }
    if (!validation.valid) throw this.unauthorized(validation.reason);
    if (validation.credentials.expiresAt! <= this.clock.nowMs()) throw this.unauthorized('the token has expired');
    return validation.credentials;
  }

  authorize(api: string, rule: string, target: Record<string, unknown>, credentials: Credentials): void {
    authorizeOrRefuse(this.policy, api, rule, target, credentials, this.log);
  }

  allows(api: string, rule: string, target: Record<string, unknown>, credentials: Credentials): boolean {
    return this.policy.decide(api, rule, target, credentials) === 'allow';
  }

  /** Validate with Keystone; keep the answer for the cache time, a valid token never past its expiry. */
  private async validate(token: string): Promise<{ value: Validation; until: number }> {
    const value = await this.keystone.validate(token);
    const until = this.clock.nowMs() + this.options.cacheTimeMs;
    return { value, until: value.valid ? Math.min(until, value.credentials.expiresAt!) : until };
  }

  private unauthorized(reason: string) {
    this.log.debug({ reason }, 'request refused: authentication');
    return httpError(401, HTTP.unauthorized, 'The request you have made requires authentication.', {}, this.challenge);
  }
}
