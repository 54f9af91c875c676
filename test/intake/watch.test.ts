import { appendFileSync, closeSync, mkdirSync, openSync, renameSync, statSync, symlinkSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isCandidateName, listReadyFiles, watchInbox } from '../../src/intake/watch.js';
import { tempDir } from './helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('isCandidateName', () => {
  it.each([
    ['orders.csv', true],
    ['ORDERS.CSV', true],
    ['Orders.Csv', true],
    ['.orders.csv', false],
    ['~$orders.csv', false],
    ['orders.csv.tmp', false],
    ['orders.csv.part', false],
    ['orders.tmp', false],
    ['orders.txt', true],
    ['orders.xlsx', true],
    ['orders.ods', true],
    ['orders.xls', true],
    ['orders', true],
    ['orders.xlsx.crdownload', false],
    ['orders.xlsx.download', false],
    ['orders.xlsx.partial', false],
    ['orders.csv.filepart', false],
    ['orders.csv.crswap', false],
    ['Thumbs.db', false],
    ['desktop.ini', false],
    ['~$orders.xlsx', false],
    ['.csv', false],
    ['sub/dir/a.csv', true],
  ])('%s → %s', (name, ok) => expect(isCandidateName(name)).toBe(ok));
});

/** An inbox holding every kind of thing that must be left alone, plus one good file. */
function crowdedInbox(): { inbox: string; outside: string } {
  const inbox = tempDir();
  const outside = tempDir();
  writeFileSync(join(inbox, 'good.csv'), 'pid\n101\n');
  for (const name of ['.hidden.csv', 'a.csv.tmp', 'b.csv.part', '~$c.csv', '~$d.xlsx', 'e.xlsx.crdownload', 'Thumbs.db']) writeFileSync(join(inbox, name), 'x');
  mkdirSync(join(inbox, 'folder.csv'));
  writeFileSync(join(outside, 'secret.csv'), 'pid\n1\n');
  symlinkSync(join(outside, 'secret.csv'), join(inbox, 'link.csv'));
  return { inbox, outside };
}

describe('listReadyFiles', () => {
  it('returns only regular candidate files, reporting links and folders', async () => {
    const { inbox } = crowdedInbox();
    const ignored: [string, string][] = [];
    const ready = await listReadyFiles(inbox, { settleMs: 100, onIgnored: (p, why) => ignored.push([p, why]) });
    expect(ready).toEqual([join(inbox, 'good.csv')]);
    expect(ignored.sort()).toEqual([
      [join(inbox, 'folder.csv'), 'a folder, not a file'],
      [join(inbox, 'link.csv'), 'symbolic link: not followed, left in place'],
    ]);
  });

  it('offers every other kind of file too (claimed and answered with an .error.txt), not only .csv', async () => {
    const inbox = tempDir();
    const names = ['a.xlsx', 'b.ods', 'c.xls', 'd.numbers', 'e.pdf', 'f', 'g.TXT'];
    for (const n of [...names, '.h.ods', '~$i.xlsx', 'j.xlsx.crdownload', 'desktop.ini']) writeFileSync(join(inbox, n), 'x');
    const ready = await listReadyFiles(inbox, { settleMs: 50 });
    expect(ready).toEqual(names.map((n) => join(inbox, n)).sort());
  });

  it('waits for a growing file to hold still', async () => {
    const inbox = tempDir();
    const path = join(inbox, 'growing.csv');
    writeFileSync(path, 'pid\n');
    let writes = 0;
    const timer = setInterval(() => {
      if (++writes <= 6) appendFileSync(path, `10${writes}\n`);
    }, 40);
    try {
      const started = Date.now();
      const ready = await listReadyFiles(inbox, { settleMs: 300 });
      expect(ready).toEqual([path]);
      expect(writes).toBeGreaterThanOrEqual(6); // not returned before the writer stopped
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    } finally {
      clearInterval(timer);
    }
  });

  it('gives up on a file that never settles within maxWaitMs', async () => {
    const inbox = tempDir();
    const path = join(inbox, 'endless.csv');
    writeFileSync(path, 'pid\n');
    const timer = setInterval(() => appendFileSync(path, '1\n'), 20);
    const ignored: string[] = [];
    try {
      expect(await listReadyFiles(inbox, { settleMs: 100, maxWaitMs: 400, onIgnored: (_p, why) => ignored.push(why) })).toEqual([]);
      expect(ignored[0]).toMatch(/still being written/);
    } finally {
      clearInterval(timer);
    }
  });
});

