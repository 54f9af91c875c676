/**
 * The fence of a warm standby (docs/standby.md): which node may send.
 *
 * One small JSON file both nodes reach (by default beside the replica, `<replica>/topup-fence.json`):
 * `{ epoch, holder, … }`. Each home has a node id of its own (`<home>/.topup-node`, made once; it is
 * not in the store, so a store restored from the replica does not carry the primary's id to the
 * standby). `topup takeover` raises the epoch and names its own home the holder before it restores.
 *
 * How a primary learns it was taken over:
 *  - at every start of a process that can send (the daemon before it starts replicating, every
 *    runner before its loop: engine/runner.ts): a fence naming another node refuses the start
 *    (E_FENCED, exit 5), before anything is read from the inbox or sent;
 *  - before every send: the dispatch stage asks before each round of sends, and the sender again
 *    right before it commits a row's intent (dispatch/sender.ts) — the point where a send is decided.
 *    The file is read again when the last reading is older than FENCE_TTL_MS, so a takeover stops a
 *    live primary's sends within that time; `topup takeover` waits longer than that (and one
 *    Litestream sync) before it restores, so the primary's last writes are in what it restores.
 * A fence that cannot be read (the mount is gone) allows no send until it can be read again: a
 * primary that cannot tell whether it was taken over must not buy. The daemon then waits; a fence
 * naming another node stops it (it exits 5, which the shipped unit does not restart).
 */
import { closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { ErrorCode, TopupError } from '../kernel/errors.js';
import type { Logger } from '../kernel/log.js';

/** A reading of the fence is trusted this long before a send reads the file again. */
export const FENCE_TTL_MS = 500;
/** The node id file, in the home (outside jobs/: it is this machine's, never restored with the store). */
export const NODE_FILE = '.topup-node';
/**
 * The fence this home last held (`{ path, epoch, at }`), in the home (outside jobs/, like NODE_FILE).
 * A home that has held a fence was a primary, so it may have been taken over since: it never takes
 * a fence again as if there had been none (claim). A fence missing where it held one is most often
 * the replica's mount not up (an empty mount point after a reboot), where a fresh fence would be
 * written on its own disk while the standby sends (an adversarial review: 5 orders bought by an old
 * primary after a takeover).
 */
export const HELD_FILE = '.topup-fence-held';
const FORMAT = 'topup-fence/1';

export interface FenceRecord {
  format: string;
  /** Raised by every takeover. */
  epoch: number;
  /** The node id of the home that may send. */
  holder: string;
  host: string;
  home: string;
  /** Wall ms it was written. */
  at: number;
  /** The holder before this one, when a takeover wrote it. */
  previous: { holder: string; host: string; home: string; epoch: number } | null;
}

/**
 * This home on this machine: its id (made once, 0600) and the host name. The host name is part of
 * it so that a standby made by copying the primary's whole home (its .topup-node too) to another
 * machine is still another node.
 */
export function nodeId(home: string): string {
  return `${homeId(home)}@${hostname()}`;
}

function homeId(home: string): string {
  const path = join(home, NODE_FILE);
  try {
    const id = readFileSync(path, 'utf8').trim();
    if (/^[0-9a-f]{16,}$/.test(id)) return id;
  } catch {
    // Not made yet.
  }
  const id = randomBytes(12).toString('hex');
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeDurably(path, `${id}\n`);
  return id;
}

/** Reads the fence: null when there is none yet. Throws E_STANDBY when it exists but cannot be read or parsed. */
export function readFence(path: string): FenceRecord | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT' && existsSync(dirname(path))) return null;
    throw new TopupError(ErrorCode.Standby, `the fence ${path} cannot be read: ${(err as Error).message}`, { cause: err });
  }
  try {
    const f = JSON.parse(text) as FenceRecord;
    if (f.format !== FORMAT || !Number.isInteger(f.epoch) || typeof f.holder !== 'string') throw new Error('not a topup fence');
    return f;
  } catch (err) {
    throw new TopupError(ErrorCode.Standby, `the fence ${path} is not a topup fence: ${(err as Error).message}`);
  }
}

/** Writes the fence whole (temporary file, fsync, rename, fsync of the folder): a reader sees the old or the new one. */
export function writeFence(path: string, rec: FenceRecord): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeDurably(path, `${JSON.stringify(rec, null, 2)}\n`);
}

