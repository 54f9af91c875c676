/**
 * Which processes hold a file open for writing, where the operating system can tell.
 *
 * A copy that pauses (a network share, an upload over SFTP, a script writing line by line) leaves
 * a file that looks finished for as long as the pause lasts. A writer that keeps the file open
 * shows itself, though: on Linux every open file of every process is a link in /proc/<pid>/fd,
 * and /proc/<pid>/fdinfo/<fd> gives the flags it was opened with (O_WRONLY or O_RDWR: writing).
 * So a file some process holds open for writing is not taken, however long it has been quiet.
 *
 * What this cannot see, and then says (`reach`):
 *  - no /proc (macOS, Windows, a container without it): nothing; files are judged by their size,
 *    time and content alone (intake/watch.ts);
 *  - processes of other users, unless the daemon runs as root (/proc/<pid>/fd is readable only
 *    by the process's owner), and processes mounted away (`hidepid`), in other containers, or on
 *    another machine (a writer on the far side of a network share is never a local process:
 *    Samba's own process, when it runs as root and we do not, is one we cannot look at);
 *  - a writer that closes the file between writes (`echo … >> file` in a loop): nothing is open
 *    during its pauses. The settle window covers that one.
 *
 * Cost: one readdir of /proc, one per process of its fd folder, one readlink per open file;
 * a stat and an fdinfo read only for links that name this file. Done when a file is otherwise
 * settled, not on every look. The readdirs and readlinks are synchronous calls, a slice of
 * processes at a time with a turn of the event loop between slices: each asynchronous readlink
 * was a round trip through the thread pool and a promise, which cost ~5 times the syscall itself
 * (measured on a host of 140 processes and 950 open files: 65–120 CPU-ms a pass asynchronously,
 * 14–20 synchronously; issue 29, the simulator's profile). A slice of SLICE processes blocks
 * the loop for about a millisecond.
 */
import { readdirSync, readlinkSync } from 'node:fs';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';

export interface Writer {
  pid: number;
  /** The process's name (/proc/<pid>/comm), for the log. */
  command: string;
}

export interface WriterScan {
  writers: Writer[];
  /** Processes whose open files could not be looked at (another user's, without root). */
  hidden: number;
  /** False where there is no /proc to look in: nothing could be seen. */
  available: boolean;
}

const PROC = '/proc';
/** O_ACCMODE bits of the fdinfo `flags:` field (octal): 1 = O_WRONLY, 2 = O_RDWR. */
const ACCMODE = 0o3;
/** Processes looked at in one synchronous slice, between turns of the event loop (a millisecond or so each). */
const SLICE = 32;

/** Every open file of every process we may look at: the link each fd names, by link. */
interface LinkTable {
  available: boolean;
  hidden: number;
  byLink: Map<string, { pid: string; fd: string }[]>;
}

/**
 * One pass over /proc. Callers that ask while a pass runs share it (many files settling at once
 * cost one pass, not one each): its picture is at most one pass old, as any picture is by the
 * time it is used.
 */
let pass: Promise<LinkTable> | undefined;
function linkTable(): Promise<LinkTable> {
  pass ??= readLinks().finally(() => {
    pass = undefined;
  });
  return pass;
}

async function readLinks(): Promise<LinkTable> {
  const byLink = new Map<string, { pid: string; fd: string }[]>();
  let pids: string[];
  try {
    pids = (await readdir(PROC)).filter((n) => /^\d+$/.test(n));
  } catch {
    return { available: false, hidden: 0, byLink };
  }
  // A /proc of another PID namespace (or none mounted) does not list this very process.
  if (!pids.includes(String(process.pid))) return { available: false, hidden: 0, byLink };
  let hidden = 0;
  const lookAt = (pid: string): void => {
    let fds: string[];
    try {
      fds = readdirSync(`${PROC}/${pid}/fd`);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EACCES' || code === 'EPERM') hidden++;
      return; // ENOENT: the process ended meanwhile
    }
    for (const fd of fds) {
      let link: string;
      try {
        link = readlinkSync(`${PROC}/${pid}/fd/${fd}`);
      } catch {
        continue; // closed meanwhile
      }
      if (!link.startsWith('/')) continue; // sockets, pipes, anon inodes
      const list = byLink.get(link);
      if (list) list.push({ pid, fd });
      else byLink.set(link, [{ pid, fd }]);
    }
  };
  for (let i = 0; i < pids.length; i += SLICE) {
    if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    for (const pid of pids.slice(i, i + SLICE)) lookAt(pid);
  }
  return { available: true, hidden, byLink };
}

