/**
 * Live progress of one batch in the foreground: one line redrawn in place on a terminal, plain
 * lines otherwise (logs, CI, pipes), written at most once a second and only when something moved.
 * Progress goes to stderr on a pipe too, so that stdout carries only the final result.
 *
 * The terminal line never wraps or gets cut: it is made to fit the terminal's width (COLUMNS when
 * the terminal does not say, else 80) by leaving fields out, least useful first:
 *   done/rows, USD spent, ETA, completed, sent, then the failure counts (only those above 0),
 *   the bar, and the batch id (printed above the bar anyway).
 */
import { systemClock } from '../kernel/clock.js';
import type { BatchProgressSnapshot } from '../ops/batch-view.js';
import { setLiveLine } from '../kernel/log.js';
import { EtaBook, durationText } from '../ops/batch-view.js';

export interface ProgressView {
  update(s: BatchProgressSnapshot): void;
  note(message: string): void;
  stop(s: BatchProgressSnapshot | null): void;
}

export function describe(s: BatchProgressSnapshot): string {
  const c = s.counts;
  return (
    `sent ${s.sent}, completed ${c.completed}, cancelled ${c.cancelled}, rejected ${c.rejected}, invalid ${c.invalid}` +
    `${c.skipped ? `, skipped ${c.skipped}` : ''}${c.review ? `, review ${c.review}` : ''}; spent ${s.spentUsd.toFixed(2)} USD`
  );
}

type Group = 'id' | 'bar' | 'count' | 'rows' | 'usd' | 'eta';
interface Field {
  group: Group;
  text: string;
}

const BAR_MIN = 10;
const BAR_MAX = 30;
const GROUPS: readonly Group[] = ['id', 'bar', 'count', 'rows', 'usd', 'eta'];

/** The progress line for a terminal `width` columns wide (it stays one column short of it: no autowrap). */
export function fitLine(batchId: string, s: BatchProgressSnapshot, eta: string, width: number): string {
  const c = s.counts;
  const fails = (['cancelled', 'rejected', 'invalid', 'skipped', 'review'] as const).filter((k) => c[k] > 0).map((k) => ({ group: 'rows' as const, text: `${k} ${c[k]}` }));
  // Most useful first.
  const wanted: Field[] = [
    { group: 'count', text: `${s.done}/${s.rows}` },
    { group: 'usd', text: `${s.spentUsd.toFixed(2)} USD` },
    { group: 'eta', text: `ETA ${eta}` },
    { group: 'rows', text: `ok ${c.completed}` },
    { group: 'rows', text: `sent ${s.sent}` },
    ...fails,
    { group: 'bar', text: '' },
    { group: 'id', text: batchId },
  ];
  const room = Math.max(20, width) - 1;
  const chosen: Field[] = [];
  let bar = 0;
  for (const f of wanted) {
    const trial = [...chosen, f];
    if (f.group === 'bar') {
      const spare = room - render(trial, BAR_MIN, s).length + BAR_MIN;
      if (spare < BAR_MIN) continue;
      bar = Math.min(BAR_MAX, spare);
    } else if (render(trial, bar, s).length > room) continue;
    chosen.push(f);
  }
  return render(chosen, bar, s);
}

/** The chosen fields in display order: id [bar] done/rows | sent ok failures | USD | ETA. */
function render(fields: readonly Field[], barWidth: number, s: BatchProgressSnapshot): string {
  const parts: string[] = [];
  const rowsOrder = (t: string): number => ['sent', 'ok', 'cancelled', 'rejected', 'invalid', 'skipped', 'review'].indexOf(t.split(' ')[0]!);
  const head: string[] = [];
  const tail: string[] = [];
  for (const g of GROUPS) {
    const here = fields.filter((f) => f.group === g);
    if (here.length === 0) continue;
    if (g === 'id') head.push(here[0]!.text);
    else if (g === 'bar') {
      const filled = s.rows > 0 ? Math.round((s.done / s.rows) * barWidth) : 0;
      head.push(`[${'#'.repeat(filled)}${'-'.repeat(barWidth - filled)}]`);
    } else if (g === 'count') head.push(here[0]!.text);
    else tail.push(here.map((f) => f.text).sort((a, b) => rowsOrder(a) - rowsOrder(b)).join(' '));
  }
  if (head.length > 0) parts.push(head.join(' '));
  parts.push(...tail);
  return parts.join(' | ');
}

function widthOf(out: NodeJS.WritableStream): number {
  const cols = (out as { columns?: number }).columns;
  return cols && cols > 0 ? cols : Number(process.env.COLUMNS) > 0 ? Number(process.env.COLUMNS) : 80;
}

export function createProgressView(batchId: string, tty: boolean, out: NodeJS.WritableStream = process.stderr): ProgressView {
  const etas = new EtaBook();
  const etaOf = (s: BatchProgressSnapshot): string => durationText(etas.eta(batchId, s));
  if (tty) {
    let shown = '';
    let last: BatchProgressSnapshot | null = null;
    const draw = (force: boolean): void => {
      if (!last) return;
      const line = fitLine(batchId, last, etaOf(last), widthOf(out));
      if (line === shown && !force) return;
      shown = line;
      // Back to the start of the line, the new text, then clear what a longer old line left.
      out.write(`\r${line}\x1b[K`);
    };
    const clear = (): void => {
      if (shown) out.write('\r\x1b[K');
      shown = '';
    };
    // Log lines (warnings) written meanwhile go above the progress line, never glued to it.
    setLiveLine({ clear, redraw: () => draw(true) });
    return {
      update(s) {
        last = s;
        draw(false);
      },
      note(message) {
        clear();
        out.write(`${message}\n`);
        draw(true);
      },
      stop(s) {
        setLiveLine(null);
        if (s) last = s;
        draw(true);
        if (shown) out.write('\n');
        shown = '';
      },
    };
  }
  let lastLine = '';
  let lastAt = 0;
  const write = (s: BatchProgressSnapshot, force: boolean): void => {
    const eta = etaOf(s);
    const line = `progress ${batchId}: ${s.done}/${s.rows} done; ${describe(s)}`;
    if (line === lastLine || (!force && systemClock.now() - lastAt < 1000)) return;
    lastLine = line;
    lastAt = systemClock.now();
    out.write(`${line}; ETA ${eta}\n`);
  };
  return {
    update: (s) => write(s, false),
    note: (message) => void out.write(`${message}\n`),
    stop: (s) => {
      if (s) write(s, true);
    },
  };
}
