/**
 * The audit table: every reveal of delivered codes and every action taken in the console (upload
 * submitted, cancel, retry, review resolved, job run, file downloaded), with who, from where and
 * how it ended. Append-only: nothing here updates or deletes an entry.
 */
import type { Statement } from 'better-sqlite3';
import { statementCache, type Db } from './db.js';

export type AuditOutcome = 'ok' | 'refused' | 'failed';

export interface AuditEntry {
  id: number;
  at: number;
  actor: string;
  address: string | null;
  action: string;
  batchId: string | null;
  line: number | null;
  detail: string | null;
  outcome: AuditOutcome;
}

export interface NewAuditEntry {
  at: number;
  actor: string;
  address?: string | null;
  action: string;
  batchId?: string | null;
  line?: number | null;
  /** Never a code or a secret: what was done, in words. */
  detail?: string | null;
  outcome: AuditOutcome;
}

interface AuditRow {
  id: number;
  at: number;
  actor: string;
  address: string | null;
  action: string;
  batch_id: string | null;
  line: number | null;
  detail: string | null;
  outcome: AuditOutcome;
}

export class AuditStore {
  readonly #stmt: (sql: string) => Statement;
  constructor(db: Db) {
    this.#stmt = statementCache(db);
  }

  record(e: NewAuditEntry): number {
    const r = this.#stmt(
      `INSERT INTO audit (at, actor, address, action, batch_id, line, detail, outcome) VALUES (@at, @actor, @address, @action, @batchId, @line, @detail, @outcome)`,
    ).run({ at: e.at, actor: e.actor, address: e.address ?? null, action: e.action, batchId: e.batchId ?? null, line: e.line ?? null, detail: e.detail ?? null, outcome: e.outcome });
    return Number(r.lastInsertRowid);
  }

  /** Newest first, `limit` entries older than entry `beforeId` (paging). */
  recent(limit: number, beforeId = Number.MAX_SAFE_INTEGER): AuditEntry[] {
    const rows = this.#stmt('SELECT * FROM audit WHERE id < ? ORDER BY id DESC LIMIT ?').all(beforeId, limit) as AuditRow[];
    return rows.map((r) => ({ id: r.id, at: r.at, actor: r.actor, address: r.address, action: r.action, batchId: r.batch_id, line: r.line, detail: r.detail, outcome: r.outcome }));
  }
}
