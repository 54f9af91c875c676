/**
 * `topup restore BACKUP`: puts a backup taken by `topup backup` in place of the home's store, into
 * a stopped home (store/backup.ts restoreBackup, docs/backup.md). It refuses while a daemon runs
 * on the home or a live process holds one of its batches. The restored store carries the marker
 * "copy, not yet reconciled": the next daemon (or submit) looks every open row up at every account
 * before it sends anything (ops/restore-reconcile.ts).
 */
import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { systemClock } from '../kernel/clock.js';
import { ErrorCode, TopupError, UsageError } from '../kernel/errors.js';
import { userInfo } from 'node:os';
import type { Config } from '../config/config.js';
import { closeRestoreWindow, restoreWindowState, unansweredCount, unansweredText } from '../ops/restore-window.js';
import { integrityCheck } from '../store/db.js';
import { accountsOfNewerBackups, adoptAccounts, knownAccounts, readAccountsSeen, restoreBackup, verifyBackup, ACCOUNTS_SEEN_FILE, type RememberedAccount } from '../store/backup.js';
import { dirname, resolve } from 'node:path';
import { foldJournalMirrors } from '../orders/journal.js';
import { ownerIsDead } from '../store/owner.js';
import { runningDaemon } from '../store/presence.js';
import { commandConfig } from './context.js';
import { openStoreOnly } from './store-only.js';

/**
 * What a restore without a folder replica cannot protect (docs/backup.md "What is not protected
 * without a folder replica"), said by every restore that has none, not only in the docs.
 */
const UNPROTECTED =
  'WARNING: no folder replica (TOPUP_REPLICA) holds a copy of the order API journal: orders accepted after this backup are recovered only from jobs/api-journal/ on this disk. ' +
  'If that was lost too, this store does not know them: an order the shop does not resend is not bought, and its customer waits. ' +
  'An order the shop resends is accepted again (202); on a home with several accounts it is first looked up at every account under <trxid> and <trxid>-<account> (for 8 days after this restore) and settled from a purchase found there, never bought twice; ' +
  'an account that cannot be read then, or one taken out of accounts.toml since the backup, sends it to review instead (docs/backup.md).';

