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
 * A call the copy has as `sent` and the replaced store no longer has is kept (`sent`, later
 * `in-doubt`: "may have been charged"). It may have been dropped there before it left (cost
 * nothing), but nothing in a store proves that: a store id and a generation say when a store last
 * started, not that it descends from the copy (an adversarial review, stop 38: an older copy
 * restored and started raised the generation above a newer copy's, and the newer copy's in-flight
 * check was read as never sent). Counting a check that cost nothing is the safe side; reading one
 * that may have been charged as free is not.
 */
import Database from 'better-sqlite3';

export interface ChecksCarried {
  /** Calls added to the copy, or answered in it, from the replaced store. */
  calls: number;
  /** Cached answers (player_checks) newer than the copy's. */
  answers: number;
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
    copy.transaction(() => {
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
    return { calls: n, answers: kept, problem: null };
  } catch (err) {
    return { calls: 0, answers: 0, problem: (err as Error).message };
  } finally {
    old.close();
  }
}

/** Adds what several replaced stores carried (a restore run again after a kill: store/backup.ts restoreBackup). */
export function addCarried(a: ChecksCarried, b: ChecksCarried): ChecksCarried {
  return { calls: a.calls + b.calls, answers: a.answers + b.answers, problem: a.problem ?? b.problem };
}
