/**
 * Backups as the daemon and the CLI take them (store/backup.ts does the copying): what a backup
 * copies from jobs/, where its outcome is recorded (the live store's meta, read by /metrics,
 * `topup doctor`, `topup status` and the console), the schedule (TOPUP_BACKUP_SCHEDULE), and the
 * store generation that lets a home recognise a copy of its database brought back by hand.
 */
import cron from 'node-cron';
import type { Runtime } from '../runtime.js';
import { GENERATION_KEY, LAST_ATTEMPT_KEY, LAST_BACKUP_KEY, knownAccounts, markGeneration, pruneBackups, takeBackup, writeAccountsSeen, type BackupRecord } from '../store/backup.js';
import { coerceError } from '../kernel/errors.js';
import { relative } from 'node:path';

type BackupParts = Pick<Runtime, 'batches' | 'clock' | 'config' | 'db' | 'log' | 'meta'>;

/** What a backup of this home copies from jobs/ besides the store: the folders of unfinished batches, and the order API's journal. */
export function unfinishedBatchFolders(rt: Pick<Runtime, 'batches'>): string[] {
  return rt.batches.unfinished().map((b) => b.id);
}

/**
 * Takes one backup into `toDir` and records its outcome in the live store. With `keep`, the
 * oldest backups beyond that number go (only after this one verified). Throws what takeBackup throws.
 */
export async function backupNow(rt: BackupParts, toDir: string, opts: { keep?: number; journalFiles?: () => string[] } = {}): Promise<BackupRecord & { pruned: string[] }> {
  const at = rt.clock.now();
  try {
    const rec = await takeBackup(
      {
        db: rt.db, home: rt.config.home, jobsDir: rt.config.jobsDir, now: () => rt.clock.now(),
        unfinishedBatches: () => unfinishedBatchFolders(rt),
        ...(opts.journalFiles ? { journalFiles: opts.journalFiles } : {}),
      },
      toDir,
    );
    const pruned = opts.keep !== undefined ? pruneBackups(toDir, opts.keep) : [];
    rt.meta.setJson(LAST_BACKUP_KEY, rec);
    rt.meta.setJson(LAST_ATTEMPT_KEY, { at, ok: true });
    return { ...rec, pruned };
  } catch (err) {
    try {
      rt.meta.setJson(LAST_ATTEMPT_KEY, { at, ok: false, error: coerceError(err).message });
    } catch {
      // The store itself cannot be written: the error below says why.
    }
    throw err;
  }
}

/** The last good backup (this home's store), or null. */
export function lastBackup(meta: Pick<Runtime, 'meta'>['meta']): BackupRecord | null {
  return meta.getJson<BackupRecord>(LAST_BACKUP_KEY) ?? null;
}

export function lastBackupAttempt(meta: Pick<Runtime, 'meta'>['meta']): { at: number; ok: boolean; error?: string } | null {
  return meta.getJson<{ at: number; ok: boolean; error?: string }>(LAST_ATTEMPT_KEY) ?? null;
}

/** Backups on TOPUP_BACKUP_SCHEDULE into TOPUP_BACKUP_DIR, keeping TOPUP_BACKUP_KEEP. Returns the stop, or null when off. */
export function startBackupSchedule(rt: BackupParts, opts: { journalFiles?: () => string[] } = {}): (() => Promise<void>) | null {
  const { cron: pattern, dir, keep } = rt.config.backup;
  if (pattern === null) return null;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const run = (): void => {
    if (stopped) return;
    running = running.then(async () => {
      if (stopped) return;
      try {
        const rec = await backupNow(rt, dir, { keep, ...opts });
        rt.log.info({ backup: rec.path, bytes: rec.bytes, ms: rec.ms, batches: rec.batches.length, pruned: rec.pruned.length }, 'backup taken and verified');
      } catch (err) {
        rt.log.error({ err: coerceError(err).message, dir }, 'backup failed (the last good one stays; /metrics shows its age)');
      }
    });
  };
  // In TOPUP_TIME_ZONE, like every schedule of the daemon: "0 3 * * *" is 03:00 there, whatever the machine's TZ.
  const task = cron.schedule(pattern, run, { name: 'backup', noOverlap: true, timezone: rt.config.timeZone });
  rt.log.info({ schedule: pattern, timeZone: rt.config.timeZone, dir: relative(rt.config.home, dir).startsWith('..') ? dir : relative(rt.config.home, dir) || '.', keep }, 'scheduled backups on');
  return async () => {
    stopped = true;
    await task.destroy();
    await running;
  };
}

/** Raises the store generation now, every `everyMs` and at the stop (the returned releaser). */
export function startStoreMark(rt: Pick<Runtime, 'clock' | 'config' | 'db' | 'entropy' | 'log' | 'meta'>, everyMs = 10_000): () => void {
  const names = rt.config.accounts.accounts.map((a) => a.name);
  let lastSeen = '';
  const bump = (): void => {
    try {
      // This daemon sends with its accounts while it runs: they are in use, whatever a process
      // started later with another accounts.toml recorded (store/account-identity.ts removed_at).
      const inUse = rt.db.prepare('UPDATE account_identities SET removed_at = NULL WHERE name = ? AND removed_at IS NOT NULL');
      rt.db.transaction(() => { for (const n of names) inUse.run(n); })();
      const accounts = knownAccounts(rt.db);
      markGeneration(rt.meta, rt.config.home, () => rt.entropy.hex(8), rt.clock.now(), accounts);
      // Beside the backups too (another disk, when TOPUP_BACKUP_DIR is one): the one record of an
      // account added after the last backup that survives the disk (store/backup.ts writeAccountsSeen).
      const seen = JSON.stringify(accounts);
      if (seen !== lastSeen) {
        try {
          writeAccountsSeen(rt.config.backup.dir, accounts);
          lastSeen = seen;
        } catch (err) {
          rt.log.warn({ err: coerceError(err).message, dir: rt.config.backup.dir }, 'the accounts this home runs with could not be recorded beside the backups (accounts-seen.json): a restore after this disk is lost may not know an account added since the last backup');
        }
      }
    } catch (err) {
      rt.log.debug({ err: coerceError(err).message }, 'store generation not raised this time');
    }
  };
  bump();
  const timer = setInterval(bump, everyMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    bump();
  };
}

export { GENERATION_KEY };
