#!/usr/bin/env node
// A shop's side of topup-runner's order API, in one file: Node >= 20, no dependencies.
//  - receives the webhooks (POST /topup on SHOP_PORT), checks each Topup-Signature and prints the event;
//  - given a trxid, checks the player first (POST /api/v1/players/check: the in-game name to show
//    the buyer before taking their money), then places that order (POST /api/v1/orders with a
//    bearer token); a player the supplier says does not exist is not ordered.
//
//   TOPUP_ORDER_API_TOKEN=… TOPUP_ORDER_WEBHOOK_SECRET=… node shop.mjs SHOP-1001 [player id]
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

// The player's in-game name before the buyer pays (the token needs the scope players:check).
// 200: show playerName and let the buyer confirm. 422 PLAYER_NOT_FOUND: a wrong id, ask the buyer to
// correct it. 429 / 502 / 503 (PLAYER_CHECK_RATE_LIMITED, _REFUSED, _IN_DOUBT): the check could not
// be made now, which says nothing about the player: never tell the buyer the id is wrong; ask again
// after Retry-After, or sell without the name.
export async function checkPlayer(api, token, player) {
  const r = await fetch(`${api}/api/v1/players/check`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(player),
  });
  const text = await r.text();
  const body = JSON.parse(text);
  return { status: r.status, text, found: r.status === 200, name: body.playerName ?? null, notFound: body.code === 'PLAYER_NOT_FOUND', code: body.code, retryAfter: r.headers.get('retry-after') };
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
  const token = process.env.TOPUP_ORDER_API_TOKEN;
  const player = { pid: 'PUBG-60', userId: process.argv[3] ?? '5123456701' };
  const c = await checkPlayer(api, token, player);
  console.log(`POST /api/v1/players/check: ${c.status} ${c.text}`);
  if (c.notFound) return console.log(`no player ${player.userId}: not ordered (ask the buyer to correct the id)`);
  if (!c.found) return console.log(`the check could not be made (${c.code}): nothing is known about the player; ask again in ${c.retryAfter ?? 'a few'} s`);
  console.log(`player: ${c.name ?? '(no name given)'} (shown to the buyer, who confirms and pays)`);
  const r = await fetch(`${api}/api/v1/orders`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    // Resending the same trxid with the same body is safe: it answers the same order (200).
    // checkPlayer: the order is checked again before it is stored (the answer just given is kept:
    // no second call), so an id changed between the check and the order cannot slip through.
    body: JSON.stringify({ trxid, ...player, checkPlayer: true, meta: { shopOrder: trxid } }),
  });
  console.log(`POST /api/v1/orders: ${r.status} ${await r.text()}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main().catch((err) => { console.error(err.message); process.exit(1); });
