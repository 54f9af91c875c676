/**
 * TOPUP_SANDBOX_ANSWERS: the answer style of the sandbox that `topup daemon` starts in-process
 * when no TOPUP_API_URL is set (src/account/endpoint.ts resolveApi).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { resolveApi } from '../../src/account/endpoint.js';
import { ConfigError } from '../../src/kernel/errors.js';
import { createLogger } from '../../src/kernel/log.js';

const homes: string[] = [];
const home = () => {
  const h = mkdtempSync(join(tmpdir(), 'sandbox-answers-'));
  homes.push(h);
  return h;
};
afterEach(() => { for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true }); });

describe('TOPUP_SANDBOX_ANSWERS', () => {
  it('defaults to spec; accepts real-world in any case; anything else is a ConfigError naming the setting', () => {
    expect(loadConfig({ TOPUP_HOME: home() }).sandboxAnswers).toBe('spec');
    expect(loadConfig({ TOPUP_HOME: home(), TOPUP_SANDBOX_ANSWERS: ' Real-World ' }).sandboxAnswers).toBe('real-world');
    let err: unknown;
    try { loadConfig({ TOPUP_HOME: home(), TOPUP_SANDBOX_ANSWERS: 'realistic' }); } catch (e) { err = e; }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).setting).toBe('TOPUP_SANDBOX_ANSWERS');
    expect((err as Error).message).toMatch(/TOPUP_SANDBOX_ANSWERS.*"spec" or "real-world"/);
  });

  it('the in-process sandbox answers in the configured style', async () => {
    const log = createLogger({ level: 'silent', secrets: [] });
    for (const [style, type] of [['spec', 'number'], ['real-world', 'string']] as const) {
      const config = loadConfig({ TOPUP_HOME: home(), TOPUP_SANDBOX_ANSWERS: style });
      const api = await resolveApi(config, log);
      try {
        const bal = (await (await fetch(`${api.url}/balance`, { headers: { 'x-api-key': config.apiKey } })).json()) as any;
        expect(typeof bal.balanceUsd, style).toBe(type);
        expect(api.sandbox!.admin.answers().style).toBe(style);
      } finally {
        await api.sandbox!.close();
      }
    }
  });
});
