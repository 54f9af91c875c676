/**
 * The body of a request, before any page reads it: its size capped, and a form read once, so
 * that a body the console cannot read is refused with a 4xx and never reaches a page as a 500.
 *
 * Why not hono/body-limit: for a body of unknown length (`Transfer-Encoding: chunked`, no
 * Content-Length: curl --data-binary @-, a fetch() with a stream) it rebuilds the request with
 * `new Request(c.req.raw, …)`. The console's server keeps Node's own Request (the adaptor runs
 * with overrideGlobalObjects: false, so the daemon's API client is not handed a replaced global),
 * and that constructor cannot copy the adaptor's request object: every such POST, to any
 * route, with or without a content type, answered 500. Here the request is rebuilt from its
 * URL, method and headers, which any Request can take.
 *
 * A form (multipart/form-data or application/x-www-form-urlencoded) is parsed here, once; Hono
 * keeps the parsed form, so the pages' own parseBody() reads it from there. A form that cannot
 * be parsed (a multipart type without a boundary, a body that is not multipart) is a 400: the
 * client sent something wrong, nothing failed in the console.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { ConsoleEnv } from './auth.js';

const FORM = /^(multipart\/form-data|application\/x-www-form-urlencoded)\s*(;|$)/i;

/** The whole body, or null as soon as it is longer than `max` bytes. */
async function readCapped(body: ReadableStream<Uint8Array>, max: number): Promise<Uint8Array | null> {
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    parts.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return all;
}

/** Refuses a body longer than `maxBytes` (with `tooLarge`); reads a body of unknown length here. */
export function bodyCap(maxBytes: number, tooLarge: (c: Context<ConsoleEnv>) => Response): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    const raw = c.req.raw;
    // Decided from the method and the headers first: the Node adaptor's request builds a whole
    // web Request (a ReadableStream over the socket, an AbortController) the first time its
    // `body` is touched, where c.req.json() would otherwise read the socket directly. A profile of
    // the order API at 500 POSTs/s (npm run bench -- --parts api --cpu-prof) had that build at 8 %
    // of the event loop, from the `!raw.body` test alone. GET and HEAD have no body.
    const method = raw.method;
    if (method === 'GET' || method === 'HEAD') return next();
    const length = raw.headers.get('content-length');
    if (length !== null && !raw.headers.has('transfer-encoding')) {
      return Number(length) > maxBytes ? tooLarge(c) : next();
    }
    if (!raw.body) return next();
    let bytes: Uint8Array | null;
    try {
      bytes = await readCapped(raw.body, maxBytes);
    } catch {
      // The client went away mid-body (or sent broken chunks): nobody waits for this answer.
      return c.text('The request body could not be read.\n', 400);
    }
    if (bytes === null) return tooLarge(c);
    const headers = new Headers(raw.headers);
    headers.delete('transfer-encoding');
    headers.set('content-length', String(bytes.length));
    c.req.raw = new Request(c.req.url, { method: raw.method, headers, body: bytes, signal: raw.signal });
    return next();
  };
}

/** Parses a form body once; one that cannot be parsed is refused (400) before any page sees it. */
export function formBody(): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    const m = c.req.method;
    if (m === 'GET' || m === 'HEAD' || !FORM.test(c.req.header('content-type') ?? '')) return next();
    try {
      await c.req.parseBody();
    } catch {
      return c.text('The form could not be read (its body does not match its content type): send it from the console\'s page.\n', 400);
    }
    return next();
  };
}
