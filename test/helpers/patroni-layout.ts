// The one Patroni layout the repository's tests run, as text: a member's Patroni configuration
// (two PostgreSQL 15 members with synchronous replication, etcd as the DCS, the same timings) and
// the HAProxy in front that sends every connection to the member whose Patroni answers 200 to GET
// /primary. `npm run test:ha` (test/ha/layout.ts, printed in docs/operations.md) runs it on
// loopback with passwords; the chaos run's --patroni (test/chaos/patroni.ts) in network
// namespaces, trusting its own subnet. What differs between them is a parameter here; the rest is
// said once. Pure text, no I/O.

export const PG_BIN = '/usr/lib/postgresql/15/bin';

/** One member of the layout and where everything it talks to is. */
export interface PatroniMember {
  scope: string;
  name: string;
  /** address:port of its Patroni REST API (listen and connect) */
  rest: string;
  /** address:port of its PostgreSQL (listen and connect) */
  postgres: string;
  /** address:port of etcd */
  etcd: string;
  /** the directory of its data directory (`<dir>/<name>`) and its pgpass file */
  dir: string;
  /** PostgreSQL's unix_socket_directories */
  socketDir: string;
  maxConnections: number;
  /** further PostgreSQL parameters of the cluster (bootstrap), as YAML values */
  parameters?: Record<string, string>;
  /** initdb options besides the encoding (e.g. data-checksums, the host authentication) */
  initdb: string[];
  /** pg_hba lines after `local all all trust` */
  hba: string[];
  /** passwords of the superuser (`postgres` unless named), the replication and the rewind users */
  superuser: { username: string; password: string };
  passwords: { replication: string; rewind: string };
}

/** One member's Patroni configuration. The timings are the tests' (fast detection, runs of a few minutes); docs/operations.md explains each and what production would use. */
export function patroniYaml(m: PatroniMember): string {
  const parameters = Object.entries({ max_connections: String(m.maxConnections), wal_keep_size: '256MB', ...m.parameters });
  return `scope: ${m.scope}
name: ${m.name}
restapi:
  listen: ${m.rest}
  connect_address: ${m.rest}
etcd3:
  hosts: ${m.etcd}
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 1
    retry_timeout: 4
    maximum_lag_on_failover: 1048576
    primary_start_timeout: 0
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      remove_data_directory_on_rewind_failure: true
      remove_data_directory_on_diverged_timelines: true
      parameters:
${parameters.map(([k, v]) => `        ${k}: ${v}`).join('\n')}
  initdb:
${['encoding: UTF8', ...m.initdb].map((o) => `    - ${o}`).join('\n')}
  pg_hba:
${['local all all trust', ...m.hba].map((l) => `    - ${l}`).join('\n')}
postgresql:
  listen: ${m.postgres}
  connect_address: ${m.postgres}
  data_dir: ${m.dir}/${m.name}
  bin_dir: ${PG_BIN}
  pgpass: ${m.dir}/${m.name}.pgpass
  authentication:
    superuser:
      username: ${m.superuser.username}
      password: ${m.superuser.password}
    replication:
      username: replicator
      password: ${m.passwords.replication}
    rewind:
      username: rewinder
      password: ${m.passwords.rewind}
  parameters:
    unix_socket_directories: ${m.socketDir}
`;
}

/** A member as HAProxy checks it: its PostgreSQL and the port of its Patroni REST API. */
export interface ProxiedMember {
  name: string;
  /** address:port of its PostgreSQL */
  postgres: string;
  restPort: number;
  /** connections HAProxy sends it at most (absent: HAProxy's default) */
  maxconn?: number;
}

/** HAProxy: one TCP front end on `bind`, the member whose Patroni answers 200 to GET /primary behind it. */
export function haproxyConfig(o: { bind: string; members: ProxiedMember[] }): string {
  return `global
  maxconn 1000
defaults
  mode tcp
  retries 2
  timeout connect 2s
  timeout client 30m
  timeout server 30m
  timeout check 2s
listen postgres_primary
  bind ${o.bind}
  option httpchk GET /primary
  option redispatch
  http-check expect status 200
  default-server inter 1s fall 2 rise 1 on-marked-down shutdown-sessions
${o.members.map((m) => `  server ${m.name} ${m.postgres}${m.maxconn ? ` maxconn ${m.maxconn}` : ''} check port ${m.restPort}`).join('\n')}
`;
}
