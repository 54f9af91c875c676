/**
 * An answer as it comes off the wire: read up to a cap, parsed (json.ts), the API key removed
 * from it before anything reads it, and the redacted audit copy (ApiAnswer) made of it.
 */
import type { ApiAnswer } from '../kernel/errors.js';
import { parseJsonExact } from './json.js';
import { isObject, readSuccess } from './read.js';

/** The audit copy keeps the start of a body that is not JSON (an HTML error page). */
const TEXT_KEPT = 2_000;

export interface Exchange {
  status: number;
  /** Parsed JSON, when the body was JSON. */
  json: unknown;
  readable: boolean;
  answer: ApiAnswer;
  retryAfterMs: number | undefined;
}

/**
 * The key is removed before anything reads the answer: a supplier echoing it ("Invalid API key
 * <key>") would otherwise carry it into ApiError.message, `reason` and the row's result. A text
 * body is redacted before it is cut, so a cut cannot keep half of the key.
 */
export function readAnswer(route: string, status: number, text: string, redact: (s: string) => string, at: number): Exchange {
  let json: unknown;
  let readable = text.trim() !== '';
  if (readable) {
    try {
      json = redactInPlace(parseJsonExact(text), redact);
    } catch {
      readable = false;
    }
  }
  const clean = readable ? '' : redact(text);
  const body = readable ? json : clean.length > TEXT_KEPT ? `${clean.slice(0, TEXT_KEPT)}…` : clean;
  return { status, json, readable, answer: { route, status, at, body }, retryAfterMs: undefined };
}

/** A readable body that says `success: false` (in any spelling, or `status: false`), whatever the HTTP status. */
export function saysItFailed(x: Exchange): boolean {
  return x.readable && isObject(x.json) && readSuccess(x.json) === false;
}

export function ok(x: Exchange): boolean {
  return x.status >= 200 && x.status < 300;
}

/** Reads a body up to `cap` bytes; a longer one is cut off and reported as an error. */
export async function readCapped(body: AsyncIterable<Buffer> & { destroy(err?: Error): unknown }, cap: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > cap) {
      const err = Object.assign(new Error(`answer larger than ${cap} bytes; not read`), { code: 'TOPUP_BODY_TOO_LARGE' });
      body.destroy(err);
      throw err;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The freshly parsed body with the key removed from every string and name in it (an answer could
 * echo it). In place, not copied: the readers then read JSON.parse's own objects, which is what
 * keeps reading a 200-order history every poll round cheap. Nothing else holds the parsed body yet.
 */
function redactInPlace(v: unknown, redact: (s: string) => string): unknown {
  if (typeof v === 'string') return redact(v);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (typeof x === 'object' && x !== null) redactInPlace(x, redact);
      else if (typeof x === 'string') v[i] = redact(x);
    }
    return v;
  }
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      const x = o[k];
      if (typeof x === 'object' && x !== null) redactInPlace(x, redact);
      else if (typeof x === 'string') {
        const clean = redact(x);
        if (clean !== x) o[k] = clean;
      }
      const name = redact(k);
      if (name !== k) {
        o[name] = o[k];
        delete o[k];
      }
    }
  }
  return v;
}
