/**
 * The player checks' records a restore must not lose (store/backup.ts restoreBackup).
 *
 * A restored copy is older than the world; what was bought after it is found again at the
 * suppliers (ops/restore-reconcile.ts reads every account's order history). A player check leaves
 * no such trace: no supplier lists the checks it ran, so the only record of one made after the
 * copy was taken is the store being replaced. Without it the copy's summaries, the console's check
 * money and the bound on paying again for a player whose checks never answer (store/player-checks.ts
 * mayAsk) would not count checks the supplier charged; and the answers kept for players (the
 * cache) would be asked, and paid for, again. (The simulator, seed 20261127 #1: a check charged
 * 0.03 USD at 8 s, after the copy taken at 2 s, recorded nowhere after the restore at 22 s;
 * invariant 32.)
 *
 * So the replaced store's checks are carried into the copy before it is put in place: every call
 * the copy lacks (a call still `sent` there is one whose answer was never recorded: `in-doubt`,
 * "may have been charged", as store/player-checks.ts begin marks a stale one), a call the copy
 * has as `sent` and the replaced store answered takes that answer, and every cached answer newer
 * than the copy's. Best effort: a replaced store that cannot be read (the usual reason to restore)
 * loses nothing more than before, and the restore says so.
 *
 * A call the copy has as `sent` and the replaced store no longer has was dropped there
 * (store/player-checks.ts unsent: recorded before it left, then held by the gate when the process
 * stopped; it never reached the supplier, so it cost nothing). Kept in the copy it became
 * `in-doubt`, "may have been charged": money counted that was never spent, and a player held
 * back from checks (mayAsk) for a call that never happened. It is dropped from the copy too, but
 * only when the replaced store is proven to be the copy's own continuation (the same store id, a
 * generation at least the copy's: store/backup.ts markGeneration); a store of another lineage (a
 * fresh store started on an emptied home) proves nothing about the copy's calls, and a call that
 * may have been charged is never read as not charged.
 */
import Database from 'better-sqlite3';

export interface ChecksCarried {
  /** Calls added to the copy, or answered in it, from the replaced store. */
  calls: number;
  /** Cached answers (player_checks) newer than the copy's. */
  answers: number;
  /** Calls the copy had `sent` that the replaced store dropped (never left, cost nothing): dropped from the copy too. */
  dropped?: number;
  /** Why the replaced store's checks could not be read (null: read, or none to read). */
  problem: string | null;
}

const columnsOf = (db: Database.Database, table: string): string[] => (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[]).map((c) => c.name);

