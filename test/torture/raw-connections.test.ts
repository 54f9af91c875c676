/**
 * adv9: connections opened without trxid_fold() registered. The folded indexes of migration 13
 * (rows_trxid_folded, left_trxids_folded, order_events_trxid) call trxid_fold(); SQLite needs the
 * function to check them or to write a row. torture/lib.ts integrityCheck() opens the daemon's
 * database with a bare `new Database(...)` and runs PRAGMA integrity_check: on any home holding a
 * row it throws "SqliteError: unknown function: trxid_fold()" instead of returning ok, so the SIGKILL loop
 * and API torture scenarios judge every home as corrupt / crash at their integrity step.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDb } from '../../src/store/db.js';
import { integrityCheck } from '../../torture/lib.js';
import { tempHome, type TempHome } from '../e2e/harness.js';

const homes: TempHome[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) h.remove();
});

function homeWithRow(): string {
  const h = tempHome('adv9-raw-');
  homes.push(h);
  const path = join(h.dir, 'topup.db');
  const d = openDb(path);
  d.prepare(`INSERT INTO batches (id, seq, name, source_name, job_file, content_hash, origin, state, sandbox, created_at)
    VALUES ('b1', 1, 'b1', 'b1', '', 'h:b1', 'submit', 'open', 1, 0)`).run();
  d.prepare(`INSERT INTO rows (batch_id, idx, line, cells_json, state, trxid, updated_at) VALUES ('b1', 0, 2, '[]', 'pending', 'ÄB-7', 1000)`).run();
  d.close();
  return path;
}

describe('adv9: raw connections and trxid_fold()', () => {
  it('a bare connection cannot write a row (what every project connection must register)', () => {
    const path = homeWithRow();
    const raw = new Database(path, { fileMustExist: true });
    try {
      expect(() => raw.prepare(`UPDATE rows SET trxid = 'äb-8' WHERE idx = 0`).run()).toThrow(/trxid_fold/);
    } finally {
      raw.close();
    }
  });

  it('torture/lib.ts integrityCheck() says ok on a healthy home', () => {
    const path = homeWithRow();
    expect(integrityCheck(path)).toBe('ok');
  });
});
