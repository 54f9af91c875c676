/**
 * Issue 32, second adversarial review: the order API journal's copy beside a folder replica
 * (`<replica>/api-journal/<node>/`) could not be written, and only the log said so: `/metrics`,
 * `topup status` and `topup doctor` were silent while every accepted order was missing from what a
 * takeover, or a restore after a lost disk, reads. Now the failure is kept in the store: the gauge
 * `topup_api_journal_mirror_writable` is 0 and doctor names the error, and both clear once a write
 * succeeds again. Real CLI, real sandbox, the real litestream binary.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, runCli, tempHome } from '../e2e/harness.js';
import { start } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();
const TOKEN = 'mirror-unwritable-token-0123456789abcdef0';
const BIN: NodeJS.ProcessEnv = process.env.TOPUP_LITESTREAM_BIN ? { TOPUP_LITESTREAM_BIN: process.env.TOPUP_LITESTREAM_BIN } : {};
const gauge = (text: string): string | undefined => /^topup_api_journal_mirror_writable (\S+)$/m.exec(text)?.[1];
const doctorLine = (out: string): string => out.split('\n').find((l) => /api journal mirror/.test(l)) ?? '';

describe('the order API journal beside the replica cannot be written', () => {
  it('shows in /metrics and topup doctor, and clears when a write succeeds again', async () => {
    const sb = await inProcessSandbox();
    const home = tempHome('mirror-unwritable-');
    const replica = join(mkdtempSync(join(tmpdir(), 'mirror-unwritable-mnt-')), 'replica');
    mkdirSync(replica);
    // A file where the journal's folder goes: every append fails (ENOTDIR), as a read-only or full mount would.
    writeFileSync(join(replica, 'api-journal'), 'not a folder');
    const env = cliEnv(home, sb, { TOPUP_REPLICA: replica, TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0', ...BIN });

    const before = await runCli(['doctor'], env, { timeoutMs: 60_000 });
    expect(doctorLine(before.stdout + before.stderr)).toMatch(/ENOTDIR|is not a folder/);

    const d = await start(env);
    const r = await d.call('POST', '/api/v1/orders', { body: { trxid: 'SHOP-M', pid: 'PUBG-60', userId: '5123457099', queue: true } });
    expect(r.status).toBe(202);
    expect(gauge((await d.call('GET', '/metrics', { token: null })).text)).toBe('0');
    const doc = await runCli(['doctor'], env, { timeoutMs: 60_000 });
    const line = doctorLine(doc.stdout + doc.stderr);
    expect(line).toMatch(/could not be written beside the replica since .*1 order\(s\).*ENOTDIR/);

    // The mount is fixed: the next accepted order is written beside it, and the trouble clears.
    rmSync(join(replica, 'api-journal'));
    expect((await d.call('POST', '/api/v1/orders', { body: { trxid: 'SHOP-N', pid: 'PUBG-60', userId: '5123457098', queue: true } })).status).toBe(202);
    expect(gauge((await d.call('GET', '/metrics', { token: null })).text)).toBe('1');
    const after = await runCli(['doctor'], env, { timeoutMs: 60_000 });
    expect(doctorLine(after.stdout + after.stderr)).toMatch(/writable/);
    await d.daemon.stop();
  }, 200_000);
});
