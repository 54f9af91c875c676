/**
 * The parts one topup process works with, opened once: config, logger, store, and the supplier
 * account (account/account.ts: API client, rate gate, catalog, pauses). Every command and the daemon start
 * from here, so they share the same database, the same call budget and the same settings.
 */
import { newOwnerId, ownerIsDead, processOwnerOf } from './store/owner.js';
import { systemClock, type Clock } from './kernel/clock.js';
import { systemEntropy, type Entropy } from './kernel/entropy.js';
import type { Transport } from './api/transport.js';
import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import type { Config } from './config/config.js';
import type { Logger } from './kernel/log.js';
import { openStore, type Store } from './store/store.js';
import { checkpoint } from './store/upkeep.js';
import { openAccount, type Account, type OpenedAccountSetting } from './account/account.js';
import type { AccountsSettings } from './config/accounts.js';
import { ConfigError, TopupError, ErrorCode } from './kernel/errors.js';
import { accountIdentity, type AccountIdentity } from './kernel/identity.js';
import { conflictMessage, pendingAccountChanges, reconcileAccounts, type ConfiguredIdentity, type IdentityConflict, type Renamed } from './store/account-identity.js';
import { SendFence } from './standby/fence.js';
import { WalSync } from './store/wal-sync.js';
import { adoptRememberedAccounts, noteCopyBehindMark } from './store/backup.js';
import { runningDaemon } from './store/presence.js';


/**
 * The home: its store (db, batches, rows, meta: store/store.ts), its settings and log, its clock and
 * randomness, its one supplier account, and who this process is in the batch leases.
 */
export interface Runtime extends Store {
  config: Config;
  log: Logger;
  /**
   * The first supplier account of this home (the only one without accounts.toml): client, rate gate,
   * pauses, live catalog (account/account.ts). What concerns a row uses that row's account (accountOf).
   */
  account: Account;
  /** Every supplier account of this home, in the order of accounts.toml (priority routing follows it). */
  accounts: readonly Account[];
  /** The account a row or call names. A name no longer configured is a clear error, never another account. */
  accountOf(name: string): Account;
  /** Where an account's requests go and which key they carry (kernel/identity.ts): recorded with every send. */
  identityOf(name: string): AccountIdentity;
  /** How rows pick their account when several could place them (account/routing.ts). */
  routing: Pick<AccountsSettings, 'routing' | 'packAliases' | 'maxQueueDelayMs'>;
  /** This process, as written in batch leases: host:pid:random. */
  owner: string;
  /** Time and timers: the system's, or the simulator's (src/sim/). */
  clock: Clock;
  /** Randomness: the system's, or a seeded one (src/sim/). */
  entropy: Entropy;
  /**
   * The warm standby's fence (standby/fence.ts, docs/standby.md): asked before every send; absent
   * without TOPUP_FENCE_FILE / TOPUP_REPLICA and in processes that cannot send.
   */
  fence?: SendFence;
  /**
   * Syncs the write-ahead log off the event loop, for intents committed unsynced (store/wal-sync.ts,
   * dispatch/intent-group.ts). Absent on a simulated clock (the sync is real I/O, whose end no
   * virtual clock decides) and on a store litestream replicates (its checkpoints are its own):
   * intents are then committed synchronous=FULL.
   */
  walSync?: WalSync;
  /** Whether the process that wrote this lease owner is gone (this host, pid not running). */
  ownerIsDead(owner: string): boolean;
  /** Releases the account (its client's connections), then checkpoints and closes the store. */
  close(): Promise<void>;
}

/**
 * inbox/, jobs/ and outbox/ exist and are 0700: jobs/ and outbox/ hold the codes keys and cards
 * come with, and inbox/ the players' ids. A folder the user owns that others can read (a fresh
 * clone's folders are 0755, git's default) is tightened, and said once in the log; on the next
 * start there is nothing left to say. A folder someone else owns is left alone (topup doctor
 * warns about it).
 */
