/**
 * Live progress of one batch in the foreground: a bar on a terminal (cli-progress), plain
 * lines otherwise (logs, CI, pipes), written at most once a second and only when something moved.
 * Progress goes to stderr on a pipe too, so that stdout carries only the final result.
 */
import cliProgress from 'cli-progress';
import type { BatchProgressSnapshot } from './batch-view.js';

export interface ProgressView {
  update(s: BatchProgressSnapshot): void;
  note(message: string): void;
  stop(s: BatchProgressSnapshot | null): void;
}

function eta(startedAt: number, startDone: number, s: BatchProgressSnapshot): string {
  const doneHere = s.done - startDone;
  const left = s.rows - s.done;
  if (left === 0) return '0s';
  if (doneHere <= 0) return '?';
  const sec = Math.round((((Date.now() - startedAt) / doneHere) * left) / 1000);
  return sec >= 3600 ? `${Math.floor(sec / 3600)}h${Math.round((sec % 3600) / 60)}m` : sec >= 60 ? `${Math.floor(sec / 60)}m${sec % 60}s` : `${sec}s`;
}

export function describe(s: BatchProgressSnapshot): string {
  const c = s.counts;
  return (
    `sent ${s.sent}, completed ${c.completed}, cancelled ${c.cancelled}, rejected ${c.rejected}, invalid ${c.invalid}` +
    `${c.skipped ? `, skipped ${c.skipped}` : ''}${c.review ? `, review ${c.review}` : ''}; spent ${s.spentUsd.toFixed(2)} USD`
  );
}

export function createProgressView(batchId: string, tty: boolean, out: NodeJS.WritableStream = process.stderr): ProgressView {
  const startedAt = Date.now();
  let startDone: number | null = null;
  if (tty) {
    const bar = new cliProgress.SingleBar(
      {
        format: `${batchId} [{bar}] {value}/{total} | sent {sent} ok {completed} cancelled {cancelled} rejected {rejected} invalid {invalid} | {spent} USD | ETA {etaText}`,
        hideCursor: true,
        stream: out,
        clearOnComplete: false,
      },
      cliProgress.Presets.shades_classic,
    );
    let started = false;
    const payload = (s: BatchProgressSnapshot) => ({
      sent: s.sent,
      completed: s.counts.completed,
      cancelled: s.counts.cancelled,
      rejected: s.counts.rejected,
      invalid: s.counts.invalid,
      spent: s.spentUsd.toFixed(2),
      etaText: eta(startedAt, startDone ?? 0, s),
    });
    return {
      update(s) {
        startDone ??= s.done;
        if (!started) {
          bar.start(s.rows, s.done, payload(s));
          started = true;
        } else {
          bar.setTotal(s.rows);
          bar.update(s.done, payload(s));
        }
      },
      note(message) {
        if (started) bar.stop();
        out.write(`${message}\n`);
        started = false;
      },
      stop(s) {
        if (s) this.update(s);
        if (started) bar.stop();
      },
    };
  }
  let last = '';
  let lastAt = 0;
  const write = (s: BatchProgressSnapshot, force: boolean): void => {
    startDone ??= s.done;
    const line = `progress ${batchId}: ${s.done}/${s.rows} done; ${describe(s)}`;
    if (line === last || (!force && Date.now() - lastAt < 1000)) return;
    last = line;
    lastAt = Date.now();
    out.write(`${line}; ETA ${eta(startedAt, startDone, s)}\n`);
  };
  return {
    update: (s) => write(s, false),
    note: (message) => void out.write(`${message}\n`),
    stop: (s) => {
      if (s) write(s, true);
    },
  };
}
