/**
 * `topup accounts confirm NAME`: the operator's word that the account NAME, as the accounts file
 * names it now (its URL and key), is the same supplier account its unsettled rows were sent to: a
 * key the supplier regenerated (the old one revoked at once), or another host serving the same API.
 * Without it, a start refuses an account that holds unsettled rows sent to another endpoint or key
 * (store/account-identity.ts, docs/accounts.md). Audited (the audit table: who, when, both
 * identities, how many rows). The store only: no API call, no daemon needed; the daemon started
 * afterwards follows and resends those rows at the account as now configured.
 *
 * `topup account pause NAME` / `topup account resume NAME`: the operator's own pause of one account
 * (account/pauses.ts, kind `operator`): stored, so every process on the home obeys it at once and it
 * survives a restart; no order leaves for the account until it is resumed, while rows already sent
 * there are still followed to their end. Audited. `topup accounts` lists every account and its state.
 */
import type { Command } from 'commander';
import { userInfo } from 'node:os';
import { systemClock } from '../kernel/clock.js';
import { pauseView } from '../account/pauses.js';
import { accountNamed, pauseAccount, resumeAccount, waitingRowsFate } from '../ops/account-pause.js';
import { accountQueues } from '../ops/account-views.js';
import type { Config } from '../config/config.js';
import { UsageError } from '../kernel/errors.js';
import { configuredIdentities } from '../runtime.js';
import { confirmAccount } from '../store/account-identity.js';
import { commandConfig } from './context.js';
import { openStoreOnly } from './store-only.js';

export function registerAccounts(program: Command): void {
  const accounts = program
    .command('accounts')
    .alias('account')
    .description('Supplier accounts: list them with their state; pause or resume sending on one; confirm that a re-pointed account is the same supplier account')
    .option('--json', 'print JSON (for scripts)')
    .action((opts: { json?: boolean }, cmd: Command) => listAccounts(commandConfig(cmd), opts.json === true));
  accounts
    .command('list', { hidden: true })
    .option('--json', 'print JSON (for scripts)')
    .action((opts: { json?: boolean }, cmd: Command) => listAccounts(commandConfig(cmd), opts.json === true || cmd.parent?.opts<{ json?: boolean }>().json === true));
  accounts
    .command('pause <name>')
    .description('Stop sending orders on account <name> until topup account resume: its unsent rows move to another account that sells them, or wait; rows already sent are still followed. Stored (every process obeys it, a restart keeps it); audited')
    .option('--note <text>', 'why (shown beside the pause)')
    .option('--json', 'print JSON (for scripts)')
    .action((name: string, opts: { note?: string; json?: boolean }, cmd: Command) => {
      const config = commandConfig(cmd);
      const account = accountNamed(config.accounts.accounts.map((a) => a.name), name);
      const store = openStoreOnly(config);
      try {
        // The one definition of the operator's pause, shared with the console (ops/account-pause.ts).
        const out = pauseAccount(store, account, opts.note, { actor: `topup account pause (${safeUser()})`, probeMs: config.pollIntervalMs });
        if (opts.json === true || cmd.parent?.opts<{ json?: boolean }>().json === true) {
          process.stdout.write(`${JSON.stringify({ account, paused: true, changed: out.changed, since: out.since, rowsWaiting: out.rowsWaiting }, null, 2)}\n`);
          return;
        }
        const several = config.accounts.accounts.length > 1;
        process.stdout.write(
          `${out.changed ? `Account "${account}" is paused` : `Account "${account}" was already paused by the operator`}: no order is sent to it until topup account resume ${account}. ` +
            `Rows already sent there are still followed to their end. ${waitingRowsFate(out.rowsWaiting, several)}; a running daemon sees this at its next step.\n`,
        );
      } finally {
        store.close();
      }
    });
  accounts
    .command('resume <name>')
    .description('End the operator pause of account <name>: its waiting rows are sent and routing returns to it; audited')
    .option('--json', 'print JSON (for scripts)')
    .action((name: string, opts: { json?: boolean }, cmd: Command) => {
      const config = commandConfig(cmd);
      const account = accountNamed(config.accounts.accounts.map((a) => a.name), name);
      const store = openStoreOnly(config);
      try {
        const { ended, supplier: left } = resumeAccount(store, account, { actor: `topup account resume (${safeUser()})`, probeMs: config.pollIntervalMs });
        if (opts.json === true || cmd.parent?.opts<{ json?: boolean }>().json === true) {
          process.stdout.write(`${JSON.stringify({ account, resumed: ended !== null, pausedSince: ended?.since ?? null, supplierPause: left ? { kind: left.kind, code: left.code } : null }, null, 2)}\n`);
          return;
        }
        if (ended) process.stdout.write(`Account "${account}" is resumed: its waiting rows are sent at a running daemon's next step (within seconds), and routing places rows on it again.\n`);
        else if (left) process.stdout.write(`Account "${account}" was not paused by the operator; it is paused by the supplier (${left.kind} ${left.code}), which ends by itself when the supplier answers again (see topup doctor).\n`);
        else process.stdout.write(`Account "${account}" was not paused; nothing changed.\n`);
      } finally {
        store.close();
      }
    });
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
        // `--json` after the subcommand is taken by `accounts` itself (it has the option too): read both.
        if (opts.json === true || cmd.parent?.opts<{ json?: boolean }>().json === true) {
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

/** `topup accounts`: each account, where it sends, and its state (the store only: no API call). */
function listAccounts(config: Config, json: boolean): void {
  const store = openStoreOnly(config);
  try {
    const names = config.accounts.accounts.map((a) => a.name);
    const queues = new Map(accountQueues(store, names).map((q) => [q.account, q]));
    const list = config.accounts.accounts.map((a) => {
      const view = pauseView(store.meta, a.name);
      const state = view.pause === null ? (view.trial ? 'on trial' : 'sending') : view.pause.kind === 'operator' ? 'paused by the operator' : view.pause.kind === 'account' ? 'account problem' : 'maintenance';
      return { account: a.name, url: a.url ?? 'built-in sandbox', state, pause: view.pause, rowsWaiting: queues.get(a.name)?.rowsWaiting ?? 0, text: view.text };
    });
    if (json) {
      process.stdout.write(`${JSON.stringify({ accounts: list.map(({ text: _t, ...x }) => ({ ...x, detail: _t })) }, null, 2)}\n`);
      return;
    }
    for (const a of list) process.stdout.write(`${a.account}  ${a.url}  ${a.state}  (${a.rowsWaiting} row${a.rowsWaiting === 1 ? '' : 's'} waiting)\n  ${a.text}\n`);
  } finally {
    store.close();
  }
}

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown user';
  }
}
