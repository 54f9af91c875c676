/**
 * The store alone, without the API or the sandbox: for commands that must work when the API
 * is down (status), and that must never spend the call budget.
 */
import type { Config } from '../config/config.js';
import { openDb, type Db } from '../store/db.js';
import { BatchStore } from '../store/batches.js';
import { RowStore } from '../store/rows.js';
import { MetaStore } from '../store/meta.js';

export interface StoreOnly {
  db: Db;
  batches: BatchStore;
  rows: RowStore;
  meta: MetaStore;
  close(): void;
}

export function openStoreOnly(config: Config): StoreOnly {
  const db = openDb(config.dbPath);
  return { db, batches: new BatchStore(db), rows: new RowStore(db), meta: new MetaStore(db), close: () => db.close() };
}
