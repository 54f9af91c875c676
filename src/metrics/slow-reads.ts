/**
 * Asks the read worker (read-worker.ts) for an aggregate and waits for it without blocking.
 * Should the worker not start (a source checkout run without building), the query runs on the
 * daemon's own connection: slower for the daemon, never wrong.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Db } from '../store/db.js';
import { READ_QUERIES, type ReadQuery } from './read-queries.js';

type Pending = { resolve: (rows: unknown[]) => void; reject: (err: Error) => void };

export class SlowReads {
  readonly #db: Db;
  readonly #path: string;
  #worker: Worker | null = null;
  #broken = false;
  #next = 0;
  readonly #pending = new Map<number, Pending>();

  constructor(db: Db, path: string) {
    this.#db = db;
    this.#path = path;
  }

  #start(): Worker | null {
    if (this.#worker || this.#broken) return this.#worker;
    const file = new URL('./read-worker.js', import.meta.url);
    if (!existsSync(fileURLToPath(file))) {
      this.#broken = true;
      return null;
    }
    const w = new Worker(file, { workerData: { path: this.#path } });
    w.unref();
    w.on('message', (m: { id: number; rows?: unknown[]; error?: string }) => {
      const p = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      if (m.error !== undefined) p?.reject(new Error(m.error));
      else p?.resolve(m.rows ?? []);
    });
    w.on('error', (err) => this.#fail(err));
    w.on('exit', () => this.#fail(new Error('the read worker stopped')));
    this.#worker = w;
    return w;
  }

  #fail(err: Error): void {
    this.#worker = null;
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
  }

  /** Whether the last query ran in the worker (false: on the daemon's connection). */
  get usesWorker(): boolean {
    return this.#worker !== null;
  }

  async query<T>(name: ReadQuery): Promise<T[]> {
    const w = this.#start();
    if (!w) return this.#db.prepare(READ_QUERIES[name]).all() as T[];
    const id = this.#next++;
    return new Promise<T[]>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (rows: unknown[]) => void, reject });
      w.postMessage({ id, query: name });
    });
  }

  async close(): Promise<void> {
    const w = this.#worker;
    this.#broken = true;
    this.#worker = null;
    if (w) await w.terminate();
  }
}
