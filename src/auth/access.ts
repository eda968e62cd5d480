// Access control of a process, built once at start from the configuration: the policy engine
// (default rules, the operator's policy file, the two enforcement switches) and the mode of
// authentication. Whatever is wrong — a policy file that does not parse or names an unknown rule,
// Keystone options missing, noauth on an address other machines can reach — stops the start with
// a message saying what to change.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Clock } from '../core/clock.js';
import type { AccessControl } from '../http/pipeline.js';
import { KeystoneClient } from './keystone.js';
import { KeystoneAuth } from './keystone-auth.js';
import { NoAuth, hostName, isLoopbackName } from './noauth.js';
import { readPolicyFile } from './policy-file.js';
import { PolicyEngine, PolicyError } from './policy.js';
import { DEFAULT_RULES } from './rules/index.js';

export function createPolicy(config: Pick<Config, 'policyFile' | 'enforceNewDefaults' | 'enforceScope'>): PolicyEngine {
  const overrides = config.policyFile ? readPolicyFile(config.policyFile) : {};
  try {
    return new PolicyEngine(DEFAULT_RULES, { enforceNewDefaults: config.enforceNewDefaults, enforceScope: config.enforceScope, overrides });
  } catch (err) {
    if (err instanceof PolicyError && config.policyFile) throw new PolicyError(`${config.policyFile}: ${err.message}`);
    throw err;
  }
}

/** Is a listen address reachable only from this machine? (`0.0.0.0`, `::` and real addresses are not.) */
export function isLoopbackAddress(host: string): boolean {
  return isLoopbackName(hostName(host.includes(':') && !host.startsWith('[') ? `[${host}]` : host));
}

export function createAccessControl(config: Config, log: Logger, clock: Clock): AccessControl {
  const policy = createPolicy(config);
  const switches = { enforce_new_defaults: config.enforceNewDefaults, enforce_scope: config.enforceScope, policy_file: config.policyFile };
  if (config.auth === 'keystone') {
    const missing = (['keystoneUrl', 'keystoneUsername', 'keystonePassword', 'keystoneProject'] as const).filter((k) => !config[k]);
    if (missing.length) {
      const flag = (k: string) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
      throw new Error(
        `--auth keystone needs ${missing.map(flag).join(', ')} (or ALLOT_${missing.map((k) => flag(k).slice(2).toUpperCase().replace(/-/g, '_')).join(', ALLOT_')})`,
      );
    }
    const keystone = new KeystoneClient(
      {
        url: config.keystoneUrl!,
        username: config.keystoneUsername!,
        password: config.keystonePassword!,
        project: config.keystoneProject!,
        userDomain: config.keystoneUserDomain,
        projectDomain: config.keystoneProjectDomain,
        timeoutMs: config.keystoneTimeout,
      },
      clock,
      log,
    );
    log.info(
      { auth: 'keystone', keystone: keystone.api, user: config.keystoneUsername, project: config.keystoneProject, ...switches },
      'authentication: Keystone tokens',
    );
    return new KeystoneAuth(keystone, policy, clock, log, { cacheTimeMs: config.keystoneTokenCacheTime, cacheSize: config.keystoneTokenCacheSize });
  }
  if (!isLoopbackAddress(config.host)) {
    if (!config.insecureNoauth) {
      throw new Error(
        `refusing to listen on ${config.host} without authentication: anyone who reaches it would be an administrator. ` +
          'Use --auth keystone, listen on 127.0.0.1, or say --insecure-noauth if that is really what you want.',
      );
    }
    log.warn(
      { host: config.host },
      'serving WITHOUT AUTHENTICATION on a non-loopback address (--insecure-noauth): anyone who reaches this port is an administrator',
    );
  }
  log.info({ auth: 'noauth', allowed_hosts: config.allowedHosts, ...switches }, 'authentication: none (development mode)');
  return new NoAuth(policy, config.allowedHosts, config.corsAllowedOrigins, log);
}
