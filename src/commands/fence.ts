/**
 * `topup fence reset --i-know`: writes a new fence naming this home where the fence it held is
 * gone (standby/fence.ts resetFence, docs/standby.md "A fence missing where this home held one").
 * The operator's word, never a default: a missing fence is most often a replica mount that is not
 * up, and a fence written then would let this home send while a standby does. Refused while a
 * daemon runs on the home, when a fence is there, or when its folder is not.
 */
import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { systemClock } from '../kernel/clock.js';
import { ErrorCode, TopupError, UsageError } from '../kernel/errors.js';
import { runningDaemon } from '../store/presence.js';
import { resetFence } from '../standby/fence.js';
import { commandConfig } from './context.js';
import { openStoreOnly } from './store-only.js';

export function registerFence(program: Command): void {
  const fence = program.command('fence').description('The warm standby\'s fence (docs/standby.md)');
  fence
    .command('reset')
    .description('Write a new fence naming this home where the fence it held is gone (a replica folder re-created at the same path); only with --i-know')
    .option('--i-know', 'the replica is mounted, its folder was re-created on purpose, and no other node has taken over')
    .option('--json', 'print what was written as JSON')
    .addHelpText('after', '\nA missing fence is most often a replica mount that is not up: mount it instead, and the daemon finds the fence.\nExit code: 0 written; 1 a fence is there, or its folder is not; 2 without --i-know; 5 a daemon runs on this home, or another node wrote the fence first.')
    .action((opts: { iKnow?: boolean; json?: boolean }, cmd: Command) => {
      const config = commandConfig(cmd, { requireKey: false });
      const path = config.standby.fenceFile;
      if (path === null) throw new UsageError('this home has no fence (TOPUP_REPLICA is not set, or TOPUP_FENCE_FILE=off)');
      if (opts.iKnow !== true) {
        throw new UsageError(
          `topup fence reset writes a new fence at ${path} naming this home. Only when the replica is mounted, its folder was re-created on purpose, and no other node has taken over ` +
            '(a standby that took over while this home was away would then send beside it). Run it again with --i-know',
        );
      }
      if (existsSync(config.dbPath)) {
        const store = openStoreOnly(config);
        try {
          const daemon = runningDaemon(store.meta, systemClock.now());
          if (daemon) throw new TopupError(ErrorCode.BatchLocked, `fence reset refused: a daemon runs on this home (pid ${daemon.pid} on ${daemon.host}): stop it first`);
        } finally {
          store.close();
        }
      }
      const out = resetFence(path, config.home, systemClock.now());
      if (opts.json) process.stdout.write(`${JSON.stringify({ path, epoch: out.fence.epoch, heldBefore: out.heldBefore, holder: out.fence.holder }, null, 2)}\n`);
      else {
        process.stdout.write(
          `the fence ${path} names this home (epoch ${out.fence.epoch}${out.heldBefore !== null ? `; it held epoch ${out.heldBefore} before` : ''}): this home may send.\n` +
            'A standby set up against the new replica takes over only with topup takeover (docs/standby.md).\n',
        );
      }
    });
}
