/**
 * Issue 32, second adversarial review: a replica folder re-created empty at the same path (a new
 * mount, a new standby set up). The primary's start refuses, as it should (this home held a fence
 * there, and a missing fence is most often a mount that is not up). But the only way out was a
 * `topup takeover` that failed on the empty replica and wrote a new fence as its side effect.
 * Now: the takeover refuses before it writes anything (the replica holds no generation), and
 * `topup fence reset --i-know` is the intended way out (refused without --i-know, and when a fence
 * is there). Real CLI, real sandbox, the real litestream binary.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, runCli, startDaemon, tempHome, waitFor } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();
const BIN: NodeJS.ProcessEnv = process.env.TOPUP_LITESTREAM_BIN ? { TOPUP_LITESTREAM_BIN: process.env.TOPUP_LITESTREAM_BIN } : {};
const rowsFile = (n: number, from: number) => csv([['pid', 'userId'], ...Array.from({ length: n }, (_, i) => ['PUBG-60', String(from + i)])]);

describe('a replica folder re-created empty at the same path', () => {
  it('refuses the start; takeover refuses without moving the fence; fence reset --i-know is the way out', async () => {
    const sb = await inProcessSandbox();
    const primary = tempHome('fence-reset-');
    const replica = join(mkdtempSync(join(tmpdir(), 'fence-reset-mnt-')), 'replica');
    mkdirSync(replica);
    const env = cliEnv(primary, sb, { TOPUP_REPLICA: replica, ...BIN });
    const fence = join(replica, 'topup-fence.json');
    const d = startDaemon(env);
    primary.drop('day.csv', rowsFile(3, 5_123_700_000));
    await waitFor('bought', () => sb.admin.ledger().orders.length >= 3, 60_000);
    await waitFor('a generation', () => existsSync(join(replica, 'generations')) && readdirSync(join(replica, 'generations')).length > 0, 30_000);
    await d.stop();
    const epoch = JSON.parse(readFileSync(fence, 'utf8')).epoch as number;

    rmSync(replica, { recursive: true });
    mkdirSync(replica);
    const refused = await runCli(['daemon', '--once'], env, { timeoutMs: 60_000 });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/is not there, but this home held it/);

    // The takeover has nothing to restore: it says so and writes no fence.
    const tk = await runCli(['takeover', '--from', replica], env, { timeoutMs: 60_000 });
    expect(tk.code).toBe(1);
    expect(tk.stderr).toMatch(/holds no store .*the fence was not moved.*topup fence reset --i-know/s);
    expect(existsSync(fence)).toBe(false);

    // Never silently: without --i-know nothing is written.
    const ask = await runCli(['fence', 'reset'], env);
    expect(ask.code).toBe(2);
    expect(existsSync(fence)).toBe(false);

    const reset = await runCli(['fence', 'reset', '--i-know', '--json'], env);
    expect(reset.code, reset.stderr).toBe(0);
    const written = JSON.parse(readFileSync(fence, 'utf8'));
    expect(written.epoch).toBe(epoch + 1);
    expect(JSON.parse(reset.stdout)).toMatchObject({ epoch: epoch + 1, heldBefore: epoch });
    // Once there, it is not reset again.
    const again = await runCli(['fence', 'reset', '--i-know'], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/nothing to reset/);

    primary.drop('late.csv', rowsFile(2, 5_123_800_000));
    const back = await runCli(['daemon', '--once'], env, { timeoutMs: 90_000 });
    expect(back.code, back.stderr.slice(-800)).toBe(0);
    expect(sb.admin.ledger().orders.length).toBe(5);
  }, 250_000);
});