export function ensureHomeFolders(config: Config, log?: Logger): void {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  for (const dir of [config.inboxDir, config.jobsDir, config.outboxDir]) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = statSync(dir);
    const mode = st.mode & 0o777;
    if ((mode & 0o077) === 0 || (uid !== undefined && st.uid !== uid)) continue;
    chmodSync(dir, 0o700);
    log?.warn({ folder: dir, was: mode.toString(8), now: '700' }, `tightened ${dir} from mode ${mode.toString(8)} to 700: only you can read it (it holds order files and codes)`);
  }
}

/**
 * What a runtime runs in, when it is not this process on this machine: the simulator (src/sim/)
 * gives each simulated process its own owner name and liveness, one clock and one seeded source of
 * randomness for the whole run, and a transport that reaches its model of the API in memory.
 */
export interface RuntimeWorld {
  clock?: Clock;
  entropy?: Entropy;
  transport?: Transport;
  owner?: string;
  ownerIsDead?: (owner: string) => boolean;
}

export interface RuntimeOptions {
  /**
   * Litestream replicates this store (the daemon with TOPUP_REPLICA: standby/litestream.ts) and owns
   * its checkpoints: this connection makes none (wal_autocheckpoint = 0, none at the stop).
   */
  replicated?: boolean;
  /**
   * 'apply' (default): this process may send, and holds the accounts file to the store: a rename is
   * applied (its rows and records follow the new name), a re-pointed account with unsettled rows
   * refuses the start. 'inspect': a command that only reads or asks (doctor, balance, validate …):
   * the same refusal, but a rename is left pending and said, never written: the running daemon
   * still knows the account by its old name, and applying it under the daemon would move the
   * account's rows and records away from it (store/account-identity.ts pendingAccountChanges).
   * 'apply-or-refuse' (submit, retry) and 'apply-or-inspect' (cancel): 'apply' while no daemon runs
   * on the home; while one runs and the file renames an account, the command refuses before it
   * changes anything (RenameUnderDaemonError), or leaves the rename pending as 'inspect' does (a
   * cancel is a word the daemon acts on by its own names). Applied beside a running daemon, the
   * rename moved the account's rows to a name the daemon does not know: they waited "not
   * configured" until it restarted.
   */
  accounts?: 'apply' | 'inspect' | 'apply-or-refuse' | 'apply-or-inspect';
}

