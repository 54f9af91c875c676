/**
 * §5.2: account allowlists take IPv4 addresses only, so a dual-stack host must reach the API over
 * IPv4 (TOPUP_IP_FAMILY=4, the default). Shown with a host name that resolves to both loopbacks
 * (a resolver given to the client, since this machine's `localhost` is IPv4 only) and a server
 * on each, answering which one it is: family 4 reaches the IPv4 one, 6 the IPv6 one. So the
 * setting really decides the family of the connection (net.connect asks the resolver for it).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ResellerClient } from '../../src/api/client.js';
import { onCleanup } from './helpers.js';

function serve(host: string, port: number, balanceUsd: number): Promise<Server | undefined> {
  const server = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ success: true, balanceUsd, currency: 'USD' }));
  });
  return new Promise((resolve) => {
    server.once('error', () => resolve(undefined));
    server.listen(port, host, () => {
      onCleanup(() => new Promise<void>((r) => server.close(() => r())));
      resolve(server);
    });
  });
}

/** `dual.test` → ::1 and 127.0.0.1, honouring the family net.connect asks for, like dns.lookup. */
const dualStack: LookupFunction = (_host, options, callback) => {
  const all = [{ address: '::1', family: 6 }, { address: '127.0.0.1', family: 4 }];
  const wanted = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
  if (options.all) (callback as (e: null, a: typeof all) => void)(null, wanted);
  else callback(null, wanted[0]!.address, wanted[0]!.family);
};

describe('§5.2 the address family of API calls', () => {
  it('family 4 (the default) goes over IPv4 where the host has both; 6 over IPv6', async (ctx) => {
    const v4 = await serve('127.0.0.1', 0, 4);
    const port = (v4!.address() as AddressInfo).port;
    const v6 = await serve('::1', port, 6);
    if (!v6) return ctx.skip(); // no IPv6 loopback on this machine
    const make = (ipFamily?: 4 | 6) => {
      const c = new ResellerClient({ baseUrl: `http://dual.test:${port}`, apiKey: 'family-test-key-1', timeoutMs: 3_000, lookup: dualStack, ...(ipFamily ? { ipFamily } : {}) });
      onCleanup(() => c.close());
      return c;
    };
    expect(make().ipFamily).toBe(4);
    expect((await make().balance()).balanceUsd).toBe(4);
    expect((await make(6).balance()).balanceUsd).toBe(6);
  });
});
