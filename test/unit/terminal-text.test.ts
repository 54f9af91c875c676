/**
 * What a person reads on a terminal: log entries as one sentence each (never JSON, never a block
 * of indented fields, never the key), and the submit progress line fitted to the width by leaving
 * out the least useful fields first.
 */
import { describe, expect, it } from 'vitest';
import { createLogger, textDestination, textLine } from '../../src/kernel/log.js';
import { fitLine } from '../../src/commands/progress.js';
import { durationText, etaMs, EtaBook } from '../../src/ops/batch-view.js';
import { emptyCounts } from '../../src/store/rows.js';

describe('log entries as sentences', () => {
  const KEY = 'canary-KEY-for-text-lines';
  const capture = (time: boolean): { lines: string[]; log: ReturnType<typeof createLogger> } => {
    const lines: string[] = [];
    const log = createLogger({ level: 'info', secrets: [KEY], base: { mode: 'SANDBOX' }, destination: textDestination({ write: (s: string) => lines.push(s) }, { time }) });
    return { lines, log };
  };

  it('a command says warnings as "warning: …" with the fields in parentheses, on one line, without the key', () => {
    const { lines, log } = capture(false);
    log.warn({ url: 'http://127.0.0.1:4000', answers: 'spec' }, 'SANDBOX: no TOPUP_API_URL set, so orders go to the built-in sandbox; no real money is spent');
    log.info({ nested: { a: 1 } }, `multi\nline with the key ${KEY}`);
    log.error({ err: new Error('boom') }, 'failed');
    expect(lines).toEqual([
      'warning: SANDBOX: no TOPUP_API_URL set, so orders go to the built-in sandbox; no real money is spent (url: http://127.0.0.1:4000, answers: spec)\n',
      'multi line with the key [REDACTED] (nested: {"a":1})\n',
      'error: failed (error: boom)\n',
    ]);
  });

  it('the daemon starts each line with the time, the level and SANDBOX', () => {
    const { lines, log } = capture(true);
    log.info({ batch: 'b250101-abcdef' }, 'took batch');
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d UTC INFO    SANDBOX took batch \(batch: b250101-abcdef\)\n$/);
    expect(textLine('not json', { time: true })).toBe('not json');
  });
});

describe('the submit progress line', () => {
  const snap = (done: number, rows: number, extra: Partial<ReturnType<typeof emptyCounts>> = {}) => ({
    rows, done, sent: rows, spentUsd: 1234.5, counts: { ...emptyCounts(), completed: done, ...extra },
  });

  it('at 80 columns keeps done/rows, USD and ETA (the fields the old bar lost), and never reaches the last column', () => {
    const line = fitLine('b250101-abcdef', snap(18, 20, { cancelled: 1, invalid: 1 }), '1m05s', 80);
    expect(line.length).toBeLessThanOrEqual(79);
    expect(line).toMatch(/18\/20/);
    expect(line).toMatch(/1234\.50 USD/);
    expect(line).toMatch(/ETA 1m05s/);
    expect(line).toMatch(/sent 20 ok 18 cancelled 1 invalid 1/);
    expect(line).not.toMatch(/rejected/); // counts of 0 take no room
  });

  it('leaves fields out least useful first as the terminal narrows, and shows all of them when wide', () => {
    const s = snap(1500, 3000, { rejected: 3 });
    const at = (w: number): string => fitLine('b250101-abcdef', s, '12m30s', w);
    for (const w of [20, 30, 40, 50, 60, 80, 100, 200]) expect(at(w).length, `${w}: ${at(w)}`).toBeLessThanOrEqual(Math.max(20, w) - 1);
    expect(at(30)).toBe('1500/3000 | 1234.50 USD');
    expect(at(40)).toBe('1500/3000 | 1234.50 USD | ETA 12m30s');
    expect(at(50)).toBe('1500/3000 | ok 1500 | 1234.50 USD | ETA 12m30s');
    expect(at(200)).toMatch(/^b250101-abcdef \[#{15}-{15}\] 1500\/3000 \| sent 3000 ok 1500 rejected 3 \| 1234\.50 USD \| ETA 12m30s$/);
  });

  it('ETA: from the pace since the batch was first seen here; unknown until rows moved', () => {
    expect(durationText(null)).toBe('?');
    expect(durationText(45_000)).toBe('45s');
    expect(durationText(200_000)).toBe('3m20s');
    expect(durationText(3_900_000)).toBe('1h05m');
    expect(etaMs(60_000, 0, 10)).toBeNull();
    expect(etaMs(60_000, 10, 0)).toBe(0);
    const book = new EtaBook();
    expect(book.eta('b', { rows: 100, done: 40 }, 1_000)).toBeNull(); // 40 were done before we looked
    expect(book.eta('b', { rows: 100, done: 50 }, 11_000)).toBe(50_000);
  });
});
