/**
 * Small named values kept across restarts: the rate hold-off, the last history export,
 * the low-balance alert flag, the last run of each scheduled job.
 */
import { statementCache, type Db } from './db.js';
import type { Statement } from 'better-sqlite3';

export class MetaStore {
  readonly #stmt: (sql: string) => Statement;
  constructor(db: Db) {
    this.#stmt = statementCache(db);
  }

  get(key: string): string | undefined {
    const r = this.#stmt('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
    return r?.value;
  }

  getJson<T>(key: string): T | undefined {
    const v = this.get(key);
    return v === undefined ? undefined : (JSON.parse(v) as T);
  }

  set(key: string, value: string): void {
    this.#stmt('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(key, value);
  }

  setJson(key: string, value: unknown): void {
    this.set(key, JSON.stringify(value));
  }

  /** Every key starting with `prefix` and its value, in key order (a range of the primary key). */
  listPrefix(prefix: string): { key: string; value: string }[] {
    return this.#stmt('SELECT key, value FROM meta WHERE key >= ? AND key < ? ORDER BY key').all(prefix, `${prefix}\uffff`) as { key: string; value: string }[];
  }

  delete(key: string): void {
    this.#stmt('DELETE FROM meta WHERE key = ?').run(key);
  }
}
