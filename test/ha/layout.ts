// The highly available layout `npm run test:ha` runs and docs/operations.md prints: one etcd
// member, two PostgreSQL 15 members managed by Patroni with synchronous replication, HAProxy in
// front sending every connection to the member whose Patroni answers 200 to GET /primary, and
// allot's settings for fast detection. Pure text, no I/O: test/docs.test.ts renders it with the
// addresses the document uses and finds it there word for word. The layout itself is
// test/helpers/patroni-layout.ts, which the chaos run's --patroni shares; this file gives it the
// HA test's addresses and passwords.

import { type PatroniMember, haproxyConfig as proxy, patroniYaml as memberYaml } from '../helpers/patroni-layout.js';

export { PG_BIN } from '../helpers/patroni-layout.js';

export const SCOPE = 'allot-ha';
export const SUPERUSER = { username: 'postgres', password: 'su-secret' };
export const ALLOT_USER = { username: 'allot', password: 'allot-secret' };

export interface MemberPorts {
  name: string;
  pgPort: number;
  restPort: number;
}

/**
 * One member's Patroni configuration (test/helpers/patroni-layout.ts), on loopback, with
 * passwords: scram-sha-256 for every host connection, data checksums.
 */
export function patroniYaml(o: { dir: string; member: MemberPorts; etcdPort: number }): string {
  const { dir, member, etcdPort } = o;
  const layout: PatroniMember = {
    scope: SCOPE,
    name: member.name,
    rest: `127.0.0.1:${member.restPort}`,
    postgres: `127.0.0.1:${member.pgPort}`,
    etcd: `127.0.0.1:${etcdPort}`,
    dir,
    socketDir: dir,
    maxConnections: 200,
    initdb: ['data-checksums', 'auth-local: trust', 'auth-host: scram-sha-256'],
    hba: ['host replication replicator 127.0.0.1/32 scram-sha-256', 'host all all 127.0.0.1/32 scram-sha-256'],
    superuser: SUPERUSER,
    passwords: { replication: 'repl-secret', rewind: 'rewind-secret' },
  };
  return memberYaml(layout);
}

/** HAProxy on loopback: the member whose Patroni answers 200 to GET /primary behind it, 300 connections each at most. */
export function haproxyConfig(o: { port: number; members: MemberPorts[] }): string {
  return proxy({
    bind: `127.0.0.1:${o.port}`,
    members: o.members.map((m) => ({ name: m.name, postgres: `127.0.0.1:${m.pgPort}`, restPort: m.restPort, maxconn: 300 })),
  });
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
