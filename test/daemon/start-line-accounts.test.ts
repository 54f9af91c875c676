/**
 * Trial s35 (small): in a home with two accounts the daemon's start line named only the first
 * account's API. It names each account with its API. Two real sandboxes, the real daemon.
 */
import { describe, expect, it } from 'vitest';
import { releaseAll, waitFor, startDaemon } from '../e2e/harness.js';
import { twoAccountHome } from '../e2e/accounts.js';

describe('the daemon\'s start line', () => {
  it('names every account\'s API in a two-account home', async () => {
    const t = await twoAccountHome();
    const daemon = startDaemon(t.env);
    try {
      await waitFor('the daemon started', () => daemon.output().includes('topup daemon started'), 60_000, 50);
      const line = daemon.output().split('\n').find((l) => l.includes('topup daemon started'))!;
      expect(JSON.parse(line).api).toBe(`main ${t.main.url}, second ${t.second.url}`);
    } finally {
      await daemon.stop();
      await releaseAll();
    }
  }, 90_000);
});
