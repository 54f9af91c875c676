/**
 * The operator action "restore an older copy" (issue 32 item 5, issue 29's "a home whose database
 * was replaced by an older copy"): the `restore` fault class of the swarm (sim/world.ts).
 *
 * What the operator does, as the torture scenario `restore` does it (test/torture/, docs/backup.md):
 *  1. at a drawn time, a copy of the store is taken the way `topup backup` takes it: the real
 *     function (ops/backup-job.ts backupNow: SQLite's online backup API on a live connection,
 *     verified, marked "copy, not yet reconciled", with the claimed files of unfinished batches and
 *     the order API's journal), never a raw copy of a live WAL database;
 *  2. later every process of the home is stopped (gracefully, or killed: SIGKILL), the copy is put
 *     back the way `topup restore` puts it (store/backup.ts verifyBackup, restoreBackup, the
 *     accounts newer backups knew, the integrity check of the restored store), and the daemons are
 *     started again: as the real daemon does (daemon.ts), each start first adopts batch folders the
 *     store does not know (claim/orphans.ts) and the runner reconciles before it sends anything
 *     (ops/restore-reconcile.ts), accepting the journal's API orders again;
 *  3. the operator drops the day's files again (and `topup submit`s again what was submitted), as
 *     the restore report and docs/backup.md tell them to; the shop resends every order it got no
 *     answer for, as it always does (sim/shop.ts).
 *
 * Invariant 38 (sim/invariants.ts, `restore` in its context): a purchase the ledgers charged before
 * the restore is never charged again after it (rows bought after the copy are settled from the
 * supplier or sent to review, never bought again); every order made before the restore is held by
 * a row at the end, or its row is in review, or the restore report names it as needing a person;
 * and the reconcile finished (the store's marker is gone) and wrote its report. The other
 * invariants (1, 2, 5, 14, …) hold across the restore as across a crash.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../src/config/config.js';
import type { Runtime } from '../src/runtime.js';
import { backupNow } from '../src/ops/backup-job.js';
import { journalFiles } from '../src/orders/journal.js';
import { accountsOfNewerBackups, adoptAccounts, RECONCILE_KEY, restoreBackup, verifyBackup } from '../src/store/backup.js';
import { openStoreOnly } from '../src/commands/store-only.js';
import { integrityCheck } from '../src/store/db.js';

/** What the run records of a restore, for invariant 38 and the figures. */
export interface RestoreRecord {
  /** Sim ms the copy was taken (null: the copy failed) and the store restored (null: not yet). */
  backupAt: number | null;
  restoredAt: number | null;
  /** The backup folder. */
  path: string | null;
  /** Per model API (by index): how many orders its ledger held when the store was restored (orders made before are the first n). */
  ordersAtRestore: number[];
  /** Per model API: how many orders its ledger held when the copy was taken (made after it: the copy does not know them). */
  ordersAtBackup: number[];
  /** Why a step failed (a failure of the run). */
  failed: string | null;
}

/** `topup backup --to DIR` of this home, through the runtime of a process of its own. */
export async function takeCopy(rt: Runtime, dir: string): Promise<string> {
  const rec = await backupNow(rt, dir, { journalFiles: () => journalFiles(rt.config.jobsDir, rt.clock.now()) });
  return rec.path;
}

/**
 * `topup restore PATH` into the stopped home (commands/restore.ts, without its printing): the
 * backup verified, put in place (the store it replaces kept beside it), the accounts newer backups
 * knew recorded, and the restored store checked whole. Throws what the command would report.
 */
export function restoreCopy(path: string, config: Config, now: number): void {
  const backup = verifyBackup(path);
  restoreBackup(backup, { home: config.home, dbPath: config.dbPath, jobsDir: config.jobsDir, now });
  const newer = accountsOfNewerBackups(backup, [config.backup.dir]);
  const store = openStoreOnly(config);
  try {
    adoptAccounts(store.db, newer.accounts, now);
    const integrity = integrityCheck(store.db);
    if (integrity !== 'ok') throw new Error(`the restored store failed its integrity check: ${integrity}`);
  } finally {
    store.close();
  }
}

/** The restore reports the reconcile and the claim lookups wrote (outbox/reports/restore-*.json). */
export interface RestoreReportFile {
  file: string;
  needsPerson: { batch: string; line: number; trxid: string | null; why: string }[];
  orphans: { batch: string; verdict: string; detail: string }[];
}
export function restoreReports(config: Config): RestoreReportFile[] {
  const dir = config.reportsDir;
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.startsWith('restore-') && f.endsWith('.json'))
    .map((f) => {
      const j = JSON.parse(readFileSync(join(dir, f), 'utf8')) as Partial<RestoreReportFile>;
      return { file: f, needsPerson: j.needsPerson ?? [], orphans: j.orphans ?? [] };
    });
}

/** Whether the store still carries the marker "copy, not yet reconciled" (the reconcile has not finished). */
export function reconcilePending(rt: Pick<Runtime, 'meta'>): boolean {
  return rt.meta.getJson(RECONCILE_KEY) !== undefined && rt.meta.getJson(RECONCILE_KEY) !== null;
}
