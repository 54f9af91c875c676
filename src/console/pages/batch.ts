/**
 * One batch: its figures (live), its files, Cancel and Retry (each behind a page that says what
 * it will do, then through the same functions as `topup cancel` and `topup retry`), and its rows
 * by state, searchable by trxid, order id, player id or any of the file's own cells, 50 at a time.
 *
 * Everything on the page follows the batch while it runs, not only the figures: the "By status"
 * table is updated from the same live payload, and the row list is read again (GET
 * /batches/:id/rows, the list alone) whenever the payload's counts differ from those the list was
 * read with. Before, a page opened right after Submit showed live figures (67 done) beside a
 * status table of zeros and "0 rows match" until the batch ended.
 *
 * Codes are never in a page unless the operator reveals one row's (POST, recorded in the audit
 * table). A download of a result file, which holds every code of the batch, is recorded too.
 */
import { namedAccounts } from '../../ops/account-views.js';
import type { Hono } from 'hono';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { NotFoundError } from '../../kernel/errors.js';
import { outboxPaths } from '../../outbox/paths.js';
import { ROW_STATES, type RowState, type Row } from '../../store/rows.js';
import { ownTrxid } from '../../store/row-record.js';
import { FOLLOWED_STATES, IN_FLIGHT_STATES } from '../../store/row-states.js';
import type { Batch } from '../../store/batches.js';
import type { ConsoleEnv } from '../auth.js';
import { html, query, timeTag, usd, type Html } from '../html.js';
import { actionButton, page, tableWrap, type PageCtx } from '../layout.js';
import { pageCtx, record, type Ctx, type Services } from '../services.js';
import { batchSegments, figureCells, FIGURE_HEADERS } from './batches.js';
import { segmentBar } from '../charts.js';
import { SEGMENTS, STATUS_PARTS, type SegmentDef } from '../segments.js';
import { accountPauses, type Figures } from '../figures.js';
import { registerBatchActions } from './batch-actions.js';

const PAGE = 50;
const FILTERS: Record<string, readonly RowState[]> = {
  unsent: ['pending'],
  'in flight': IN_FLIGHT_STATES,
  followed: FOLLOWED_STATES,
  ...Object.fromEntries(ROW_STATES.map((s) => [s, [s]])),
};

export type FileKind = 'result' | 'result-xlsx' | 'summary' | 'partial' | 'partial-xlsx' | 'error';
const TYPES: Record<FileKind, string> = {
  result: 'text/csv; charset=utf-8',
  'result-xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  summary: 'application/json; charset=utf-8',
  partial: 'text/csv; charset=utf-8',
  'partial-xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  error: 'text/plain; charset=utf-8',
};

export function batchOr404(svc: Services, id: string): Batch {
  const b = svc.rt.batches.get(id);
  if (!b) throw new NotFoundError(`no batch ${id}`);
  return b;
}

function files(svc: Services, b: Batch): { kind: FileKind; label: string; path: string }[] {
  const p = outboxPaths(svc.rt, b);
  const finished = b.finishedAt !== null;
  const all: { kind: FileKind; label: string; path: string; when: boolean }[] = [
    { kind: 'result', label: 'Result (CSV)', path: p.resultFile, when: finished },
    { kind: 'result-xlsx', label: 'Result (Excel)', path: p.resultXlsx, when: finished },
    { kind: 'summary', label: 'Summary (JSON)', path: p.summaryFile, when: finished },
    { kind: 'partial', label: 'Partial result so far (CSV)', path: p.partialFile, when: !finished },
    { kind: 'partial-xlsx', label: 'Partial result so far (Excel)', path: p.partialXlsx, when: !finished },
    { kind: 'error', label: 'Why the file was refused', path: p.errorFile, when: true },
  ];
  return all.filter((f) => f.when && existsSync(f.path));
}

function player(r: Row): string {
  return r.request?.userId ?? '';
}

/** The file's own cells that are not shown in a column of their own. */
function cellsOf(b: Batch, r: Row): Html {
  const header = b.header ?? [];
  const pairs = r.cells.map((v, i) => [header[i] ?? `column ${i + 1}`, v] as const).filter(([, v]) => v.trim() !== '');
  return html`${pairs.map(([k, v]) => html`<span class="cell"><span class="muted">${k}:</span> ${v}</span> `)}`;
}

