/**
 * A worker thread with a read-only connection of its own, for the few whole-home aggregates whose
 * cost grows with everything ever stored (rows by state: ~85 ms per million rows). Run here, they
 * never hold the daemon's event loop, where sends and polls are timed. SQLite in WAL mode lets
 * this reader work beside the daemon's writer. Only the named queries of READ_QUERIES run.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { READ_QUERIES, type ReadQuery } from './read-queries.js';
import { BUSY_TIMEOUT_MS, PAGE_CACHE_KIB } from '../store/db.js';
import { registerIdentity } from '../kernel/identity.js';

const db = new Database((workerData as { path: string }).path, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
// Every connection on a home's database knows the trxid fold its indexes are built with.
registerIdentity(db);

parentPort!.on('message', (m: { id: number; query: ReadQuery }) => {
  try {
    parentPort!.postMessage({ id: m.id, rows: db.prepare(READ_QUERIES[m.query]).all() });
  } catch (err) {
    parentPort!.postMessage({ id: m.id, error: (err as Error).message });
  }
});
