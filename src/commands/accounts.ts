/**
 * `topup accounts confirm NAME`: the operator's word that the account NAME, as the accounts file
 * names it now (its URL and key), is the same supplier account its unsettled rows were sent to: a
 * key the supplier regenerated (the old one revoked at once), or another host serving the same API.
 * Without it, a start refuses an account that holds unsettled rows sent to another endpoint or key
 * (store/account-identity.ts, docs/accounts.md). Audited (the audit table: who, when, both
 * identities, how many rows). The store only: no API call, no daemon needed; the daemon started
 * afterwards follows and resends those rows at the account as now configured.
 */
import type { Command } from 'commander';
import { userInfo } from 'node:os';
import { systemClock } from '../kernel/clock.js';
import { UsageError } from '../kernel/errors.js';
import { configuredIdentities } from '../runtime.js';
import { confirmAccount } from '../store/account-identity.js';
import { commandConfig } from './context.js';
import { openStoreOnly } from './store-only.js';

export function registerAccounts(program: Command): void {
  const accounts = program.command('accounts').description('Supplier accounts (accounts.toml): confirm that a re-pointed account is the same supplier account');
  accounts
    .command('confirm <name>')
    .description('Say that account <name>, as the accounts file names it now (URL and key), is the same supplier account its unsettled rows were sent to; audited')
    .option('--json', 'print JSON (for scripts)')
    .action((name: string, opts: { json?: boolean }, cmd: Command) => {
      const config = commandConfig(cmd);
      const identity = configuredIdentities(config).find((i) => i.name === name);
      if (!identity) throw new UsageError(`account "${name}" is not in this home's accounts (${config.accounts.accounts.map((a) => a.name).join(', ')})`);
      const store = openStoreOnly(config);
      try {
        const actor = `topup accounts confirm (${safeUser()})`;
        const done = confirmAccount(store.db, identity, systemClock.now(), actor);
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ account: name, origin: identity.origin, keyFp: identity.keyFp, rows: done.rows, from: done.from }, null, 2)}\n`);
          return;
        }
        process.stdout.write(
          done.rows > 0
            ? `Account "${name}" is ${identity.origin} (key ${identity.keyFp}) from now on: its ${done.rows} unsettled row${done.rows === 1 ? '' : 's'} sent to ${done.from.map((f) => `${f.origin} (key ${f.keyFp})`).join(', ')} will be followed and resent there. Recorded in the audit log.\n`
            : `Account "${name}" is ${identity.origin} (key ${identity.keyFp}); no unsettled row was sent elsewhere. Recorded in the audit log.\n`,
        );
      } finally {
        store.close();
      }
    });
}

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown user';
  }
}
