/**
 * ops/restore-history-prune.ts on a real store (the migrated template): the cases the end-to-end
 * test (test/restore/window-histories-pruned.test.ts) does not reach. A reading kept by another
 * window (a copy taken during an earlier one) can never be used and goes at once; while a restored
 * copy waits for its reconcile nothing is touched (the reconcile replaces the readings itself).
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pruneKeptHistories } from '../../src/ops/restore-history-prune.js';
import { releaseAll, tempHome } from '../e2e/harness.js';

afterEach(releaseAll);

describe('pruneKeptHistories', () => {
  it('on the store: a reading of another window goes at once; nothing is touched while a restored copy waits for its reconcile', () => {
    const home = tempHome('topup-prune-');
    const db = new Database(join(home.jobs, 'topup.db'));
    const now = Date.now();
    const until = now + 86_400_000;
    const reading = (window: number): string => JSON.stringify({ window, identity: 'x', since: 0, readAt: now, reachedBack: true, echoes: true, orders: [] });
    try {
      const put = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
      put.run('restore.window', JSON.stringify({ since: now - 3_600_000, until, detail: 'test' }));
      put.run('restore.history:main', reading(until));
      put.run('restore.history:second', reading(until - 1)); // kept by an earlier window (a copy taken in one)
      put.run('restore.reconcile', JSON.stringify({ kind: 'backup', copy: null, restoredAt: now, from: null, detail: 'test' }));
      expect(pruneKeptHistories(db, now)).toBe(0); // the reconcile replaces them itself
      db.prepare("DELETE FROM meta WHERE key = 'restore.reconcile'").run();
      expect(pruneKeptHistories(db, now)).toBe(1);
      expect(pruneKeptHistories(db, until + 1)).toBe(1);
      expect(db.prepare("SELECT count(*) AS n FROM meta WHERE key LIKE 'restore.history:%'").get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  });
});
