/**
 * `topup takeover --from REPLICA` on the standby's home (docs/standby.md): the fence first, then
 * the store restored from the Litestream replica, marked for the same reconcile-first start as a
 * restored backup (ops/restore-reconcile.ts).
 *
 * Order, and why:
 *  1. the fence names this home (epoch + 1): from now on the old primary sends nothing more
 *     (standby/fence.ts: it reads the fence before every send, at most FENCE_TTL_MS old);
 *  2. a wait of FENCE_TTL_MS plus one sync interval: a primary that is alive (a network split, not a
 *     dead machine) has stopped, and its last writes have reached the replica;
 *  3. `litestream restore` of the newest generation into a temporary file, checked
 *     (integrity_check, schema), marked `restore.reconcile` kind `replica`; the old primary's
 *     batch leases and daemon presence are cleared (they name a process on another store: this copy
 *     is this home's alone, and the fence keeps the other from sending); result files are pointed
 *     at this home's outbox/;
 *  4. the store this home had (if any) kept as topup.db.replaced-<time>, the copy renamed in.
 * A kill at any step: before 4 the home is as it was (the fence already names it, so the old
 * primary stays stopped: run takeover again); after 4 the marker is in the store, so the first
 * start reconciles before it sends anything.
 * The store lags the primary by at most the sync interval (Litestream ships every frame within
 * it): what is lost is at most that much of the store's changes, and the reconcile looks every
 * unsettled row up at the supplier by its trxids before anything is sent.
 */
import Database from 'better-sqlite3';
import { chmodSync, closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Config } from '../config/config.js';
import { parseReplica } from '../config/standby-settings.js';
import { ErrorCode, TopupError } from '../kernel/errors.js';
import { registerIdentity } from '../kernel/identity.js';
import { MIGRATIONS } from '../store/migrations.js';
import { batchStates, rowStates } from '../store/state-sql.js';
import { CHECKED_STATES, UNSENT_STATES } from '../store/row-states.js';
import { RECONCILE_KEY, type ReconcileMarker } from '../store/backup.js';
import { FENCE_TTL_MS, takeFence, type FenceRecord } from './fence.js';
import { FENCE_NAME } from '../config/standby-settings.js';
import { foldJournalMirrors } from '../orders/journal.js';
import { litestreamBinary, restoreReplica } from './litestream.js';

