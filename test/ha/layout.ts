// The highly available layout `npm run test:ha` runs and docs/operations.md prints: one etcd
// member, two PostgreSQL 15 members managed by Patroni with synchronous replication, HAProxy in
// front sending every connection to the member whose Patroni answers 200 to GET /primary, and
// allot's settings for fast detection. Pure text, no I/O: test/docs.test.ts renders it with the
// addresses the document uses and finds it there word for word.

export const PG_BIN = '/usr/lib/postgresql/15/bin';

export const SCOPE = 'allot-ha';
export const SUPERUSER = { username: 'postgres', password: 'su-secret' };
export const ALLOT_USER = { username: 'allot', password: 'allot-secret' };

export interface MemberPorts {
  name: string;
  pgPort: number;
  restPort: number;
}

/**
 * One member's Patroni configuration. The timings are the test's (fast detection, a run of a few
 * minutes); docs/operations.md explains each and what production would use.
 */
export function patroniYaml(o: { dir: string; member: MemberPorts; etcdPort: number }): string {
  const { dir, member, etcdPort } = o;
  return `scope: ${SCOPE}
name: ${member.name}
restapi:
  listen: 127.0.0.1:${member.restPort}
  connect_address: 127.0.0.1:${member.restPort}
etcd3:
  hosts: 127.0.0.1:${etcdPort}
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
        max_connections: 200
        wal_keep_size: 256MB
  initdb:
    - encoding: UTF8
    - data-checksums
    - auth-local: trust
    - auth-host: scram-sha-256
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 scram-sha-256
    - host all all 127.0.0.1/32 scram-sha-256
postgresql:
  listen: 127.0.0.1:${member.pgPort}
  connect_address: 127.0.0.1:${member.pgPort}
  data_dir: ${dir}/${member.name}
  bin_dir: ${PG_BIN}
  pgpass: ${dir}/${member.name}.pgpass
  authentication:
    superuser:
      username: ${SUPERUSER.username}
      password: ${SUPERUSER.password}
    replication:
      username: replicator
      password: repl-secret
    rewind:
      username: rewinder
      password: rewind-secret
  parameters:
    unix_socket_directories: ${dir}
`;
}

/** HAProxy: one TCP front end, the member whose Patroni answers 200 to GET /primary behind it. */
export function haproxyConfig(o: { port: number; members: MemberPorts[] }): string {
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
  bind 127.0.0.1:${o.port}
  option httpchk GET /primary
  option redispatch
  http-check expect status 200
  default-server inter 1s fall 2 rise 1 on-marked-down shutdown-sessions
${o.members.map((m) => `  server ${m.name} 127.0.0.1:${m.pgPort} maxconn 300 check port ${m.restPort}`).join('\n')}
`;
}

/** A single-member etcd on loopback. */
export function etcdArgs(o: { dir: string; clientPort: number; peerPort: number }): string[] {
  return [
    '--name',
    'etcd1',
    '--data-dir',
    `${o.dir}/etcd`,
    '--listen-client-urls',
    `http://127.0.0.1:${o.clientPort}`,
    '--advertise-client-urls',
    `http://127.0.0.1:${o.clientPort}`,
    '--listen-peer-urls',
    `http://127.0.0.1:${o.peerPort}`,
    '--initial-advertise-peer-urls',
    `http://127.0.0.1:${o.peerPort}`,
    '--initial-cluster',
    `etcd1=http://127.0.0.1:${o.peerPort}`,
    '--initial-cluster-state',
    'new',
    '--initial-cluster-token',
    SCOPE,
  ];
}

/**
 * allot's settings in the test (besides --db): detect a failover fast, bound every wait. With
 * them a request meeting the failover answers within seconds, and a process's pool (10) plus its
 * LISTEN connection stays well inside PostgreSQL's max_connections (200) for three processes.
 */
export const ALLOT_HA_ARGS = [
  '--db-connect-timeout',
  '2',
  '--db-statement-timeout',
  '5',
  '--db-idle-in-transaction-timeout',
  '10',
  '--db-keepalive',
  '2',
  '--health-timeout',
  '1',
  '--pool-size',
  '10',
  '--heartbeat-interval',
  '1',
  '--heartbeat-timeout',
  '10',
  '--takeover-interval',
  '5',
];

/** The addresses and paths docs/operations.md shows the layout with (the test picks free ports). */
export const DOCUMENTED = {
  dir: '/var/lib/allot-ha',
  etcd: { clientPort: 2379, peerPort: 2380 },
  members: [
    { name: 'pg1', pgPort: 5432, restPort: 8008 },
    { name: 'pg2', pgPort: 5433, restPort: 8009 },
  ] as MemberPorts[],
  haproxyPort: 5000,
};