/** named: the home has accounts.toml, so each row says which supplier account it is on. */
/**
 * A row's error and note. On a phone (assets.ts) a closed summary is one line cut with an
 * ellipsis, and a tap opens it to the whole text: the long reason used to wrap word by word in a
 * column squeezed narrow by the others, making each row ~600 px tall (trial s36 D4). On a wide
 * screen it reads whole, as before; the summary holds the text itself, so a screen reader reads
 * it all either way.
 */
function reason(r: Row): Html | string {
  if (!r.error && !r.note) return '';
  return html`<details class="why"><summary>${r.error ?? ''}${r.note ? html` <span class="muted note">${r.note}</span>` : ''}</summary></details>`;
}

/**
 * The row's own trxid (the reseller's key to their records), and under it, for a row moved to
 * another account, the trxid it was sent there under (the one the supplier's portal lists).
 */
function trxidCell(r: Row): Html | string {
  const own = ownTrxid(r);
  if (own === null) return '';
  return r.trxid !== null && r.trxid !== own ? html`${own}<br><span class="muted" data-sent-trxid>sent as ${r.trxid}</span>` : own;
}

function rowLine(ctx: PageCtx, b: Batch, r: Row, named: boolean): Html {
  const codes = r.codes.length > 0
    ? html`${r.codes.length} hidden ${actionButton(ctx, `/batches/${encodeURIComponent(b.id)}/rows/${r.idx}/reveal`, 'Reveal')}`
    : html`<span class="muted">—</span>`;
  return html`<tr><td class="num">${r.line}</td><td><span class="badge s-${r.state}">${r.state}</span></td>${named ? html`<td data-account>${r.account}</td>` : ''}<td class="mono id">${trxidCell(r)}</td>
<td class="mono id">${r.orderId ?? ''}</td><td class="id">${player(r)}</td><td>${r.packName ?? ''}</td><td class="num">${usd(r.amountUsd ?? r.expectedUsd)}</td>
<td>${codes}</td><td class="why">${reason(r)}</td><td class="cells">${cellsOf(b, r)}</td></tr>`;
}

/**
 * What the row list was read with: done, sent and every count. console.js reads the list again
 * when the live payload's differ (the same counts, in the same order: both from segments.ts).
 */
function figuresKey(f: Figures): string {
  return [f.done, f.sent, ...STATUS_PARTS.map((p) => f.counts[p.count])].join(',');
}

/**
 * Rows by status, grouped by the bar's segments (segments.ts) under the same words as its legend:
 * each count live (data-f="c-…") and a link to those rows.
 */
function statusTable(f: Figures, id: string): Html {
  const single = (s: SegmentDef): boolean => s.parts.length === 1;
  // Two header rows (a segment over its states); each count names its headers by id, so a screen
  // reader says "in progress, not sent yet: 32".
  const head1 = SEGMENTS.map((s) => (single(s)
    ? html`<th scope="col" rowspan="2" id="st-${s.parts[0]!.count}" data-seg-head="${s.key}">${s.parts[0]!.label}</th>`
    : html`<th scope="colgroup" colspan="${s.parts.length}" id="st-${s.key}" data-seg-head="${s.key}">${s.label}</th>`));
  const head2 = SEGMENTS.filter((s) => !single(s)).flatMap((s) => s.parts.map((p) => html`<th scope="col" id="st-${p.count}">${p.label}</th>`));
  const cols = SEGMENTS.map((s) => html`<colgroup span="${s.parts.length}"></colgroup>`);
  const cells = SEGMENTS.flatMap((s) => s.parts.map((p) => html`<td class="num" headers="${single(s) ? `st-${p.count}` : `st-${s.key} st-${p.count}`}"><a href="/batches/${id}${query({ rows: p.filter })}#rows-h" data-f="c-${p.count}">${f.counts[p.count]}</a></td>`));
  return tableWrap('Rows by status', html`<table class="states">${cols}<thead><tr>${head1}</tr><tr>${head2}</tr></thead>
<tbody><tr>${cells}</tr></tbody></table>`);
}

interface RowsQuery {
  filter: string;
  q: string;
  after: number | undefined;
}

function rowsQuery(c: Ctx): RowsQuery {
  const after = Number(c.req.query('after'));
  return { filter: c.req.query('rows') ?? '', q: (c.req.query('q') ?? '').trim().slice(0, 200), after: Number.isInteger(after) ? after : undefined };
}

