/**
 * `topup backup [--to DIR]`: an online, verified copy of the store and the job files it needs,
 * taken while the daemon runs (store/backup.ts, docs/backup.md). Store-only: it never calls the API.
 */
import type { Command } from 'commander';
import { systemClock } from '../kernel/clock.js';
import { backupNow } from '../ops/backup-job.js';
import { commandConfig, commandLogger } from './context.js';
import { openStoreOnly } from './store-only.js';
import { journalFiles } from '../orders/journal.js';
import { whenUtc } from './output.js';

export function registerBackup(program: Command): void {
  program
    .command('backup')
    .description('Copy the store (online, while the daemon runs) and the files of unfinished batches into a new folder, verified; 0600')
    .option('--to <dir>', 'where the backup folder goes (default: TOPUP_BACKUP_DIR, or <home>/backups)')
    .option('--keep <n>', 'then keep only the newest n backups in that folder')
    .option('--json', 'print the backup as JSON')
    .addHelpText('after', '\nExit code: 0 when the backup was written and verified; 1 when it could not be (nothing with a final name is left behind).')
    .action(async (opts: { to?: string; keep?: string; json?: boolean }, cmd: Command) => {
      const config = commandConfig(cmd, { requireKey: false });
      const log = commandLogger(config, cmd);
      const store = openStoreOnly(config);
      try {
        const keep = opts.keep === undefined ? undefined : Number(opts.keep);
        if (keep !== undefined && (!Number.isInteger(keep) || keep < 1)) {
          process.stderr.write(`--keep: "${opts.keep}" is not a whole number of 1 or more\n`);
          process.exitCode = 2;
          return;
        }
        const rec = await backupNow({ ...store, clock: systemClock, config, log }, opts.to ?? config.backup.dir, { ...(keep === undefined ? {} : { keep }), journalFiles: () => journalFiles(config.jobsDir, systemClock.now()) });
        if (opts.json) process.stdout.write(`${JSON.stringify(rec, null, 2)}\n`);
        else {
          process.stdout.write(
            `backup written and verified: ${rec.path}\n` +
              `  store: ${rec.bytes} bytes, schema ${rec.schema}, integrity ok; taken ${whenUtc(rec.takenAt)} in ${rec.ms} ms\n` +
              `  files of unfinished batches: ${rec.batches.length}${rec.pruned.length > 0 ? `; removed ${rec.pruned.length} older backup(s)` : ''}\n` +
              `restore it with: topup restore ${rec.path}\n`,
          );
        }
      } finally {
        store.close();
      }
    });
}