export function registerRestore(program: Command): void {
  program
    .command('restore')
    .argument('[backup]', 'a backup folder written by topup backup (or its topup.db or manifest.json)')
    .description('Restore the store from a backup into a stopped home; the next start reconciles with the suppliers before it sends anything')
    .option('--json', 'print what was restored as JSON')
    .option('--close-window', 'close the 8-day window after a restore early (files and API orders are no longer looked up at every account first); says what it would do, --yes does it')
    .option('--yes', 'with --close-window: do it')
    .option('--force', 'with --close-window: close it although lookups are unanswered (they go on; nothing is sent blind)')
    .addHelpText('after', '\nThe store it replaces is kept beside it (jobs/topup.db.replaced-<time>).\nExit code: 0 restored (or the window closed, or shown); 1 the backup does not verify, or the window not closed (say why); 5 a daemon or another process runs on this home.')
    .action(async (given: string | undefined, opts: { json?: boolean; closeWindow?: boolean; yes?: boolean; force?: boolean }, cmd: Command) => {
      const config = commandConfig(cmd, { requireKey: false });
      if (opts.closeWindow) {
        if (given !== undefined) throw new UsageError('topup restore --close-window takes no backup');
        closeWindowCommand(config, opts);
        return;
      }
      if (given === undefined) throw new UsageError('topup restore needs a backup (a folder written by topup backup), or --close-window');
      if (opts.yes || opts.force) throw new UsageError('--yes and --force go with --close-window');
      const backup = verifyBackup(given);
      const now = systemClock.now();
      if (existsSync(config.dbPath)) {
        let busy: string | null = null;
        try {
          const store = openStoreOnly(config);
          try {
            const daemon = runningDaemon(store.meta, now);
            if (daemon) busy = `a daemon runs on this home (pid ${daemon.pid} on ${daemon.host}): stop it first`;
            const held = store.batches.unfinished().find((b) => b.owner !== null && b.leaseUntil > now && !ownerIsDead(b.owner));
            if (!busy && held) busy = `batch ${held.id} is held by a live process (${held.owner}): stop it first`;
          } finally {
            store.close();
          }
        } catch (err) {
          // A store that cannot be opened (the reason to restore) has no daemon that could write it.
          if (err instanceof TopupError && err.code === ErrorCode.BatchLocked) throw err;
        }
        if (busy) throw new TopupError(ErrorCode.BatchLocked, `restore refused: ${busy}`);
      }
      const out = restoreBackup(backup, { home: config.home, dbPath: config.dbPath, jobsDir: config.jobsDir, now });
      // The order API's journal beside a folder replica (orders/journal.ts foldJournalMirrors, the
      // path topup takeover and the first start take too): the orders accepted after the backup
      // was taken, which the backup's journal lacks. After the backup's files, so a day's file the
      // backup had is copied whole first. The first start carries them over again (a kill here).
      const replicaDir = config.standby.replica?.dir ?? '';
      const journalLines = replicaDir !== '' ? foldJournalMirrors(replicaDir, config.jobsDir, now) : null;
      // Accounts a newer backup knew and this copy does not (added after it, taken out again):
      // recorded, so the window after the restore looks them up or holds for them. On a disk lost
      // whole nothing else remembers them (the mark file went too).
      const newer = accountsOfNewerBackups(backup, [config.backup.dir]);
      // The restored store opens with this build (migrated if it is older) and checks whole.
      const store = openStoreOnly(config);
      // And the accounts recorded beside the backups (accounts-seen.json, written by the daemon when
      // its accounts change, store/backup.ts writeAccountsSeen): an account added after the LAST
      // backup and taken out before the loss is in no backup, only there.
      const seenDirs = [...new Set([dirname(backup.path), config.backup.dir].map((d) => resolve(d)))];
      const seen: RememberedAccount[] = seenDirs.flatMap((d) => readAccountsSeen(d));
      let integrity: string;
      let adopted: string[];
      let adoptedSeen: string[];
      let copyAccounts: RememberedAccount[];
      try {
        copyAccounts = knownAccounts(store.db);
        adopted = adoptAccounts(store.db, newer.accounts, now);
        adoptedSeen = adoptAccounts(store.db, seen, now);
        integrity = integrityCheck(store.db);
      } finally {
        store.close();
      }
      // What the copy knows against what accounts.toml configures now, both ways: an account of the
      // copy (or of the records above) not configured holds the rows that could have been bought
      // there (they wait, then go to review); an account configured now that the copy does not
      // know was added after the backup, or is new.
      const configuredNow = config.accounts.accounts.map((a) => a.name);
      const knownNow = [...new Set([...copyAccounts.map((a) => a.name), ...adopted, ...adoptedSeen])];
      const notConfigured = knownNow.filter((n) => !configuredNow.includes(n));
      const notInCopy = configuredNow.filter((n) => !copyAccounts.some((a) => a.name === n));
      if (integrity !== 'ok') throw new TopupError(ErrorCode.Backup, `the restored store failed its integrity check: ${integrity}`);
      const summary = {
        restored: backup.path, takenAt: new Date(backup.manifest.takenAt).toISOString(), schema: backup.manifest.schema, integrity,
        replacedStoreKeptAs: out.keptAs, batchFoldersCopied: out.batches, journalFilesCopied: out.journal,
        /** Player checks the replaced store recorded and the copy lacked (made after the backup), carried into the restored store. */
        playerChecksCarried: out.checks,
        /** Order API journal lines found beside the folder replica and carried over; null: no folder replica, no such copy. */
        journalLinesFromReplica: journalLines,
        /** Accounts newer backups knew that the copy did not, now recorded in it (and the newer backups that could not be read). */
        accountsFromNewerBackups: adopted,
        newerBackupsUnreadable: newer.unreadable,
        /** Accounts recorded beside the backups (accounts-seen.json) that the copy did not know, now recorded in it. */
        accountsFromAccountsSeen: adoptedSeen,
        /** The accounts the copy knew, those known now and not in accounts.toml, and those in accounts.toml the copy did not know. */
        accounts: { inCopy: copyAccounts.map((a) => a.name), notConfigured, notInCopy },
        warning: journalLines === null ? UNPROTECTED : null,
      };
      if (opts.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
      else {
        process.stdout.write(
          `restored the store from ${backup.path} (taken ${summary.takenAt}); integrity ok\n` +
            (out.keptAs ? `  the store it replaced is kept as ${out.keptAs}\n` : '') +
            `  batch folders copied into jobs/: ${out.batches.length}\n` +
            (out.checks.calls + out.checks.answers > 0 ? `  player checks made after the backup, carried over from the replaced store (what they cost stays counted): ${out.checks.calls} check${out.checks.calls === 1 ? '' : 's'}, ${out.checks.answers} kept answer${out.checks.answers === 1 ? '' : 's'}\n` : '') +
            (out.checks.problem !== null ? `  WARNING: the replaced store's player checks could not be read (${out.checks.problem}): checks made after the backup are not counted in the restored store\n` : '') +
            (adopted.length > 0 ? `  accounts known to newer backups and not to this copy, recorded so the restore lookup covers them: ${adopted.join(', ')}\n` : '') +
            newer.unreadable.map((u) => `  WARNING: a newer backup could not be read for the accounts it knew: ${u.path}: ${u.why}\n`).join('') +
            (adoptedSeen.length > 0 ? `  accounts recorded beside the backups (${ACCOUNTS_SEEN_FILE}) and not known to this copy, recorded so the restore lookup covers them: ${adoptedSeen.join(', ')}\n` : '') +
            `  accounts this copy knows: ${copyAccounts.map((a) => a.name).join(', ') || '(none)'}; in accounts.toml now: ${configuredNow.join(', ')}\n` +
            (notConfigured.length > 0 ? `  WARNING: not in accounts.toml: ${notConfigured.join(', ')}: rows and API orders that could have been bought there after the backup cannot be looked up there; they wait (TOPUP_RESTORE_LOOKUP_WAIT), then go to review. Put the account back in accounts.toml (its URL and key as they were) before starting the daemon to have them looked up and settled\n` : '') +
            (notInCopy.length > 0 ? `  accounts in accounts.toml this copy does not know (added after the backup was taken, or new): ${notInCopy.join(', ')}\n` : '') +
            `  any other account this home used after the backup must be put back in accounts.toml before the daemon starts: nothing here knows it, and what it bought would not be looked up (docs/backup.md)\n` +
            (journalLines !== null
              ? `  order API journal lines found beside the replica: ${journalLines} (orders the store lacks are accepted again at the start, looked up at every account before any send)\n`
              : `  ${UNPROTECTED}\n`) +
            'Start the daemon: before it sends anything it looks every unsent, in-flight or in-doubt row up at every account\n' +
            'and settles it from what the suppliers say; its report goes to outbox/reports/restore-*.json and `topup status`.\n',
        );
      }
    });
}

function actor(): string {
  try {
    return `${userInfo().username} (topup restore --close-window)`;
  } catch {
    return 'unknown user (topup restore --close-window)';
  }
}

const at = (ms: number): string => `${new Date(ms).toISOString().replace('T', ' ').slice(0, 16)} UTC`;

/** `topup restore --close-window [--yes] [--force]` (ops/restore-window.ts, docs/backup.md). */
function closeWindowCommand(config: Config, opts: { json?: boolean; yes?: boolean; force?: boolean }): void {
  const configured = config.accounts.accounts.map((a) => a.name);
  const store = openStoreOnly(config);
  try {
    const now = systemClock.now();
    if (opts.yes !== true) {
      const s = restoreWindowState(store.db, configured, now);
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ open: s.open, reconcileDue: s.reconcileDue, unanswered: s.unanswered, closed: false }, null, 2)}\n`);
        return;
      }
      if (s.reconcileDue) { process.stdout.write('This store is a restored copy not yet reconciled: start the daemon first (it reconciles before it sends anything); the window opens after that.\n'); return; }
      if (!s.open) { process.stdout.write('No restore window is open on this home: files and API orders are sent without a restore lookup.\n'); return; }
      process.stdout.write(
        `A restore window is open until ${at(s.open.until)} (after: ${s.open.detail}).\n` +
          `  Until then every file claimed and every new API order is looked up at every account (${s.open.accounts.join(', ')}) before it is sent: a row that could have been bought at an account that cannot be read waits, then goes to review.\n` +
          '  Close it only if no file was claimed and no API order accepted after the backup was taken, or all of them were dropped again and looked up since.\n' +
          (unansweredCount(s) > 0 ? `  Unanswered lookups now: ${unansweredText(s)} (closing does not send them; it needs --force).\n` : '') +
          `Nothing changed. To close it: topup restore --close-window --yes${unansweredCount(s) > 0 ? ' --force' : ''}\n`,
      );
      return;
    }
    const closed = closeRestoreWindow(store.db, configured, now, { force: opts.force === true, actor: actor() });
    if (opts.json) process.stdout.write(`${JSON.stringify({ closed: true, ...closed }, null, 2)}\n`);
    else process.stdout.write(`Closed the restore window (it would have stayed open until ${at(closed.window.until)}). Files and API orders from now on are sent without a restore lookup.${closed.unanswered > 0 ? ` ${closed.unanswered} lookup(s) still unanswered go on (topup status).` : ''} Recorded in the audit log.\n`);
  } finally {
    store.close();
  }
}