describe('watchInbox', () => {
  it('reports files already present, ignores the rest, and reports links and folders', async () => {
    const { inbox } = crowdedInbox();
    const ready: string[] = [];
    const ignored: string[] = [];
    const w = watchInbox(inbox, (p) => ready.push(p), { settleMs: 100, onIgnored: (p) => ignored.push(p) });
    try {
      await waitFor(() => ready.length >= 1 && ignored.length >= 2);
      await sleep(300);
      expect(ready).toEqual([join(inbox, 'good.csv')]);
      expect(ignored.sort()).toEqual([join(inbox, 'folder.csv'), join(inbox, 'link.csv')]);
    } finally {
      await w.close();
    }
  });

  it('a file still being written while the watcher starts is reported only once it holds still (a file found by the first listing is judged like any other)', async () => {
    const inbox = tempDir();
    const path = join(inbox, 'early.csv');
    writeFileSync(path, 'pid,userId\n');
    let writes = 0;
    const timer = setInterval(() => {
      if (++writes <= 8) appendFileSync(path, `101,51234567${writes}\n`);
    }, 60);
    const seen: { path: string; size: number }[] = [];
    const w = watchInbox(inbox, (p) => seen.push({ path: p, size: statSync(p).size }), { settleMs: 300 });
    try {
      await waitFor(() => seen.length >= 1);
      expect(writes).toBeGreaterThanOrEqual(8);
      expect(seen).toEqual([{ path, size: statSync(path).size }]);
    } finally {
      clearInterval(timer);
      await w.close();
    }
  });

  it('reports a file written in two parts only once it is complete, and a renamed-in file', async () => {
    const inbox = tempDir();
    const seen: { path: string; size: number }[] = [];
    // The gap between the two parts (120 ms) is far below the settle time, also on a busy machine.
    const w = watchInbox(inbox, (p) => seen.push({ path: p, size: statSync(p).size }), { settleMs: 1000 });
    try {
      await sleep(200);
      const path = join(inbox, 'two-part.csv');
      writeFileSync(path, 'pid,userId\n101,');
      await sleep(120);
      expect(seen).toEqual([]);
      appendFileSync(path, '5123456789\n');
      await waitFor(() => seen.length >= 1);

      writeFileSync(join(inbox, 'upload.csv.part'), 'pid\n101\n');
      await sleep(100);
      renameSync(join(inbox, 'upload.csv.part'), join(inbox, 'upload.csv'));
      await waitFor(() => seen.length >= 2);
      await sleep(400);
      expect(seen).toEqual([
        { path, size: 'pid,userId\n101,5123456789\n'.length },
        { path: join(inbox, 'upload.csv'), size: 8 },
      ]);
    } finally {
      await w.close();
    }
  });
});

describe('issue 21: a file is taken only when it is complete', () => {
  it('a file renamed in whole is taken after the short window; one written in place waits out TOPUP_SETTLE_MS without a write', async () => {
    const inbox = tempDir();
    const seen = new Map<string, number>();
    const w = watchInbox(inbox, (p) => seen.set(p, Date.now()), { settleMs: 4000 });
    try {
      await sleep(200);
      const started = Date.now();
      const renamed = join(inbox, 'renamed.csv');
      writeFileSync(join(inbox, '.renamed.csv.writing'), 'pid,userId\nPUBG-60,5123456789\n');
      renameSync(join(inbox, '.renamed.csv.writing'), renamed);
      const inPlace = join(inbox, 'in-place.csv');
      writeFileSync(inPlace, 'pid,userId\nPUBG-60,5123456789\n');
      await waitFor(() => seen.size >= 2, 10_000);
      expect(seen.get(renamed)! - started).toBeLessThan(2500);
      expect(seen.get(renamed)! - started).toBeGreaterThanOrEqual(1000);
      expect(seen.get(inPlace)! - started).toBeGreaterThanOrEqual(4000);
    } finally {
      await w.close();
    }
  });

  it('a file renamed in and then written to again is judged as written in place', async () => {
    const inbox = tempDir();
    const seen: number[] = [];
    const w = watchInbox(inbox, () => seen.push(Date.now()), { settleMs: 3000 });
    try {
      await sleep(200);
      const path = join(inbox, 'again.csv');
      writeFileSync(join(inbox, '.again.csv.part'), 'pid,userId\n');
      renameSync(join(inbox, '.again.csv.part'), path);
      await sleep(300);
      appendFileSync(path, 'PUBG-60,5123456789\n');
      const appended = Date.now();
      await waitFor(() => seen.length >= 1, 10_000);
      expect(seen[0]! - appended).toBeGreaterThanOrEqual(3000);
    } finally {
      await w.close();
    }
  });

  it('a file some process holds open for writing is not taken, however long it is quiet; it is once closed', async () => {
    const inbox = tempDir();
    const path = join(inbox, 'held.csv');
    const seen: string[] = [];
    const waiting: string[] = [];
    const w = watchInbox(inbox, (p) => seen.push(p), { settleMs: 300, onWaiting: (_p, why) => waiting.push(why) });
    // This test process is the writer.
    const fd = openSync(path, 'w');
    try {
      writeSync(fd, 'pid,userId\nPUBG-60,5123456789\n');
      await sleep(1500);
      expect(seen).toEqual([]);
      expect(waiting).toHaveLength(1);
      expect(waiting[0]).toMatch(new RegExp(`^process ${process.pid} \\(.+\\) has it open for writing; waiting until it is closed$`));
    } finally {
      closeSync(fd);
    }
    try {
      await waitFor(() => seen.length >= 1, 5000);
      expect(seen).toEqual([path]);
    } finally {
      await w.close();
    }
  });

  it('--once: a file whose last write is TOPUP_SETTLE_MS old is taken after the short window; a fresh one waits out TOPUP_SETTLE_MS', async () => {
    const inbox = tempDir();
    const old = join(inbox, 'old.csv');
    writeFileSync(old, 'pid\n101\n');
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(old, hourAgo, hourAgo);
    let started = Date.now();
    expect(await listReadyFiles(inbox, { settleMs: 3000 })).toEqual([old]);
    expect(Date.now() - started).toBeLessThan(2500);
    const fresh = join(inbox, 'fresh.csv');
    writeFileSync(fresh, 'pid\n101\n');
    started = Date.now();
    expect(await listReadyFiles(inbox, { settleMs: 3000 })).toEqual([fresh, old]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
  });
});

async function waitFor(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await sleep(20);
  }
}
