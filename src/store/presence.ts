/**
 * Whether a daemon runs on this home, for commands that must not promise what nobody will do:
 * after Ctrl-C, `topup submit` says "the daemon carries it on" only when one does.
 *
 * The daemon writes {owner, pid, at} into the store when it starts and every HEARTBEAT_MS, and
 * removes it when it stops. A reader believes it while it is fresh (3 heartbeats) and, when the
 * daemon is on this machine, while its process exists: a daemon killed with SIGKILL is known
 * dead at once, not after the heartbeat ages out.
 */
import { systemClock } from '../kernel/clock.js';
import { hostname } from 'node:os';
import type { MetaStore } from './meta.js';
import { ownerIsDead } from './owner.js';

const KEY = 'daemon.presence';
const HEARTBEAT_MS = 10_000;

export interface DaemonPresence {
  owner: string;
  pid: number;
  host: string;
  /** Wall time of the last heartbeat. */
  at: number;
  once: boolean;
  /**
   * Sending stopped until this daemon restarts (dispatch/store-health.ts storeDownUntilRestart: its
   * disk failed a write or a sync): only this process knows it, in memory, so its heartbeat carries
   * it for `topup status` and `topup doctor`. A restart writes a presence without it.
   */
  storeStopped?: { code: string; since: number };
}

/**
 * Starts the heartbeat; the returned function stops it and removes the record (a releaser). Its
 * `beat()` writes the record at once (a change of `storeStopped` said now, not at the next beat);
 * a beat that cannot be written is said again by the next.
 */
export function announceDaemon(
  meta: MetaStore,
  owner: string,
  opts: { once: boolean; storeStopped?: () => DaemonPresence['storeStopped'] | null },
  everyMs = HEARTBEAT_MS,
): (() => void) & { beat: () => void } {
  const record = (): DaemonPresence => {
    const stopped = opts.storeStopped?.() ?? null;
    return { owner, pid: process.pid, host: hostname(), at: systemClock.now(), once: opts.once, ...(stopped ? { storeStopped: { code: stopped.code, since: stopped.since } } : {}) };
  };
  const beat = (): void => meta.setJson(KEY, record());
  beat();
  const tryBeat = (): void => {
    try {
      beat();
    } catch {
      // The store is busy or closing: the next beat says it again.
    }
  };
  const timer = setInterval(tryBeat, everyMs);
  timer.unref();
  const release = (): void => {
    clearInterval(timer);
    try {
      if (meta.getJson<DaemonPresence>(KEY)?.owner === owner) meta.delete(KEY);
    } catch {
      // Closed already: the record ages out.
    }
  };
  return Object.assign(release, { beat: tryBeat });
}

/** The daemon running on this home, or null. */
export function runningDaemon(meta: MetaStore, now = systemClock.now(), everyMs = HEARTBEAT_MS): DaemonPresence | null {
  const p = meta.getJson<DaemonPresence>(KEY);
  if (!p || Math.abs(now - p.at) > 3 * everyMs) return null;
  return ownerIsDead(p.owner) ? null : p;
}
