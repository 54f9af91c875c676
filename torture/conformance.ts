/**
 * The order API's answers held to its OpenAPI document, outside vitest: the same checks as
 * test/orderapi/conformance.ts (which asserts with vitest's expect, so it cannot run in the torture
 * process), returning the problems as text instead of throwing. An answer conforms when its route
 * (method + path template) is in the document, its status among the route's responses, its content
 * type among that response's, and its body parses with the zod schema the document was generated
 * from (src/orderapi/routes.ts) with no member the schema does not name.
 */
import type { ZodType } from 'zod';
import { Validator } from '@seriousme/openapi-schema-validator';
import { routes } from '../src/orderapi/routes.js';

type Json = Record<string, any>;
const defs = routes({ auth: () => async (_c, next) => next(), cap: () => async (_c, next) => next(), orderBodyMax: 1, batchBodyMax: 1 });
const DEFS = Object.values(defs) as { method: string; path: string; responses: Record<string, { content?: Record<string, { schema: ZodType }> }> }[];

/** Errors of the document against the official OpenAPI 3.1 JSON schema (empty: valid). */
export async function documentErrors(doc: unknown): Promise<string[]> {
  const v = new Validator();
  const res = await v.validate(doc as Parameters<Validator['validate']>[0]);
  const errors = typeof res.errors === 'string' ? [res.errors] : (res.errors ?? []).map((e) => JSON.stringify(e));
  if (!res.valid && errors.length === 0) errors.push('not valid');
  if (v.version !== '3.1') errors.push(`version ${v.version}, not 3.1`);
  return errors;
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

/**
 * What is wrong with one answer (empty: it conforms). `type` is the answer's content type; null
 * when the client could not see it (the Python example prints the status and body only): then the
 * type the document gives for that status is assumed, and only the body is checked.
 */
export function nonConformance(doc: Json, method: string, path: string, status: number, type: string | null, body: string): string[] {
  const template = templateOf(doc, method, path);
  if (!template) return [`${method} ${path} is not in the document`];
  const op = doc.paths[template][method.toLowerCase()];
  const s = String(status);
  if (!Object.keys(op.responses).includes(s)) return [`${method} ${template} does not document ${s}`];
  const documented = Object.keys(op.responses[s].content ?? {});
  const ct = type === null ? documented[0] : type.split(';')[0]!.trim();
  if (ct === undefined || !documented.includes(ct)) return [`${method} ${template} ${s}: content type ${ct} not among ${documented.join(', ')}`];
  const def = DEFS.find((d) => d.method === method.toLowerCase() && d.path === template);
  if (!def) return [`no route definition of ${method} ${template}`];
  const schema = def.responses[s]?.content?.[ct]?.schema;
  if (!schema) return [`${method} ${template} ${s} ${ct}: no schema`];
  let value: unknown = body;
  if (ct.endsWith('json')) {
    try {
      value = JSON.parse(body);
    } catch {
      return [`${method} ${template} ${s}: body is not JSON: ${body.slice(0, 120)}`];
    }
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) return parsed.error.issues.map((i) => `${method} ${template} ${s}: ${i.path.join('.')}: ${i.message}`);
  return undocumented(value, parsed.data).map((m) => `${method} ${template} ${s}: member ${m} the document does not name`);
}
