// What the bare-metal and reservation benches both do over HTTP: JSON calls through one lean
// keep-alive client per API base (bench/lib/http.ts: cheaper per request than fetch), polling a
// resource until it settles, and making available nodes (manage → provide → power off).
import { KeepAliveClient } from './http.js';

export type Call = (base: string, method: string, path: string, body?: unknown) => Promise<{ status: number; body: any; ms: number }>;

/** A `Call` sending `headers` on every request. */
export function jsonCaller(headers: Record<string, string>): Call {
  const clients = new Map<string, KeepAliveClient>();
  return async (base, method, path, body) => {
    let client = clients.get(base);
    if (!client) {
      client = new KeepAliveClient({ baseUrl: base, headers, maxSockets: 128, timeoutMs: 60_000 });
      clients.set(base, client);
    }
    for (let attempt = 1; ; attempt++) {
      const r = await client.request(method, path, body);
      // a kept-alive connection the server closed between two requests: again on a new one
      if (r.error !== undefined && attempt < 3) continue;
      if (r.error !== undefined) throw new Error(`${method} ${base}${path}: ${r.error}`);
      return { status: r.status, body: r.body ? JSON.parse(r.body) : undefined, ms: r.ms };
    }
  };
}

/** Poll one resource every `pollMs` until `done`; its last body. */
async function settled(call: Call, base: string, path: string, done: (b: any) => boolean, pollMs = 5): Promise<any> {
  for (;;) {
    const res = await call(base, 'GET', path);
    if (done(res.body)) return res.body;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** `count` nodes of `rc`, taken through manage → provide → power off, `parallel` at a time. */
export async function makeNodes(call: Call, base: string, rc: string, count: number, parallel = 16): Promise<void> {
  let next = 0;
  const idle = (n: any) => n.target_provision_state === null && n.target_power_state === null && n.reservation === null;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        next++;
        const node = (await call(base, 'POST', '/v1/nodes', { driver: 'fake-hardware', resource_class: rc })).body;
        for (const [verb, body] of [
          ['provision', { target: 'manage' }],
          ['provision', { target: 'provide' }],
          ['power', { target: 'power off' }],
        ] as const) {
          const res = await call(base, 'PUT', `/v1/nodes/${node.uuid}/states/${verb}`, body);
          if (res.status !== 202) throw new Error(`node setup failed: ${JSON.stringify(res.body)}`);
          await settled(call, base, `/v1/nodes/${node.uuid}`, idle);
        }
      }
    }),
  );
}

/** Nearest-rank (floor) percentile of sorted latencies. */
export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
/** One decimal, as the benches' JSON gives times and rates. */
export const round1 = (n: number) => Math.round(n * 10) / 10;
