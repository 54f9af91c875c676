/**
 * GET /api/v1/docs: the OpenAPI document as a page, rendered here on the server from the very
 * document openapi.json serves. Why not Swagger UI or Redoc: they are scripts from a CDN (or a
 * megabyte bundled), and the console's Content-Security-Policy allows our own scripts only, on
 * a daemon that may have no internet. Plain HTML, the console's stylesheet, no script at all.
 */
import { html, type Html } from '../console/html.js';
import { PROBLEM_CODES } from './problem.js';

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** A schema in a few words: `Order`, `string`, `integer | null`, `array of OrderEvent`. */
function typeText(s: Json): Html {
  const ref = str(s.$ref);
  if (ref) {
    const name = ref.split('/').pop()!;
    return html`<a href="#schema-${name}">${name}</a>`;
  }
  if (s.anyOf || s.oneOf) return html`${list(s.anyOf ?? s.oneOf).map((x, i) => html`${i > 0 ? ' | ' : ''}${typeText(obj(x))}`)}`;
  const t = s.type;
  const types = Array.isArray(t) ? t.map(String) : t ? [String(t)] : [];
  if (types.includes('array')) return html`array of ${typeText(obj(s.items))}${types.includes('null') ? ' | null' : ''}`;
  if (s.enum) return html`${types.join(' | ') || 'one of'}: ${list(s.enum).map((e, i) => html`${i > 0 ? ', ' : ''}<code>${String(e)}</code>`)}`;
  return html`${types.join(' | ') || (s.additionalProperties !== undefined ? 'object' : 'any')}${s.format ? ` (${String(s.format)})` : ''}`;
}

function limits(s: Json): string {
  const out: string[] = [];
  for (const k of ['minimum', 'exclusiveMinimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems', 'pattern']) if (s[k] !== undefined) out.push(`${k} ${String(s[k])}`);
  return out.join(', ');
}

function propertiesTable(schema: Json): Html {
  const props = Object.entries(obj(schema.properties));
  if (props.length === 0) return html``;
  const required = new Set(list(schema.required).map(String));
  return html`<div class="table-wrap"><table><thead><tr><th scope="col">Field</th><th scope="col">Type</th><th scope="col">Required</th><th scope="col">Description</th></tr></thead><tbody>
${props.map(([name, p]) => html`<tr><td><code>${name}</code></td><td>${typeText(obj(p))}</td><td>${required.has(name) ? 'yes' : ''}</td><td>${str(obj(p).description)}${limits(obj(p)) ? html` <span class="muted">(${limits(obj(p))})</span>` : ''}</td></tr>`)}
</tbody></table></div>`;
}

function operation(path: string, method: string, op: Json): Html {
  const id = `op-${method}-${path.replace(/[^a-z0-9]+/gi, '-')}`;
  const scopes = list(op.security).flatMap((s) => list(obj(s).bearer).map(String));
  const params = list(op.parameters).map(obj);
  const body = obj(obj(op.requestBody).content);
  const responses = Object.entries(obj(op.responses));
  return html`<section class="api-op" id="${id}">
<h3><code>${method.toUpperCase()} /api/v1${path}</code> — ${str(op.summary)}</h3>
<p>${str(op.description)}</p>
<p>${scopes.length > 0 ? html`Bearer token with scope ${scopes.map((s, i) => html`${i > 0 ? ' and ' : ''}<code>${s}</code>`)}.` : 'No token needed.'}</p>
${params.length > 0 ? html`<h4>Parameters</h4><div class="table-wrap"><table><thead><tr><th scope="col">Name</th><th scope="col">In</th><th scope="col">Type</th><th scope="col">Description</th></tr></thead><tbody>
${params.map((p) => html`<tr><td><code>${str(p.name)}</code></td><td>${str(p.in)}</td><td>${typeText(obj(p.schema))}</td><td>${str(p.description) || str(obj(p.schema).description)}</td></tr>`)}</tbody></table></div>` : ''}
${Object.keys(body).length > 0 ? html`<h4>Body</h4><ul>${Object.entries(body).map(([type, m]) => html`<li><code>${type}</code>: ${typeText(obj(obj(m).schema))}</li>`)}</ul>` : ''}
<h4>Answers</h4><div class="table-wrap"><table><thead><tr><th scope="col">Status</th><th scope="col">Content</th><th scope="col">When</th></tr></thead><tbody>
${responses.map(([status, r]) => html`<tr><td>${status}</td><td>${Object.entries(obj(obj(r).content)).map(([type, m]) => html`<code>${type}</code> ${typeText(obj(obj(m).schema))} `)}</td><td>${str(obj(r).description)}</td></tr>`)}
</tbody></table></div>
</section>`;
}

export function docsPage(doc: Json): string {
  const info = obj(doc.info);
  const paths = Object.entries(obj(doc.paths));
  const ops = paths.flatMap(([path, item]) => Object.entries(obj(item)).map(([method, op]) => ({ path, method, op: obj(op) })));
  const schemas = Object.entries(obj(obj(doc.components).schemas));
  const body = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${str(info.title)} ${str(info.version)}</title><link rel="stylesheet" href="/assets/console.css"></head>
<body><main id="main">
<h1>${str(info.title)} <span class="muted">${str(info.version)}</span></h1>
<p>${str(info.description)}</p>
<p>The machine-readable document: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a> (OpenAPI ${str(doc.openapi)}). Every request but these two pages needs <code>Authorization: Bearer &lt;token&gt;</code>.</p>
<nav aria-label="Operations"><ul>${ops.map(({ path, method, op }) => html`<li><a href="#op-${method}-${path.replace(/[^a-z0-9]+/gi, '-')}"><code>${method.toUpperCase()} ${path}</code></a> ${str(op.summary)}</li>`)}<li><a href="#problems">Problem codes</a></li><li><a href="#schemas">Schemas</a></li></ul></nav>
<h2>Operations</h2>
${ops.map(({ path, method, op }) => operation(path, method, op))}
<h2 id="problems">Problem codes</h2>
<p>Every error is <code>application/problem+json</code> (RFC 9457): <code>type</code>, <code>title</code>, <code>status</code>, <code>detail</code>, a stable <code>code</code>, and for invalid input <code>errors: [{field, reason}]</code>.</p>
<div class="table-wrap"><table><thead><tr><th scope="col">Code</th><th scope="col">Status</th><th scope="col">Meaning</th></tr></thead><tbody>
${PROBLEM_CODES.map((p) => html`<tr id="problem-${p.code.toLowerCase()}"><td><code>${p.code}</code></td><td>${p.status}</td><td>${p.meaning}</td></tr>`)}
</tbody></table></div>
<h2 id="schemas">Schemas</h2>
${schemas.map(([name, s]) => html`<section id="schema-${name}"><h3>${name}</h3>${str(obj(s).description) ? html`<p>${str(obj(s).description)}</p>` : ''}${propertiesTable(obj(s)) .text ? propertiesTable(obj(s)) : html`<p>${typeText(obj(s))}</p>`}</section>`)}
</main></body></html>`;
  return body.text;
}
