/**
 * A worker thread that folds the write-ahead log into the database while the daemon works
 * (store/upkeep.ts startBusyCheckpoints). On its own connection, so the copy of the log's pages
 * into the database file and the two fsyncs around it happen off the daemon's event loop. PASSIVE
 * only: it takes no write lock and waits for nobody, so the daemon's writes (and another
 * process's) go on beside it; what it cannot fold in now it folds in at the next message.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { registerIdentity } from '../kernel/identity.js';

const db = new Database((workerData as { path: string }).path, { fileMustExist: true, timeout: 0 });
// Every connection on a home's database knows the trxid fold its indexes are built with.
registerIdentity(db);
// This connection never writes a page itself: it never checkpoints on commit either.
db.pragma('wal_autocheckpoint = 0');
// A checkpoint syncs the log before it copies and the database after only at NORMAL or above: at
// OFF it would let the log restart over frames whose pages are not on disk. NORMAL is the build's
// default today; said here so no build or future default can change it.
db.pragma('synchronous = NORMAL');

parentPort!.on('message', (m: 'checkpoint' | 'close') => {
  if (m === 'close') {
    // The daemon is stopping: the connection is closed here, before the thread ends.
    db.close();
    parentPort!.close();
    return;
  }
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
    parentPort!.postMessage({ log: r?.log ?? 0, checkpointed: r?.checkpointed ?? 0 });
  } catch (err) {
    // With its code (SQLITE_IOERR_FSYNC, SQLITE_BUSY…): what the daemon's warning names (upkeep.ts).
    const code = (err as { code?: unknown }).code;
    parentPort!.postMessage({ error: (err as Error).message, code: typeof code === 'string' ? code : 'UNKNOWN' });
  }
});
