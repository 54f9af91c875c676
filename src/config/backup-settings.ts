/**
 * The backup settings (TOPUP_BACKUP_SCHEDULE, TOPUP_BACKUP_DIR, TOPUP_BACKUP_KEEP, and the restore
 * lookup's TOPUP_RESTORE_LOOKUP_WAIT and TOPUP_SUPPLIER_HISTORY_DAYS), read by
 * config/config.ts with the others: a bad value is a ConfigError naming the setting.
 *
 * Off by default (no schedule): where a copy should go is the reseller's decision (a disk or a
 * mount that does not die with this one). `topup backup --to DIR` works without any of them.
 */
import { isAbsolute, resolve } from 'node:path';
import { validate as validateCron } from 'node-cron';
import { ConfigError } from '../kernel/errors.js';
import { parseDuration } from './parse.js';

export interface BackupSettings {
  /** A node-cron expression, or null (no scheduled backups). */
  cron: string | null;
  /** Where backups go (absolute); default <home>/backups. */
  dir: string;
  /** How many backups are kept in `dir` (the oldest go after each good backup). */
  keep: number;
  /**
   * TOPUP_RESTORE_LOOKUP_WAIT: how long a file claimed in the window after a restore waits for an
   * account its lookup cannot read (a key refused, unreachable, taken out of accounts.toml) before
   * its rows that could have been bought there go to review (ops/restore-reconcile.ts lookUpClaims).
   * 0: at once.
   */
  restoreLookupWaitMs: number;
  /**
   * TOPUP_SUPPLIER_HISTORY_DAYS: how many days of orders the supplier's GET /history keeps, when
   * the reseller knows it (the spec says only "recent orders"); null: not known. A history read
   * after a restore whose copy is older than that is cut off however complete it looks, and the
   * rows it would have to clear go to review, the reason saying so (ops/restore-reconcile.ts sweep).
   */
  supplierHistoryDays: number | null;
}

export const BACKUP_DEFAULTS = {
  TOPUP_BACKUP_SCHEDULE: '',
  TOPUP_BACKUP_DIR: '',
  TOPUP_BACKUP_KEEP: '24',
  TOPUP_RESTORE_LOOKUP_WAIT: '30m',
  TOPUP_SUPPLIER_HISTORY_DAYS: '',
} as const;

export function backupSettings(env: Record<string, string>, home: string): BackupSettings {
  const rawCron = (env.TOPUP_BACKUP_SCHEDULE ?? '').trim();
  let cron: string | null = null;
  if (rawCron !== '' && !/^(off|false|no|0|disabled)$/i.test(rawCron)) {
    if (!validateCron(rawCron)) throw new ConfigError('TOPUP_BACKUP_SCHEDULE', `"${rawCron}" is not a cron expression (e.g. "*/15 * * * *" for every 15 minutes, or "off")`);
    cron = rawCron;
  }
  const rawDir = (env.TOPUP_BACKUP_DIR ?? '').trim();
  const dir = rawDir === '' ? resolve(home, 'backups') : isAbsolute(rawDir) ? rawDir : resolve(home, rawDir);
  if (rawDir !== '' && resolve(dir).startsWith(resolve(home, 'jobs'))) {
    throw new ConfigError('TOPUP_BACKUP_DIR', `"${rawDir}" is inside jobs/: a backup must not live beside the store it copies (use a disk or a mount of its own)`);
  }
  const rawKeep = (env.TOPUP_BACKUP_KEEP ?? BACKUP_DEFAULTS.TOPUP_BACKUP_KEEP).trim();
  const keep = Number(rawKeep);
  if (!/^\d+$/.test(rawKeep) || keep < 1 || keep > 10_000) throw new ConfigError('TOPUP_BACKUP_KEEP', `"${rawKeep}" is not a whole number from 1 to 10000`);
  const rawWait = (env.TOPUP_RESTORE_LOOKUP_WAIT ?? BACKUP_DEFAULTS.TOPUP_RESTORE_LOOKUP_WAIT).trim();
  const restoreLookupWaitMs = /^0+(ms|s|m|h)?$/.test(rawWait) ? 0 : parseDuration(rawWait, 'TOPUP_RESTORE_LOOKUP_WAIT');
  if (restoreLookupWaitMs > 7 * 86_400_000) throw new ConfigError('TOPUP_RESTORE_LOOKUP_WAIT', `"${rawWait}" is longer than the 8-day window after a restore allows (at most 168h)`);
  return { cron, dir, keep, restoreLookupWaitMs, supplierHistoryDays: historyDays(env.TOPUP_SUPPLIER_HISTORY_DAYS ?? '') };
}

/** Days as a number above 0 (`30`, `1.5` for 36 hours), at most ten years; empty or `off`: not known. */
function historyDays(raw: string): number | null {
  const text = raw.trim();
  if (text === '' || /^(off|unknown|none)$/i.test(text)) return null;
  const days = /^\d+(\.\d+)?$/.test(text) ? Number(text) : NaN;
  if (!(days > 0) || days > 3650) {
    throw new ConfigError('TOPUP_SUPPLIER_HISTORY_DAYS', `"${text}" is not a number of days above 0 and at most 3650 (how far back your supplier's order history goes, e.g. 30; leave it unset when you do not know)`);
  }
  return days;
}
