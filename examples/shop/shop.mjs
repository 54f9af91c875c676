#!/usr/bin/env node
// A shop's side of topup-runner's order API, in one file: Node >= 20, no dependencies.
//  - receives the webhooks (POST /topup on SHOP_PORT), checks each Topup-Signature and prints the event;
//  - given a trxid, places that order first (POST /api/v1/orders with a bearer token).
//
//   TOPUP_ORDER_API_TOKEN=… TOPUP_ORDER_WEBHOOK_SECRET=… node shop.mjs SHOP-1001
//
// Settings (environment): TOPUP_API (default http://127.0.0.1:8377, the daemon's console address),
// TOPUP_ORDER_API_TOKEN, TOPUP_ORDER_WEBHOOK_SECRET, SHOP_PORT (default 8400). See README.md.
import { createServer } from 'node:http';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { pathToFileURL } from 'node:url';

// Topup-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">. Check the RAW body
// (before JSON.parse), refuse an old t (a replayed request), compare in constant time.
export function verify(header, rawBody, secret, toleranceSec = 300, nowSec = Math.floor(Date.now() / 1000)) {
  const parts = String(header ?? '').split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  const sigs = parts.filter(([k, v]) => k === 'v1' && /^[0-9a-f]{64}$/i.test(v ?? '')).map(([, v]) => Buffer.from(v, 'hex'));
  if (!Number.isInteger(t) || sigs.length === 0 || Math.abs(nowSec - t) > toleranceSec) return false;
  const expected = createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest();
  return sigs.some((s) => timingSafeEqual(expected, s)); // several v1=: a secret being rotated
}

async function main() {
  const api = process.env.TOPUP_API ?? 'http://127.0.0.1:8377';
  const secret = process.env.TOPUP_ORDER_WEBHOOK_SECRET;
  const port = Number(process.env.SHOP_PORT ?? 8400);
  if (!secret) throw new Error('set TOPUP_ORDER_WEBHOOK_SECRET (the daemon\'s)');
  const seen = new Set(); // delivery is at least once: the same event id may come twice

  createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      if (!verify(req.headers['topup-signature'], raw, secret)) {
        console.log('refused: bad or old signature');
        return res.writeHead(400).end();
      }
      const event = JSON.parse(raw.toString('utf8'));
      res.writeHead(200).end(); // answer fast (2xx = delivered); do slow work after
      if (seen.has(event.id)) return;
      seen.add(event.id);
      const o = event.data;
      console.log(`${event.id} ${event.type}: ${o.trxid} is ${o.status}${o.orderId ? ` (order ${o.orderId})` : ''}${o.error ? ` - ${o.error.message}` : ''}`);
    });
  }).listen(port, '127.0.0.1', () => console.log(`webhooks: listening on http://127.0.0.1:${port}/topup`));

  const trxid = process.argv[2];
  if (!trxid) return;
  const r = await fetch(`${api}/api/v1/orders`, {
    method: 'POST',
    headers: { authorization: `Bearer ${process.env.TOPUP_ORDER_API_TOKEN}`, 'content-type': 'application/json' },
    // Resending the same trxid with the same body is safe: it answers the same order (200).
    body: JSON.stringify({ trxid, pid: 'PUBG-60', userId: '5123456701', meta: { shopOrder: trxid } }),
  });
  console.log(`POST /api/v1/orders: ${r.status} ${await r.text()}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main().catch((err) => { console.error(err.message); process.exit(1); });
