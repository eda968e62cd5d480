// The HAProxy configuration docs/operations.md prints for several allot processes behind one load
// balancer, and `npm run test:ha` runs (test/ha/rolling-restart.ha.ts). Pure text, no I/O:
// test/docs.test.ts renders it with the document's addresses and finds it there word for word.

export interface Backend {
  name: string;
  /** host:port of one allot process */
  address: string;
}

/** `bind` is HAProxy's listening address (`:8778` in the document, 127.0.0.1:PORT in the test). */
export function loadBalancerConfig(o: { bind: string; servers: Backend[] }): string {
  return `global
    maxconn 4096

defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s                  # longer than --request-deadline
    timeout http-keep-alive 10s
    retries 3
    option redispatch 1                 # every retry goes to another process
    retry-on conn-failure               # only requests that never reached a process

frontend allot
    bind ${o.bind}
    default_backend allot

backend allot
    balance leastconn
    option httpchk GET /readyz
    http-check expect status 200
    default-server inter 1s fall 2 rise 2
${o.servers.map((s) => `    server ${s.name} ${s.address} check`).join('\n')}
`;
}

/**
 * allot's setting behind it: after SIGTERM keep serving, /readyz 503, for longer than HAProxy
 * takes to mark the process down (fall 2 × inter 1 s, plus a check's own time).
 */
export const SHUTDOWN_DELAY_ARGS = ['--shutdown-delay', '3'];

/** The addresses docs/operations.md shows it with. */
export const DOCUMENTED_LOAD_BALANCER = {
  bind: ':8778',
  servers: [
    { name: 'allot-1', address: '10.0.0.11:8778' },
    { name: 'allot-2', address: '10.0.0.12:8778' },
    { name: 'allot-3', address: '10.0.0.13:8778' },
  ],
};