export function openRuntime(config: Config, log: Logger, apiUrl: string, world: RuntimeWorld = {}, opts: RuntimeOptions = {}): Runtime {
  ensureHomeFolders(config, log);
  // The warm standby's fence: claimed by what can send (the daemon before it replicates, every
  // runner before its loop: engine/runner.ts), not by a command that only reads (status, doctor on
  // the standby must work while the primary holds it).
  const fence = config.standby.fenceFile !== null && !config.accounts.accounts.every((a) => a.key === '') ? new SendFence(config.standby.fenceFile, config.home) : undefined;
  const clock = world.clock ?? systemClock;
  const entropy = world.entropy ?? systemEntropy;
  const store = openStore(config.dbPath, clock);
  const { db } = store;
  if (opts.replicated) db.pragma('wal_autocheckpoint = 0');
  const walSync = world.clock === undefined && !opts.replicated ? new WalSync(config.dbPath) : undefined;
  const identities = configuredIdentities(config);
  const owner = world.owner ?? newOwnerId(entropy);
  try {
    // A store older than this home's mark (a copy put back by hand, the database deleted), or one
    // that ran elsewhere in a home without a mark, is marked for the reconcile-first start here, in
    // every process that opens the home: a `topup submit` or `topup cancel` running a batch itself
    // reconciles before it sends as the daemon does, and the accounts are then held to the copy's
    // (ops/backup-job.ts). Before anything raises the generation.
    try {
      noteCopyBehindMark({ config, log, meta: store.meta, db, now: clock.now() });
    } catch (err) {
      // The store cannot be written now (full, read-only): nothing can be sent either; the next opening marks it.
      log.warn({ err: (err as Error).message }, 'could not compare the store with the home\'s mark file');
    }
    // Accounts the home remembers and a copy does not (added after it, taken out since): a file
    // claimed in the window after the restore looks them up too, or holds for them.
    if (!config.accounts.accounts.every((a) => a.key === '')) {
      const adopted = adoptRememberedAccounts(store.db, config.home, identities.map((i) => i.name), clock.now());
      if (adopted.length > 0) log.warn({ accounts: adopted }, 'this home ran with accounts the restored store does not know and accounts.toml no longer names: files claimed within the window after the restore are held for them (docs/backup.md)');
    }
    let mode = opts.accounts ?? 'apply';
    if (mode === 'apply-or-refuse' || mode === 'apply-or-inspect') {
      const daemon = runningDaemon(store.meta, clock.now());
      const pending = daemon && !config.accounts.accounts.every((a) => a.key === '') ? pendingAccountChanges(store.db, identities).pending : [];
      if (daemon && pending.length > 0 && mode === 'apply-or-refuse') throw new RenameUnderDaemonError(accountsFileName(config), pending, daemon.pid);
      mode = pending.length > 0 ? 'inspect' : 'apply';
    }
    if (mode === 'inspect') sayPendingAccountChanges(store.db, identities, config, log);
    else holdAccountsToSends(store.db, identities, config, log, clock.now(), owner);
  } catch (err) {
    // The log's descriptor, opened with the store (store/wal-sync.ts): nothing was synced through it.
    void walSync?.close();
    db.close();
    throw err;
  }
  const accountWorld = { clock, ...(world.transport ? { transport: world.transport } : {}) };
  const accounts = accountSettings(config, apiUrl).map((s) => openAccount(config, db, log, s, accountWorld));
  const byName = new Map(accounts.map((a) => [a.id, a]));
  const account = accounts[0]!;
  return {
    config,
    log,
    ...store,
    account,
    accounts,
    routing: routingOf(config),
    accountOf(name: string): Account {
      const found = byName.get(name);
      if (!found) throw new TopupError(ErrorCode.Config, `account "${name}" is not in this home's accounts (${[...byName.keys()].join(', ')}): rows placed on it need it to be configured (accounts.toml)`);
      return found;
    },
    identityOf(name: string): AccountIdentity {
      const found = identities.find((i) => i.name === name);
      if (!found) throw new TopupError(ErrorCode.Config, `account "${name}" is not in this home's accounts (${identities.map((i) => i.name).join(', ')})`);
      return { origin: found.origin, keyFp: found.keyFp };
    },
    owner,
    clock,
    entropy,
    ...(fence ? { fence } : {}),
    ...(walSync ? { walSync } : {}),
    // An operator action's lease (ops/lease.ts) is dead when its process is.
    ownerIsDead: (owner) => (world.ownerIsDead ?? ownerIsDead)(processOwnerOf(owner)),
    async close() {
      for (const a of accounts) await a.close();
      // The WAL is folded into the database at every stop, so a home at rest is one file; unless
      // Litestream replicates it: it owns the checkpoints (a TRUNCATE here would make it start a
      // new generation, and wait on its read lock).
      if (!opts.replicated) checkpoint(db, log, 'shutdown');
      await walSync?.close();
      db.close();
    },
  };
}

/**
 * The accounts to open: those of accounts.toml (config.accounts), or the one `default` account of
 * TOPUP_API_URL / TOPUP_API_KEY. An account without a URL is the in-process sandbox's (`apiUrl`).
 */
function accountSettings(config: Config, apiUrl: string): OpenedAccountSetting[] {
  // config/accounts.ts always lists at least one: the file's, or `default` from the settings.
  return config.accounts.accounts.map((s) => ({ ...s, url: s.url ?? apiUrl }));
}

/** Each configured account's identity: its URL's origin as configured (none: the in-process sandbox) and its key's fingerprint. */
export function configuredIdentities(config: Pick<Config, 'accounts'>): ConfiguredIdentity[] {
  return config.accounts.accounts.map((s) => ({ name: s.name, ...accountIdentity(s.url, s.key) }));
}

