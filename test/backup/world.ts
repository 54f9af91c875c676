/**
 * Shared parts of the backup tests: a home with two real sandboxes as two accounts (as
 * test/accounts/two-accounts.test.ts), and reads of the home's real SQLite store.
 */
import Database from 'better-sqlite3';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnv, inProcessSandbox, tempHome, TEST_KEY, type TempHome } from '../e2e/harness.js';
import { defaultCatalog } from '../../src/sandbox/default-catalog.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

/** Sandbox B: the same packs under other pids ("B-" + pid), 10 % cheaper. */
function catalogB(dir: string): string {
  const c = defaultCatalog();
  const products = c.products.map((p) => ({ ...p, id: `B-${p.id}`, price: Math.round(p.price * 90) / 100 }));
  const file = join(dir, 'catalog-b.json');
  writeFileSync(file, JSON.stringify({ services: c.services, products }));
  return file;
}

export async function twoAccounts(extra: string) {
  const home = tempHome('backup-two-');
  const a = await inProcessSandbox();
  const b = await inProcessSandbox({ catalogFile: catalogB(home.dir) });
  mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
  writeFileSync(join(home.dir, 'keys', 'main.key'), TEST_KEY, { mode: 0o600 });
  writeFileSync(join(home.dir, 'keys', 'second.key'), TEST_KEY, { mode: 0o600 });
  writeFileSync(
    join(home.dir, 'accounts.toml'),
    `${extra}\n[[account]]\nname = "main"\nurl = "${a.url}"\nkey_file = "keys/main.key"\n\n[[account]]\nname = "second"\nurl = "${b.url}"\nkey_file = "keys/second.key"\n`,
  );
  return { home, a, b, env: cliEnv(home, null, { TOPUP_API_KEY: '' }) };
}

export interface StoredRow {
  batch_id: string;
  line: number;
  state: string;
  account: string;
  trxid: string | null;
  order_id: string | null;
}

/** The home's rows as its store has them now (read-only; a running daemon's WAL included). */
export function storedRows(home: TempHome): StoredRow[] {
  try {
    const db = new Database(join(home.jobs, 'topup.db'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare('SELECT batch_id, line, state, account, trxid, order_id FROM rows ORDER BY batch_id, idx').all() as StoredRow[];
    } finally {
      db.close();
    }
  } catch {
    return [];
  }
}

export function batchStates(home: TempHome): { id: string; state: string }[] {
  try {
    const db = new Database(join(home.jobs, 'topup.db'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare('SELECT id, state FROM batches ORDER BY seq').all() as { id: string; state: string }[];
    } finally {
      db.close();
    }
  } catch {
    return [];
  }
}

export const ledgerTrxids = (sb: RunningSandbox): string[] => sb.admin.ledger().orders.map((o) => String(o.trxid));
