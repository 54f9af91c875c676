/**
 * Watching inbox/: the folder's events, and a listing every RESCAN_MS, find the files; settle.ts
 * decides when each is ready to be claimed (the rules are written there). `--once` lists the
 * folder and waits for its files to settle (listSettledFiles); the daemon watches it (watchInbox).
 */
import { watch as watchFolder, type FSWatcher } from 'node:fs';
import { systemClock } from '../kernel/clock.js';
import { eventsAreExact, Settler, type OnIgnored, type OnReady } from './settle.js';

export { eventsAreExact, isCandidateName, RENAMED_SETTLE_MS, type OnIgnored, type OnReady } from './settle.js';


export interface InboxWatcher {
  close(): Promise<void>;
}

/** How often the folder is listed besides its events: a missed event, a network filesystem. */
const RESCAN_MS = 2000;


/**
 * For `--once`: candidates that are regular files and are ready by the rules of settle.ts (with no
 * watch: every file is one found at start). A file still changing, or held open for writing, is
 * watched for up to `maxWaitMs` (default 60 s) and then left for the next run. Sorted by name, so
 * runs are repeatable.
 */
export async function listSettledFiles(
  inboxDir: string,
  opts: { settleMs?: number; maxWaitMs?: number; onIgnored?: OnIgnored; onWaiting?: (path: string, why: string) => void } = {},
): Promise<{ path: string; hash: string }[]> {
  const settleMs = opts.settleMs ?? 12_000;
  const maxWaitMs = opts.maxWaitMs ?? 60_000;
  const deadline = systemClock.mono() + maxWaitMs;
  const ready: { path: string; hash: string }[] = [];
  const settler = new Settler(inboxDir, { settleMs, onReady: (path, s) => ready.push({ path, hash: s.hash }), onIgnored: opts.onIgnored, onWaiting: opts.onWaiting });
  settler.exact = await eventsAreExact(inboxDir);
  await settler.scan(true);
  while (settler.pending > 0) {
    if (systemClock.mono() >= deadline) {
      for (const path of settler.pendingPaths()) opts.onIgnored?.(path, `still being written (or held open for writing) after ${maxWaitMs} ms; left for the next run`);
      break;
    }
    await settler.lookAll();
    if (settler.pending > 0) await new Promise((r) => setTimeout(r, settler.step));
  }
  return ready.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** listSettledFiles, the paths only. */
export async function listReadyFiles(inboxDir: string, opts: Parameters<typeof listSettledFiles>[1] = {}): Promise<string[]> {
  return (await listSettledFiles(inboxDir, opts)).map((f) => f.path);
}

/**
 * Watches the inbox (files already there included) and calls `onReady` once per file when it is
 * ready (the rules of settle.ts). Only additions are reported: a file offered is not offered again
 * while it stays the same file (the daemon moves a claimed file out of the inbox at once); one
 * still there REOFFER_MS later (its claim failed) is offered again once it is ready again.
 */
export function watchInbox(
  inboxDir: string,
  onReady: OnReady,
  opts: { settleMs?: number; onIgnored?: OnIgnored; onWaiting?: (path: string, why: string) => void; onError?: (err: Error) => void } = {},
): InboxWatcher {
  const settler = new Settler(inboxDir, { settleMs: opts.settleMs ?? 12_000, onReady, onIgnored: opts.onIgnored, onWaiting: opts.onWaiting });
  let closed = false;
  let folder: FSWatcher | undefined;
  let stepTimer: NodeJS.Timeout | undefined;
  let stepping = false;
  const report = (err: unknown): void => {
    const error = err instanceof Error ? err : new Error(String(err));
    if (opts.onError) opts.onError(error);
    else opts.onIgnored?.(inboxDir, `watch error: ${error.message}`);
  };

  /** One look at every tracked file, then again after a step while any are left. */
  const step = async (): Promise<void> => {
    stepTimer = undefined;
    if (closed || stepping) return;
    stepping = true;
    try {
      await settler.lookAll();
    } catch (err) {
      report(err);
    } finally {
      stepping = false;
    }
    schedule();
  };
  /** `soon`: an event or a listing found something; the first look comes at once. */
  const schedule = (soon = false): void => {
    if (closed || stepTimer !== undefined || settler.pending === 0) return;
    stepTimer = setTimeout(() => void step(), soon ? 0 : settler.step);
  };
  const rescan = async (atStart: boolean): Promise<void> => {
    if (closed) return;
    try {
      await settler.scan(atStart);
    } catch (err) {
      report(err);
    }
    schedule(true);
  };

  /**
   * (Re)starts the folder watch, at once (before the first listing), so a file arriving while
   * the daemon starts is seen arriving; files the listing after it finds without an event are
   * judged as found at start.
   */
  const startWatch = (): void => {
    try {
      folder = watchFolder(inboxDir, { persistent: true }, (kind, name) => {
        if (closed) return;
        if (name === null) void rescan(false);
        else settler.event(kind, name.toString());
        schedule(true);
      });
      folder.on('error', (err) => {
        // The watch is gone (the folder was removed, an inotify limit): files are found by the
        // listing until it can be started again, and judged as found at start meanwhile.
        settler.lostEvents();
        folder?.close();
        folder = undefined;
        report(err);
      });
      settler.watching = true;
    } catch (err) {
      settler.lostEvents();
      report(err);
    }
  };

  startWatch();
  let rescanTimer: NodeJS.Timeout | undefined;
  const started = eventsAreExact(inboxDir).then(async (exact) => {
    settler.exact = exact;
    if (closed) return;
    await rescan(true);
    rescanTimer = setInterval(() => {
      if (!folder) {
        startWatch();
        void rescan(true);
      } else void rescan(false);
    }, RESCAN_MS);
  });

  return {
    close: async () => {
      closed = true;
      if (stepTimer) clearTimeout(stepTimer);
      if (rescanTimer) clearInterval(rescanTimer);
      folder?.close();
      await started;
    },
  };
}