export interface TakeoverOptions {
  /** The replica (a folder or a Litestream URL); default TOPUP_REPLICA. */
  from?: string;
  /** The fence file; default TOPUP_FENCE_FILE, or `<replica folder>/topup-fence.json`. */
  fence?: string;
  /** No fence (the supplier's allowlist is the fence: the operator removed the old primary's address). */
  noFence?: boolean;
  /** Wall ms now. */
  now: number;
  /** How long to wait between the fence and the restore (default FENCE_TTL_MS + one sync interval + 500 ms). */
  settleMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

export interface TakeoverOutcome {
  replica: string;
  fence: { path: string; epoch: number; previous: FenceRecord['previous'] } | null;
  restoreMs: number;
  keptAs: string | null;
  integrity: 'ok';
  schema: number;
  /** Batches the copy had not finished, and those of them whose claimed file this home lacks (drop the file again: same bytes, same trxids). */
  unfinished: number;
  missingFiles: string[];
  /** Rows the copy has unsent, in flight or in doubt: looked up at the supplier before any send. */
  open: number;
  /** Order API journal lines found beside the replica and added to this home's journal (the first start accepts again those the store lacks). */
  journalLines: number;
}

function syncMs(interval: string): number {
  const m = /^(\d+)(ms|s)$/.exec(interval);
  return m ? (m[2] === 'ms' ? Number(m[1]) : Number(m[1]) * 1000) : 1000;
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function stamp(now: number): string {
  return new Date(now).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

/** The caller has made sure no daemon runs on this home. */
export async function takeover(config: Config, opts: TakeoverOptions): Promise<TakeoverOutcome> {
  const replica = opts.from !== undefined ? parseReplica(opts.from, process.cwd(), '--from') : config.standby.replica;
  if (replica === null) throw new TopupError(ErrorCode.Usage, 'takeover needs the replica: --from DIR|URL, or TOPUP_REPLICA');
  const bin = litestreamBinary(config);
  const fencePath = opts.noFence ? null : opts.fence ?? config.standby.fenceFile ?? (replica.dir !== '' ? join(replica.dir, FENCE_NAME) : null);
  if (!opts.noFence && fencePath === null) {
    throw new TopupError(ErrorCode.Usage, `the replica ${replica.url} is not a folder: name the fence (--fence PATH or TOPUP_FENCE_FILE), or --no-fence once the old primary's address is off the supplier's allowlist`);
  }
  // A folder replica with no generation holds no store: the restore below would fail, after the
  // fence had moved (an adversarial review: a replica folder re-created empty at the old path; the
  // takeover failed and left a new fence as its side effect). Said before anything is written.
  // (With a litestream.yml of the operator's, the replica it names is read as it says.)
  const fromConfig = opts.from === undefined ? config.standby.litestreamConfig : null;
  if (replica.dir !== '' && fromConfig === null) {
    const gens = join(replica.dir, 'generations');
    if (!existsSync(gens) || readdirSync(gens).length === 0) {
      throw new TopupError(
        ErrorCode.Standby,
        `the replica ${replica.dir} holds no store (no Litestream generation in it): nothing to take over from, and the fence was not moved. ` +
          'If the replica folder was re-created empty at the path of the old one and this home is the primary, `topup fence reset --i-know` here (docs/standby.md)',
      );
    }
  }
  let fence: TakeoverOutcome['fence'] = null;
  if (fencePath !== null) {
    const { taken } = takeFence(fencePath, config.home, opts.now);
    fence = { path: fencePath, epoch: taken.epoch, previous: taken.previous };
    const wait = opts.settleMs ?? FENCE_TTL_MS + syncMs(config.standby.syncInterval) + 500;
    await (opts.sleep ?? ((ms) => new Promise<void>((r) => setTimeout(r, ms))))(wait);
  }

  mkdirSync(config.jobsDir, { recursive: true, mode: 0o700 });
  const tmp = `${config.dbPath}.takeover`;
  for (const suffix of ['', '-wal', '-shm', '.tmp', '.tmp-wal', '.tmp-shm']) rmSync(tmp + suffix, { force: true });
  const { ms: restoreMs } = restoreReplica(bin, { url: replica.url, configFile: fromConfig, dbPath: config.dbPath }, tmp);
  chmodSync(tmp, 0o600);

  const copy = new Database(tmp);
  // Its indexes and triggers call trxid_fold(): integrity_check and every write need it.
  registerIdentity(copy);
  let schema: number;
  let unfinished: { id: string; state: string; job_file: string }[];
  let open: number;
  try {
    const integrity = (copy.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check).join('; ');
    if (integrity !== 'ok') throw new TopupError(ErrorCode.Standby, `the store restored from ${replica.url} failed its integrity check: ${integrity}`);
    const hasSchema = copy.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'`).get();
    schema = hasSchema ? ((copy.prepare('SELECT version FROM schema_version').get() as { version: number } | undefined)?.version ?? 0) : 0;
    if (schema === 0) throw new TopupError(ErrorCode.Standby, `${replica.url} does not hold a topup store`);
    if (schema > MIGRATIONS.length) throw new TopupError(ErrorCode.Standby, `the replica was written by a newer topup-runner (schema ${schema}, this build knows ${MIGRATIONS.length})`);
    const marker: ReconcileMarker = {
      kind: 'replica',
      copy: null,
      restoredAt: opts.now,
      from: replica.url,
      detail: `restored from the Litestream replica ${replica.url} by topup takeover${fence ? ` (fence epoch ${fence.epoch})` : ''}`,
    };
    copy.transaction(() => {
      copy.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(RECONCILE_KEY, JSON.stringify(marker));
      // The old primary's leases and presence name a process of another store: this copy is this
      // home's alone (and the fence keeps the old primary from sending), so they are let go now
      // rather than after LEASE_MS, and nobody reads "a daemon runs here".
      copy.prepare('UPDATE batches SET owner = NULL, lease_until = 0 WHERE owner IS NOT NULL').run();
      copy.prepare(`DELETE FROM meta WHERE key = 'daemon.presence'`).run();
      // Result files are named by absolute path: this home's outbox/, not the old primary's.
      const results = copy.prepare('SELECT id, result_file FROM batches WHERE result_file IS NOT NULL').all() as { id: string; result_file: string }[];
      const point = copy.prepare('UPDATE batches SET result_file = ? WHERE id = ?');
      for (const r of results) if (dirname(r.result_file) !== config.outboxDir) point.run(join(config.outboxDir, basename(r.result_file)), r.id);
    })();
    unfinished = copy.prepare(`SELECT id, state, job_file FROM batches WHERE state IN (${batchStates(['claimed', 'open'])})`).all() as typeof unfinished;
    open = (copy.prepare(`SELECT count(*) AS n FROM rows WHERE state IN (${rowStates([...UNSENT_STATES, ...CHECKED_STATES])})`).get() as { n: number }).n;
    // Everything in the one file before it is renamed in (the restored file is in WAL mode).
    copy.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    copy.close();
  }
  fsyncPath(tmp);
  // Litestream's own temporary log files of the restore, and this connection's.
  for (const suffix of ['-wal', '-shm', '.tmp-wal', '.tmp-shm']) rmSync(tmp + suffix, { force: true });

  // The journal's lines before the store: once the marked store is in, its first start reads them.
  const journalLines = replica.dir !== '' ? foldJournalMirrors(replica.dir, config.jobsDir, opts.now) : 0;

  let keptAs: string | null = null;
  if (existsSync(config.dbPath)) {
    keptAs = `${config.dbPath}.replaced-${stamp(opts.now)}`;
    for (const suffix of ['', '-wal', '-shm']) if (existsSync(config.dbPath + suffix)) renameSync(config.dbPath + suffix, keptAs + suffix);
  } else {
    for (const suffix of ['-wal', '-shm']) rmSync(config.dbPath + suffix, { force: true });
  }
  renameSync(tmp, config.dbPath);
  fsyncPath(dirname(config.dbPath));
  // A claimed batch needs its file to load; an open one has its rows in the store.
  const missingFiles = unfinished.filter((b) => b.state === 'claimed' && !existsSync(join(config.home, b.job_file))).map((b) => b.id);
  return { replica: replica.url, fence, restoreMs, keptAs, integrity: 'ok', schema, unfinished: unfinished.length, missingFiles, open, journalLines };
}
