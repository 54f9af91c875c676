/**
 * Holds every answer a test receives from /api/v1 to the OpenAPI document: the route (method and
 * path template) must be in the document, the status among its responses, the content type among
 * that response's, and the body must parse with the zod schema the document was generated from
 * (the route definitions of src/orderapi/routes.ts) with no member the schema does not name.
 * Each pair checked is recorded, so a test can assert which route/status pairs were exercised.
 */
import { expect } from 'vitest';
import type { ZodType } from 'zod';
import { Validator } from '@seriousme/openapi-schema-validator';
import { routes } from '../../src/orderapi/routes.js';

type Json = Record<string, any>;
const defs = routes({ auth: () => async (_c, next) => next(), cap: () => async (_c, next) => next(), orderBodyMax: 1, batchBodyMax: 1 });
const DEFS = Object.values(defs) as { method: string; path: string; responses: Record<string, { content?: Record<string, { schema: ZodType }> }> }[];

export const seen = new Set<string>();

/** The document is a valid OpenAPI 3.1 document (the official JSON schema, by @seriousme/openapi-schema-validator). */
export async function expectValidDocument(doc: unknown): Promise<void> {
  const v = new Validator();
  const res = await v.validate(doc as Parameters<Validator["validate"]>[0]);
  expect(res.errors ?? [], JSON.stringify(res.errors, null, 1)).toEqual([]);
  expect(res.valid).toBe(true);
  expect(v.version).toBe('3.1');
}

function templateOf(doc: Json, method: string, path: string): string | undefined {
  const sub = path.replace(/^\/api\/v1/, '');
  return Object.keys(doc.paths).find((t) => {
    const re = new RegExp(`^${t.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`);
    return re.test(sub) && doc.paths[t][method.toLowerCase()] !== undefined;
  });
}

/** Members of `got` that the parsed value dropped (zod strips what a schema does not name). */
function undocumented(got: unknown, parsed: unknown, at = ''): string[] {
  if (Array.isArray(got) && Array.isArray(parsed)) return got.flatMap((g, i) => undocumented(g, parsed[i], `${at}[${i}]`));
  if (got && typeof got === 'object' && parsed && typeof parsed === 'object') {
    return Object.keys(got).flatMap((k) => (k in (parsed as Json) ? undocumented((got as Json)[k], (parsed as Json)[k], `${at}.${k}`) : [`${at}.${k}`]));
  }
  return [];
}

/** Checks one answer against the document and the schema it was generated from. */
export async function conforms(doc: Json, method: string, url: string, res: Response, body: string): Promise<void> {
  const path = new URL(url).pathname;
  const template = templateOf(doc, method, path);
  expect(template, `${method} ${path} is in the document`).toBeDefined();
  const status = String(res.status);
  const op = doc.paths[template!][method.toLowerCase()];
  expect(Object.keys(op.responses), `${method} ${template} documents ${status}`).toContain(status);
  const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  const documented = Object.keys(op.responses[status].content ?? {});
  expect(documented, `${method} ${template} ${status}: content type`).toContain(type);
  const def = DEFS.find((d) => d.method === method.toLowerCase() && d.path === template);
  expect(def, `route definition of ${method} ${template}`).toBeDefined();
  const schema = def!.responses[status]!.content![type]!.schema;
  const value = type.endsWith('json') ? JSON.parse(body) : body;
  const parsed = schema.safeParse(value);
  expect(parsed.success ? [] : parsed.error.issues, `${method} ${template} ${status} body matches its schema`).toEqual([]);
  // Problem details may carry extension members (RFC 9457): its schema is open, so nothing is dropped.
  expect(undocumented(value, parsed.data), `${method} ${template} ${status}: members the document does not name`).toEqual([]);
  seen.add(`${method.toUpperCase()} ${template} ${status}`);
}
