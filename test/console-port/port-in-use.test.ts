/**
 * Issue 30 (left from the trial): the console's address already in use was said only in the
 * daemon's log, among its other lines (JSON under a service manager). Decided: the daemon keeps
 * sending without the console (files in the inbox still go out; a shop's order refused by a closed
 * port was never taken, so never charged), and says so on stderr in one plain sentence, whatever the
 * log format; `topup doctor` says it too (a `console` line, a warning). A real daemon, a real port
 * held by another listener, the real CLI.
 */
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, runCli, startDaemon, tempHome, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();
const held: Server[] = [];
afterEach(async () => {
  for (const s of held.splice(0)) await new Promise((r) => s.close(r));
});

async function holdPort(): Promise<number> {
  const s = createServer();
  held.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return (s.address() as { port: number }).port;
}

describe('the console address already in use', () => {
  it('the daemon says it on stderr in a sentence and keeps sending; doctor warns', async () => {
    const port = await holdPort();
    const home = tempHome('console-port-');
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb, { TOPUP_CONSOLE: `127.0.0.1:${port}` });
    const d = startDaemon(env);
    try {
      await waitFor('the daemon started', () => d.output().includes('topup daemon started'), 60_000, 20);
      expect(d.output()).toMatch(new RegExp(`^topup: the console is not running: 127\\.0\\.0\\.1:${port} is already in use \\(another program, or another topup daemon\\)\\. The daemon goes on without it: files in the inbox are still ordered; the console, /metrics and the order API are off until you set TOPUP_CONSOLE to a free address \\(or off\\) and restart it\\.$`, 'm'));
      home.drop('orders.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456789']]));
      await waitForResult(home, 'orders');

      const doc = await runCli(['doctor', '--json'], env, { timeoutMs: 90_000 });
      const line = (JSON.parse(doc.stdout) as { checks: { name: string; ok: boolean; fatal: boolean; detail: string }[] }).checks.find((c) => c.name === 'console');
      expect(line).toMatchObject({ ok: false, fatal: false });
      expect(line!.detail).toMatch(new RegExp(`the running daemon \\(pid \\d+\\) could not listen on 127\\.0\\.0\\.1:${port}: already in use`));
    } finally {
      await d.stop();
    }
    // No daemon: doctor tries the address itself.
    const doc = await runCli(['doctor', '--json'], env, { timeoutMs: 90_000 });
    const line = (JSON.parse(doc.stdout) as { checks: { name: string; ok: boolean; detail: string }[] }).checks.find((c) => c.name === 'console');
    expect(line).toMatchObject({ ok: false });
    expect(line!.detail).toMatch(new RegExp(`127\\.0\\.0\\.1:${port} is already in use`));
  }, 180_000);
});
