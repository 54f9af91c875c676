/**
 * The order API's journal: every accepted order (its trxid and the body it was accepted with),
 * appended to `jobs/api-journal/<UTC day>.jsonl` and fsynced before the 202 leaves, one write and
 * one fsync per group commit of the desk (orders/desk.ts). File batches survive the loss of the
 * store in their jobs/ folders (claim/orphans.ts); the day's API batch has no file, so this is its
 * file: a store deleted, or restored from a copy older than the order, is recovered from it
 * (recoverFromJournal) at the first start after, before anything is sent. The orders come back
 * under their own trxids: an order the supplier already has is met as a replay, not bought again
 * (and the reconcile-first start, ops/restore-reconcile.ts, looks each one up before any send).
 *
 * The journal holds what a shop sent (player ids, its meta): files 0600 in a 0700 folder, kept
 * JOURNAL_DAYS days (a backup copies them: store/backup.ts journalFiles).
 */
import { foldTrxid } from '../kernel/identity.js';
import { accessSync, closeSync, constants, existsSync, fstatSync, fsync, fsyncSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { OrderInput, OrderDesk } from './types.js';
import type { Runtime } from '../runtime.js';
import { coerceError } from '../kernel/errors.js';
import { JOURNAL_FOLDER } from '../config/standby-settings.js';
import type { Config } from '../config/config.js';
import { nodeId } from '../standby/fence.js';

export const JOURNAL_DIR = JOURNAL_FOLDER;
/** Days of journal kept (and read back at a recovery). */
export const JOURNAL_DAYS = 8;
/** meta: what the last recovery from the journal did (for the restore report, status, doctor). */
export const JOURNAL_RECOVERY_KEY = 'restore.apiOrders';

export interface JournalEntry {
  at: number;
  trxid: string;
  body: OrderInput;
  /**
   * The account the order was routed to when it was accepted (absent in lines of earlier versions).
   * A recovered order is placed there again when it can be (orders/desk.ts): its purchase under its
   * own trxid is then found where it was made, as its own.
   */
  account?: string;
}

export interface JournalRecovery {
  at: number;
  /** Orders the store did not know, accepted again under their trxids. */
  recovered: string[];
  /**
   * Orders that could not be accepted again, with why. `transient`: the supplier could not be read
   * (its catalog or balance did not answer): the reconcile-first start accepts them again at each of
   * its tries and sends nothing until they are in (adv9: tried once at a start where the supplier was
   * down, then never again, a 202'd order left 404). The others (the body refused now) need a person.
   */
  failed: { trxid: string; why: string; transient?: boolean }[];
  /** Wall ms the oldest recovered order was first accepted (its journal entry): the reconcile reads history back to before it. */
  oldestAt?: number;
}

/** Refusals that say the supplier could not be read now, not that the order is wrong. */
const TRANSIENT_REFUSALS: ReadonlySet<string> = new Set(['CATALOG_UNAVAILABLE', 'BALANCE_UNAVAILABLE']);

const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/**
 * With a folder replica (TOPUP_REPLICA, docs/standby.md), the journal's mirror beside it:
 * `<replica>/api-journal/<node id>/`. The journal in jobs/ dies with the primary's disk, and the
 * store reaches the replica only at Litestream's next sync (500 ms): an order answered 202 just
 * before the machine died was in neither place a takeover reads (an adversarial review: 1 of 3
 * orders 202'd right before a SIGKILL never bought, 2 of 2 runs). `topup takeover` folds the mirror
 * into the standby's journal, and its reconcile-first start accepts the orders again.
 * One folder per node: two nodes never append to one file.
 */
export function journalMirror(config: Pick<Config, 'home' | 'standby'>): string | null {
  const dir = config.standby.replica?.dir;
  return dir ? join(dir, JOURNAL_FOLDER, nodeId(config.home)) : null;
}

/** meta: the journal's mirror beside the replica cannot be written (MirrorTrouble); absent while it can. */
export const MIRROR_TROUBLE_KEY = 'api.journalMirror';

export interface MirrorTrouble {
  /** Wall ms of the first failed write since the last that succeeded. */
  since: number;
  /** Wall ms of the latest. */
  at: number;
  error: string;
  /** Accepted orders whose line is not beside the replica (in the store and jobs/api-journal/ only). */
  orders: number;
}

/**
 * Whether the mirror (journalMirror) can be written, without writing an order: a folder that is
 * there and writable, or one that can be made under the nearest folder that is there. For
 * `topup doctor`, which must not wait for the first order to say the replica's journal fails.
 */
export function probeMirror(mirror: string): string | null {
  let dir = mirror;
  for (;;) {
    let st: ReturnType<typeof statSync> | undefined;
    try {
      st = statSync(dir);
    } catch (err) {
      if ((err as { code?: string }).code !== 'ENOENT') return `${dir}: ${(err as Error).message}`;
    }
    if (st) {
      if (!st.isDirectory()) return `${dir} is not a folder`;
      try {
        accessSync(dir, constants.W_OK | constants.X_OK);
        return null;
      } catch (err) {
        return `${dir} cannot be written: ${(err as Error).message}`;
      }
    }
    const up = dirname(dir);
    if (up === dir) return `${mirror}: no folder of its path exists`;
    dir = up;
  }
}

/** Appends the entries and fsyncs (throws what the file system throws). */
export function appendJournal(jobsDir: string, entries: readonly JournalEntry[]): void {
  if (entries.length === 0) return;
  appendJournalIn(join(jobsDir, JOURNAL_DIR), entries);
}

/**
 * appendJournal with its fsyncs on libuv's thread pool: the lines are written now (a kill from here
 * on finds them, in the operating system's cache), and the promise resolves once they are on disk
 * (rejects with what the file system says). For the order desk, whose 202s wait for it off the
 * event loop (orders/desk.ts): an fsync on the loop held every other request behind it.
 */
export async function appendJournalDurable(jobsDir: string, entries: readonly JournalEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await appendJournalIn(join(jobsDir, JOURNAL_DIR), entries, fsyncOffLoop);
}

const fsyncOffLoop = (fd: number): Promise<void> => new Promise((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve())));