/**
 * Before anything is sent: an accounts file that re-points an account holding unsettled rows to
 * another endpoint or key refuses the start, naming the rows and what to do; a renamed account
 * takes its rows along (store/account-identity.ts). A process without keys (a read-only command)
 * sends nothing and is not held to it.
 */
function holdAccountsToSends(db: Store['db'], identities: readonly ConfiguredIdentity[], config: Config, log: Logger, now: number, owner: string): void {
  if (config.accounts.accounts.every((a) => a.key === '')) return;
  const { renamed, conflicts } = reconcileAccounts(db, identities, now, `process ${owner}`);
  for (const r of renamed) log.warn({ from: r.from, to: r.to, rows: r.rows }, `account "${r.from}" is named "${r.to}" now (the same endpoint and key): its ${r.rows} rows follow it`);
  if (conflicts.length > 0) throw new AccountsRepointedError(config.accounts.file ? basename(config.accounts.file) : 'TOPUP_API_URL / TOPUP_API_KEY', conflicts);
}

/** A rename the accounts file makes that no process has applied yet, as every read-only command says it. */
export function pendingRenameText(r: Renamed, file: string): string {
  return `account "${r.from}" is named "${r.to}" in ${file}: not applied yet (this command does not apply it); the daemon applies it when it next starts (or a submit, retry or cancel while no daemon runs), and its ${r.rows} row${r.rows === 1 ? '' : 's'} then follow it`;
}

const accountsFileName = (config: Config): string => (config.accounts.file ? basename(config.accounts.file) : 'TOPUP_API_URL / TOPUP_API_KEY');

/**
 * `submit` or `retry` beside a running daemon, with a rename in the accounts file the daemon has not
 * applied: refused before anything changes (RuntimeOptions.accounts 'apply-or-refuse'). A
 * ConfigError (exit 3): the accounts file and the running daemon disagree until it restarts.
 */
export class RenameUnderDaemonError extends ConfigError {
  constructor(file: string, pending: readonly Renamed[], pid: number) {
    const names = pending.map((r) => `account "${r.from}" is named "${r.to}" in ${file}`).join('; ');
    const old = pending.map((r) => `"${r.from}"`).join(', ');
    super(file, `${names}, and the daemon running on this home (pid ${pid}) still knows it as ${old}: a daemon applies a rename when it starts, and applied here the account's rows would move to a name the daemon does not know. Restart the daemon (systemctl restart topup, or stop it and run topup daemon), then run this command again; or put the old name back in ${file}. Nothing was changed.`);
  }
}

/** For a read-only command: the same refusal as a start, renames only said (see RuntimeOptions.accounts). */
function sayPendingAccountChanges(db: Store['db'], identities: readonly ConfiguredIdentity[], config: Config, log: Logger): void {
  if (config.accounts.accounts.every((a) => a.key === '')) return;
  const file = accountsFileName(config);
  const { pending, conflicts } = pendingAccountChanges(db, identities);
  for (const r of pending) log.warn({ from: r.from, to: r.to, rows: r.rows }, pendingRenameText(r, file));
  if (conflicts.length > 0) throw new AccountsRepointedError(file, conflicts);
}

/**
 * The start refused because an account was re-pointed while it holds unsettled rows (issue 29).
 * A ConfigError like any (same name, same message): its own class so a caller that models the
 * operator (the simulator) can tell it from a file that does not parse.
 */
export class AccountsRepointedError extends ConfigError {
  readonly accounts: readonly string[];
  constructor(file: string, conflicts: readonly IdentityConflict[]) {
    super(file, conflictMessage(conflicts, file));
    this.accounts = conflicts.map((c) => c.account);
  }
}

function routingOf(config: Config): Runtime['routing'] {
  const a = config.accounts;
  return { routing: a.routing, packAliases: a.packAliases, maxQueueDelayMs: a.maxQueueDelayMs };
}
