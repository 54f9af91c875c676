import { Command } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { registerSandboxCommand } from '../../src/commands/sandbox.js';
import { DEFAULT_FULFILMENT } from '../../src/sandbox/types.js';

/** Delivers a signal to our handlers only (the test runner's own handlers are set aside). */
function signal(name: 'SIGINT' | 'SIGTERM') {
  const others = process.listeners(name);
  const ours = others.slice(-1);
  for (const l of others) process.off(name, l);
  for (const l of ours) l(name);
  for (const l of others.slice(0, -1)) process.on(name, l);
}

async function run(args: string[]) {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: any) => { lines.push(String(chunk)); return true; });
  const program = new Command('topup').exitOverride();
  registerSandboxCommand(program);
  const done = program.parseAsync(['node', 'topup', 'sandbox', ...args]);
  for (let i = 0; i < 100 && lines.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  spy.mockRestore();
  return { lines, done };
}

afterEach(() => { delete process.env.TOPUP_API_KEY; });

describe('topup sandbox command', () => {
  it('prints one listening line without the key, serves the API, stops cleanly on SIGINT', async () => {
    const { lines, done } = await run(['--port', '0', '--api-key', 'cli-secret-key', '--balance', '42', '--admin-token', 'tok',
      '--rate-limits', '40/1s,200/1m', '--processing-share', '0', '--fail-share', '0', '--seed', '3']);
    expect(lines).toHaveLength(1);
    const m = /^Sandbox listening on (http:\/\/127\.0\.0\.1:\d+) \(admin token: tok\)\n$/.exec(lines[0] as string);
    expect(m).not.toBeNull();
    expect(lines.join('')).not.toContain('cli-secret-key');
    const url = m?.[1] as string;
    const bal = await (await fetch(`${url}/balance`, { headers: { 'x-api-key': 'cli-secret-key' } })).json();
    expect(bal).toEqual({ success: true, balanceUsd: 42, currency: 'USD' });
    signal('SIGINT');
    await done;
    await expect(fetch(`${url}/balance`)).rejects.toThrow();
  });

  it('takes the key from TOPUP_API_KEY when --api-key is absent; SIGTERM stops it', async () => {
    process.env.TOPUP_API_KEY = 'env-secret-key';
    const { lines, done } = await run(['--port', '0']);
    const url = /(http:\/\/[^ ]+)/.exec(lines[0] as string)?.[1] as string;
    expect((await fetch(`${url}/balance`, { headers: { authorization: 'Bearer env-secret-key' } })).status).toBe(200);
    signal('SIGTERM');
    await done;
  });

  it('--answers real-world answers like a real deployment and says so; --html-share sets the 502 share', async () => {
    const { lines, done } = await run(['--port', '0', '--api-key', 'cli-secret-key', '--admin-token', 'tok', '--answers', 'real-world', '--html-share', '0', '--seed', '4']);
    expect(lines[0]).toMatch(/^Sandbox listening on http:\/\/127\.0\.0\.1:\d+ \(admin token: tok\), real-world answers\n$/);
    const url = /(http:\/\/[^ ]+)/.exec(lines[0] as string)?.[1] as string;
    const bal = (await (await fetch(`${url}/balance`, { headers: { 'x-api-key': 'cli-secret-key' } })).json()) as any;
    expect(typeof bal.balanceUsd).toBe('string');
    const answers = (await (await fetch(`${url}/__sandbox/answers`, { headers: { 'x-sandbox-admin': 'tok' } })).json()) as any;
    expect(answers.answers).toMatchObject({ style: 'real-world', htmlShare: 0, seed: 4 });
    signal('SIGINT');
    await done;
  });

  it('rejects a bad option value', async () => {
    const program = new Command('topup').exitOverride().configureOutput({ writeErr: () => {} });
    registerSandboxCommand(program);
    await expect(program.parseAsync(['node', 'topup', 'sandbox', '--api-key', 'abcdefgh1', '--fail-share', '2'])).rejects.toThrow(/fail-share/);
    await expect(program.parseAsync(['node', 'topup', 'sandbox', '--port', '0'])).rejects.toThrow(/API key/);
    await expect(program.parseAsync(['node', 'topup', 'sandbox', '--api-key', 'abcdefgh1', '--answers', 'realistic'])).rejects.toThrow(/answers/);
    await expect(program.parseAsync(['node', 'topup', 'sandbox', '--api-key', 'abcdefgh1', '--html-share', '1.5'])).rejects.toThrow(/html-share/);
  });

  it('--help states the fail share every player id gets by default, and how to have none', () => {
    const program = new Command('topup');
    registerSandboxCommand(program);
    const help = program.commands.find((c) => c.name() === 'sandbox')!.helpInformation().replace(/\s+/g, ' ');
    expect(DEFAULT_FULFILMENT.failShare).toBeGreaterThan(0);
    expect(help).toContain(`default ${DEFAULT_FULFILMENT.failShare}, as in the built-in sandbox; 0: only ids containing "fail" or equal to 99999 fail`);
  });
});
