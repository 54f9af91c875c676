/**
 * HTML built on the server with one tagged template: every interpolated value is escaped unless
 * it is itself Html (made by this tag). Values only ever go into
 * element text or double-quoted attributes, never into scripts, styles or unquoted attributes,
 * so escaping & < > " ' is enough. Synchronous and typed; no JSX compiler, no bundler.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ESCAPES[ch]!);
}

function put(v: Value): string {
  if (v === null || v === undefined || v === false || v === true) return '';
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return (v as readonly Value[]).map(put).join('');
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += put(values[i]) + strings[i + 1]!;
  return new Html(out);
}

/** A query string from parameters, skipping empty ones. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

// ───────── formats shared by the pages ─────────

export function usd(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : `${(Math.round(n * 100) / 100).toFixed(2)} USD`;
}

/** Wall time as the operator reads it: UTC to the second (the same in every log and file). */
export function when(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? '—' : `${new Date(ms).toISOString().replace('T', ' ').slice(0, 19)} UTC`;
}

export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} days ${h % 24} h`;
}

export function ago(ms: number | null | undefined, now: number): string {
  if (ms === null || ms === undefined) return '';
  return ms > now + 1000 ? `in ${duration(ms - now)}` : `${duration(now - ms)} ago`;
}

/** `<time>` with the machine-readable instant and how long ago it was. */
export function timeTag(ms: number | null | undefined, now: number): Html {
  if (ms === null || ms === undefined) return html`<span class="muted">never</span>`;
  return html`<time datetime="${new Date(ms).toISOString()}">${when(ms)}</time> <span class="muted">(${ago(ms, now)})</span>`;
}