/** Carries the replaced store's check records into `copy` (open, not yet in place). One transaction on the copy. */
export function carryOverChecks(copy: Database.Database, replacedPath: string): ChecksCarried {
  let old: Database.Database;
  try {
    old = new Database(replacedPath, { readonly: true, fileMustExist: true });
  } catch (err) {
    return { calls: 0, answers: 0, problem: (err as Error).message };
  }
  try {
    const calls = columnsOf(old, 'player_check_calls');
    const mine = new Set(columnsOf(copy, 'player_check_calls'));
    const callCols = calls.filter((c) => mine.has(c));
    if (calls.length === 0 || !['trxid', 'kind', 'player', 'outcome', 'said', 'at'].every((c) => callCols.includes(c))) return { calls: 0, answers: 0, problem: null };
    const theirs = old.prepare(`SELECT ${callCols.join(', ')} FROM player_check_calls`).all() as Record<string, unknown>[];
    const answerCols = columnsOf(old, 'player_checks').filter((c) => new Set(columnsOf(copy, 'player_checks')).has(c));
    const answers = answerCols.includes('checked_at') ? (old.prepare(`SELECT ${answerCols.join(', ')} FROM player_checks`).all() as Record<string, unknown>[]) : [];
    let n = 0;
    let kept = 0;
    let dropped = 0;
    const continues = continuationOf(copy, old);
    copy.transaction(() => {
      if (continues) {
        const theirTrxids = new Set(theirs.map((c) => String(c.trxid)));
        const flying = copy.prepare(`SELECT trxid FROM player_check_calls WHERE outcome = 'sent'`).all() as { trxid: string }[];
        const drop = copy.prepare(`DELETE FROM player_check_calls WHERE trxid = ? AND outcome = 'sent'`);
        for (const f of flying) if (!theirTrxids.has(f.trxid)) dropped += drop.run(f.trxid).changes;
      }
      const have = copy.prepare('SELECT outcome FROM player_check_calls WHERE trxid = ?');
      const insert = copy.prepare(`INSERT INTO player_check_calls (${callCols.join(', ')}) VALUES (${callCols.map((c) => `@${c}`).join(', ')})`);
      const answer = copy.prepare(`UPDATE player_check_calls SET ${callCols.filter((c) => c !== 'trxid').map((c) => `${c} = @${c}`).join(', ')} WHERE trxid = @trxid AND outcome = 'sent'`);
      for (const c of theirs) {
        const here = have.get(c.trxid) as { outcome: string } | undefined;
        if (here === undefined) {
          // Never answered where it was sent: its sender stopped for the restore. Nobody waits for it now.
          const row = c.outcome === 'sent'
            ? { ...c, outcome: 'in-doubt', said: `sent at ${new Date(Number(c.at)).toISOString()}; its answer was never recorded (the store was replaced by an older copy first): the supplier may have charged it` }
            : c;
          insert.run(row);
          n++;
        } else if (here.outcome === 'sent' && c.outcome !== 'sent') {
          answer.run(c);
          n++;
        }
      }
      if (answers.length > 0) {
        const cols = answerCols;
        const upsert = copy.prepare(`INSERT INTO player_checks (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})
          ON CONFLICT (kind, player) DO UPDATE SET ${cols.filter((c) => c !== 'kind' && c !== 'player').map((c) => `${c} = excluded.${c}`).join(', ')} WHERE excluded.checked_at > player_checks.checked_at`);
        for (const a of answers) kept += upsert.run(a).changes;
      }
    })();
    return { calls: n, answers: kept, problem: null, ...(dropped > 0 ? { dropped } : {}) };
  } catch (err) {
    return { calls: 0, answers: 0, problem: (err as Error).message };
  } finally {
    old.close();
  }
}

/** meta keys of the store's lineage (store/backup.ts STORE_ID_KEY, GENERATION_KEY; not imported: backup.ts imports this module). */
const STORE_ID = 'store.id';
const GENERATION = 'store.generation';

function readMeta(db: Database.Database, key: string): string | undefined {
  try {
    return (db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined)?.value;
  } catch {
    return undefined;
  }
}

/** Whether `later` is `copy`'s own store carried on: the same store id, a generation not below the copy's. */
function continuationOf(copy: Database.Database, later: Database.Database): boolean {
  const read = readMeta;
  const id = read(copy, STORE_ID);
  if (id === undefined || read(later, STORE_ID) !== id) return false;
  return Number(read(later, GENERATION) ?? '-1') >= Number(read(copy, GENERATION) ?? '0');
}

/** Adds what several replaced stores carried (a restore run again after a kill: store/backup.ts restoreBackup). */
export function addCarried(a: ChecksCarried, b: ChecksCarried): ChecksCarried {
  const dropped = (a.dropped ?? 0) + (b.dropped ?? 0);
  return { calls: a.calls + b.calls, answers: a.answers + b.answers, problem: a.problem ?? b.problem, ...(dropped > 0 ? { dropped } : {}) };
}

/** Whether the store at `path` is `copy` as it was restored (same store id and generation): nothing ran on it since. */
export function isCopyUnchanged(copy: Database.Database, path: string): boolean {
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch {
    return false;
  }
  try {
    const id = readMeta(copy, STORE_ID);
    return id !== undefined && readMeta(db, STORE_ID) === id && readMeta(db, GENERATION) === readMeta(copy, GENERATION);
  } finally {
    db.close();
  }
}