/** The list alone (what GET /batches/:id/rows answers): how many match, one page of rows, the next link. */
function rowsBody(svc: Services, ctx: PageCtx, b: Batch, rq: RowsQuery): Html {
  const { filter, q, after } = rq;
  const states = FILTERS[filter];
  const { rows, more } = svc.listing.rows(b.id, { states, q, afterIdx: after, limit: PAGE });
  // A search reads the whole batch once already: it is not counted a second time.
  const continued = after !== undefined;
  const total = q ? (more || continued ? null : rows.length) : svc.listing.countRows(b.id, { states, q });
  const id = encodeURIComponent(b.id);
  const last = rows.at(-1);
  const named = namedAccounts(svc.rt.config);
  return html`<p class="muted">${total === null ? `More than ${PAGE} rows match` : `${total >= 100_000 ? 'more than 100,000' : total} rows match`}${continued ? ' (continued)' : ''}.</p>
${rows.length === 0 ? '' : tableWrap('Rows', html`<table class="rows"><thead><tr><th scope="col">Line</th><th scope="col">State</th>${named ? html`<th scope="col">Account</th>` : ''}<th scope="col">trxid</th><th scope="col">Order</th><th scope="col">Player</th><th scope="col">Pack</th><th scope="col">USD</th><th scope="col">Codes</th><th scope="col">Error / note</th><th scope="col">Cells</th></tr></thead>
<tbody>${rows.map((r) => rowLine(ctx, b, r, named))}</tbody></table>`)}
${more && last ? html`<p><a href="/batches/${id}${query({ rows: filter, q, after: last.idx })}">Next ${PAGE} rows</a></p>` : ''}`;
}

function rowsSection(c: Ctx, svc: Services, ctx: PageCtx, b: Batch, f: Figures): Html {
  const rq = rowsQuery(c);
  const id = encodeURIComponent(b.id);
  // A finished batch's rows do not move: its list is not followed.
  const follow = f.finished ? '' : `/batches/${id}/rows${query({ rows: rq.filter, q: rq.q, after: rq.after })}`;
  return html`<section aria-labelledby="rows-h" data-rows-batch="${b.id}" data-rows="${follow}" data-rows-key="${figuresKey(f)}"><h2 id="rows-h">Rows</h2>
<form method="get" action="/batches/${id}" class="filters" role="search">
  <label>State <select name="rows"><option value="">all</option>${Object.keys(FILTERS).map((k) => html`<option value="${k}"${k === rq.filter ? html` selected` : ''}>${STATUS_PARTS.find((p) => p.filter === k)?.label ?? k}</option>`)}</select></label>
  <label>Search <input type="search" name="q" value="${rq.q}" placeholder="trxid, order id, player id or any cell"></label>
  <button type="submit">Show</button>
</form>
<div data-rows-body aria-live="polite">${rowsBody(svc, ctx, b, rq)}</div>
</section>`;
}

