/**
 * Reports: the files the scheduled jobs write (outbox/reports/) to download, and each job's
 * schedule, last run and "run now". A download names a file the folder listing shows, never a
 * path from the request, so nothing outside that folder can be asked for.
 */
import type { Hono } from 'hono';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { NotFoundError } from '../../kernel/errors.js';
import { JOB_NAMES, type JobName } from '../../reports/schedule.js';
import type { ConsoleEnv } from '../auth.js';
import { html, timeTag } from '../html.js';
import { actionButton, page, tableWrap } from '../layout.js';
import { pageCtx, record, type Services } from '../services.js';
import { jobViews } from './overview.js';
import { sendFile } from './batch.js';

interface ReportFile {
  name: string;
  size: number;
  mtime: number;
}

function reportFiles(dir: string): ReportFile[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => !n.startsWith('.'))
    .map((name) => {
      const st = statSync(join(dir, name), { throwIfNoEntry: false });
      return st?.isFile() ? { name, size: st.size, mtime: st.mtimeMs } : null;
    })
    .filter((f): f is ReportFile => f !== null)
    .sort((a, b) => b.mtime - a.mtime);
}

const TYPE = (name: string): string => (name.endsWith('.csv') ? 'text/csv; charset=utf-8' : name.endsWith('.json') ? 'application/json; charset=utf-8' : 'application/octet-stream');

export function registerReports(app: Hono<ConsoleEnv>, svc: Services): void {
  app.get('/reports', (c) => {
    const ctx = pageCtx(c, svc);
    const ran = c.req.query('ran');
    const files = reportFiles(svc.rt.config.reportsDir);
    const jobs = jobViews(svc).map((j) => html`<tr><th scope="row">${j.name}</th><td>${j.cron ?? 'off'}</td>
<td>${j.lastRun ? html`${timeTag(j.lastRun.at, ctx.now)} ${j.lastRun.ok ? 'ok' : html`<span class="badge bad">failed</span> ${j.lastRun.error ?? ''}`}` : html`<span class="muted">never</span>`}</td>
<td>${svc.jobs ? actionButton(ctx, `/reports/run/${j.name}`, 'Run now') : html`<span class="muted">jobs not running</span>`}</td></tr>`);
    const body = html`${ran ? html`<p class="notice" role="status">${ran} queued: it runs after any job already running; reload to see its result.</p>` : ''}
<section aria-labelledby="files-h"><h2 id="files-h">Report files</h2>
${files.length === 0 ? html`<p class="muted">No report files yet.</p>` : tableWrap('Report files', html`<table><thead><tr><th scope="col">File</th><th scope="col">Size</th><th scope="col">Written</th></tr></thead><tbody>
${files.map((f) => html`<tr><td><a href="/reports/files/${encodeURIComponent(f.name)}" download>${f.name}</a></td><td class="num">${Math.ceil(f.size / 1024)} KB</td><td>${timeTag(f.mtime, ctx.now)}</td></tr>`)}</tbody></table>`)}
</section>
<section aria-labelledby="jobs-h"><h2 id="jobs-h">Jobs</h2>
${tableWrap('Jobs', html`<table><thead><tr><th scope="col">Job</th><th scope="col">Schedule</th><th scope="col">Last run</th><th scope="col">Run</th></tr></thead><tbody>${jobs}</tbody></table>`)}
</section>`;
    return c.html(page(ctx, 'Reports', body));
  });

  app.get('/reports/files/:name', (c) => {
    const name = c.req.param('name');
    const file = reportFiles(svc.rt.config.reportsDir).find((f) => f.name === name);
    if (!file) throw new NotFoundError(`no report file ${name}`);
    record(c, svc, 'download', 'ok', { detail: `report ${file.name}` });
    return sendFile(c, join(svc.rt.config.reportsDir, file.name), TYPE(file.name));
  });

  app.post('/reports/run/:job', (c) => {
    const name = c.req.param('job') as JobName;
    if (!JOB_NAMES.includes(name)) throw new NotFoundError(`no job ${name}`);
    const queued = svc.jobs?.runNow(name, 'console') ?? false;
    record(c, svc, 'run-job', queued ? 'ok' : 'refused', { detail: queued ? name : `${name}: cannot run here (switched off, or low-balance without TOPUP_LOW_BALANCE_USD)` });
    if (!queued) {
      return c.html(page(pageCtx(c, svc), 'Reports', html`<p class="message" role="alert">${name} cannot run here${name === 'low-balance' ? ': set TOPUP_LOW_BALANCE_USD first' : ''}.</p><p><a href="/reports">Back</a></p>`), 400);
    }
    return c.redirect(`/reports?ran=${encodeURIComponent(name)}`, 303);
  });
}