function writeDurably(path: string, text: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text, { mode: 0o600 });
  const fd = openSync(tmp, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  try {
    const dfd = openSync(dirname(path), 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  } catch {
    // A folder that cannot be opened for fsync (some network filesystems): the rename stands.
  }
}

interface Held {
  path: string;
  epoch: number;
  at: number;
}

function readHeld(home: string): Held | null {
  try {
    const h = JSON.parse(readFileSync(join(home, HELD_FILE), 'utf8')) as Held;
    return typeof h.path === 'string' && Number.isInteger(h.epoch) ? h : null;
  } catch {
    return null;
  }
}

/** Remembers the fence this home holds (claim, takeover). */
export function noteHeld(home: string, path: string, f: FenceRecord): void {
  const prev = readHeld(home);
  if (prev && prev.path === path && prev.epoch === f.epoch) return;
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeDurably(join(home, HELD_FILE), `${JSON.stringify({ path, epoch: f.epoch, at: f.at })}\n`);
}

/**
 * Writes the first fence only if there is still none (a hard link of a complete temporary file: it
 * fails when the name exists), so two nodes starting at once cannot both believe they took it.
 * Returns the fence that is there afterwards.
 */
function createFence(path: string, rec: FenceRecord): FenceRecord | null {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(rec, null, 2)}\n`, { mode: 0o600 });
  const fd = openSync(tmp, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, path);
  } catch (err) {
    if ((err as { code?: string }).code !== 'EEXIST') throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
  return readFence(path);
}

function fencedMessage(f: FenceRecord, path: string): string {
  return (
    `this home was taken over: the fence ${path} (epoch ${f.epoch}) names ${f.home} on ${f.host} since ${new Date(f.at).toISOString()}. ` +
    'It must not send: that node runs the work now. To make this home the primary again, run topup takeover --from <replica> here (docs/standby.md)'
  );
}

export type FenceVerdict = { ok: true } | { ok: false; fenced: boolean; why: string };

/**
 * The fence as one process holds it: checked at the start (claim), then before sends (allows).
 * `onFenced` is told once when the fence names another node.
 */
export class SendFence {
  readonly path: string;
  readonly node: string;
  readonly #home: string;
  readonly #now: () => number;
  #checkedAt = -Infinity;
  #verdict: FenceVerdict = { ok: false, fenced: false, why: 'the fence has not been read yet' };
  #told = false;
  #onFenced: ((why: string) => void) | null = null;
  #onUnreadable: ((why: string) => void) | null = null;

  constructor(path: string, home: string, now: () => number = () => performance.now()) {
    this.path = path;
    this.#home = home;
    this.node = nodeId(home);
    this.#now = now;
  }

  /**
   * At the start: no fence yet → this home takes it (epoch 1); this home's → go on; another
   * node's → E_FENCED. A fence that cannot be read → E_STANDBY (nothing is sent blind).
   */
  claim(wall: number, log?: Pick<Logger, 'info'>): FenceRecord {
    let f = readFence(this.path);
    if (f === null) {
      const held = readHeld(this.#home);
      if (held !== null && held.path === this.path) {
        throw new TopupError(
          ErrorCode.Standby,
          `the fence ${this.path} is not there, but this home held it (epoch ${held.epoch}, ${new Date(held.at).toISOString()}): ` +
            'its folder may be a mount point whose mount is not up, or the fence was removed after another node took over. Nothing is sent. ' +
            'Mount the replica (the daemon then finds the fence and who holds it), or, to make this home the primary, run topup takeover --from <replica> here (docs/standby.md)',
        );
      }
      const rec: FenceRecord = { format: FORMAT, epoch: 1, holder: this.node, host: hostname(), home: this.#home, at: wall, previous: null };
      f = createFence(this.path, rec);
      if (f === null) throw new TopupError(ErrorCode.Standby, `the fence ${this.path} could not be written`);
      if (f.holder === this.node) {
        noteHeld(this.#home, this.path, f);
        this.#set({ ok: true });
        log?.info({ fence: this.path, epoch: f.epoch, node: this.node }, 'this home took the fence (there was none): it may send');
        return f;
      }
    }
    if (f.holder !== this.node) throw new TopupError(ErrorCode.Fenced, fencedMessage(f, this.path));
    noteHeld(this.#home, this.path, f);
    this.#set({ ok: true });
    log?.info({ fence: this.path, epoch: f.epoch, node: this.node }, 'this home holds the fence: it may send');
    return f;
  }

  /** Whether this home may send now (the file read again when the last reading is older than FENCE_TTL_MS). */
  allows(): boolean {
    return this.verdict().ok;
  }

  verdict(): FenceVerdict {
    const t = this.#now();
    if (t - this.#checkedAt < FENCE_TTL_MS) return this.#verdict;
    try {
      const f = readFence(this.path);
      if (f === null) this.#set({ ok: false, fenced: false, why: `the fence ${this.path} is gone: no send until it is back (or this home takes over again)` });
      else if (f.holder !== this.node) this.#set({ ok: false, fenced: true, why: fencedMessage(f, this.path) });
      else this.#set({ ok: true });
    } catch (err) {
      this.#set({ ok: false, fenced: false, why: (err as Error).message });
    }
    return this.#verdict;
  }

  onFenced(fn: (why: string) => void): void {
    this.#onFenced = fn;
  }

  onUnreadable(fn: (why: string) => void): void {
    this.#onUnreadable = fn;
  }

  #set(v: FenceVerdict): void {
    this.#checkedAt = this.#now();
    const was = this.#verdict;
    this.#verdict = v;
    if (!v.ok && v.fenced && !this.#told) {
      this.#told = true;
      this.#onFenced?.(v.why);
    } else if (!v.ok && !v.fenced && (was.ok || was.why !== v.why)) this.#onUnreadable?.(v.why);
  }
}

/** What `topup takeover` writes: the next epoch, this home the holder. */
export function takeFence(path: string, home: string, wall: number): { taken: FenceRecord; previous: FenceRecord | null } {
  const node = nodeId(home);
  const prev = readFence(path);
  const taken: FenceRecord = {
    format: FORMAT,
    epoch: (prev?.epoch ?? 0) + 1,
    holder: node,
    host: hostname(),
    home,
    at: wall,
    previous: prev ? { holder: prev.holder, host: prev.host, home: prev.home, epoch: prev.epoch } : null,
  };
  writeFence(path, taken);
  noteHeld(home, path, taken);
  return { taken, previous: prev };
}

/**
 * `topup fence reset --i-know` (docs/standby.md): the way out when a fence this home held is gone
 * from its path and the operator knows why (the replica folder was re-created empty at the same
 * path, a new mount, a new standby set up) and that no other node has taken over. A start refuses
 * then (claim: this home held it, so a missing fence may be a mount that is not up), and before
 * this the only way out was a `topup takeover` that failed on the empty replica and wrote a new
 * fence as its side effect. Here the fence is written on purpose, and only if there is still none:
 * a hard link of a complete file (createFence), the epoch above the one this home held, so a node
 * that takes it at the same instant wins and this says so. Refused when a fence is there (one
 * naming another node is moved only by `topup takeover`) or its folder is not (the mount is down).
 */
export function resetFence(path: string, home: string, wall: number): { fence: FenceRecord; heldBefore: number | null } {
  const there = readFence(path);
  if (there !== null) {
    throw new TopupError(
      ErrorCode.Standby,
      there.holder === nodeId(home)
        ? `the fence ${path} is there and names this home (epoch ${there.epoch}): nothing to reset`
        : `the fence ${path} is there and names ${there.home} on ${there.host} (epoch ${there.epoch}): it is not reset; to make this home the primary, topup takeover --from <replica> (docs/standby.md)`,
    );
  }
  const held = readHeld(home);
  const heldBefore = held !== null && held.path === path ? held.epoch : null;
  const node = nodeId(home);
  const rec: FenceRecord = { format: FORMAT, epoch: (heldBefore ?? 0) + 1, holder: node, host: hostname(), home, at: wall, previous: null };
  const f = createFence(path, rec);
  if (f === null) throw new TopupError(ErrorCode.Standby, `the fence ${path} could not be written`);
  if (f.holder !== node) throw new TopupError(ErrorCode.Fenced, `another node wrote the fence ${path} first: ${fencedMessage(f, path)}`);
  noteHeld(home, path, f);
  return { fence: f, heldBefore };
}

/**
 * The fence's state as `topup doctor` names it (docs/standby.md), read without taking it: who
 * holds it, whether this home may send, and what a home that held it before finds.
 */
export function fenceStatus(path: string, home: string): { ok: boolean; state: 'held' | 'standby' | 'taken over' | 'none yet' | 'missing' | 'unreadable'; detail: string } {
  const node = nodeId(home);
  const held = readHeld(home);
  let f: FenceRecord | null;
  try {
    f = readFence(path);
  } catch (err) {
    return { ok: false, state: 'unreadable', detail: `${(err as Error).message}: nothing is sent until it can be read` };
  }
  const since = (r: FenceRecord): string => `epoch ${r.epoch}, since ${new Date(r.at).toISOString()}`;
  if (f === null) {
    if (held !== null && held.path === path) {
      return { ok: false, state: 'missing', detail: `${path} is not there, but this home held it (epoch ${held.epoch}): the replica's mount may not be up; a start refuses until it is back (or topup takeover here)` };
    }
    return { ok: true, state: 'none yet', detail: `no fence at ${path} yet: the first process that can send takes it` };
  }
  if (f.holder === node) return { ok: true, state: 'held', detail: `this home holds the fence ${path} (${since(f)}): it may send` };
  if (held !== null && held.path === path) {
    return { ok: false, state: 'taken over', detail: `this home was taken over: the fence ${path} names ${f.home} on ${f.host} (${since(f)}); it sends nothing (topup takeover --from <replica> here to make it the primary again)` };
  }
  return { ok: true, state: 'standby', detail: `the fence ${path} names ${f.home} on ${f.host} (${since(f)}): this home is a standby and sends nothing until topup takeover` };
}
