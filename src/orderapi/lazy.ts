/**
 * The order API, loaded when it is first asked for. Its routes, schemas and OpenAPI document
 * (api.ts, routes.ts, schemas.ts: @hono/zod-openapi and zod) cost an idle daemon about 30 MB of
 * its 112 MB (bench/idle.ts, docs/bench.md), and a daemon whose reseller sends no API orders
 * never uses them. The console mounts this stand-in at /api/v1; the first request to it imports
 * api.ts and builds the real application (createOrderApi, the one place its routes are
 * registered), which answers that request and every later one. Nothing else changes: the same
 * deps, the same paths (the real application is mounted under /api/v1 exactly as before).
 */
import { Hono } from 'hono';
import type { OrderApiDeps } from './api.js';

export function lazyOrderApi(deps: OrderApiDeps): Hono {
  let loaded: Promise<Hono> | undefined;
  const load = (): Promise<Hono> =>
    (loaded ??= import('./api.js').then(({ createOrderApi }) => new Hono().route('/api/v1', createOrderApi(deps)))).catch((err: unknown) => {
      loaded = undefined; // a failed import is tried again at the next request
      throw err;
    });
  const app = new Hono();
  app.all('*', async (c) => (await load()).fetch(c.req.raw, c.env));
  return app;
}
