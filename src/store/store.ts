/**
 * The store as one unit: the SQLite database and the four views every part works through. A
 * function that needs only the store takes a `Store` (or the views it uses), not the whole runtime.
 */
import { systemClock, type Clock } from '../kernel/clock.js';
import { openDb, type Db } from './db.js';
import { BatchStore } from './batches.js';
import { RowStore } from './rows.js';
import { MetaStore } from './meta.js';

export interface Store {
  db: Db;
  batches: BatchStore;
  rows: RowStore;
  meta: MetaStore;
}

/** Opens (creating and migrating it if need be) the database at `path`. */
export function openStore(path: string, clock: Pick<Clock, 'now'> = systemClock): Store {
  const db = openDb(path);
  return { db, batches: new BatchStore(db, clock), rows: new RowStore(db), meta: new MetaStore(db) };
}
