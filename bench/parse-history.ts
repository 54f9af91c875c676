/**
 * How long reading a typical GET /history?limit=200 answer takes (it is read every poll round).
 * Run: npx tsx bench/parse-history.ts
 * Three bodies of 200 orders each, like the sandbox's (publicOrder):
 *  - spec:      string order ids;
 *  - bigint:    19-digit order ids as JSON numbers (json.ts must quote every one of them);
 *  - cardcodes: string ids, but completed card orders carry 16-digit codes inside strings
 *               (the quick scan finds 16-digit runs, so the quoting pass runs and quotes nothing).
 * Prints the 10th percentile / median of many runs (the 10th percentile is what the code costs
 * when other processes leave the CPU alone; the median shows the load): JSON.parse alone (the
 * floor), parseJsonExact, parseJsonExact + readHistory, and the whole client over HTTP on
 * 127.0.0.1 (read, parse, redaction, readers).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ResellerClient } from '../src/api/client.js';
import { parseJsonExact } from '../src/api/json.js';
import { readHistory } from '../src/api/schemas.js';

function order(i: number, kind: 'spec' | 'bigint' | 'cardcodes'): string {
  const id = kind === 'bigint' ? `${1234567890123450000n + BigInt(i)}` : `"ORD-${100000 + i}"`;
  const status = i % 10 === 0 ? 'processing' : i % 17 === 0 ? 'cancelled' : 'completed';
  const codes = kind === 'cardcodes' && status === 'completed' ? `,"codes":["${String(4000123412341234 + i)}"]` : '';
  const cancelled = status === 'cancelled' ? ',"error":"INVALID PLAYER","refunded":true' : '';
  return `{"orderCreated":true,"orderId":${id},"status":"${status}","game":"pubg","packName":"60 UC","amountUsd":0.99,"durationSec":${i % 60},` +
    `"userId":"51234${i}"${codes}${cancelled},"trxid":"SHOP-${i}-20260101","pid":"PUBG-60","createdAt":"2026-01-01T10:${String(i % 60).padStart(2, '0')}:00.000Z"}`;
}

function body(kind: 'spec' | 'bigint' | 'cardcodes'): string {
  return `{"success":true,"count":200,"orders":[${Array.from({ length: 200 }, (_, i) => order(i, kind)).join(',')}]}`;
}

function spread(t: number[]): string {
  t.sort((a, b) => a - b);
  return `${t[Math.floor(t.length / 10)]!.toFixed(3)}/${t[Math.floor(t.length / 2)]!.toFixed(3)} ms`;
}

function timed(fn: () => void, runs: number): string {
  for (let i = 0; i < 200; i++) fn();
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const s = process.hrtime.bigint();
    fn();
    t.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
  return spread(t);
}

async function overHttp(text: string, runs: number): Promise<string> {
  const server = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(text); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const api = new ResellerClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: 'bench-key-0123456789' });
  const t: number[] = [];
  for (let i = 0; i < runs + 50; i++) {
    const s = process.hrtime.bigint();
    const h = await api.history({ limit: 200 });
    if (h.orders.length !== 200) throw new Error('bench: wrong history');
    if (i >= 50) t.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
  await api.close();
  server.closeAllConnections();
  server.close();
  return spread(t);
}

const skip = (): void => {};
for (const kind of ['spec', 'bigint', 'cardcodes'] as const) {
  const text = body(kind);
  const h = readHistory(parseJsonExact(text), skip);
  if (h?.orders.length !== 200) throw new Error(`bench: ${kind} history not read`);
  const floor = timed(() => JSON.parse(text), 3000);
  const exact = timed(() => parseJsonExact(text), 3000);
  const read = timed(() => readHistory(parseJsonExact(text), skip), 3000);
  const http = await overHttp(text, 600);
  console.log(`${kind.padEnd(9)} ${(text.length / 1024).toFixed(0).padStart(3)} KB  JSON.parse ${floor}  parseJsonExact ${exact}  +readHistory ${read}  client.history/HTTP ${http}`);
}
