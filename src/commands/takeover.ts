/**
 * `topup takeover [--from REPLICA]`: makes this home (the warm standby) the primary. The fence is
 * moved to this home, the store is restored from the Litestream replica, and the next start
 * reconciles with the suppliers before it sends anything (standby/takeover.ts, docs/standby.md).
 * It refuses while a daemon runs on this home or a live process holds one of its batches.
 */
import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { ErrorCode, TopupError } from '../kernel/errors.js';
import { systemClock } from '../kernel/clock.js';
import { integrityCheck } from '../store/db.js';
import { ownerIsDead } from '../store/owner.js';
import { runningDaemon } from '../store/presence.js';
import { takeover } from '../standby/takeover.js';
import { commandConfig } from './context.js';
import { openStoreOnly } from './store-only.js';

export function registerTakeover(program: Command): void {
  program
    .command('takeover')
    .description('Make this home the primary: move the fence here, restore the store from the Litestream replica; the next start reconciles before it sends')
    .option('--from <replica>', 'the replica: a folder or a Litestream URL (default TOPUP_REPLICA)')
    .option('--fence <file>', 'the fence file both nodes reach (default TOPUP_FENCE_FILE, or topup-fence.json in the replica folder)')
    .option('--no-fence', 'write no fence (only once the old primary\'s address is off the supplier\'s allowlist)')
    .option('--json', 'print what was done as JSON')
    .addHelpText('after', '\nThen start the daemon (systemctl start topup). The store it replaces is kept beside it (jobs/topup.db.replaced-<time>).\nExit code: 0 taken over; 1 the replica cannot be restored or does not verify, or no litestream binary; 5 a daemon or another process runs on this home.')
    .action(async (opts: { from?: string; fence?: string | boolean; json?: boolean }, cmd: Command) => {
      const config = commandConfig(cmd, { requireKey: false });
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
        } catch {
          // A store that cannot be opened has no daemon that could write it.
        }
        if (busy) throw new TopupError(ErrorCode.BatchLocked, `takeover refused: ${busy}`);
      }
      const out = await takeover(config, {
        ...(opts.from !== undefined ? { from: opts.from } : {}),
        ...(typeof opts.fence === 'string' ? { fence: opts.fence } : {}),
        noFence: opts.fence === false,
        now,
      });
      // The restored store opens with this build (migrated if it is older) and checks whole.
      const store = openStoreOnly(config);
      let integrity: string;
      try {
        integrity = integrityCheck(store.db);
      } finally {
        store.close();
      }
      if (integrity !== 'ok') throw new TopupError(ErrorCode.Standby, `the store restored from the replica failed its integrity check: ${integrity}`);
      if (opts.json) process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
      else {
        process.stdout.write(
          `took over: the store restored from ${out.replica} in ${out.restoreMs} ms; integrity ok\n` +
            (out.fence ? `  the fence ${out.fence.path} names this home (epoch ${out.fence.epoch}${out.fence.previous ? `; before: ${out.fence.previous.home} on ${out.fence.previous.host}` : ''}): that node sends nothing more\n` : '  no fence written: make sure the old primary\'s address is off the supplier\'s allowlist\n') +
            (out.keptAs ? `  the store this home had is kept as ${out.keptAs}\n` : '') +
            `  unfinished batches: ${out.unfinished}; rows to look up before any send: ${out.open}\n` +
            (out.journalLines > 0 ? `  order API journal lines found beside the replica: ${out.journalLines} (orders the store lacks are accepted again at the start, looked up before any send)\n` : '') +
            (out.missingFiles.length > 0 ? `  claimed batches whose file this home lacks (drop the same file into inbox/ again: same bytes, same trxids): ${out.missingFiles.join(', ')}\n` : '') +
            'Start the daemon: before it sends anything it looks every unsent, in-flight or in-doubt row up at every account.\n',
        );
      }
    });
}
