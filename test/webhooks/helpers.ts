/**
 * What the webhook tests share: a real SQLite store in a temp folder with API orders written the
 * way migration 12's triggers expect (an `open` batch with api_day, rows with api_body_hash, then
 * state changes: each one an order_events row), real HTTP receivers on 127.0.0.1, a clock whose
 * wall time the test moves, and a small stand-in for the desk's event() (until the real desk is
 * on main, the end-to-end test uses it).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { openDb, type Db } from '../../src/store/db.js';
import { systemClock, type Clock } from '../../src/kernel/clock.js';
import { seededEntropy } from '../../src/kernel/entropy.js';
import type { Logger } from '../../src/kernel/log.js';
import type { OrderDesk, OrderEvent } from '../../src/orders/types.js';
import { Deliverer, type DelivererOptions, type WebhookSettings } from '../../src/webhooks/deliverer.js';

export const SECRET = 'test-webhook-secret-0123456789abcdef';
export const T0 = Date.UTC(2026, 10, 26, 12, 0, 0);

export function tempDb(): { db: Db; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'topup-hooks-'));
  return { db: openDb(join(dir, 'jobs', 'topup.db')), dir };
}

/** The day's open API batch. */
export function apiBatch(db: Db, id = 'api-20261126', at = T0): string {
  const seq = (db.prepare('SELECT coalesce(max(seq), 0) + 1 AS n FROM batches').get() as { n: number }).n;
  db.prepare(`INSERT INTO batches (id, seq, name, source_name, job_file, content_hash, origin, state, sandbox, created_at, api_day)
    VALUES (?, ?, ?, 'api', ?, ?, 'submit', 'open', 1, ?, ?)`).run(id, seq, id, `${id}.json`, `hash-${id}`, at, id.slice(4));
  return id;
}

/** An API order (its `order.accepted` event is written by the insert trigger). */
export function apiOrder(db: Db, batchId: string, idx: number, trxid: string, opts: { at?: number; callbackUrl?: string } = {}): void {
  db.prepare(`INSERT INTO rows (batch_id, idx, line, cells_json, state, trxid, updated_at, api_body_hash, callback_url, created_at)
    VALUES (?, ?, ?, '{}', 'pending', ?, ?, ?, ?, ?)`).run(batchId, idx, idx + 1, trxid, opts.at ?? T0, `body-${trxid}`, opts.callbackUrl ?? null, opts.at ?? T0);
}

/** The order moves to `state` (an event when its public status changes). */
export function move(db: Db, batchId: string, idx: number, state: string, at = T0): void {
  db.prepare('UPDATE rows SET state = ?, updated_at = ? WHERE batch_id = ? AND idx = ?').run(state, at, batchId, idx);
}

/** A stand-in for OrderDesk.event: the event as a webhook posts it, with a minimal data part. */
export function fakeEvents(db: Db): Pick<OrderDesk, 'event'> {
  return {
    event(id) {
      const e = db.prepare('SELECT * FROM order_events WHERE id = ?').get(id) as { id: number; type: string; status: string; trxid: string; at: number; row_state: string; batch_id: string } | undefined;
      if (!e) return undefined;
      return { id: `evt_${e.id}`, type: e.type, createdAt: new Date(e.at).toISOString(), data: { trxid: e.trxid, status: e.status, state: e.row_state, batchId: e.batch_id } } as unknown as OrderEvent;
    },
  };
}

/** A clock whose wall time the test sets; sleeps and timers are the system's. */
export function virtualClock(start = T0): Clock & { set(ms: number): void; advance(ms: number): void } {
  let now = start;
  return {
    ...systemClock,
    now: () => now,
    set(ms: number) {
      now = ms;
    },
    advance(ms: number) {
      now += ms;
    },
  };
}

/** A logger that keeps every line (to check what is logged). */
export function memoryLogger(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const log = pino({ level: 'debug' }, { write: (s: string) => void lines.push(s) }) as unknown as Logger;
  return { log, lines };
}

export interface Received {
  headers: IncomingMessage['headers'];
  body: string;
  event: { id: string; type: string; data: { trxid: string; status: string } };
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** What the next requests are answered: a status, 'hang' (never answers), or 'reset' (drops the socket). */
  answer: (r: Received) => number | 'hang' | 'reset';
  close(): Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1 (`port` to start it again on the same port after a close). */
export async function receiver(port = 0, answer: Receiver['answer'] = () => 200): Promise<Receiver> {
  const held: ServerResponse[] = [];
  const r: Receiver = {
    url: '',
    port: 0,
    received: [],
    answer,
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const got: Received = { headers: req.headers, body, event: JSON.parse(body) as Received['event'] };
      r.received.push(got);
      const a = r.answer(got);
      if (a === 'hang') return void held.push(res);
      if (a === 'reset') return void req.socket.destroy();
      res.writeHead(a, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  r.port = (server.address() as AddressInfo).port;
  r.url = `http://127.0.0.1:${r.port}/hooks`;
  return r;
}

export function deliverer(db: Db, settings: Partial<WebhookSettings> & { url: string | null }, opts: DelivererOptions & { clock?: Clock; log?: Logger; seed?: number } = {}): Deliverer {
  return new Deliverer(
    {
      db,
      clock: opts.clock ?? systemClock,
      entropy: seededEntropy(opts.seed ?? 1),
      log: opts.log ?? memoryLogger().log,
      settings: { secret: SECRET, codes: false, ...settings },
      events: fakeEvents(db),
    },
    opts,
  );
}

export function eventsOf(db: Db): { id: number; trxid: string; type: string; delivery: string; attempts: number; next_attempt_at: number; last_error: string | null; last_status: number | null; at: number; url: string | null }[] {
  return db.prepare('SELECT * FROM order_events ORDER BY id').all() as never;
}
