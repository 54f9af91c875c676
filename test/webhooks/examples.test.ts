/**
 * examples/shop: the verify functions a shop copies (Python and Node) agree with our signer, and
 * each script, run as a real child process, takes the daemon's deliverer's webhooks (verified,
 * printed, a repeated event id printed once) and refuses a forged one.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sign } from '../../src/webhooks/signer.js';
import { WebhookOutbox } from '../../src/webhooks/outbox.js';
import { ROOT, waitFor } from '../e2e/harness.js';
import { SECRET, apiBatch, apiOrder, deliverer, eventsOf, move, receiver, tempDb } from './helpers.js';
// @ts-expect-error: a plain .mjs example, without types
import { verify as nodeVerify } from '../../examples/shop/shop.mjs';

const SHOP = join(ROOT, 'examples', 'shop');
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

const NOW = 1_800_000_000;
const BODY = '{"id":"evt_7","type":"order.completed","data":{"trxid":"ÜNI-1","status":"completed"}}';
/** [header, body, secret, now, expected] */
const CASES: [string, string, string, number, boolean][] = [
  [sign(SECRET, BODY, NOW), BODY, SECRET, NOW, true],
  [sign(SECRET, BODY, NOW - 299), BODY, SECRET, NOW, true],
  [sign(SECRET, BODY, NOW - 301), BODY, SECRET, NOW, false],
  [sign(SECRET, BODY, NOW + 301), BODY, SECRET, NOW, false],
  [sign(SECRET, BODY, NOW), `${BODY} `, SECRET, NOW, false],
  [sign(SECRET, BODY, NOW), BODY, `${SECRET}!`, NOW, false],
  [sign(['another-secret-0123456789abcdef', SECRET], BODY, NOW), BODY, SECRET, NOW, true],
  [sign(SECRET, BODY, NOW).replace(/v1=.*/, 'v1=nothex'), BODY, SECRET, NOW, false],
  ['', BODY, SECRET, NOW, false],
  [`v1=${'0'.repeat(64)}`, BODY, SECRET, NOW, false],
];

describe('examples/shop', () => {
  it("shop.py's verify agrees with our signer", () => {
    const script = `import json, sys\nsys.path.insert(0, ${JSON.stringify(SHOP)})\nfrom shop import verify\ncases = json.load(sys.stdin)\nprint(json.dumps([verify(h, b.encode(), s, now=n) for h, b, s, n, _ in cases]))`;
    const r = spawnSync('python3', ['-c', script], { input: JSON.stringify(CASES), encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual(CASES.map((c) => c[4]));
  });

  it("shop.mjs's verify agrees with our signer", () => {
    expect(CASES.map(([h, b, s, n]) => nodeVerify(h, Buffer.from(b), s, 300, n))).toEqual(CASES.map((c) => c[4]));
  });

  for (const [name, cmd] of [['shop.py', 'python3'], ['shop.mjs', process.execPath]] as const) {
    it(`${name} receives the deliverer's webhooks, verified and printed once each, and refuses a forged one`, async () => {
      const probe = await receiver();
      const port = probe.port;
      await probe.close();
      const child = spawn(cmd, [join(SHOP, name)], { env: { PATH: process.env.PATH, TOPUP_ORDER_WEBHOOK_SECRET: SECRET, SHOP_PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(child);
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      await waitFor(`${name} listening`, () => out.includes('listening on'), 10_000, 20);

      const { db } = tempDb();
      const b = apiBatch(db);
      apiOrder(db, b, 0, 'EX-1');
      move(db, b, 0, 'sending');
      move(db, b, 0, 'completed');
      const d = deliverer(db, { url: `http://127.0.0.1:${port}/topup` });
      await d.tick();
      expect(eventsOf(db).map((e) => e.delivery)).toEqual(['delivered', 'delivered', 'delivered']);
      // Sent again (at least once): the shop prints it once.
      new WebhookOutbox(db).replay({ ids: [3] });
      await d.tick();
      await waitFor('three events printed', () => out.includes('evt_3'), 5_000, 20);
      const forged = await fetch(`http://127.0.0.1:${port}/topup`, { method: 'POST', body: BODY, headers: { 'topup-signature': sign('not-the-secret-0123456789abcdef', BODY, Math.floor(Date.now() / 1000)) } });
      expect(forged.status).toBe(400);
      await waitFor('the refusal printed', () => out.includes('refused'), 5_000, 20);
      const lines = out.trim().split('\n').slice(1);
      expect(lines).toEqual(['evt_1 order.accepted: EX-1 is accepted', 'evt_2 order.sent: EX-1 is sent', 'evt_3 order.completed: EX-1 is completed', 'refused: bad or old signature']);
      db.close();
    });
  }
});
