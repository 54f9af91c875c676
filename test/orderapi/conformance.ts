/**
 * Holds every answer a test receives from /api/v1 to the OpenAPI document, with vitest's expect:
 * the checks themselves are torture/conformance.ts's (the route in the document, the status among
 * its responses, the content type among that response's, the body parsing with the zod schema the
 * document was generated from, with no member the schema does not name), shared with the torture
 * suite's api scenario. Each pair checked is recorded, so a test can assert which route/status
 * pairs were exercised.
 */
import { expect } from 'vitest';
import { documentErrors, nonConformance } from '../../torture/conformance.js';

type Json = Record<string, any>;

export const seen = new Set<string>();

/** The document is a valid OpenAPI 3.1 document (the official JSON schema, by @seriousme/openapi-schema-validator). */
export async function expectValidDocument(doc: unknown): Promise<void> {
  expect(await documentErrors(doc)).toEqual([]);
}

function templateOf(doc: Json, method: string, path: string): string | undefined {
  const sub = path.replace(/^\/api\/v1/, '');
  return Object.keys(doc.paths).find((t) => new RegExp(`^${t.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`).test(sub) && doc.paths[t][method.toLowerCase()] !== undefined);
}

/** Checks one answer against the document and the schema it was generated from. */
export async function conforms(doc: Json, method: string, url: string, res: Response, body: string): Promise<void> {
  const path = new URL(url).pathname;
  expect(nonConformance(doc, method, path, res.status, res.headers.get('content-type') ?? '', body), `${method} ${path} ${res.status}`).toEqual([]);
  seen.add(`${method.toUpperCase()} ${templateOf(doc, method, path)} ${res.status}`);
}
