/**
 * Start-up self-check, shared by `topup doctor` and the daemon's start: settings, the rate limits
 * in force and where they came from, the key (one cheap authenticated call), the public IP the API
 * sees (for the account's allowlist), the clock against the API's, disk space and permissions of
 * the home folders, database integrity and size, and (in full) batch folders in jobs/ that the
 * database does not know.
 */
import { lastBackup, lastBackupAttempt } from './backup-job.js';
import { claimLookupStatus, restoreStatus, restoredFromBackup } from './restore-reconcile.js';
import { fenceStatus } from '../standby/fence.js';
import { replicaLag } from '../standby/litestream.js';
import { journalMirror, MIRROR_TROUBLE_KEY, probeMirror, type MirrorTrouble } from '../orders/journal.js';
import { accessSync, constants, statSync, statfsSync } from 'node:fs';
import { Priority } from '../api/client.js';
import { ApiError, coerceError } from '../kernel/errors.js';
import type { Runtime } from '../runtime.js';
import type { Account } from '../account/account.js';
import { integrityCheck } from '../store/db.js';
import { databaseSize, describeSize } from '../store/upkeep.js';
import { findOrphans } from '../claim/orphans.js';
import { limitsInForce } from '../account/learned-limits.js';
import { pauseView, type PauseView } from '../account/pauses.js';
import { TimeZone } from '../kernel/time-zone.js';
import { rollupZoneOf } from '../store/rollup-zone.js';
import { createServer } from 'node:net';
import { CONSOLE_STATE_KEY, type ConsoleState } from '../store/console-state.js';
import { runningDaemon } from '../store/presence.js';
import { storeStopLine } from './store-disk.js';

export interface Check {
  name: string;
  ok: boolean;
  /** A failed fatal check means orders cannot go out (the key, the database). */
  fatal: boolean;
  detail: string;
  code?: string;
}

export interface DoctorReport {
  ok: boolean;
  checks: Check[];
  /** The first account's (the only one without accounts.toml). */
  ip: string | null;
  balanceUsd: number | null;
  /** Every account's, in the order of accounts.toml, with its pause (why, since, the last read probe and the next). */
  accounts: { account: string; ip: string | null; balanceUsd: number | null; pause: PauseView }[];
}

const MIN_FREE_BYTES = 200 * 1024 * 1024;
const MAX_CLOCK_SKEW_MS = 30_000;

