/**
 * The answer style in force ('spec' or 'real-world'), its settings, and the one place every
 * public answer is written: `render` turns (status, body, headers) into the bytes sent. In the
 * spec style that is JSON.stringify; in the real-world style the body goes through
 * real-world.ts first. The proxy's HTML 502 pages are decided here too (see server.ts for
 * where in the pipeline). Switched at run time by the admin route `answers`.
 */
import { randomBytes } from 'node:crypto';
import { uniform } from './fulfilment.js';
import type { RealWorldFates } from './fulfilment.js';
import { type PresentCtx, RawNumber, toRealWorld } from './real-world.js';
import type { AnswerStyle, RealWorldSettings } from './types.js';
import { ANSWER_STYLES, DEFAULT_REAL_WORLD } from './types.js';

export type AnswersPatch = Partial<RealWorldSettings> & { style?: AnswerStyle };
export type AnswersView = RealWorldSettings & { style: AnswerStyle };
export type ProxyFault = 'before' | 'after' | null;

export interface Rendered { status: number; headers: Record<string, string>; text: string }

/** Marks a raw number inside JSON.stringify's output; random per process so no echoed text can forge one. */
const MARK = `\u0000raw-${randomBytes(6).toString('hex')}:`;
/** The mark as JSON.stringify writes it inside a string, escaped for a RegExp. */
const RAW_RE = new RegExp(`"${JSON.stringify(MARK).slice(1, -1).replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')}(-?\\d+)"`, 'g');

/** JSON text in which RawNumber values are written as their bare digits. */
export function stringifyRaw(body: unknown): string {
  return JSON.stringify(body, (_k, v: unknown) => (v instanceof RawNumber ? MARK + v.digits : v)).replace(RAW_RE, '$1');
}

const PAGES = [
  (ray: string) => `<!DOCTYPE html>\n<html lang="en-US">\n<head><title>api.example | 502: Bad gateway</title></head>\n<body>\n<div id="cf-error-details">\n<h1>Bad gateway</h1> <span>Error code 502</span>\n<p>The web server reported a bad gateway error.</p>\n<p>Cloudflare Ray ID: <strong>${ray}</strong></p>\n</div>\n</body>\n</html>\n`,
  () => '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n',
];

export class Answers {
  #style: AnswerStyle;
  #settings: RealWorldSettings;
  #calls = 0;

  constructor(style: AnswerStyle = 'spec', settings: Partial<RealWorldSettings> = {}) {
    const v = validateAnswers({ style, ...DEFAULT_REAL_WORLD, ...settings });
    this.#style = v.style;
    this.#settings = v;
  }

  get style(): AnswerStyle { return this.#style; }
  get realWorld(): boolean { return this.#style === 'real-world'; }

  view(): AnswersView {
    return { style: this.#style, ...this.#settings, lateCodesMs: [...this.#settings.lateCodesMs] };
  }

  update(patch: AnswersPatch): AnswersView {
    const unknown = Object.keys(patch).filter((k) => !(k === 'style' || k in DEFAULT_REAL_WORLD));
    if (unknown.length > 0) throw new TypeError(`unknown answers setting ${unknown.join(', ')} (known: style, ${Object.keys(DEFAULT_REAL_WORLD).join(', ')})`);
    const v = validateAnswers({ ...this.view(), ...patch });
    this.#style = v.style;
    this.#settings = v;
    return this.view();
  }

  /** The fates submit.ts applies while the real-world style is on. */
  fates(): RealWorldFates | null {
    return this.realWorld ? { instantFailShare: this.#settings.instantFailShare, unrefundedShare: this.#settings.unrefundedShare } : null;
  }

  /** Numbers each public call; per-call draws (proxy pages, a missing currency…) use the number. */
  nextCall(): number { return ++this.#calls; }

  /**
   * Whether a proxy in front of the API answers this call with an HTML 502: 'before' the call
   * reached the API, or (POST /orders only, half of them) 'after' the order was made and
   * charged, its answer lost behind the proxy.
   */
  proxyFault(route: string, call: number): ProxyFault {
    const s = this.#settings;
    if (!this.realWorld || s.htmlShare <= 0 || uniform(s.seed, 'html-502', call) >= s.htmlShare) return null;
    return route === 'POST /orders' && uniform(s.seed, 'html-502-after', call) < 0.5 ? 'after' : 'before';
  }

  proxyPage(call: number): Rendered {
    const r = uniform(this.#settings.seed, 'html-page', call);
    const ray = Math.floor(r * 2 ** 48).toString(16).padStart(12, '0') + '-FRA';
    const text = (PAGES[r < 0.5 ? 0 : 1] as (ray: string) => string)(ray);
    return { status: 502, headers: { 'content-type': 'text/html; charset=UTF-8' }, text };
  }

  /**
   * The bytes of one public answer. `forcedRetryAfter`: a 429 forced by faults.forceRateLimit
   * keeps its Retry-After in every style (the fault asked for it); the limiter's own 429s have
   * none in the real-world style.
   */
  render(route: string, status: number, body: unknown, headers: Record<string, string>, ctx: Omit<PresentCtx, 'settings'> & { forcedRetryAfter?: boolean }): Rendered {
    const h: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', ...headers };
    if (!this.realWorld) return { status, headers: h, text: JSON.stringify(body) };
    if (status === 429 && !ctx.forcedRetryAfter) delete h['retry-after'];
    const text = stringifyRaw(toRealWorld(route, status, body, { ...ctx, settings: this.#settings }));
    return { status, headers: h, text };
  }
}

function validateAnswers(a: AnswersView): AnswersView {
  if (!ANSWER_STYLES.includes(a.style)) throw new TypeError(`style must be one of ${ANSWER_STYLES.join(', ')}`);
  for (const k of ['htmlShare', 'instantFailShare', 'unrefundedShare', 'lateCodesShare'] as const) {
    if (!(typeof a[k] === 'number' && a[k] >= 0 && a[k] <= 1)) throw new TypeError(`${k} must be a number in 0..1`);
  }
  const [min, max] = Array.isArray(a.lateCodesMs) ? a.lateCodesMs : [NaN, NaN];
  if (!(Number.isFinite(min) && Number.isFinite(max) && min >= 0 && max >= min)) throw new TypeError('lateCodesMs must be [min, max] with 0 <= min <= max');
  if (!Number.isFinite(a.seed)) throw new TypeError('seed must be a number');
  return {
    style: a.style, htmlShare: a.htmlShare, instantFailShare: a.instantFailShare, unrefundedShare: a.unrefundedShare,
    lateCodesShare: a.lateCodesShare, lateCodesMs: [min, max], seed: a.seed,
  };
}
