/**
 * The console's pictures as SVG written on the server (issue 33): no library, no script, nothing
 * fetched. Hand-written because what they need is small — a linear scale, "nice" ticks (1, 2, 5 ×
 * 10^k), stacked bars, lines and a segmented bar — about the size d3-scale and d3-shape's glue would
 * be, without adding a dependency to a daemon that handles money.
 *
 * Readable without colour: every series has a pattern of its own (stripes, dots, cross-hatch …) or a
 * dash and point shape of its own, the legend shows that same pattern or line, each bar and point has
 * a <title> with its figure, and the numbers are in a table beside the picture. Colours are drawn from
 * a palette that keeps 3:1 contrast against white (WCAG non-text contrast). SVG presentation
 * attributes only (fill=, stroke=), never style=: the console's CSP forbids inline styles.
 */
import { Html, html } from './html.js';

// ───────── scales ─────────

export type Scale = (v: number) => number;

/** Maps [d0, d1] linearly onto [r0, r1] (a zero-width domain maps to r0). */
export function linearScale([d0, d1]: readonly [number, number], [r0, r1]: readonly [number, number]): Scale {
  const span = d1 - d0;
  return (v) => (span === 0 ? r0 : r0 + ((v - d0) / span) * (r1 - r0));
}

/** A "nice" step (1, 2 or 5 × 10^k) that splits [0, max] into about `count` steps. */
export function niceStep(max: number, count = 4): number {
  if (!(max > 0)) return 1;
  const raw = max / count;
  const p = 10 ** Math.floor(Math.log10(raw));
  const f = raw / p;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

/** Ticks from 0 to a nice top at or above max: [0, step, 2·step, … top]. */
export function niceTicks(max: number, count = 4): number[] {
  const step = niceStep(max, count);
  const top = Math.max(step, Math.ceil(max / step - 1e-9) * step);
  const out: number[] = [];
  for (let v = 0; v <= top + step / 2; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

// ───────── looks ─────────

/** Fill colours (≥ 3:1 against white) and, for each, a pattern drawn over it. */
const COLOURS = ['#1f5fbf', '#b3541e', '#2e7d32', '#7b3fa0', '#a3123a', '#00695c', '#5d4037', '#455a64'];
const PATTERNS = ['solid', 'stripes', 'dots', 'cross', 'back', 'grid', 'wave', 'vertical'] as const;
const DASHES = ['', '6 3', '2 3', '10 3 2 3', '1 2', '12 4'];
const SHAPES = ['circle', 'square', 'triangle', 'diamond', 'cross', 'bar'] as const;

export function colourOf(i: number): string {
  return COLOURS[i % COLOURS.length]!;
}

function patternDef(id: string, i: number): Html {
  const c = colourOf(i);
  const kind = PATTERNS[i % PATTERNS.length]!;
  const mark: Record<(typeof PATTERNS)[number], string> = {
    solid: '',
    stripes: '<path d="M-1 1l2-2M0 8l8-8M7 9l2-2" stroke="#fff" stroke-width="1.6"/>',
    dots: '<circle cx="4" cy="4" r="1.6" fill="#fff"/>',
    cross: '<path d="M0 0l8 8M8 0l-8 8" stroke="#fff" stroke-width="1.2"/>',
    back: '<path d="M-1 7l2 2M0 0l8 8M7 -1l2 2" stroke="#fff" stroke-width="1.6"/>',
    grid: '<path d="M4 0v8M0 4h8" stroke="#fff" stroke-width="1.2"/>',
    wave: '<path d="M0 4q2 -3 4 0t4 0" stroke="#fff" stroke-width="1.2" fill="none"/>',
    vertical: '<path d="M4 0v8" stroke="#fff" stroke-width="2"/>',
  };
  return html`<pattern id="${id}" width="8" height="8" patternUnits="userSpaceOnUse"><rect width="8" height="8" fill="${c}"/>${new Html(mark[kind])}</pattern>`;
}

function pointMark(i: number, x: number, y: number, colour: string, title: string): Html {
  const shape = SHAPES[i % SHAPES.length]!;
  const t = html`<title>${title}</title>`;
  const f = (n: number): string => n.toFixed(1);
  switch (shape) {
    case 'circle': return html`<circle cx="${f(x)}" cy="${f(y)}" r="3.2" fill="${colour}">${t}</circle>`;
    case 'square': return html`<rect x="${f(x - 3)}" y="${f(y - 3)}" width="6" height="6" fill="${colour}">${t}</rect>`;
    case 'triangle': return html`<path d="M${f(x)} ${f(y - 4)}L${f(x + 4)} ${f(y + 3)}L${f(x - 4)} ${f(y + 3)}Z" fill="${colour}">${t}</path>`;
    case 'diamond': return html`<path d="M${f(x)} ${f(y - 4)}L${f(x + 4)} ${f(y)}L${f(x)} ${f(y + 4)}L${f(x - 4)} ${f(y)}Z" fill="${colour}">${t}</path>`;
    case 'cross': return html`<path d="M${f(x - 3.5)} ${f(y - 3.5)}L${f(x + 3.5)} ${f(y + 3.5)}M${f(x + 3.5)} ${f(y - 3.5)}L${f(x - 3.5)} ${f(y + 3.5)}" stroke="${colour}" stroke-width="2">${t}</path>`;
    default: return html`<rect x="${f(x - 1.5)}" y="${f(y - 4)}" width="3" height="8" fill="${colour}">${t}</rect>`;
  }
}

// ───────── frames ─────────

const W = 640;
const PAD = { left: 64, right: 16, top: 12, bottom: 34 };

export interface ChartText {
  /** Unique on the page (ids of its title, description and patterns). */
  id: string;
  /** What the picture answers, read out by screen readers. */
  title: string;
  /** The picture in words: its totals and what stands out. */
  desc: string;
}

function frame(t: ChartText, height: number, defs: Html, body: Html): Html {
  return html`<svg class="chart" viewBox="0 0 ${W} ${height}" width="100%" role="img" aria-labelledby="${t.id}-t ${t.id}-d" data-chart="${t.id}" preserveAspectRatio="xMinYMin meet"><title id="${t.id}-t">${t.title}</title><desc id="${t.id}-d">${t.desc}</desc><defs>${defs}</defs>${body}</svg>`;
}

function yAxis(ticks: number[], y: Scale, fmt: (v: number) => string, width: number): Html {
  return html`${ticks.map((v) => html`<line x1="${PAD.left}" x2="${width - PAD.right}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#d0d4da" stroke-width="1"/><text x="${PAD.left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" font-size="11" fill="#545454">${fmt(v)}</text>`)}`;
}

/** Labels of the x axis: about 6 of them, always the last. */
function xLabels(labels: readonly string[], x: (i: number) => number, height: number): Html {
  const every = Math.max(1, Math.ceil(labels.length / 6));
  return html`${labels.map((l, i) => ((labels.length - 1 - i) % every === 0 ? html`<text x="${x(i).toFixed(1)}" y="${height - PAD.bottom + 16}" text-anchor="middle" font-size="11" fill="#545454">${l}</text>` : ''))}`;
}

export interface Series {
  name: string;
  values: readonly number[];
}

/** The legend as HTML (it wraps on a phone): each series' pattern or line as in the picture. */
export function legend(id: string, names: readonly string[], kind: 'fill' | 'line'): Html {
  return html`<ul class="legend" aria-hidden="true">${names.map((n, i) => html`<li><svg width="22" height="12" viewBox="0 0 22 12"><defs>${patternDef(`${id}-l${i}`, i)}</defs>${kind === 'fill' ? html`<rect width="22" height="12" fill="url(#${id}-l${i})" stroke="#1b1b1b" stroke-width=".5"/>` : html`<line x1="0" x2="22" y1="6" y2="6" stroke="${colourOf(i)}" stroke-width="2.5" stroke-dasharray="${DASHES[i % DASHES.length]!}"/>${pointMark(i, 11, 6, colourOf(i), n)}`}</svg> ${n}</li>`)}</ul>`;
}

/**
 * Bars per x label, each stacked from its series in order (bottom first). `fmt` writes a value
 * for the axis and the titles.
 */
export function stackedBars(t: ChartText, labels: readonly string[], series: readonly Series[], fmt: (v: number) => string, opts: { height?: number; xLabel?: (l: string) => string } = {}): Html {
  const height = opts.height ?? 220;
  const totals = labels.map((_, i) => series.reduce((s, se) => s + (se.values[i] ?? 0), 0));
  const ticks = niceTicks(Math.max(...totals, 0));
  const y = linearScale([0, ticks[ticks.length - 1]!], [height - PAD.bottom, PAD.top]);
  const band = (W - PAD.left - PAD.right) / Math.max(labels.length, 1);
  const x = (i: number): number => PAD.left + band * (i + 0.5);
  const bw = Math.max(2, band * 0.72);
  const defs = html`${series.map((_, i) => patternDef(`${t.id}-p${i}`, i))}`;
  const bars = labels.map((l, i) => {
    let base = 0;
    return series.map((se, si) => {
      const v = se.values[i] ?? 0;
      if (v <= 0) return '';
      const y0 = y(base);
      const y1 = y(base + v);
      base += v;
      return html`<rect x="${(x(i) - bw / 2).toFixed(1)}" y="${y1.toFixed(1)}" width="${bw.toFixed(1)}" height="${Math.max(0.5, y0 - y1).toFixed(1)}" fill="url(#${t.id}-p${si})" stroke="#fff" stroke-width=".5"><title>${opts.xLabel ? opts.xLabel(l) : l}, ${se.name}: ${fmt(v)}</title></rect>`;
    });
  });
  return frame(t, height, defs, html`${yAxis(ticks, y, fmt, W)}${bars}<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(0)}" y2="${y(0)}" stroke="#1b1b1b"/>${xLabels(labels.map((l) => (opts.xLabel ? opts.xLabel(l) : l)), x, height)}`);
}

export interface LineSeries {
  name: string;
  /** One value per x label; null where there is none (the line breaks). */
  values: readonly (number | null)[];
}

/** Lines over the x labels, each with its own dash and point shape; `marks` adds labelled points (a top-up). */
export function lines(
  t: ChartText,
  labels: readonly string[],
  series: readonly LineSeries[],
  fmt: (v: number) => string,
  opts: { height?: number; xLabel?: (l: string) => string; marks?: { i: number; v: number; label: string }[]; ceiling?: { v: number; label: string } } = {},
): Html {
  const height = opts.height ?? 220;
  const all = series.flatMap((s) => s.values.filter((v): v is number => v !== null));
  // A margin can be below zero: the axis then reaches down to a nice step below the lowest value.
  const hi = Math.max(...all, opts.ceiling?.v ?? 0, 0);
  const lo = Math.min(...all, 0);
  const step = niceStep(hi - lo);
  const ticks: number[] = [];
  for (let v = lo < 0 ? Math.floor(lo / step - 1e-9) * step : 0; v <= Math.max(step, Math.ceil(hi / step - 1e-9) * step) + step / 2; v += step) ticks.push(Number(v.toPrecision(12)));
  const y = linearScale([ticks[0]!, ticks[ticks.length - 1]!], [height - PAD.bottom, PAD.top]);
  const n = Math.max(labels.length, 1);
  const x = linearScale([0, Math.max(n - 1, 1)], [PAD.left + 8, W - PAD.right - 8]);
  const name = (l: string): string => (opts.xLabel ? opts.xLabel(l) : l);
  const paths = series.map((s, si) => {
    let d = '';
    let pen = false;
    s.values.forEach((v, i) => {
      if (v === null) {
        pen = false;
        return;
      }
      d += `${pen ? 'L' : 'M'}${x(i).toFixed(1)} ${y(v).toFixed(1)}`;
      pen = true;
    });
    // Points only where few enough to tell apart; the line's dash tells the series anyway.
    const showPoints = s.values.length <= 40;
    const pts = s.values.map((v, i) => (v === null || !showPoints ? '' : pointMark(si, x(i), y(v), colourOf(si), `${name(labels[i]!)}, ${s.name}: ${fmt(v)}`)));
    return html`<path d="${d}" fill="none" stroke="${colourOf(si)}" stroke-width="2.2" stroke-dasharray="${DASHES[si % DASHES.length]!}"/>${pts}`;
  });
  const ceiling = opts.ceiling
    ? html`<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(opts.ceiling.v).toFixed(1)}" y2="${y(opts.ceiling.v).toFixed(1)}" stroke="#a50e0e" stroke-width="1.5" stroke-dasharray="4 4"/><text x="${W - PAD.right}" y="${(y(opts.ceiling.v) - 4).toFixed(1)}" text-anchor="end" font-size="11" fill="#a50e0e">${opts.ceiling.label}</text>`
    : '';
  const marks = (opts.marks ?? []).map((m) => html`<g><path d="M${x(m.i).toFixed(1)} ${(y(m.v) - 12).toFixed(1)}l-5 -8h10z" fill="#0d652d"><title>${name(labels[m.i]!)}: ${m.label}</title></path><text x="${x(m.i).toFixed(1)}" y="${(y(m.v) - 23).toFixed(1)}" text-anchor="middle" font-size="10" fill="#0d652d">${m.label}</text></g>`);
  return frame(t, height, html``, html`${yAxis(ticks, y, fmt, W)}${ceiling}${paths}${marks}<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(0)}" y2="${y(0)}" stroke="#1b1b1b"/>${xLabels(labels.map(name), (i) => x(i), height)}`);
}

export interface Segment {
  /** Stable key (a class name, `data-seg` for the live script). */
  key: string;
  label: string;
  n: number;
  /** The counts it sums, each with the words of the batch's status table (segments.ts): the legend names them. */
  parts?: readonly { count: string; label: string; n: number }[];
  /** What it means (the legend's title). */
  what?: string;
}

/**
 * A batch's progress as one bar of segments (segments.ts: completed, failed, in review, in progress, skipped), each
 * with its pattern; widths are shares of `total`. With `words`, the counts are written beside it.
 * HTML, not SVG: the live script resizes the segments by their data-seg key.
 */
export function segmentBar(id: string, segments: readonly Segment[], total: number, opts: { small?: boolean; words?: boolean } = {}): Html {
  const t = Math.max(total, 1);
  const said = segments.filter((s) => s.n > 0).map((s) => `${s.label} ${s.n}`).join(', ') || 'no rows';
  const pct = (n: number): string => `${((n / t) * 100).toFixed(2)}`;
  const svgSegs: Html[] = [];
  let at = 0;
  segments.forEach((s, i) => {
    svgSegs.push(html`<rect data-seg="${s.key}" x="${pct(at)}" y="0" width="${pct(s.n)}" height="10" fill="url(#${id}-s${i})"><title>${s.label}: ${s.n} of ${total}</title></rect>`);
    at += s.n;
  });
  const defs = html`${segments.map((_, i) => segPattern(`${id}-s${i}`, segments[i]!.key))}`;
  const bar = html`<svg class="${opts.small ? 'segbar small' : 'segbar'}" viewBox="0 0 100 10" preserveAspectRatio="none" role="img" aria-label="${said} of ${total} rows" data-segbar data-total="${total}"><defs>${defs}</defs><rect x="0" y="0" width="100" height="10" fill="#f4f5f7"/>${svgSegs}</svg>`;
  if (!opts.words) return bar;
  // A segment of several states names each with its count, in the status table's words and with
  // the same live fields (data-f="c-…"), so the legend and the table cannot say different things.
  const parts = (s: Segment): Html => (s.parts && s.parts.length > 1
    ? html` <span class="muted">(${s.parts.map((p, j) => html`${j > 0 ? ', ' : ''}${p.label} <span data-f="c-${p.count}">${p.n}</span>`)})</span>`
    : html``);
  return html`${bar}<ul class="seglegend">${segments.map((s, i) => html`<li data-seg-legend="${s.key}"${s.what ? html` title="${s.what}"` : ''}><svg width="16" height="10" viewBox="0 0 16 10" aria-hidden="true"><defs>${segPattern(`${id}-k${i}`, s.key)}</defs><rect width="16" height="10" fill="url(#${id}-k${i})" stroke="#1b1b1b" stroke-width=".5"/></svg> ${s.label} <strong data-f="seg-${s.key}">${s.n}</strong>${parts(s)}</li>`)}</ul>`;
}

/** The batch bar's looks, by meaning rather than order: completed is solid green everywhere. */
const SEG_LOOKS: Record<string, { c: string; mark: string }> = {
  completed: { c: '#2e7d32', mark: '' },
  failed: { c: '#a3123a', mark: '<path d="M0 0l8 8M8 0l-8 8" stroke="#fff" stroke-width="1.4"/>' },
  review: { c: '#b3541e', mark: '<circle cx="4" cy="4" r="1.6" fill="#fff"/>' },
  waiting: { c: '#1f5fbf', mark: '<path d="M-1 1l2-2M0 8l8-8M7 9l2-2" stroke="#fff" stroke-width="1.6"/>' },
  skipped: { c: '#757575', mark: '<path d="M4 0v8" stroke="#fff" stroke-width="2"/>' },
};

function segPattern(id: string, key: string): Html {
  const l = SEG_LOOKS[key] ?? { c: '#455a64', mark: '' };
  return new Html(`<pattern id="${id}" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="scale(.25 1.25)"><rect width="8" height="8" fill="${l.c}"/>${l.mark}</pattern>`);
}