export async function runDoctor(rt: Pick<Runtime, 'account' | 'accounts' | 'batches' | 'clock' | 'config' | 'db' | 'log' | 'meta'>, opts: { quick?: boolean } = {}): Promise<DoctorReport> {
  const { config } = rt;
  const checks: Check[] = [];
  const add = (c: Check): void => void checks.push(c);
  let ip: string | null = null;
  let balanceUsd: number | null = null;
  const accounts: DoctorReport['accounts'] = [];

  // With accounts.toml the API and limits are each account's (their own lines below): the settings line names the file.
  const where = config.accounts.file !== null
    ? `accounts ${config.accounts.file}: ${config.accounts.accounts.map((a) => a.name).join(', ')}; routing ${config.accounts.routing}`
    : `${config.sandbox ? 'SANDBOX (built-in, no real money)' : `API ${config.apiUrl}`}; limits ${config.rateLimits.map((w) => `${w.limit}/${w.windowMs}ms`).join(', ')}`;
  add({ name: 'settings', ok: true, fatal: false, detail: `home ${config.home}; ${where}${config.configFile ? `; config file ${config.configFile}` : ''}` });
  add(timeZoneCheck(rt));

  // Each supplier account on its own (accounts.toml): the limits its gate applies, its key and
  // balance, the IP it is seen from, its clock.
  for (const a of rt.accounts) {
    const label = rt.accounts.length > 1 ? ` (${a.id})` : '';
    const r = await accountChecks(rt.db, a, label, add);
    // Its pause as the store holds it (a daemon's runner probes it on a schedule): why, since when,
    // the last read probe and the next. A warning, not a failure: the probe resumes it by itself.
    const pause = pauseView(rt.meta, a.id, rt.clock);
    add({ name: `pause${label}`, ok: pause.pause === null, fatal: false, detail: pause.text });
    accounts.push({ account: a.id, ...r, pause });
    if (a === rt.account) ({ ip, balanceUsd } = r);
  }
  try {
    const fs = statfsSync(config.home);
    const free = fs.bavail * fs.bsize;
    add({ name: 'disk space', ok: free >= MIN_FREE_BYTES, fatal: false, detail: `${Math.round(free / 1024 / 1024)} MB free in ${config.home}` });
  } catch (err) {
    add({ name: 'disk space', ok: false, fatal: false, detail: coerceError(err).message });
  }
  for (const dir of [config.inboxDir, config.jobsDir, config.outboxDir]) {
    try {
      accessSync(dir, constants.R_OK | constants.W_OK | constants.X_OK);
      const mode = statSync(dir).mode & 0o777;
      const open = (mode & 0o077) !== 0 && dir !== config.inboxDir;
      add({ name: `folder ${dir}`, ok: !open, fatal: false, detail: open ? `mode ${mode.toString(8)}: others can read it; chmod 700 (it holds codes)` : `writable, mode ${mode.toString(8)}` });
    } catch (err) {
      add({ name: `folder ${dir}`, ok: false, fatal: true, detail: coerceError(err).message });
    }
  }
  try {
    const result = opts.quick ? (rt.db.pragma('quick_check', { simple: true }) as string) : integrityCheck(rt.db);
    add({ name: 'database', ok: result === 'ok', fatal: result !== 'ok', detail: result === 'ok' ? `${config.dbPath}: integrity ok` : result });
  } catch (err) {
    add({ name: 'database', ok: false, fatal: true, detail: coerceError(err).message });
  }
  // The running daemon's stop until a restart (its disk failed a write or a sync): not visible on
  // the disk now, said by the daemon's heartbeat (ops/store-disk.ts storeStopLine).
  try {
    const stop = storeStopLine(runningDaemon(rt.meta));
    // A FAIL (not ready): nothing is sent from this home until the daemon is restarted.
    if (stop) add({ name: 'sending', ok: false, fatal: true, detail: stop });
  } catch (err) {
    add({ name: 'sending', ok: false, fatal: false, detail: coerceError(err).message });
  }
  try {
    const size = describeSize(databaseSize(rt.db, config.dbPath));
    add({ name: 'database size', ok: size.ok, fatal: false, detail: size.detail });
  } catch (err) {
    add({ name: 'database size', ok: false, fatal: false, detail: coerceError(err).message });
  }
  // The console's address (TOPUP_CONSOLE): the running daemon's own word, or, with none running,
  // whether it is free now. Not at the daemon's start (it is about to listen there itself).
  if (!opts.quick && config.console) {
    try {
      add(await consoleCheck(rt, config.console.host, config.console.port));
    } catch (err) {
      add({ name: 'console', ok: false, fatal: false, detail: coerceError(err).message });
    }
  }
  // At the daemon's start the folders were just claimed again or logged one by one (claim/orphans.ts).
  if (!opts.quick) {
    try {
      const orphans = await findOrphans(rt);
      const open = orphans.filter((o) => o.verdict !== 'finished' && o.verdict !== 'empty');
      add({
        name: 'batch folders',
        ok: open.length === 0,
        fatal: false,
        detail:
          orphans.length === 0
            ? 'every batch folder in jobs/ is known to the database'
            : `${orphans.length} batch folder(s) in jobs/ the database does not know (was it deleted or restored?)` +
              `${orphans.length > open.length ? `; ${orphans.length - open.length} of them finished or empty (nothing to do)` : ''}` +
              `${open.slice(0, 5).map((o) => `; ${o.id}: ${o.verdict === 'claimed again' ? `${o.file} is claimed again when the daemon starts` : o.detail}`).join('')}` +
              `${open.length > 5 ? `; and ${open.length - 5} more (the daemon's log names each at its start)` : ''}`,
      });
    } catch (err) {
      add({ name: 'batch folders', ok: false, fatal: false, detail: coerceError(err).message });
    }
  }
  try {
    add(backupCheck(rt));
    const restore = restoreStatus(rt.meta, rt.clock.now());
    if (restore) add({ name: 'restore', ok: !restore.pending && restore.needsPerson === 0, fatal: false, detail: restore.line.replace(/^restore: /, '') });
    // A file claimed after a restore whose lookup waits for an account it cannot read.
    const lookups = claimLookupStatus(rt.db, rt.clock.now(), rt.config.backup.restoreLookupWaitMs);
    for (const line of lookups.lines) add({ name: 'restore lookup', ok: !/waiting for the restore lookup/.test(line), fatal: false, detail: line.replace(/^restore lookup: /, '') });
  } catch (err) {
    add({ name: 'backup', ok: false, fatal: false, detail: coerceError(err).message });
  }
  // A warm standby (docs/standby.md): the fence's state, and how far the replica is behind.
  try {
    const { fenceFile, replica } = config.standby;
    if (fenceFile !== null) {
      const f = fenceStatus(fenceFile, config.home);
      add({ name: 'fence', ok: f.ok, fatal: false, detail: `${f.state}: ${f.detail}` });
    } else if (replica !== null) {
      add({ name: 'fence', ok: true, fatal: false, detail: 'off (TOPUP_FENCE_FILE=off): the supplier\'s IP allowlist is the only fence; move it before a takeover' });
    }
    if (replica !== null && replica.dir !== '') {
      const lag = replicaLag(replica.dir, config.dbPath);
      add({
        name: 'replica',
        ok: lag.lagSeconds !== null && lag.lagSeconds <= 5,
        fatal: false,
        detail: lag.shippedAt === null
          ? `${replica.url}: no generation yet (litestream has not written it; it runs beside the daemon)`
          : `${replica.url}: last shipped ${new Date(lag.shippedAt).toISOString()}; ${lag.lagSeconds === null ? 'the store\'s last change unknown' : lag.lagSeconds <= 1 ? 'caught up' : `${lag.lagSeconds.toFixed(1)} s of store changes behind`}`,
      });
    }
    // The order API journal's copy beside a folder replica (orders/journal.ts journalMirror): what
    // a takeover, or a restore after this disk is lost, finds of the orders accepted since.
    const mirror = journalMirror(config);
    if (mirror !== null) {
      const trouble = rt.meta.getJson<MirrorTrouble>(MIRROR_TROUBLE_KEY);
      const probe = probeMirror(mirror);
      add({
        name: 'api journal mirror',
        ok: !trouble && probe === null,
        fatal: false,
        detail: trouble
          ? `accepted API orders could not be written beside the replica since ${new Date(trouble.since).toISOString()} (${trouble.orders} order(s), last ${new Date(trouble.at).toISOString()}: ${trouble.error}): a takeover, or a restore after this disk is lost, would not find them; make ${mirror} writable`
          : probe !== null
            ? `${probe}: accepted API orders cannot be written beside the replica (a takeover, or a restore after this disk is lost, would not find them)`
            : `${mirror}: writable`,
      });
    }
  } catch (err) {
    add({ name: 'fence', ok: false, fatal: false, detail: coerceError(err).message });
  }
  return { ok: checks.every((c) => c.ok || !c.fatal), checks, ip, balanceUsd, accounts };
}

/** How old the last good backup is (a warning when there is none, or it is older than two scheduled intervals or a day). */
function backupCheck(rt: Pick<Runtime, 'clock' | 'config' | 'meta'>): Check {
  const taken = lastBackup(rt.meta);
  // A store restored from a backup holds no record of that backup (the record is written into the
  // live store after the copy was made): the backup it came from is its last backup until another
  // is taken (a new-user trial: doctor said "no backup ever taken" right after a restore).
  const restored = restoredFromBackup(rt.meta);
  const fromRestore = restored !== null && (taken === null || taken.takenAt < restored.takenAt);
  const last = fromRestore ? { path: restored.from, takenAt: restored.takenAt } : taken;
  const attempt = lastBackupAttempt(rt.meta);
  const { cron, dir } = rt.config.backup;
  const failed = attempt && !attempt.ok ? `; the last attempt (${new Date(attempt.at).toISOString()}) failed: ${attempt.error ?? 'unknown'}` : '';
  if (!last) {
    return { name: 'backup', ok: false, fatal: false, detail: `no backup of this store was ever taken${cron ? ` (scheduled: ${cron} into ${dir})` : '; run `topup backup --to DIR`, or set TOPUP_BACKUP_SCHEDULE and TOPUP_BACKUP_DIR (docs/backup.md)'}${failed}` };
  }
  const ageMs = rt.clock.now() - last.takenAt;
  const hours = Math.round(ageMs / 360_000) / 10;
  const ok = ageMs <= BACKUP_MAX_AGE_MS && failed === '';
  const what = fromRestore
    ? `last backup ${hours} h ago: ${last.path}, which this store was restored from${restored.restoredAt !== null ? ` at ${new Date(restored.restoredAt).toISOString()}` : ''}; no backup taken since`
    : `last good backup ${hours} h ago: ${last.path} (${taken!.bytes} bytes, verified)`;
  return { name: 'backup', ok, fatal: false, detail: `${what}${cron ? `; scheduled ${cron}` : '; not scheduled (TOPUP_BACKUP_SCHEDULE)'}${failed}` };
}

/** A last good backup older than this is a warning. */
const BACKUP_MAX_AGE_MS = 24 * 3_600_000;

/** The checks of one account: its rate limits, its key (and balance), the public IP the API sees, its clock. */
async function accountChecks(db: Runtime['db'], a: Account, label: string, add: (c: Check) => void): Promise<{ ip: string | null; balanceUsd: number | null }> {
  let ip: string | null = null;
  let balanceUsd: number | null = null;
  // The limits the account's gate applies now: given, the spec's while learning, or learned from 429s.
  try {
    add({ name: `rate limits${label}`, ok: true, fatal: false, detail: limitsInForce(db, a.id, a.setting.rateLimits, a.setting.rateLimitsFrom).detail });
  } catch (err) {
    add({ name: `rate limits${label}`, ok: false, fatal: false, detail: coerceError(err).message });
  }
  try {
    balanceUsd = (await a.client.balance({ priority: Priority.lookup })).balanceUsd;
    add({ name: `api key${label}`, ok: true, fatal: true, detail: `accepted${label ? ` by ${a.apiUrl}` : ''}; balance ${balanceUsd} USD` });
  } catch (err) {
    const e = coerceError(err);
    const code = err instanceof ApiError ? err.apiCode : undefined;
    add({ name: `api key${label}`, ok: false, fatal: true, detail: e.message, ...(code ? { code } : {}) });
  }
  try {
    ip = await a.client.myIp({ priority: Priority.lookup });
    const setting = label ? 'ip_family = ' : 'TOPUP_IP_FAMILY=';
    const family = a.setting.ipFamily === 'auto' ? `the system's choice of IPv4/IPv6 (${setting}auto)` : `IPv${a.setting.ipFamily} (${setting}${a.setting.ipFamily})`;
    add({ name: `public ip${label}`, ok: true, fatal: false, detail: `calls go out over ${family}; the API sees this machine as ${ip} (add it to the account's IP allowlist if it uses one)` });
  } catch (err) {
    add({ name: `public ip${label}`, ok: false, fatal: false, detail: coerceError(err).message });
  }
  const seen = a.lastServerDate;
  if (seen) {
    const skew = seen.local - seen.server;
    // Date headers have 1 s resolution: only a larger skew means anything.
    add({ name: `clock${label}`, ok: Math.abs(skew) <= MAX_CLOCK_SKEW_MS, fatal: false, detail: `local clock is ${Math.round(skew / 1000)} s ${skew >= 0 ? 'ahead of' : 'behind'} the API's` });
  } else {
    add({ name: `clock${label}`, ok: true, fatal: false, detail: 'the API sent no Date header; not compared' });
  }
  return { ip, balanceUsd };
}

/**
 * The zone of the days (TOPUP_TIME_ZONE): where cron schedules run and reports' days start. A warning
 * when the store's roll-up is still keyed in another zone: the daemon rebuilds it at its next start
 * (store/rollup-zone.ts); this command only reads.
 */
function timeZoneCheck(rt: Pick<Runtime, 'clock' | 'config' | 'db'>): Check {
  const zone = TimeZone.of(rt.config.timeZone);
  const now = rt.clock.now();
  const what = `${zone.label(now)} (TOPUP_TIME_ZONE${rt.config.timeZone === 'UTC' ? ', the default' : ''}): cron schedules run and report days start there; today there is ${zone.dayOf(now)}`;
  let stored = zone.name;
  try {
    stored = rollupZoneOf(rt.db).name;
  } catch {
    // A store without migration 22 yet is migrated on open: nothing to say.
  }
  if (stored !== zone.name) return { name: 'time zone', ok: false, fatal: false, detail: `${what}; the store's daily figures are still ${stored} days: the daemon rebuilds them for ${zone.name} at its next start` };
  return { name: 'time zone', ok: true, fatal: false, detail: what };
}

/**
 * The console line: a running daemon says whether its console listens (console/server.ts writes
 * it at start); with no daemon, the address is tried (listened on and closed at once). A console
 * that cannot listen is a warning, not a FAIL: the daemon goes on sending without it.
 */
async function consoleCheck(rt: Pick<Runtime, 'meta'>, host: string, port: number): Promise<Check> {
  const daemon = runningDaemon(rt.meta);
  const address = `${host}:${port}`;
  if (daemon) {
    const st = rt.meta.getJson<ConsoleState>(CONSOLE_STATE_KEY);
    if (st && st.owner === daemon.owner) {
      return st.ok
        ? { name: 'console', ok: true, fatal: false, detail: `the running daemon (pid ${daemon.pid}) serves it: ${st.detail}` }
        : { name: 'console', ok: false, fatal: false, detail: `the running daemon (pid ${daemon.pid}) could not listen on ${st.address}: ${st.detail}; it sends without the console, /metrics and the order API. Set TOPUP_CONSOLE to a free address (or off) and restart it` };
    }
    return { name: 'console', ok: true, fatal: false, detail: `a daemon runs (pid ${daemon.pid}); it has not said whether its console listens on ${address}` };
  }
  if (port === 0) return { name: 'console', ok: true, fatal: false, detail: `${host}: any free port (the daemon's log names the one taken)` };
  const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
    const s = createServer();
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e));
    s.listen(port, host, () => s.close(() => resolve(null)));
  });
  if (err === null) return { name: 'console', ok: true, fatal: false, detail: `${address} is free (no daemon runs now)` };
  const why = err.code === 'EADDRINUSE' ? `${address} is already in use by another program` : `cannot listen on ${address} (${err.code ?? err.message})`;
  return { name: 'console', ok: false, fatal: false, detail: `${why}: the daemon would start without the console, /metrics and the order API. Set TOPUP_CONSOLE to a free address, or off` };
}
