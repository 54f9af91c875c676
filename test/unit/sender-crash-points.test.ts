/**
 * The torture suite kills the daemon at named crash points (TOPUP_CRASH_AT, src/kernel/crash-points.ts)
 * to prove a kill there loses nothing and charges nothing twice. That proof holds only if each
 * point sits where its name says: `intent-committed` after the intent's commit and before the
 * request leaves, `response-received` after the answer arrived and before any of it is stored,
 * on the success path and on the failure path. Checked here in process: the plan is read once,
 * when kernel/crash-points.ts is loaded, so it is set before this file's imports (vi.hoisted) and
 * removed at once; process.kill is replaced by a recorder.
 */
import { describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.TOPUP_CRASH_AT = 'intent-committed:1,response-received:2';
});

import { sendRow } from '../../src/dispatch/sender.js';
import { pubgRow } from './fake-supplier.js';
import { scriptedWorld, senderDeps } from './scripted-supplier.js';

delete process.env.TOPUP_CRASH_AT;

describe('the sender\'s crash points are where their names say', () => {
  it('intent-committed: the row is `sending` and nothing has left; response-received (failure path): the answer came, nothing of it is stored', async () => {
    const w = await scriptedWorld([pubgRow(0), pubgRow(1)]);
    const kills: { signal: unknown; states: string[]; requests: number }[] = [];
    vi.spyOn(process, 'kill').mockImplementation((_pid, signal) => {
      kills.push({ signal, states: [0, 1].map((i) => w.rt.rows.get('b1', i)!.state), requests: w.seen.length });
      return true;
    });
    w.set(() => ({ body: { orderCreated: true, orderId: 'ORD-0', status: 'processing' } }));
    // First send: killed (by plan) at its intent; its response-received is the point's 1st pass, not killed.
    expect(await sendRow(senderDeps(w.rt), w.rt.rows.get('b1', 0)!)).toBe('placed');
    w.set(() => ({ status: 502, body: '<html>502</html>', headers: { 'content-type': 'text/html' } }));
    // Second send: response-received's 2nd pass, on the failure path: killed there.
    expect(await sendRow(senderDeps(w.rt), w.rt.rows.get('b1', 1)!)).toBe('retry');
    expect(kills).toEqual([
      { signal: 'SIGKILL', states: ['sending', 'pending'], requests: 0 },
      { signal: 'SIGKILL', states: ['processing', 'sending'], requests: 2 },
    ]);
    vi.restoreAllMocks();
  });
});
