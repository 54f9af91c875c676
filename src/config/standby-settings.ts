/**
 * The warm standby settings (docs/standby.md): TOPUP_REPLICA, TOPUP_REPLICA_SYNC_INTERVAL,
 * TOPUP_LITESTREAM_CONFIG, TOPUP_LITESTREAM_BIN, TOPUP_FENCE_FILE, read by config/config.ts with the
 * others: a bad value is a ConfigError naming the setting.
 *
 * Off by default (no replica). Where the replica lives is the reseller's decision: a folder on a
 * disk or mount the standby can read (NFS, a block volume moved over), or an S3-compatible bucket
 * (`s3://bucket/path`, credentials in Litestream's own environment variables; an endpoint of
 * another provider through TOPUP_LITESTREAM_CONFIG, a litestream.yml of the reseller's own).
 */
import { isAbsolute, join, resolve } from 'node:path';
import { ConfigError } from '../kernel/errors.js';

export interface StandbySettings {
  /**
   * Where the store is replicated continuously (null: no replication). `dir` is an absolute
   * folder; `url` a Litestream replica URL (s3://, gcs://, abs://, sftp://, file://).
   */
  replica: { dir: string; url: string } | null;
  /**
   * How often Litestream ships the write-ahead log to the replica (its `sync-interval`), e.g. "500ms".
   * The store's changes reach the replica within this plus Litestream's look at the log
   * (MONITOR_INTERVAL): 500 ms + 200 ms keeps what a takeover loses under a second (1 s + its
   * default 1 s lost 1.16 s in a torture run). A bucket bills each upload: 1s or more there.
   */
  syncInterval: string;
  /** A litestream.yml of the reseller's own, used as it is (null: the daemon writes one). */
  litestreamConfig: string | null;
  /** The litestream binary to run (null: the one @flydotio/litestream ships). */
  litestreamBin: string | null;
  /**
   * The fence file both nodes reach (standby/fence.ts): who may send. Null with `off` (the
   * supplier's allowlist of two IPv4 addresses is then the only fence: docs/standby.md).
   */
  fenceFile: string | null;
}

export const STANDBY_DEFAULTS = {
  TOPUP_REPLICA: '',
  TOPUP_REPLICA_SYNC_INTERVAL: '500ms',
  TOPUP_LITESTREAM_CONFIG: '',
  TOPUP_LITESTREAM_BIN: '',
  TOPUP_FENCE_FILE: '',
} as const;

/** The name of the fence file inside a folder replica (beside Litestream's `generations/`). */
export const FENCE_NAME = 'topup-fence.json';
/**
 * The order API's journal folder: `jobs/api-journal/` (orders/journal.ts JOURNAL_DIR), and, with a
 * folder replica, `<replica>/api-journal/<node id>/`, its mirror where a takeover finds it.
 */
export const JOURNAL_FOLDER = 'api-journal';

/** How often Litestream looks at the store's write-ahead log for new frames (its `monitor-interval`; its own default is 1 s). */
export const MONITOR_INTERVAL = '200ms';

const URL_SCHEME = /^(s3|gcs|abs|sftp|file):\/\//i;

/** A replica given as a folder or a Litestream URL (file:// is a folder too: the fence can live in it). */
export function parseReplica(raw: string, home: string, setting = 'TOPUP_REPLICA'): { dir: string; url: string } {
  if (URL_SCHEME.test(raw)) {
    if (/^file:\/\//i.test(raw)) {
      const dir = decodeURIComponent(raw.replace(/^file:\/\//i, ''));
      if (!isAbsolute(dir)) throw new ConfigError(setting, `"${raw}": a file:// replica needs an absolute path (file:///mnt/replica/topup)`);
      return { dir, url: `file://${dir}` };
    }
    return { dir: '', url: raw };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) throw new ConfigError(setting, `"${raw}": Litestream replicates to a folder, file://, s3://, gcs://, abs:// or sftp:// (an S3-compatible endpoint: TOPUP_LITESTREAM_CONFIG)`);
  const dir = isAbsolute(raw) ? raw : resolve(home, raw);
  return { dir, url: `file://${dir}` };
}

export function standbySettings(env: Record<string, string>, home: string): StandbySettings {
  const rawReplica = (env.TOPUP_REPLICA ?? '').trim();
  let replica: StandbySettings['replica'] = null;
  if (rawReplica !== '' && !/^(off|false|no|0|disabled)$/i.test(rawReplica)) {
    replica = parseReplica(rawReplica, home);
    // The replica is what survives the disk: never on the disk it copies.
    if (replica.dir !== '' && resolve(replica.dir).startsWith(resolve(home, 'jobs'))) {
      throw new ConfigError('TOPUP_REPLICA', `"${rawReplica}" is inside jobs/: the replica must not live beside the store it copies (a disk or mount of its own, or s3://)`);
    }
  }
  const syncInterval = (env.TOPUP_REPLICA_SYNC_INTERVAL ?? STANDBY_DEFAULTS.TOPUP_REPLICA_SYNC_INTERVAL).trim();
  const m = /^(\d+)(ms|s)$/.exec(syncInterval);
  if (!m || (m[2] === 'ms' ? Number(m[1]) : Number(m[1]) * 1000) < 100 || (m[2] === 'ms' ? Number(m[1]) : Number(m[1]) * 1000) > 60_000) {
    throw new ConfigError('TOPUP_REPLICA_SYNC_INTERVAL', `"${syncInterval}" is not a duration from 100ms to 60s (e.g. "1s", "500ms"): it bounds the store changes a takeover can lose`);
  }
  const rawConfig = (env.TOPUP_LITESTREAM_CONFIG ?? '').trim();
  const litestreamConfig = rawConfig === '' ? null : isAbsolute(rawConfig) ? rawConfig : resolve(home, rawConfig);
  if (litestreamConfig !== null && replica === null) {
    throw new ConfigError('TOPUP_LITESTREAM_CONFIG', 'is set but TOPUP_REPLICA is not: set TOPUP_REPLICA to the replica that file names (takeover restores from it, the fence lives beside it)');
  }
  const rawBin = (env.TOPUP_LITESTREAM_BIN ?? '').trim();
  const litestreamBin = rawBin === '' ? null : isAbsolute(rawBin) ? rawBin : resolve(home, rawBin);
  const rawFence = (env.TOPUP_FENCE_FILE ?? '').trim();
  let fenceFile: string | null = null;
  if (/^(off|false|no|disabled)$/i.test(rawFence)) fenceFile = null;
  else if (rawFence !== '') fenceFile = isAbsolute(rawFence) ? rawFence : resolve(home, rawFence);
  else if (replica !== null) {
    // A bucket cannot hold a file both nodes read before every send without an S3 client here:
    // the fence must be named, or turned off on purpose (the supplier allowlist is then the fence).
    if (replica.dir === '') throw new ConfigError('TOPUP_FENCE_FILE', `TOPUP_REPLICA is ${replica.url}: name a fence file both nodes reach (a shared mount), or set TOPUP_FENCE_FILE=off to rely on the supplier's IP allowlist alone (docs/standby.md)`);
    fenceFile = join(replica.dir, FENCE_NAME);
  }
  return { replica, syncInterval, litestreamConfig, litestreamBin, fenceFile };
}