/** The same entries appended to the mirror (journalMirror), fsynced; days older than JOURNAL_DAYS removed as a new day begins. */
export function appendJournalMirror(mirror: string, entries: readonly JournalEntry[], now: number): void {
  if (entries.length === 0) return;
  const begun = appendJournalIn(mirror, entries);
  if (!begun) return;
  const oldest = dayOf(now - JOURNAL_DAYS * 86_400_000);
  for (const f of readdirSync(mirror)) if (/^\d{4}-\d{2}-\d{2}\.jsonl$/.test(f) && f.slice(0, 10) < oldest) rmSync(join(mirror, f), { force: true });
}

/**
 * True when the file ends in the middle of a line: a kill mid-append (before its fsync, so that
 * order got no 202) left a torn line. The next append must start on a line of its own, or the next
 * order's line, which does get its 202, is glued to the torn one and lost with it to every reader.
 */
function endsTorn(fd: number): boolean {
  const size = fstatSync(fd).size;
  if (size === 0) return false;
  const last = Buffer.alloc(1);
  readSync(fd, last, 0, 1, size - 1);
  return last[0] !== 0x0a;
}

/** Appends to `<dir>/<day>.jsonl` with fsync; true when it began a new file. */
function appendJournalIn(dir: string, entries: readonly JournalEntry[]): boolean;
/** The same with `sync` for each fsync (appendJournalDurable): resolves once every one has. */
function appendJournalIn(dir: string, entries: readonly JournalEntry[], sync: (fd: number) => Promise<void>): Promise<boolean>;
function appendJournalIn(dir: string, entries: readonly JournalEntry[], sync?: (fd: number) => Promise<void>): boolean | Promise<boolean> {
  if (sync) return appendJournalAsync(dir, entries, sync);
  let begun = false;
  const byDay = new Map<string, JournalEntry[]>();
  for (const e of entries) byDay.set(dayOf(e.at), [...(byDay.get(dayOf(e.at)) ?? []), e]);
  for (const [day, list] of byDay) {
    const path = join(dir, `${day}.jsonl`);
    const created = !existsSync(path);
    // The folder only for a day's first file: the day's file being there says its folder is (a
    // mkdir per group was 1 % of the order API's event loop at 500/s).
    if (created) mkdirSync(dir, { recursive: true, mode: 0o700 });
    // 'a+': appends, and the last byte can be read (endsTorn).
    const fd = openSync(path, 'a+', 0o600);
    try {
      const lines = list.map((e) => `${JSON.stringify(e)}\n`).join('');
      writeSync(fd, endsTorn(fd) ? `\n${lines}` : lines);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (created) {
      begun = true;
      // A new file's name must be on disk too.
      const dfd = openSync(dir, 'r');
      try {
        fsyncSync(dfd);
      } finally {
        closeSync(dfd);
      }
    }
  }
  return begun;
}

async function appendJournalAsync(dir: string, entries: readonly JournalEntry[], sync: (fd: number) => Promise<void>): Promise<boolean> {
  let begun = false;
  const byDay = new Map<string, JournalEntry[]>();
  for (const e of entries) byDay.set(dayOf(e.at), [...(byDay.get(dayOf(e.at)) ?? []), e]);
  for (const [day, list] of byDay) {
    const path = join(dir, `${day}.jsonl`);
    const created = !existsSync(path);
    // The folder only for a day's first file: the day's file being there says its folder is (a
    // mkdir per group was 1 % of the order API's event loop at 500/s).
    if (created) mkdirSync(dir, { recursive: true, mode: 0o700 });
    const fd = openSync(path, 'a+', 0o600);
    try {
      const lines = list.map((e) => `${JSON.stringify(e)}\n`).join('');
      // Written at once, in call order: a group that starts while this one's fsync runs appends
      // after these lines, never between them (the desk writes its groups one after another).
      writeSync(fd, endsTorn(fd) ? `\n${lines}` : lines);
      await sync(fd);
    } finally {
      closeSync(fd);
    }
    if (created) {
      begun = true;
      const dfd = openSync(dir, 'r');
      try {
        await sync(dfd);
      } finally {
        closeSync(dfd);
      }
    }
  }
  return begun;
}

/** A journal line as an entry, or null (a torn line: a kill mid-append, before its fsync: never answered 202). */
function parseLine(line: string): JournalEntry | null {
  if (line.trim() === '') return null;
  try {
    const e = JSON.parse(line) as JournalEntry;
    return typeof e.trxid === 'string' && e.body && typeof e.body === 'object' ? e : null;
  } catch {
    return null;
  }
}

/**
 * The journal's mirrors beside a folder replica (`<replica>/api-journal/<node>/<day>.jsonl`,
 * journalMirror; every node's folder: a home that took over once wrote its own) carried into this
 * home's `jobs/api-journal/<day>.jsonl`: the lines it lacks are appended and fsynced. The one path
 * for every recovery that may lack orders the mirror has: `topup takeover` (the dead primary's last
 * sync interval), `topup restore` (a disk lost with `jobs/`: the backup's journal stops at the
 * backup), and the first start after either, or after a store deleted (recoverFromJournal). Orders
 * accepted after the backup and failed over to another account were bought there under a moved
 * trxid; without their line, a shop's resend was accepted as new and bought again on the first
 * account (an adversarial review: twice in two runs). Returns the lines added; throws what the file
 * system throws (a mirror that cannot be read is not "no orders").
 */
export function foldJournalMirrors(replicaDir: string, jobsDir: string, now: number): number {
  const root = join(replicaDir, JOURNAL_DIR);
  // Not there, or not a folder (nothing was ever written into it: every append failed, which the
  // metric and doctor say): no lines. A folder that cannot be read throws.
  if (!existsSync(root) || !statSync(root).isDirectory()) return 0;
  const oldest = dayOf(now - JOURNAL_DAYS * 86_400_000);
  const byDay = new Map<string, string[]>();
  for (const node of readdirSync(root, { withFileTypes: true })) {
    if (!node.isDirectory()) continue;
    for (const f of readdirSync(join(root, node.name))) {
      if (!/^\d{4}-\d{2}-\d{2}\.jsonl$/.test(f) || f.slice(0, 10) < oldest) continue;
      // Whole entries only: a torn line got no 202 (and is skipped by every reader).
      const lines = readFileSync(join(root, node.name, f), 'utf8').split('\n').filter((l) => parseLine(l) !== null);
      byDay.set(f, [...(byDay.get(f) ?? []), ...lines]);
    }
  }
  const dir = join(jobsDir, JOURNAL_DIR);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let added = 0;
  for (const [f, lines] of byDay) {
    const path = join(dir, f);
    // The same order in the copy's journal and the mirror is the same line (one JSON.stringify of
    // one entry); a second line of one trxid would do no harm either (recoverFromJournal takes one).
    const have = new Set(existsSync(path) ? readFileSync(path, 'utf8').split('\n') : []);
    const fresh = [...new Set(lines)].filter((l) => !have.has(l));
    if (fresh.length === 0) continue;
    const fd = openSync(path, 'a+', 0o600);
    try {
      const text = `${fresh.join('\n')}\n`;
      writeSync(fd, endsTorn(fd) ? `\n${text}` : text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    added += fresh.length;
  }
  if (added > 0) {
    const dfd = openSync(dir, 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  }
  return added;
}

/** The journal files kept (relative to jobs/), oldest first; older ones than JOURNAL_DAYS are removed. */
export function journalFiles(jobsDir: string, now: number): string[] {
  const dir = join(jobsDir, JOURNAL_DIR);
  if (!existsSync(dir)) return [];
  const oldest = dayOf(now - JOURNAL_DAYS * 86_400_000);
  const out: string[] = [];
  for (const f of readdirSync(dir).filter((f) => /^\d{4}-\d{2}-\d{2}\.jsonl$/.test(f)).sort()) {
    if (f.slice(0, 10) < oldest) rmSync(join(dir, f), { force: true });
    else out.push(join(JOURNAL_DIR, f));
  }
  return out;
}

/** Every entry of the kept days; a torn last line (a kill mid-append, before its fsync: never answered 202) is skipped. */
export function readJournal(jobsDir: string, now: number): JournalEntry[] {
  const out: JournalEntry[] = [];
  for (const rel of journalFiles(jobsDir, now)) {
    for (const line of readFileSync(join(jobsDir, rel), 'utf8').split('\n')) {
      const e = parseLine(line);
      if (e) out.push(e);
    }
  }
  return out;
}

/**
 * Accepts again every journalled order the store does not know (deleted, or restored from an
 * older copy), under its own trxid and with `queue: true` (it was accepted once: it waits for
 * balance rather than being refused now) and without a player check (it had its check then). Called before the runner starts: nothing is sent here,
 * and the reconcile-first start looks each recovered order up at the supplier before any send.
 */
export async function recoverFromJournal(rt: Pick<Runtime, 'clock' | 'config' | 'log' | 'meta' | 'rows'>, desk: Pick<OrderDesk, 'accept'>): Promise<JournalRecovery | null> {
  // The mirror beside a folder replica first (foldJournalMirrors): after a disk lost with jobs/, it
  // holds the orders accepted since the backup. At every try of the reconcile: a mirror that cannot
  // be read throws, and the reconcile (nothing sent) tries again.
  const replicaDir = rt.config.standby.replica?.dir ?? '';
  if (replicaDir !== '') {
    const added = foldJournalMirrors(replicaDir, rt.config.jobsDir, rt.clock.now());
    if (added > 0) rt.log.warn({ lines: added, replica: replicaDir }, `${added} order API journal line(s) found beside the replica that jobs/${JOURNAL_DIR}/ lacked: carried over`);
  }
  const entries = readJournal(rt.config.jobsDir, rt.clock.now());
  const prev = rt.meta.getJson<JournalRecovery>(JOURNAL_RECOVERY_KEY) ?? null;
  const missing = new Map<string, JournalEntry>();
  for (const e of entries) if (rt.rows.byTrxid(e.trxid) === undefined && !missing.has(foldTrxid(e.trxid))) missing.set(foldTrxid(e.trxid), e);
  if (missing.size === 0) {
    // Called again by the reconcile: what failed before is in now (or gone from the journal).
    if (prev && prev.failed.length > 0) {
      const done = { ...prev, failed: [] };
      rt.meta.setJson(JOURNAL_RECOVERY_KEY, done);
      return done;
    }
    return null;
  }
  // Merged with an earlier try's record: the report names every order recovered since the loss.
  const rec: JournalRecovery = { at: prev?.at ?? rt.clock.now(), recovered: [...(prev?.recovered ?? [])], failed: [] };
  if (prev?.oldestAt !== undefined) rec.oldestAt = prev.oldestAt;
  for (const e of missing.values()) {
    try {
      // checkPlayer: false: its player was checked (if it asked) when it was first accepted; a
      // check now could only refuse an order already promised to the shop (or cost another call).
      // recovered: it was accepted (202) before; the catalog's stock and price now are not judged
      // (it may be what took the stock), only whether it is an order at all.
      const o = await desk.accept({ ...e.body, queue: true, checkPlayer: false }, { recovered: true, ...(e.account !== undefined ? { account: e.account } : {}) });
      if (o.kind === 'accepted' || o.kind === 'same') {
        rec.recovered.push(e.trxid);
        rec.oldestAt = Math.min(rec.oldestAt ?? e.at, e.at);
      } else rec.failed.push({ trxid: e.trxid, why: `${o.code}: ${o.detail}`, transient: TRANSIENT_REFUSALS.has(o.code) });
    } catch (err) {
      // Not an answer about the order (the store, the network): tried again.
      rec.failed.push({ trxid: e.trxid, why: coerceError(err).message, transient: true });
    }
  }
  rt.meta.setJson(JOURNAL_RECOVERY_KEY, rec);
  const waiting = rec.failed.filter((f) => f.transient).length;
  rt.log.warn(
    { recovered: rec.recovered.length, failed: rec.failed.length, waiting, first: rec.recovered[0] },
    `the store did not know ${missing.size} API order(s) accepted earlier (journal in jobs/${JOURNAL_DIR}/): ${missing.size - rec.failed.length} accepted again under their trxids, ${waiting} wait for the supplier to answer (tried again before anything is sent), ${rec.failed.length - waiting} need a person`,
  );
  return rec;
}

/** Journal orders not accepted again yet because the supplier could not be read (tried again). */
export function journalOrdersWaiting(rec: JournalRecovery | null | undefined): { trxid: string; why: string }[] {
  return (rec?.failed ?? []).filter((f) => f.transient === true);
}