/** Whether fd `fd` of `pid` is the file (dev/ino), opened for writing. */
async function writesTo(pid: string, fd: string, dev: number, ino: number): Promise<boolean> {
  const target = await stat(`${PROC}/${pid}/fd/${fd}`).catch(() => undefined);
  if (!target || target.dev !== dev || target.ino !== ino) return false;
  const info = await readFile(`${PROC}/${pid}/fdinfo/${fd}`, 'utf8').catch(() => '');
  const flags = /^flags:\s*([0-7]+)/m.exec(info);
  // An fd whose flags cannot be read is counted as a writer: waiting is the safe mistake.
  return flags === null || (parseInt(flags[1]!, 8) & ACCMODE) !== 0;
}

/** The processes that hold `path` open for writing (O_WRONLY or O_RDWR), by its inode. */
export async function openForWriting(path: string): Promise<WriterScan> {
  const file = await stat(path);
  const real = await realpath(path);
  const table = await linkTable();
  if (!table.available) return { writers: [], hidden: 0, available: false };
  // The kernel names an open file by its current path, also after a rename. A file with other
  // names (hard links) may be open under any of them: then every open file is compared by inode.
  const candidates = file.nlink > 1 ? [...table.byLink.values()].flat() : (table.byLink.get(real) ?? []);
  const writers: Writer[] = [];
  for (const { pid, fd } of candidates) {
    if (writers.some((w) => String(w.pid) === pid)) continue;
    if (await writesTo(pid, fd, file.dev, file.ino)) {
      const command = (await readFile(`${PROC}/${pid}/comm`, 'utf8').catch(() => '?')).trim();
      writers.push({ pid: Number(pid), command });
    }
  }
  return { writers, hidden: table.hidden, available: true };
}

/** "process 123 (cp)", for messages. */
export function describeWriters(writers: readonly Writer[]): string {
  const named = writers.slice(0, 3).map((w) => `process ${w.pid} (${w.command})`);
  return writers.length > 3 ? `${named.join(', ')} and ${writers.length - 3} more` : named.join(', ');
}

export interface WriterReach {
  reach: 'all' | 'own-user' | 'none';
  /** One sentence for the start-up log and `topup doctor`. */
  detail: string;
}

/** What the open-for-writing check can see on this machine, said once at start. */
export async function writerCheckReach(): Promise<WriterReach> {
  let pids: string[];
  try {
    pids = (await readdir(PROC)).filter((n) => /^\d+$/.test(n));
  } catch {
    pids = [];
  }
  if (!pids.includes(String(process.pid))) {
    return { reach: 'none', detail: 'no /proc on this system: a file still open for writing cannot be seen; inbox files are taken after TOPUP_SETTLE_MS without any change (write under another name and rename into the inbox to be safe)' };
  }
  let hidden = 0;
  for (const pid of pids) {
    try {
      await readdir(`${PROC}/${pid}/fd`);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EACCES' || code === 'EPERM') hidden++;
    }
  }
  // With `hidepid`, other users' processes are not even listed: none looks hidden, all are.
  const mounts = await readFile(`${PROC}/self/mountinfo`, 'utf8').catch(() => '');
  const hides = mounts.split('\n').some((l) => l.split(' ')[4] === PROC && /hidepid=(1|2|invisible|noaccess)/.test(l));
  if (hidden === 0 && !hides) return { reach: 'all', detail: `a file open for writing by any of the ${pids.length} processes on this machine is waited for` };
  return {
    reach: 'own-user',
    detail: `a file open for writing is waited for only when this user's processes hold it (${hides ? '/proc is mounted with hidepid' : `${hidden} of ${pids.length} processes belong to other users`} and cannot be looked at); a copy by another user (a Samba or SFTP server) is judged by TOPUP_SETTLE_MS of quiet alone`,
  };
}