export function registerBatch(app: Hono<ConsoleEnv>, svc: Services): void {
  app.get('/batches/:id', (c) => {
    const ctx = pageCtx(c, svc);
    const b = batchOr404(svc, c.req.param('id'));
    const f = svc.figures.get(b, accountPauses(svc.rt), ctx.now);
    const id = encodeURIComponent(b.id);
    const list = files(svc, b);
    // A batch is retried once (ops/retry.ts): once it has been, the page points at its retry instead.
    const retriedAs = b.finishedAt !== null ? svc.rt.batches.retriedAs(b.id) : undefined;
    const body = html`<section aria-labelledby="fig" data-batch="${b.id}" data-follow="${f.finished ? '' : b.id}">
<h2 id="fig">${b.sourceName}</h2>
<div class="segwrap">${segmentBar('batchbar', batchSegments(f), f.rows, { words: true })}</div>
${tableWrap('Progress', html`<table><thead><tr>${FIGURE_HEADERS}</tr></thead><tbody><tr>${figureCells(f, null)}</tr></tbody></table>`)}
<dl class="facts">
  <div><dt>Why it waits</dt><dd data-f="why">${f.why || '—'}</dd></div>
  <div><dt>Origin</dt><dd>${b.origin}${b.retryOf ? html`, retry of <a href="/batches/${encodeURIComponent(b.retryOf)}">${b.retryOf}</a>` : ''}${b.duplicateOf ? html`, duplicate of <a href="/batches/${encodeURIComponent(b.duplicateOf)}">${b.duplicateOf}</a>` : ''}</dd></div>
  <div><dt>Created</dt><dd>${timeTag(b.createdAt, ctx.now)}</dd></div>
  ${b.startedAt ? html`<div><dt>Started</dt><dd>${timeTag(b.startedAt, ctx.now)}</dd></div>` : ''}
  ${b.finishedAt ? html`<div><dt>Finished</dt><dd>${timeTag(b.finishedAt, ctx.now)}</dd></div>` : ''}
  ${b.balanceBefore !== null ? html`<div><dt>Balance before / after this batch</dt><dd data-f="balance-before-after">${usd(b.balanceBefore)} / ${usd(b.balanceAfter)} <span class="muted">(after: before less this batch's own spend; other batches not included)</span></dd></div>` : ''}
  ${b.fileError ? html`<div><dt>File error</dt><dd>${b.fileError}</dd></div>` : ''}
</dl>
<h3>By status</h3>
${statusTable(f, id)}
<h3>Files</h3>
${list.length === 0 ? html`<p class="muted">No files yet${f.finished ? '' : ': a partial result appears once rows have finished'}.</p>`
  : html`<ul class="files">${list.map((x) => html`<li><a href="/batches/${id}/files/${x.kind}" download>${x.label}</a> <span class="muted">${basename(x.path)}</span></li>`)}</ul>`}
<h3>Actions</h3>
<p class="actions">
${!f.finished && b.waitReason === 'balance' && b.apiDay === null && !b.cancelRequested ? html`<a class="button" href="/batches/${id}/run-covered">Run the part the balance covers…</a>` : ''}
${f.finished ? '' : html`<a class="button danger" href="/batches/${id}/cancel">Cancel…</a>`}
${retriedAs ? html`<span>Retried as <a href="/batches/${encodeURIComponent(retriedAs)}">${retriedAs}</a>: its failed rows were bought again there; to retry what failed again, retry that batch (<code>topup retry ${retriedAs}</code>).</span>`
  : b.finishedAt !== null && (f.counts.rejected + f.counts.cancelled > 0 || (b.runCovered && f.counts.skipped > 0)) ? html`<a class="button" href="/batches/${id}/retry">Retry failed rows…</a>` : ''}
${f.finished && f.counts.rejected + f.counts.cancelled === 0 ? html`<span class="muted">Nothing to cancel or retry.</span>` : ''}
</p>
</section>
${rowsSection(c, svc, ctx, b, f)}`;
    return c.html(page(ctx, `Batch ${b.id}`, body));
  });

  // The row list alone, for the page's script to follow a running batch (same query as the page).
  app.get('/batches/:id/rows', (c) => {
    const ctx = pageCtx(c, svc);
    const b = batchOr404(svc, c.req.param('id'));
    return c.html(rowsBody(svc, ctx, b, rowsQuery(c)).text);
  });

  app.get('/batches/:id/files/:kind', (c) => {
    const b = batchOr404(svc, c.req.param('id'));
    const kind = c.req.param('kind') as FileKind;
    const file = files(svc, b).find((x) => x.kind === kind);
    if (!file) throw new NotFoundError(`batch ${b.id} has no ${kind} file (yet)`);
    record(c, svc, 'download', 'ok', { batchId: b.id, detail: `${kind}: ${basename(file.path)}` });
    return sendFile(c, file.path, TYPES[kind]);
  });

  app.post('/batches/:id/rows/:idx/reveal', (c) => {
    const ctx = pageCtx(c, svc);
    const b = batchOr404(svc, c.req.param('id'));
    const row = svc.rt.rows.get(b.id, Number(c.req.param('idx')));
    if (!row) throw new NotFoundError(`batch ${b.id} has no such row`);
    record(c, svc, 'reveal', 'ok', { batchId: b.id, line: row.line, detail: `${row.codes.length} codes of order ${row.orderId ?? '?'}` });
    const body = html`<p>Line ${row.line} of batch <a href="/batches/${encodeURIComponent(b.id)}">${b.id}</a>, order <span class="mono">${row.orderId ?? ''}</span>, ${row.packName ?? ''}. This reveal is recorded in the audit log.</p>
<ul class="codes">${row.codes.map((code) => html`<li><code>${code}</code></li>`)}</ul>
<p><a href="/batches/${encodeURIComponent(b.id)}">Back to the batch (hides the codes)</a></p>`;
    return c.html(page(ctx, `Codes of line ${row.line}`, body));
  });

  registerBatchActions(app, svc);
}

/** A file from the outbox as a download (streamed: a 100,000-row result is tens of MB). */
export function sendFile(c: Ctx, path: string, type: string): Response {
  const size = statSync(path).size;
  const name = basename(path).replace(/[^\w.() -]/g, '_');
  return new Response(Readable.toWeb(createReadStream(path)) as ReadableStream, {
    headers: {
      'content-type': type,
      'content-length': String(size),
      'content-disposition': `attachment; filename="${name}"; filename*=UTF-8''${encodeURIComponent(basename(path))}`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
  });
}
