/**
 * Named instants at which the torture suite kills this process (SIGKILL, no clean-up) to prove
 * that a crash there loses nothing and charges nothing twice. Inert unless TOPUP_CRASH_AT is
 * set, as `point:n` (die at the n-th time `point` is reached, counting from 1) or a list of them
 * separated by commas.
 */
export type CrashPoint =
  /** A claim's batch record is committed; its file is not in jobs/<batch>/ yet. */
  | 'claim-committed'
  /** A file is claimed (record committed, file in jobs/<batch>/); its rows are not read yet. */
  | 'claimed'
  /** A chunk of a big file's rows is committed; the batch is still `claimed` (not opened). */
  | 'rows-chunk-stored'
  /** An API order's acceptance is committed (orders/desk.ts); its 202 is not written yet. */
  | 'order-accepted'
  /**
   * A group of `sending` intents is committed to the write-ahead log (in the operating system's
   * cache) and its sync to disk not done yet (store/wal-sync.ts); no request of theirs has left.
   */
  | 'intent-written'
  /** The `sending` intent is committed and on disk; the request has not left. */
  | 'intent-committed'
  /** The API answered (the order exists if it was created); nothing of the answer is stored yet. */
  | 'response-received'
  /**
   * The `placed` answers of one turn are about to be committed together (dispatch/answer-group.ts):
   * their orders exist at the API, none of the answers is stored; their rows are `sending`.
   */
  | 'answer-grouped'
  /** A poll answer says the order ended; the result is not stored yet. */
  | 'before-final-commit'
  /** Half of a result file is written to its temporary file. */
  | 'result-file-half-written'
  /** `topup restore`: the home's store is moved aside and the copy (checks carried) is ready; it is not in place yet. */
  | 'restore-store-kept'
  /** `topup restore`: the copy is in place; the batch folders and journal are not copied yet, the restore not done. */
  | 'restore-copy-in-place';

const plan = new Map<string, number>();
for (const part of (process.env.TOPUP_CRASH_AT ?? '').split(',')) {
  const m = /^\s*([a-z-]+):(\d+)\s*$/.exec(part);
  if (m) plan.set(m[1]!, Number(m[2]));
}
const seen = new Map<string, number>();

export function crashPoint(point: CrashPoint): void {
  if (plan.size === 0) return;
  const at = plan.get(point);
  if (at === undefined) return;
  const n = (seen.get(point) ?? 0) + 1;
  seen.set(point, n);
  if (n === at) process.kill(process.pid, 'SIGKILL');
}
