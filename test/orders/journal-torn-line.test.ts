/**
 * The order API journal (orders/journal.ts) on real files, as an adversary attacks it after issue
 * 32's restore fix:
 *  - a kill mid-append leaves a torn last line (that order got no 202). The next order's line, which
 *    does get its 202, was appended right after the fragment and became one unparseable line with
 *    it: lost to every reader (recovery after a restore, the takeover's fold). Found by this attack;
 *  - the same order in the copy's journal and beside the replica is carried over once, and a torn
 *    line of the mirror is not carried over at all;
 *  - a mirror path that is a file holds no lines (the first start must not stall on it).
 */
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendJournal, appendJournalMirror, foldJournalMirrors, readJournal, type JournalEntry } from '../../src/orders/journal.js';

const now = Date.UTC(2026, 10, 28, 3, 0, 0);
const day = '2026-11-28.jsonl';
const entry = (trxid: string, at = now): JournalEntry => ({ at, trxid, body: { trxid, pid: 'PUBG-60', userId: '5123456011', queue: true } as JournalEntry['body'] });

describe('the order API journal', () => {
  it('an order appended after a torn line is read back whole', () => {
    const jobs = mkdtempSync(join(tmpdir(), 'journal-torn-'));
    appendJournal(jobs, [entry('T-1')]);
    // A kill in the middle of T-2's append: half a line, no newline.
    appendFileSync(join(jobs, 'api-journal', day), JSON.stringify(entry('T-2')).slice(0, 30));
    appendJournal(jobs, [entry('T-3')]);
    expect(readJournal(jobs, now).map((e) => e.trxid)).toEqual(['T-1', 'T-3']);
  });

  it('the mirror: an order appended after a torn line is carried over by the fold', () => {
    const replica = mkdtempSync(join(tmpdir(), 'journal-torn-mnt-'));
    const mirror = join(replica, 'api-journal', 'node-a');
    appendJournalMirror(mirror, [entry('M-1')], now);
    appendFileSync(join(mirror, day), JSON.stringify(entry('M-2')).slice(0, 30));
    appendJournalMirror(mirror, [entry('M-3')], now);
    const jobs = mkdtempSync(join(tmpdir(), 'journal-torn-jobs-'));
    expect(foldJournalMirrors(replica, jobs, now)).toBe(2);
    expect(readJournal(jobs, now).map((e) => e.trxid)).toEqual(['M-1', 'M-3']);
  });

  it('the same order in the copy and beside the replica is carried over once; a torn copy line does not swallow the next', () => {
    const replica = mkdtempSync(join(tmpdir(), 'journal-same-mnt-'));
    appendJournalMirror(join(replica, 'api-journal', 'node-a'), [entry('S-1'), entry('S-2')], now);
    // A second node's folder (a standby that took over once) with one of them too.
    appendJournalMirror(join(replica, 'api-journal', 'node-b'), [entry('S-2')], now);
    const jobs = mkdtempSync(join(tmpdir(), 'journal-same-jobs-'));
    mkdirSync(join(jobs, 'api-journal'), { recursive: true });
    // The backup's journal has S-1, then a torn line.
    writeFileSync(join(jobs, 'api-journal', day), `${JSON.stringify(entry('S-1'))}\n${JSON.stringify(entry('S-9')).slice(0, 20)}`);
    expect(foldJournalMirrors(replica, jobs, now)).toBe(1);
    expect(readJournal(jobs, now).map((e) => e.trxid)).toEqual(['S-1', 'S-2']);
    // Again: nothing more (a kill after the fold, the first start folds again).
    expect(foldJournalMirrors(replica, jobs, now)).toBe(0);
    expect(readFileSync(join(jobs, 'api-journal', day), 'utf8').split('\n').filter((l) => l.includes('"S-2"'))).toHaveLength(1);
  });

  it('a mirror path that is a file (every append failed) holds no lines: the fold does not throw and stall the first start', () => {
    const replica = mkdtempSync(join(tmpdir(), 'journal-file-mnt-'));
    writeFileSync(join(replica, 'api-journal'), 'not a folder');
    const jobs = mkdtempSync(join(tmpdir(), 'journal-file-jobs-'));
    expect(foldJournalMirrors(replica, jobs, now)).toBe(0);
  });
});
