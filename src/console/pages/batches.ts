/**
 * Batches: a page of batches, newest first, with a search (batch id, file name) and filters
 * (state, source: the order API's day batches or files, wait reason); the figures of the batches still running follow the live feed
 * (live.ts, via /assets/console.js) without reloading. Keyset paging: "older" continues below
 * the last batch shown, so a home with thousands of batches costs one page of reads.
 */
import type { Hono } from 'hono';
import type { BatchFilter } from '../../store/listing.js';
import type { WaitReason } from '../../store/batches.js';
import type { ConsoleEnv } from '../auth.js';
import { duration, html, query, timeTag, usd, type Html } from '../html.js';
import { page, tableWrap } from '../layout.js';
import { segmentBar, type Segment } from '../charts.js';
import { accountPauses, type Figures } from '../figures.js';
import { SEGMENTS, segmentCounts } from '../segments.js';
import { pageCtx, type Services } from '../services.js';

const PAGE = 25;
const STATES: { value: BatchFilter | ''; label: string }[] = [
  { value: '', label: 'any state' },
  { value: 'active', label: 'active (not finished)' },
  { value: 'done', label: 'done' },
  { value: 'failed', label: 'failed (file refused)' },
  { value: 'duplicate', label: 'duplicate' },
];
const SOURCES: { value: 'api' | 'file' | ''; label: string }[] = [
  { value: '', label: 'any' },
  { value: 'api', label: 'order API (a batch a day)' },
  { value: 'file', label: 'files' },
];
const WAITS: { value: Exclude<WaitReason, null> | ''; label: string }[] = [
  { value: '', label: 'any' },
  { value: 'balance', label: 'balance' },
  { value: 'catalog', label: 'catalog' },
  { value: 'maintenance', label: 'maintenance' },
  { value: 'account', label: 'account' },
];

/**
 * A batch's rows in the five parts a reseller asks about (issue 33: a batch with four failures no
 * longer shows the same full bar as a perfect one), as segments.ts defines them for the bar, its
 * legend, the status table and the live script alike.
 */
export function batchSegments(f: Pick<Figures, 'counts'>): Segment[] {
  return segmentCounts(f.counts).map((s, i) => ({ ...s, what: SEGMENTS[i]!.what }));
}

/** The live figures of one batch, as cells the client script updates (data-f names). */
export function figureCells(f: Figures, etaSec: number | null): Html {
  return html`<td data-f="state">${f.state}${f.cancelRequested && !f.finished ? ' (cancelling)' : ''}</td>
<td class="nowrap">${segmentBar(`bar-${f.id}`, batchSegments(f), f.rows, { small: true })} <span data-f="done">${f.done} / ${f.rows}</span></td>
<td class="num" data-f="sent">${f.sent}</td>
<td class="num" data-f="completed">${f.counts.completed}</td>
<td class="num" data-f="failed">${segmentCounts(f.counts).find((s) => s.key === 'failed')!.n}</td>
<td class="num" data-f="spent">${usd(f.spentUsd)}</td>
<td data-f="eta">${f.finished ? '—' : etaSec === null ? '…' : duration(etaSec * 1000)}</td>`;
}

/** Right-aligned over the right-aligned numbers of figureCells (td.num), so each figure sits under its own name. */
export const FIGURE_HEADERS = html`<th scope="col">State</th><th scope="col">Done</th><th scope="col" class="num">Sent</th><th scope="col" class="num">Completed</th><th scope="col" class="num">Failed</th><th scope="col" class="num">Spent</th><th scope="col">ETA</th>`;

function pick<T extends string>(value: string | undefined, allowed: readonly { value: T | '' }[]): T | undefined {
  return allowed.some((a) => a.value !== '' && a.value === value) ? (value as T) : undefined;
}

export function registerBatches(app: Hono<ConsoleEnv>, svc: Services): void {
  app.get('/batches', (c) => {
    const ctx = pageCtx(c, svc);
    const q = (c.req.query('q') ?? '').trim().slice(0, 200);
    const state = pick(c.req.query('state'), STATES);
    const wait = pick(c.req.query('wait'), WAITS);
    const source = pick(c.req.query('source'), SOURCES);
    const before = Number(c.req.query('before')) || undefined;
    const { batches, more } = svc.listing.batches({ q, state, wait, source, beforeSeq: before, limit: PAGE });
    const pauses = accountPauses(svc.rt);
    const rows = batches.map((b) => {
      const f = svc.figures.get(b, pauses, ctx.now);
      return html`<tr data-batch="${b.id}"><td><a class="id" href="/batches/${encodeURIComponent(b.id)}">${b.id}</a><br><span class="muted">${b.sourceName}</span></td>
${figureCells(f, null)}<td>${timeTag(b.createdAt, ctx.now)}</td><td data-f="why">${f.why}</td></tr>`;
    });
    const last = batches.at(-1);
    const body = html`<form method="get" action="/batches" class="filters" role="search">
  <label>Search <input type="search" name="q" value="${q}" placeholder="file name or batch id"></label>
  <label>State <select name="state">${STATES.map((s) => html`<option value="${s.value}"${s.value === (state ?? '') ? html` selected` : ''}>${s.label}</option>`)}</select></label>
  <label>Source <select name="source">${SOURCES.map((s) => html`<option value="${s.value}"${s.value === (source ?? '') ? html` selected` : ''}>${s.label}</option>`)}</select></label>
  <label>Waiting for <select name="wait">${WAITS.map((s) => html`<option value="${s.value}"${s.value === (wait ?? '') ? html` selected` : ''}>${s.label}</option>`)}</select></label>
  <button type="submit">Show</button>
</form>
<p class="notice" data-new-batches hidden><a href="/batches">New batches arrived: show them</a></p>
${batches.length === 0 ? html`<p>No batches${q || state || wait || source ? ' match' : ' yet'}.</p>`
  : tableWrap('Batches', html`<table data-live-list><thead><tr><th scope="col">Batch</th>${FIGURE_HEADERS}<th scope="col">Created</th><th scope="col">Why it waits</th></tr></thead><tbody>${rows}</tbody></table>`)}
${more && last ? html`<p><a href="/batches${query({ q, state, wait, source, before: last.seq })}">Older batches</a></p>` : ''}`;
    return c.html(page(ctx, 'Batches', body));
  });
}
