/**
 * How a request reaches the API and its answer comes back: undici over HTTP in a process, the
 * model API in memory in the simulator (src/sim/). The client (client.ts) does everything else
 * (admission by the rate gate, the timeout, reading the capped body, classification), so the
 * simulator runs the very code that runs against a supplier.
 */
import type { LookupFunction } from 'node:net';
import { Agent, request } from 'undici';

export interface TransportRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** Aborted on the request's timeout or the caller's stop. */
  signal: AbortSignal;
}

export interface TransportResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: AsyncIterable<Buffer> & { destroy(err?: Error): unknown };
}

export interface Transport {
  send(req: TransportRequest): Promise<TransportResponse>;
  close(): Promise<void>;
}

export interface HttpTransportOptions {
  /** `4`: IPv4 only; `6`: IPv6 only; `auto`: Happy Eyeballs. */
  family: 4 | 6 | 'auto';
  lookup?: LookupFunction;
  connections?: number;
}

/** undici with keep-alive, one agent per client. */
export function httpTransport(opts: HttpTransportOptions): Transport {
  // undici hands `connect` options to net.connect: `family` picks the address family of the
  // DNS lookup, `autoSelectFamily` races both (Happy Eyeballs).
  const connect = {
    ...(opts.family === 'auto' ? { autoSelectFamily: true } : { family: opts.family }),
    ...(opts.lookup ? { lookup: opts.lookup } : {}),
  };
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: opts.connections ?? 64, pipelining: 1, connect });
  return {
    async send(req) {
      const res = await request(req.url, { dispatcher: agent, method: req.method, headers: req.headers, body: req.body, signal: req.signal });
      return { status: res.statusCode, headers: res.headers, body: res.body };
    },
    close: () => agent.close(),
  };
}
